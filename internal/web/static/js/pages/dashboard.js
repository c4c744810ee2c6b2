// Dashboard: the user's balance and a chart of the last 30 days' requests
// and cost (GET /api/reports/usage: a plain user's own, an administrator's all).
import { h, num } from "../dom.js";
import { t } from "../i18n.js";
import { money, dollars } from "../money.js";
import { api, items } from "../api.js";
import { pageHead, alertBox, showError, table } from "../ui.js";
import { usageChart } from "../chart.js";

export async function render(main, ctx) {
  const me = await ctx.refreshMe();
  main.append(pageHead(t("dash.title"), t("dash.sub", { user: me.username, group: me.group || "default" }),
    h("a", { href: "/playground", "data-link": true, class: "button" }, t("dash.playground"))));
  const requests = h("dd", { id: "stat-requests" }, "…");
  main.append(h("div", { class: "cards" },
    stat(t("dash.remaining"), money(me.quota), "stat-quota"),
    stat(t("dash.used"), money(me.used_quota), "stat-used"),
    h("div", { class: "card" }, h("dl", { class: "stat" }, h("dt", {}, t("dash.requests30")), requests)),
    stat(t("dash.role"), me.role, "stat-role")));
  const chartCard = h("section", { class: "card", "aria-labelledby": "usage-title" },
    h("h2", { id: "usage-title" }, t("dash.usage")));
  main.append(chartCard);
  try {
    // The last 30 UTC days, today included, from the usage rollups: whole
    // days are read from the daily layer, so this stays fast at any volume.
    const DAYS = 30, DAY = 24 * 3600 * 1000;
    const start = Math.floor(Date.now() / DAY) * DAY - (DAYS - 1) * DAY;
    const since = Math.floor(start / 1000);
    const data = await api("GET", `/api/reports/usage?group_by=model&granularity=day&since=${since}`);
    const lines = items(data);
    requests.textContent = num(lines.reduce((n, l) => n + l.requests + l.errors, 0));
    chartCard.append(lines.length ? usageChart(lines, start, DAYS)
      : h("p", { class: "empty" }, t("dash.noRequests")));
  } catch (e) {
    const box = alertBox();
    showError(box, e);
    chartCard.append(box);
  }
  if (me.role === "admin" || me.role === "root") main.append(await marginCard());
}

// marginCard is what the last day's calls were charged beside what they
// cost upstream, per channel (GET /api/reports/margin).
async function marginCard() {
  const card = h("section", { class: "card", "aria-labelledby": "margin-title" },
    h("h2", { id: "margin-title" }, t("dash.margin")), h("p", { class: "muted" }, t("dash.marginSub")));
  try {
    const data = await api("GET", "/api/reports/margin?group_by=channel");
    const rows = data.items || [];
    const total = rows.reduce((s, r) => ({ charged: s.charged + Number(r.charged_usd), cost: s.cost + Number(r.upstream_cost_usd) }),
      { charged: 0, cost: 0 });
    card.append(h("div", { class: "cards" },
      stat(t("dash.charged"), dollars(total.charged), "stat-charged"),
      stat(t("dash.cost"), dollars(total.cost), "stat-cost"),
      stat(t("dash.marginTotal"), dollars(total.charged - total.cost), "stat-margin")));
    card.append(table(t("dash.margin"), [
      { label: t("dash.channel"), cell: (r) => r.name || (r.key === "0" ? "—" : `#${r.key}`) },
      { label: t("dash.requests"), cell: (r) => num(r.requests), num: true },
      { label: t("dash.charged"), cell: (r) => dollars(r.charged_usd), num: true },
      { label: t("dash.cost"), cell: (r) => dollars(r.upstream_cost_usd), num: true },
      { label: t("dash.marginTotal"), cell: (r) => dollars(r.margin_usd), num: true },
    ], rows, t("dash.noMargin")));
  } catch (e) {
    const box = alertBox();
    showError(box, e);
    card.append(box);
  }
  return card;
}

function stat(label, value, id) {
  return h("div", { class: "card" }, h("dl", { class: "stat" }, h("dt", {}, label), h("dd", { id }, value)));
}
