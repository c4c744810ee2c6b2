// The usage chart: requests as bars and cost as a line over time buckets,
// drawn as inline SVG so no charting library is needed.
import { h } from "./dom.js";
import { t } from "./i18n.js";
import { money, usd } from "./money.js";

const DAY = 24 * 3600 * 1000;

/**
 * bucketize lays the daily lines of GET /api/reports/usage (granularity=day,
 * any grouping) over `count` consecutive UTC days starting at `start` (ms):
 * per day the calls (errors included) and the net charge (refunds already
 * subtracted by the report).
 */
export function bucketize(items, start, count) {
  const buckets = Array.from({ length: count }, (_, i) => ({ start: start + i * DAY, requests: 0, cost: 0 }));
  for (const it of items) {
    const t = new Date(it.period).getTime();
    if (Number.isNaN(t) || t < start) continue;
    const b = buckets[Math.floor((t - start) / DAY)];
    if (!b) continue;
    b.requests += (Number(it.requests) || 0) + (Number(it.errors) || 0);
    b.cost += Number(it.quota) || 0;
  }
  return { buckets, hourly: false };
}

function label(t, hourly) {
  const d = new Date(t);
  return hourly ? `${String(d.getUTCHours()).padStart(2, "0")}:00` : `${d.getUTCMonth() + 1}/${d.getUTCDate()}`;
}

/**
 * usageChart returns a figure with the SVG chart and a data table for
 * screen readers, of the report's daily lines over count UTC days from start.
 */
export function usageChart(items, start, count) {
  const { buckets, hourly } = bucketize(items, start, count);
  const W = 720, H = 220, L = 40, R = 48, T = 12, B = 28;
  const iw = W - L - R, ih = H - T - B;
  const maxReq = Math.max(1, ...buckets.map((b) => b.requests));
  const maxCost = Math.max(1, ...buckets.map((b) => b.cost));
  const bw = iw / buckets.length;
  const y = (v, max) => T + ih - (Math.max(0, v) / max) * ih;
  const bars = buckets.map((b, i) => h("rect", {
    class: "bar", x: (L + i * bw + bw * 0.15).toFixed(1), y: y(b.requests, maxReq).toFixed(1),
    width: (bw * 0.7).toFixed(1), height: (T + ih - y(b.requests, maxReq)).toFixed(1), rx: 2,
  }, h("title", {}, `${label(b.start, hourly)}: ${t("chart.requests")} ${b.requests}, ${t("chart.cost")} ${money(b.cost)}`)));
  const pts = buckets.map((b, i) => `${(L + i * bw + bw / 2).toFixed(1)},${y(b.cost, maxCost).toFixed(1)}`);
  const every = Math.ceil(buckets.length / 8);
  const ticks = buckets.map((b, i) => (i % every === 0
    ? h("text", { x: (L + i * bw + bw / 2).toFixed(1), y: H - 8, "text-anchor": "middle" }, label(b.start, hourly)) : null));
  const svg = h("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "chart-title chart-desc" },
    h("title", { id: "chart-title" }, t("chart.caption")),
    h("desc", { id: "chart-desc" }, t(hourly ? "chart.hourly" : "chart.daily")),
    h("line", { class: "axis", x1: L, x2: W - R, y1: T + ih, y2: T + ih }),
    h("text", { x: L - 6, y: T + 10, "text-anchor": "end" }, String(maxReq)),
    h("text", { x: W - R + 6, y: T + 10 }, usd(maxCost)),
    bars,
    h("polyline", { class: "line", points: pts.join(" ") }),
    buckets.map((b, i) => h("circle", { class: "dot", cx: pts[i].split(",")[0], cy: pts[i].split(",")[1], r: 2.5 })),
    ticks);
  const data = h("table", { class: "visually-hidden" }, h("caption", {}, t("chart.caption")),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("chart.time")), h("th", { scope: "col" }, t("chart.requests")), h("th", { scope: "col" }, t("chart.cost")))),
    h("tbody", {}, buckets.map((b) => h("tr", {}, h("td", {}, label(b.start, hourly)), h("td", {}, String(b.requests)), h("td", {}, money(b.cost))))));
  return h("figure", { class: "chart", style: "margin:0" },
    h("div", { class: "legend", "aria-hidden": "true" }, h("span", { class: "l-req" }, t("chart.requests")), h("span", { class: "l-cost" }, `${t("chart.cost")} (USD)`)),
    svg, data);
}
