// Helpers shared by the task plugin tabs.
import { h } from "../dom.js";
import { api } from "../api.js";
import { showError } from "../ui.js";
import { t as tr, lang } from "../i18n.js";

/** BASE is the root of the plugin administration API (CONTRACT §7). */
export const BASE = "/api/plugin/task";

/** pluginPath builds an API path under one plugin key. */
export function pluginPath(key, ...rest) {
  return [BASE, encodeURIComponent(key), ...rest.map((r) => encodeURIComponent(r))].join("/");
}

/**
 * text picks a readable string from a LocalizedText: the server normalises
 * it to a map of locale to text, but index files may carry a bare string.
 */
export function text(t) {
  if (!t) return "";
  if (typeof t === "string") return t;
  if (typeof t !== "object") return String(t);
  // The console's chosen language first, then the browser's.
  const langs = [lang() === "zh" ? "zh-CN" : lang(), ...(navigator.languages || []), "en"];
  for (const l of langs) {
    if (t[l]) return t[l];
    const short = l.split("-")[0];
    if (t[short]) return t[short];
  }
  return Object.values(t).find((v) => typeof v === "string") || "";
}

/** authorName reads an author given as {name, url} or as a plain string. */
export function authorName(a) {
  if (!a) return "";
  return typeof a === "string" ? a : a.name || "";
}

/** shortHash shows the start of a sha256 with the whole value on hover. */
export function shortHash(sha) {
  if (!sha) return h("span", { class: "muted" }, "—");
  return h("code", { title: sha }, sha.slice(0, 12) + "…");
}

/** list renders strings comma-separated, or a muted dash when empty. */
export function list(values) {
  const v = (values || []).filter((x) => x !== null && x !== undefined && x !== "");
  return v.length ? v.join(", ") : h("span", { class: "muted" }, "—");
}

/**
 * forceable runs an action that the server may refuse with plugin_conflict.
 * The refusal and its problems go into alert together with a button that
 * repeats the action with force, which stores the change but keeps the
 * plugin held back until the conflict is gone.
 */
export async function forceable(alert, run, onDone, { offerForce = true } = {}) {
  showError(alert, null);
  try {
    await run(false);
    await onDone();
  } catch (e) {
    showError(alert, e);
    if (e.code !== "plugin_conflict" || !offerForce) return;
    const again = h("button", { type: "button", class: "small", onclick: async () => {
      again.disabled = true;
      try {
        await run(true);
        showError(alert, null);
        await onDone();
      } catch (e2) {
        showError(alert, e2);
      }
    } }, tr("pl.force"));
    alert.append(h("div", { class: "actions", style: "margin-top:.5rem" }, again));
  }
}

/** sourceDialog shows one stored version's source with its checksum. */
export async function sourceDialog(key, version) {
  const s = await api("GET", `${pluginPath(key, "source")}?version=${encodeURIComponent(version)}`);
  const title = `${s.key} ${s.version}`;
  const dlg = h("dialog", { class: "wide", "aria-label": tr("pl.sourceOf", { title }) },
    h("h2", {}, tr("pl.sourceOf", { title })),
    h("p", { class: "muted" }, "SHA-256 ", h("code", { class: "break" }, s.sha256 || "—")),
    h("pre", { class: "source", id: "plugin-source" }, s.source),
    h("div", { class: "dialog-actions" }, h("button", { type: "button", class: "primary", onclick: () => dlg.close() }, tr("common.close"))));
  dlg.addEventListener("close", () => dlg.remove());
  document.body.append(dlg);
  dlg.showModal();
}

/**
 * loading runs one (re)load of el: work fetches and returns a function that
 * renders. When loads overlap (a tab shown while an upload refreshes the
 * same list) only the latest one renders, so a stale answer never replaces
 * a newer one, and el carries aria-busy until the latest has finished.
 */
export async function loading(el, work) {
  el.loadSeq = (el.loadSeq || 0) + 1;
  const seq = el.loadSeq;
  el.setAttribute("aria-busy", "true");
  try {
    const render = await work();
    if (seq === el.loadSeq) await render();
  } finally {
    if (seq === el.loadSeq) el.removeAttribute("aria-busy");
  }
}

/** failure renders a load failure as an alert. */
export function failure(e) {
  const box = h("div", { class: "alert error", role: "alert" });
  showError(box, e);
  return box;
}
