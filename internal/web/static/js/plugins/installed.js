// The installed plugins tab: one card per plugin key with its state, its
// meta summary and every stored version.
import { h, when, badge } from "../dom.js";
import { api, items } from "../api.js";
import { alertBox, showError, confirmDialog, toast } from "../ui.js";
import { BASE, pluginPath, text, authorName, shortHash, list, forceable, sourceDialog, loading, failure } from "./common.js";

/**
 * loadInstalled fills el with the plugin cards (or a refusal); goTo(tab)
 * switches to another tab of the page, offered when nothing is installed.
 */
export function loadInstalled(el, goTo) {
  return loading(el, async () => {
    let data;
    try {
      data = await api("GET", BASE);
    } catch (e) {
      return () => el.replaceChildren(failure(e));
    }
    return () => renderInstalled(el, items(data), goTo);
  });
}

function renderInstalled(el, plugins, goTo) {
  const reload = () => loadInstalled(el, goTo);
  if (!plugins.length) {
    el.replaceChildren(h("div", { class: "table-wrap empty" },
      h("p", {}, "No plugins installed yet. Plugins add asynchronous video, image and music APIs to the gateway."),
      h("div", { class: "actions center" },
        h("button", { type: "button", class: "primary", onclick: () => goTo("upload") }, "Upload a plugin"),
        h("button", { type: "button", onclick: () => goTo("marketplace") }, "Browse a marketplace"))));
    return;
  }
  el.replaceChildren(h("p", { class: "muted" }, `${plugins.length} plugin${plugins.length === 1 ? "" : "s"} installed.`),
    ...plugins.map((p) => pluginCard(p, reload)));
}

// stateBadges says whether the plugin serves requests. A held-back plugin
// is switched on but kept out of the runtime by a conflict, so "enabled"
// alone would mislead.
function stateBadges(p) {
  const out = [];
  if (p.held_back) out.push(badge("held back"));
  else out.push(badge(p.enabled ? "enabled" : "disabled"));
  if (p.load_error) out.push(badge("not loaded", "bad"));
  return out;
}

function pluginCard(p, reload) {
  const alert = alertBox();
  alert.id = `plugin-error-${p.key}`;
  const name = p.name || p.key;
  const s = p.summary || {};
  const head = h("div", { class: "plugin-head" },
    h("div", { class: "plugin-title" },
      h("h3", {}, name, " ", h("code", { class: "key" }, p.key)),
      h("div", { class: "badges" }, h("span", { class: "badge info" }, `active ${p.active_version || "—"}`), stateBadges(p))),
    h("div", { class: "actions" }, toggleButtons(p, alert, reload),
      h("button", { type: "button", class: "small danger", "aria-label": `Delete plugin ${p.key}`,
        onclick: () => deletePlugin(p, alert, reload) }, "Delete plugin")));
  return h("article", { class: "card plugin", id: `plugin-${p.key}`, "aria-label": `Plugin ${p.key}` },
    head,
    text(s.description) ? h("p", { class: "muted plugin-desc" }, text(s.description)) : null,
    p.load_error ? h("p", { class: "alert error" }, `The active version could not be loaded: ${p.load_error}`) : null,
    p.summary ? facts(s) : null,
    alert,
    h("h4", {}, "Versions"),
    versionsTable(p, alert, reload));
}

function facts(s) {
  const rows = [
    ["Models", list(s.models)],
    ["Protocols", list(s.protocols)],
    ["Native routes", String(s.routes || 0)],
    ["Channel types", list(s.channelTypes)],
    ["Fetch mode", s.fetchMode || "—"],
    ["Author", authorName(s.author) || "—"],
  ];
  if (s.upstreams && s.upstreams.length) rows.push(["Upstreams", list(s.upstreams)]);
  return h("dl", { class: "facts" }, rows.map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", {}, v))));
}

// toggleButtons: a held-back plugin is already switched on, so "Retry
// enable" only asks whether its conflict is gone; forcing it would change
// nothing and is not offered.
function toggleButtons(p, alert, reload) {
  const set = (enabled, label, offerForce = true) => h("button", { type: "button", class: "small", "aria-label": `${label} plugin ${p.key}`,
    onclick: () => forceable(alert, (force) => api("POST", pluginPath(p.key, "status"), force ? { enabled, force } : { enabled }),
      async () => { toast(`${p.key} ${enabled ? "enabled" : "disabled"}`); await reload(); }, { offerForce }) }, label);
  if (p.held_back) return [set(true, "Retry enable", false), set(false, "Disable")];
  return p.enabled ? set(false, "Disable") : set(true, "Enable");
}

function versionsTable(p, alert, reload) {
  const versions = [...(p.versions || [])].reverse();
  const rows = versions.map((v) => {
    const active = v.version === p.active_version;
    return h("tr", { "data-version": v.version },
      h("td", {}, h("strong", {}, v.version), active ? [" ", badge("active")] : null),
      h("td", {}, v.origin === "marketplace" && v.origin_url ? h("span", { title: v.origin_url }, "marketplace") : v.origin || "—"),
      h("td", {}, when(v.created_at), v.uploaded_by ? h("span", { class: "muted" }, ` by ${v.uploaded_by}`) : null),
      h("td", {}, shortHash(v.sha256)),
      h("td", {}, h("div", { class: "actions" },
        active ? null : h("button", { type: "button", class: "small", "aria-label": `Activate ${p.key} ${v.version}`,
          onclick: () => forceable(alert, (force) => api("POST", pluginPath(p.key, "activate"), force ? { version: v.version, force } : { version: v.version }),
            async () => { toast(`${p.key} ${v.version} is now active`); await reload(); }) }, "Activate"),
        h("button", { type: "button", class: "small", "aria-label": `Source of ${p.key} ${v.version}`,
          onclick: () => sourceDialog(p.key, v.version).catch((e) => showError(alert, e)) }, "Source"),
        active ? null : h("button", { type: "button", class: "small danger", "aria-label": `Delete ${p.key} ${v.version}`,
          onclick: () => deleteVersion(p, v.version, alert, reload) }, "Delete"))));
  });
  return h("div", { class: "table-wrap" }, h("table", {},
    h("caption", { class: "visually-hidden" }, `Versions of ${p.key}`),
    h("thead", {}, h("tr", {}, ["Version", "Origin", "Stored", "SHA-256", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows)));
}

async function deleteVersion(p, version, alert, reload) {
  if (!await confirmDialog(`Delete version ${version} of ${p.key}? A published version cannot be uploaded again with a different source.`)) return;
  showError(alert, null);
  try {
    await api("DELETE", pluginPath(p.key, "versions", version));
    toast(`${p.key} ${version} deleted`);
    await reload();
  } catch (e) {
    showError(alert, e);
  }
}

async function deletePlugin(p, alert, reload) {
  const n = (p.versions || []).length;
  if (!await confirmDialog(`Delete plugin ${p.key} and its ${n} version${n === 1 ? "" : "s"}? Channels that bind it must be changed or deleted first.`)) return;
  showError(alert, null);
  try {
    await api("DELETE", pluginPath(p.key));
    toast(`Plugin ${p.key} deleted`);
    await reload();
  } catch (e) {
    // 409 plugin_in_use names the channels; keep it on the card so the
    // user can read which ones to change.
    showError(alert, e);
    alert.scrollIntoView({ block: "nearest" });
  }
}
