// The marketplace tab: index sources (identified by their URL) and the
// merged catalogue of every source, with install.
import { h, when, badge } from "../dom.js";
import { api, items } from "../api.js";
import { fieldSet, alertBox, showError, confirmDialog, table, toast } from "../ui.js";
import { t as tr } from "../i18n.js";
import { BASE, text, authorName, loading, failure } from "./common.js";

/** loadMarket fills el with the sources and the catalogue. */
export function loadMarket(el, onInstalled) {
  return loading(el, async () => {
    try {
      const sources = items(await api("GET", `${BASE}/marketplace/sources`));
      return () => renderMarket(el, sources, onInstalled);
    } catch (e) {
      return () => el.replaceChildren(failure(e));
    }
  });
}

async function renderMarket(el, sources, onInstalled) {
  const reload = () => loadMarket(el, onInstalled);
  const alert = alertBox();
  alert.id = "market-error";
  const catalogue = h("div", { id: "market-catalogue" }, h("p", { class: "muted" }, tr("pl.loadingCatalogue")));
  el.replaceChildren(
    h("section", { class: "card", "aria-labelledby": "mk-sources" }, h("h2", { id: "mk-sources" }, tr("pl.sources")),
      h("p", { class: "muted" }, tr("pl.sourcesIntro")),
      addSourceForm(alert, reload), alert, sourcesTable(sources, alert, reload)),
    h("section", { class: "card", "aria-labelledby": "mk-catalogue" }, h("h2", { id: "mk-catalogue" }, tr("pl.catalogue")), catalogue));
  await loadCatalogue(catalogue, sources.length, onInstalled);
}

function addSourceForm(alert, reload) {
  const set = fieldSet([{ name: "url", label: tr("pl.indexAddr"), type: "url", required: true,
    placeholder: "https://plugins.example.com/index.json" }]);
  set.el.className = "grow";
  const form = h("form", { novalidate: true, class: "filters", "aria-label": tr("pl.addSourceAria") }, set.el,
    h("button", { type: "submit", class: "primary", id: "market-add" }, tr("pl.addSource")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    showError(alert, null);
    try {
      await api("POST", `${BASE}/marketplace/sources`, { url: v.url.trim() });
      toast(tr("pl.sourceAdded"));
      await reload();
    } catch (e) {
      showError(alert, e);
    }
  });
  return form;
}

function sourcesTable(sources, alert, reload) {
  return table(tr("pl.sourcesCaption"), [
    { label: tr("pl.c.address"), cell: (s) => h("code", { class: "break" }, s.url) },
    { label: tr("pl.c.added"), cell: (s) => when(s.created_at) },
    { label: tr("common.actions"), cell: (s) => h("button", { type: "button", class: "small danger", "aria-label": tr("pl.removeSourceAria", { url: s.url }),
      onclick: async () => {
        if (!await confirmDialog(tr("pl.confirmRemove", { url: s.url }), tr("pl.remove"))) return;
        try {
          await api("DELETE", `${BASE}/marketplace/sources?url=${encodeURIComponent(s.url)}`);
          toast(tr("pl.sourceRemoved"));
          await reload();
        } catch (e) {
          showError(alert, e);
        }
      } }, tr("pl.remove")) },
  ], sources, tr("pl.noSources"));
}

async function loadCatalogue(el, sourceCount, onInstalled) {
  if (!sourceCount) {
    el.replaceChildren(h("div", { class: "table-wrap" }, h("p", { class: "empty" }, tr("pl.addToBrowse"))));
    return;
  }
  let data;
  try {
    data = await api("GET", `${BASE}/marketplace`);
  } catch (e) {
    const box = alertBox();
    showError(box, e);
    el.replaceChildren(box);
    return;
  }
  const alert = alertBox();
  // A source that fails is reported beside the others' plugins.
  const failed = data.errors || [];
  if (failed.length) {
    showError(alert, { message: tr("pl.someFailed"), problems: failed.map((f) => ({ path: f.source, message: f.message })) });
  }
  const reload = () => loadCatalogue(el, sourceCount, onInstalled);
  el.replaceChildren(alert, table(tr("pl.catalogueCaption"), [
    { label: tr("pl.c.plugin"), cell: (p) => h("div", {}, h("strong", {}, p.name || p.key), " ", h("code", {}, p.key),
      text(p.description) ? h("div", { class: "muted small" }, text(p.description)) : null) },
    { label: tr("pl.c.author"), cell: (p) => authorName(p.author) || h("span", { class: "muted" }, "—") },
    { label: tr("pl.c.source"), cell: (p) => h("span", { title: p.source }, hostOf(p.source)) },
    { label: tr("pl.c.installed"), cell: (p) => (p.installed ? badge(tr("pl.active", { version: p.active_version || "—" }), "ok") : h("span", { class: "muted" }, tr("common.no"))) },
    { label: tr("pl.c.install"), cell: (p) => installControls(p, alert, async () => { await onInstalled(); await reload(); }) },
  ], items(data), tr("pl.noPlugins")));
}

function hostOf(u) {
  try {
    return new URL(u).host;
  } catch {
    return u;
  }
}

function installControls(p, alert, done) {
  const versions = (p.versions || []).map((v) => v.version).filter(Boolean);
  const sel = h("select", { "aria-label": tr("pl.versionToInstall", { key: p.key }) }, [...versions].reverse().map((v) => h("option", { value: v }, v)));
  const activate = h("input", { type: "checkbox", checked: !p.installed, "aria-label": tr("pl.activateAfter", { key: p.key }) });
  const btn = h("button", { type: "button", class: "small primary", "aria-label": tr("pl.installAria", { key: p.key }), disabled: !versions.length }, tr("pl.install"));
  btn.addEventListener("click", async () => {
    btn.disabled = true;
    showError(alert, null);
    try {
      const r = await api("POST", `${BASE}/marketplace/install`, { source: p.source, key: p.key, version: sel.value, activate: activate.checked });
      toast(r.unchanged ? tr("pl.alreadyInstalled", { key: r.key, version: r.version })
        : tr("pl.installedMsg", { key: r.key, version: r.version }) + (r.active ? tr("pl.activeSuffix") : ""));
      await done();
    } catch (e) {
      showError(alert, e);
    } finally {
      btn.disabled = false;
    }
  });
  return h("div", { class: "actions nowrap" }, sel, h("label", { class: "check inline" }, activate, tr("pl.activateLabel")), btn);
}
