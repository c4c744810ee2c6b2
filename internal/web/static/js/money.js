// Money: quota units and their value in US dollars. The rate comes from
// GET /api/status (quota_per_usd) and is set once at start.
import { t, lang } from "./i18n.js";

let perUSD = 500000;

/** setQuotaPerUSD sets the rate the server uses. */
export function setQuotaPerUSD(n) {
  if (Number(n) > 0) perUSD = Number(n);
}

/** quotaPerUSD is the current rate. */
export function quotaPerUSD() {
  return perUSD;
}

function locale() {
  return lang() === "zh" ? "zh-CN" : "en-US";
}

/** usd formats a quota amount as dollars, with more digits for small sums. */
export function usd(q) {
  return dollars(Number(q) / perUSD);
}

/** dollars formats a US-dollar amount (a number or a decimal string). */
export function dollars(v) {
  const d = Number(v);
  if (!Number.isFinite(d)) return "—";
  const small = Math.abs(d) > 0 && Math.abs(d) < 0.01;
  return new Intl.NumberFormat(locale(), { style: "currency", currency: "USD",
    minimumFractionDigits: small ? 4 : 2, maximumFractionDigits: small ? 6 : 2 }).format(d);
}

/** money formats quota units followed by their dollar value; -1 is unlimited. */
export function money(q) {
  if (q === null || q === undefined || Number.isNaN(Number(q))) return "—";
  if (Number(q) === -1) return t("money.unlimited");
  return `${new Intl.NumberFormat(locale()).format(Number(q))} (${usd(q)})`;
}

/** toQuota converts an amount typed in unit ("quota" or "usd") to whole quota units. */
export function toQuota(amount, unit) {
  const n = Number(amount);
  if (!Number.isFinite(n)) return NaN;
  return unit === "usd" ? Math.round(n * perUSD) : Math.round(n);
}

/** unitField is the field spec of the quota/dollar switch for an amount field. */
export function unitField(name = "unit") {
  return { name, label: t("money.unit"), type: "select", value: "usd",
    options: [["usd", t("money.usd")], ["quota", t("money.quota")]], hint: t("money.rate", { quota: perUSD.toLocaleString() }) };
}
