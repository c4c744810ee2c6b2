import { money } from "./money.js";
import { t, lang } from "./i18n.js";

// Small DOM helpers: the console builds its markup with h() so that every
// piece of server data goes through textContent and can never inject HTML.

/**
 * h creates an element. attrs keys starting with "on" add listeners; "class",
 * "text", "html"-free by design; boolean true sets an empty attribute and
 * false/null/undefined leaves it out. Children may be nodes, strings, arrays
 * or null.
 */
export function h(tag, attrs = {}, ...children) {
  const el = tag === "svg" || SVG_TAGS.has(tag)
    ? document.createElementNS("http://www.w3.org/2000/svg", tag)
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith("on") && typeof v === "function") {
      el.addEventListener(k.slice(2).toLowerCase(), v);
    } else if (k === "text") {
      el.textContent = String(v);
    } else if (k === "value" && "value" in el) {
      // The default too, so that form.reset() returns to this value
      // rather than to empty.
      if ("defaultValue" in el) el.defaultValue = v;
      el.value = v;
    } else if (k === "checked") {
      el.checked = el.defaultChecked = Boolean(v);
    } else if (k === "selected") {
      el.selected = el.defaultSelected = Boolean(v);
    } else {
      el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(el, children);
  return el;
}

const SVG_TAGS = new Set(["g", "rect", "line", "polyline", "circle", "text", "title", "desc", "path"]);

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** clear removes every child of el and returns it. */
export function clear(el) {
  el.replaceChildren();
  return el;
}

let idSeq = 0;
/** uid returns a document-unique id for label/aria wiring. */
export function uid(prefix = "f") {
  idSeq += 1;
  return `${prefix}-${idSeq}`;
}

const numberFmt = new Intl.NumberFormat();
/** num formats an integer with grouping. */
export function num(n) {
  return n === null || n === undefined || Number.isNaN(Number(n)) ? "—" : numberFmt.format(Number(n));
}

/** quota formats a quota amount with its dollar value; -1 means unlimited. */
export function quota(n) {
  return money(n);
}

/**
 * when formats a timestamp in the user's locale. Numbers are Unix seconds,
 * as the task API sends them (0 means "not yet"); strings are RFC 3339.
 */
export function when(ts) {
  if (!ts) return "—";
  const d = new Date(typeof ts === "number" ? ts * 1000 : ts);
  // Chinese pages show Chinese dates; English keeps the browser's own format.
  return Number.isNaN(d.getTime()) ? String(ts) : d.toLocaleString(lang() === "zh" ? "zh-CN" : undefined);
}

/** splitList turns "a, b,,c" into ["a","b","c"]. */
export function splitList(s) {
  return String(s || "").split(/[,\n]/).map((x) => x.trim()).filter(Boolean);
}

/** badge renders a status word with a colour that matches its meaning. */
export function badge(text, kind) {
  const k = kind || ({ enabled: "ok", SUCCESS: "ok", healthy: "ok", active: "info",
    disabled: "bad", FAILURE: "bad", error: "bad", refund: "warn", IN_PROGRESS: "info",
    QUEUED: "info", SUBMITTED: "info", NOT_START: "", UNKNOWN: "warn", "held back": "warn" })[text] || "";
  return h("span", { class: `badge ${k}` }, text);
}

/** statusBadge shows an enabled/disabled status in the user's language. */
export function statusBadge(status) {
  const kind = { enabled: "ok", disabled: "bad" }[status] || "";
  return badge(status === "enabled" || status === "disabled" ? t(`status.${status}`) : status, kind);
}
