// Traffic control in the console: the rate-limit and budget fields of keys
// and users (CONTRACT.md §10), and how a subject's period spending is shown.
import { h, num, when } from "./dom.js";
import { jsonObject } from "./ui.js";

const PERIODS = [["", "none"], ["day", "day"], ["week", "week (from Monday)"], ["month", "month"]];

/** limitFields are the form fields for x's limits; models adds model_limits (keys). */
export function limitFields(x, { models = false } = {}) {
  const count = (name, label, hint) => ({ name, label, type: "number", min: 0, step: 1, value: x?.[name] || "", hint });
  const fields = [
    count("rpm", "Requests per minute", "0 or empty: no limit."),
    count("tpm", "Tokens per minute", "Prompt plus maximum output, corrected to the real count."),
    count("concurrency", "Concurrent requests", ""),
    count("period_quota", "Budget per period", "Quota units that may be spent in each period."),
    { name: "period", label: "Budget period", type: "select", options: PERIODS, value: x?.period || "",
      validate: (v, all) => (all.period_quota > 0 && !v ? "Pick the period the budget covers." : "") },
  ];
  if (models) {
    fields.push({ name: "model_limits", label: "Per-model limits", type: "json", rows: 3,
      value: x?.model_limits && Object.keys(x.model_limits).length ? x.model_limits : "",
      placeholder: '{"gpt-4o": {"rpm": 60, "tpm": 100000}}', validate: jsonObject });
  }
  return fields;
}

/** limitBody turns the form values into the API's limit members. */
export function limitBody(v, { models = false } = {}) {
  const body = {
    rpm: v.rpm || 0, tpm: v.tpm || 0, concurrency: v.concurrency || 0,
    period_quota: v.period_quota || 0, period: v.period_quota > 0 ? v.period : null,
  };
  if (models) body.model_limits = String(v.model_limits || "").trim() ? JSON.parse(v.model_limits) : {};
  return body;
}

/** limitsCell summarises the rate limits, or "none". */
export function limitsCell(x) {
  const parts = [];
  if (x.rpm) parts.push(`${num(x.rpm)} rpm`);
  if (x.tpm) parts.push(`${num(x.tpm)} tpm`);
  if (x.concurrency) parts.push(`${num(x.concurrency)} at once`);
  const models = Object.keys(x.model_limits || {}).length;
  if (models) parts.push(`${models} model limit${models > 1 ? "s" : ""}`);
  return parts.length ? parts.join(" · ") : h("span", { class: "muted" }, "none");
}

/** budgetCell shows the period spending against the budget and its reset. */
export function budgetCell(x) {
  if (!x.period_quota) return h("span", { class: "muted" }, "none");
  const pct = Math.min(100, Math.round((100 * (x.period_used_quota || 0)) / x.period_quota));
  return h("span", { title: x.period_resets_at ? `resets ${when(x.period_resets_at)}` : "" },
    `${num(x.period_used_quota || 0)} / ${num(x.period_quota)} per ${x.period} (${pct}%)`,
    x.period_resets_at ? h("span", { class: "muted" }, ` · resets ${when(x.period_resets_at)}`) : null);
}
