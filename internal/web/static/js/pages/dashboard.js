// Dashboard: the user's balance and a chart of recent requests and cost.
import { h, num } from "../dom.js";
import { api, items } from "../api.js";
import { pageHead, alertBox, showError } from "../ui.js";
import { usageChart } from "../chart.js";

export async function render(main, ctx) {
  const me = await ctx.refreshMe();
  main.append(pageHead("Dashboard", `Signed in as ${me.username} · group ${me.group || "default"}`,
    h("a", { href: "/playground", "data-link": true, class: "button" }, "Open the playground")));
  const requests = h("dd", { id: "stat-requests" }, "…");
  main.append(h("div", { class: "cards" },
    stat("Remaining quota", num(me.quota), "stat-quota"),
    stat("Used quota", num(me.used_quota), "stat-used"),
    h("div", { class: "card" }, h("dl", { class: "stat" }, h("dt", {}, "Recent requests"), requests)),
    stat("Role", me.role, "stat-role")));
  const chartCard = h("section", { class: "card", "aria-labelledby": "usage-title" },
    h("h2", { id: "usage-title" }, "Recent usage"));
  main.append(chartCard);
  try {
    const data = await api("GET", "/api/logs?page_size=500");
    const logs = items(data);
    requests.textContent = num(logs.filter((l) => l.type === "consume" || l.type === "error").length);
    chartCard.append(logs.some((l) => l.type !== "topup") ? usageChart(logs)
      : h("p", { class: "empty" }, "No requests yet. Send one from the playground or with an API key."));
  } catch (e) {
    const box = alertBox();
    showError(box, e);
    chartCard.append(box);
  }
}

function stat(label, value, id) {
  return h("div", { class: "card" }, h("dl", { class: "stat" }, h("dt", {}, label), h("dd", { id }, value)));
}
