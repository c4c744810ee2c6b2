// Dashboard: the user's balance and a chart of recent requests and cost.
import { h, num } from "../dom.js";
import { t } from "../i18n.js";
import { money } from "../money.js";
import { api, items } from "../api.js";
import { pageHead, alertBox, showError } from "../ui.js";
import { usageChart } from "../chart.js";

export async function render(main, ctx) {
  const me = await ctx.refreshMe();
  main.append(pageHead(t("dash.title"), t("dash.sub", { user: me.username, group: me.group || "default" }),
    h("a", { href: "/playground", "data-link": true, class: "button" }, t("dash.playground"))));
  const requests = h("dd", { id: "stat-requests" }, "…");
  main.append(h("div", { class: "cards" },
    stat(t("dash.remaining"), money(me.quota), "stat-quota"),
    stat(t("dash.used"), money(me.used_quota), "stat-used"),
    h("div", { class: "card" }, h("dl", { class: "stat" }, h("dt", {}, t("dash.requests")), requests)),
    stat(t("dash.role"), me.role, "stat-role")));
  const chartCard = h("section", { class: "card", "aria-labelledby": "usage-title" },
    h("h2", { id: "usage-title" }, t("dash.usage")));
  main.append(chartCard);
  try {
    const data = await api("GET", "/api/logs?page_size=500");
    const logs = items(data);
    requests.textContent = num(logs.filter((l) => l.type === "consume" || l.type === "error").length);
    chartCard.append(logs.some((l) => l.type !== "topup") ? usageChart(logs)
      : h("p", { class: "empty" }, t("dash.noRequests")));
  } catch (e) {
    const box = alertBox();
    showError(box, e);
    chartCard.append(box);
  }
}

function stat(label, value, id) {
  return h("div", { class: "card" }, h("dl", { class: "stat" }, h("dt", {}, label), h("dd", { id }, value)));
}
