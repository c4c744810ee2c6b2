// Traffic control in the console: the rate-limit and budget fields of keys
// and users (CONTRACT.md §10), and how a subject's period spending is shown.
import { h, num, when } from "./dom.js";
import { jsonObject } from "./ui.js";
import { t } from "./i18n.js";
import { money, quotaPerUSD, toQuota, unitField } from "./money.js";

const PERIODS = ["", "day", "week", "month"];

/** limitFields are the form fields for x's limits; models adds model_limits (keys). */
export function limitFields(x, { models = false } = {}) {
  const count = (name, label, hint) => ({ name, label, type: "number", min: 0, step: 1, value: x?.[name] || "", hint });
  // The budget is typed in the unit chosen beside it, dollars by default.
  const unit = { ...unitField("period_quota_unit"), label: t("money.budgetUnit") };
  const fields = [
    count("rpm", t("lim.rpm"), t("lim.rpmHint")),
    count("tpm", t("lim.tpm"), t("lim.tpmHint")),
    count("concurrency", t("lim.concurrency"), ""),
    { name: "period_quota", label: t("lim.budget"), type: "number", min: 0, step: "any",
      value: x?.period_quota ? inUnit(x.period_quota, unit.value) : "", hint: t("lim.budgetHint") },
    unit,
    { name: "period", label: t("lim.period"), type: "select", options: PERIODS.map((p) => [p, t(`lim.p.${p || "none"}`)]), value: x?.period || "",
      validate: (v, all) => (all.period_quota > 0 && !v ? t("lim.pickPeriod") : "") },
  ];
  if (models) {
    fields.push({ name: "model_limits", label: t("lim.modelLimits"), type: "json", rows: 3,
      value: x?.model_limits && Object.keys(x.model_limits).length ? x.model_limits : "",
      placeholder: '{"gpt-4o": {"rpm": 60, "tpm": 100000}}', validate: jsonObject });
  }
  return fields;
}

/** inUnit shows quota units q in unit ("usd" or "quota") for a form field. */
export function inUnit(q, unit) {
  return unit === "usd" ? Number(q) / quotaPerUSD() : Number(q);
}

/** limitBody turns the form values into the API's limit members. */
export function limitBody(v, { models = false } = {}) {
  const budget = v.period_quota ? toQuota(v.period_quota, v.period_quota_unit) : 0;
  const body = {
    rpm: v.rpm || 0, tpm: v.tpm || 0, concurrency: v.concurrency || 0,
    period_quota: budget, period: budget > 0 ? v.period : null,
  };
  if (models) body.model_limits = String(v.model_limits || "").trim() ? JSON.parse(v.model_limits) : {};
  return body;
}

/** limitsCell summarises the rate limits, or "none". */
export function limitsCell(x) {
  const parts = [];
  if (x.rpm) parts.push(t("lim.rpmCell", { n: num(x.rpm) }));
  if (x.tpm) parts.push(t("lim.tpmCell", { n: num(x.tpm) }));
  if (x.concurrency) parts.push(t("lim.concCell", { n: num(x.concurrency) }));
  const models = Object.keys(x.model_limits || {}).length;
  if (models) parts.push(t(models > 1 ? "lim.modelCount" : "lim.modelCount1", { n: models }));
  return parts.length ? parts.join(" · ") : h("span", { class: "muted" }, t("common.none"));
}

/** budgetCell shows the period spending against the budget, in quota and dollars, and its reset. */
export function budgetCell(x) {
  if (!x.period_quota) return h("span", { class: "muted" }, t("common.none"));
  const pct = Math.min(100, Math.round((100 * (x.period_used_quota || 0)) / x.period_quota));
  const period = t(`lim.per.${x.period}`) === `lim.per.${x.period}` ? x.period : t(`lim.per.${x.period}`);
  const resets = x.period_resets_at ? t("lim.resets", { when: when(x.period_resets_at) }) : "";
  return h("span", { title: resets },
    t("lim.budgetCell", { used: money(x.period_used_quota || 0), budget: money(x.period_quota), period, pct }),
    resets ? h("span", { class: "muted" }, ` · ${resets}`) : null);
}
