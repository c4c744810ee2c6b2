// The installed plugins tab: one card per plugin key with its state, its
// meta summary and every stored version.
import { h, when, badge, statusBadge } from "../dom.js";
import { api, items } from "../api.js";
import { alertBox, showError, confirmDialog, toast } from "../ui.js";
import { t as tr } from "../i18n.js";
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
      h("p", {}, tr("pl.noneInstalled")),
      h("div", { class: "actions center" },
        h("button", { type: "button", class: "primary", onclick: () => goTo("upload") }, tr("pl.uploadOne")),
        h("button", { type: "button", onclick: () => goTo("marketplace") }, tr("pl.browse")))));
    return;
  }
  el.replaceChildren(h("p", { class: "muted" }, tr(plugins.length === 1 ? "pl.count1" : "pl.count", { n: plugins.length })),
    ...plugins.map((p) => pluginCard(p, reload)));
}

// stateBadges says whether the plugin serves requests. A held-back plugin
// is switched on but kept out of the runtime by a conflict, so "enabled"
// alone would mislead.
function stateBadges(p) {
  const out = [];
  if (p.held_back) out.push(badge(tr("pl.heldBackBadge"), "warn"));
  else out.push(statusBadge(p.enabled ? "enabled" : "disabled"));
  if (p.load_error) out.push(badge(tr("pl.notLoaded"), "bad"));
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
      h("div", { class: "badges" }, h("span", { class: "badge info" }, tr("pl.active", { version: p.active_version || "—" })), stateBadges(p))),
    h("div", { class: "actions" }, toggleButtons(p, alert, reload),
      h("button", { type: "button", class: "small danger", "aria-label": tr("pl.deletePluginKey", { key: p.key }),
        onclick: () => deletePlugin(p, alert, reload) }, tr("pl.deletePlugin"))));
  return h("article", { class: "card plugin", id: `plugin-${p.key}`, "aria-label": tr("pl.pluginAria", { key: p.key }) },
    head,
    text(s.description) ? h("p", { class: "muted plugin-desc" }, text(s.description)) : null,
    p.load_error ? h("p", { class: "alert error" }, tr("pl.loadError", { error: p.load_error })) : null,
    p.summary ? facts(s) : null,
    alert,
    h("h4", {}, tr("pl.versions")),
    versionsTable(p, alert, reload));
}

function facts(s) {
  const rows = [
    [tr("pl.f.models"), list(s.models)],
    [tr("pl.f.protocols"), list(s.protocols)],
    [tr("pl.f.routes"), String(s.routes || 0)],
    [tr("pl.f.channelTypes"), list(s.channelTypes)],
    [tr("pl.f.fetchMode"), s.fetchMode || "—"],
    [tr("pl.f.author"), authorName(s.author) || "—"],
  ];
  if (s.upstreams && s.upstreams.length) rows.push([tr("pl.f.upstreams"), list(s.upstreams)]);
  return h("dl", { class: "facts" }, rows.map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", {}, v))));
}

// toggleButtons: a held-back plugin is already switched on, so "Retry
// enable" only asks whether its conflict is gone; forcing it would change
// nothing and is not offered.
function toggleButtons(p, alert, reload) {
  const set = (enabled, label, aria, offerForce = true) => h("button", { type: "button", class: "small", "aria-label": tr(aria, { key: p.key }),
    onclick: () => forceable(alert, (force) => api("POST", pluginPath(p.key, "status"), force ? { enabled, force } : { enabled }),
      async () => { toast(tr(enabled ? "pl.nowEnabled" : "pl.nowDisabled", { key: p.key })); await reload(); }, { offerForce }) }, label);
  const disable = () => set(false, tr("common.disable"), "pl.disablePlugin");
  if (p.held_back) return [set(true, tr("pl.retry"), "pl.retryPlugin", false), disable()];
  return p.enabled ? disable() : set(true, tr("common.enable"), "pl.enablePlugin");
}

function versionsTable(p, alert, reload) {
  const versions = [...(p.versions || [])].reverse();
  const rows = versions.map((v) => {
    const active = v.version === p.active_version;
    return h("tr", { "data-version": v.version },
      h("td", {}, h("strong", {}, v.version), active ? [" ", badge(tr("pl.activeBadge"), "info")] : null),
      h("td", {}, v.origin === "marketplace" && v.origin_url ? h("span", { title: v.origin_url }, tr("pl.origin.marketplace")) : originName(v.origin)),
      h("td", {}, when(v.created_at), v.uploaded_by ? h("span", { class: "muted" }, tr("pl.by", { user: v.uploaded_by })) : null),
      h("td", {}, shortHash(v.sha256)),
      h("td", {}, h("div", { class: "actions" },
        active ? null : h("button", { type: "button", class: "small", "aria-label": tr("pl.activateAria", { key: p.key, version: v.version }),
          onclick: () => forceable(alert, (force) => api("POST", pluginPath(p.key, "activate"), force ? { version: v.version, force } : { version: v.version }),
            async () => { toast(tr("pl.nowActive", { key: p.key, version: v.version })); await reload(); }) }, tr("pl.activate")),
        h("button", { type: "button", class: "small", "aria-label": tr("pl.sourceOf", { title: `${p.key} ${v.version}` }),
          onclick: () => sourceDialog(p.key, v.version).catch((e) => showError(alert, e)) }, tr("pl.source")),
        active ? null : h("button", { type: "button", class: "small danger", "aria-label": tr("pl.deleteVersion", { key: p.key, version: v.version }),
          onclick: () => deleteVersion(p, v.version, alert, reload) }, tr("common.delete")))));
  });
  return h("div", { class: "table-wrap" }, h("table", {},
    h("caption", { class: "visually-hidden" }, tr("pl.versionsOf", { key: p.key })),
    h("thead", {}, h("tr", {}, [tr("pl.c.version"), tr("pl.c.origin"), tr("pl.c.stored"), "SHA-256", tr("common.actions")].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows)));
}

async function deleteVersion(p, version, alert, reload) {
  if (!await confirmDialog(tr("pl.confirmVersion", { key: p.key, version }))) return;
  showError(alert, null);
  try {
    await api("DELETE", pluginPath(p.key, "versions", version));
    toast(tr("pl.versionDeleted", { key: p.key, version }));
    await reload();
  } catch (e) {
    showError(alert, e);
  }
}

async function deletePlugin(p, alert, reload) {
  const n = (p.versions || []).length;
  if (!await confirmDialog(tr(n === 1 ? "pl.confirmPlugin1" : "pl.confirmPlugin", { key: p.key, n }))) return;
  showError(alert, null);
  try {
    await api("DELETE", pluginPath(p.key));
    toast(tr("pl.pluginDeleted", { key: p.key }));
    await reload();
  } catch (e) {
    // 409 plugin_in_use names the channels; keep it on the card so the
    // user can read which ones to change.
    showError(alert, e);
    alert.scrollIntoView({ block: "nearest" });
  }
}

// originName shows where a version came from in the user's language.
function originName(origin) {
  return origin === "marketplace" || origin === "upload" ? tr(`pl.origin.${origin}`) : origin || "—";
}
