// The marketplace tab: index sources (identified by their URL) and the
// merged catalogue of every source, with install.
import { h, when, badge } from "../dom.js";
import { api, items } from "../api.js";
import { fieldSet, alertBox, showError, confirmDialog, table, toast } from "../ui.js";
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
  const catalogue = h("div", { id: "market-catalogue" }, h("p", { class: "muted" }, "Loading the catalogue…"));
  el.replaceChildren(
    h("section", { class: "card", "aria-labelledby": "mk-sources" }, h("h2", { id: "mk-sources" }, "Sources"),
      h("p", { class: "muted" }, "A source is the address of a marketplace index.json. Every plugin file it lists is checked against the index's SHA-256 and validated like an upload."),
      addSourceForm(alert, reload), alert, sourcesTable(sources, alert, reload)),
    h("section", { class: "card", "aria-labelledby": "mk-catalogue" }, h("h2", { id: "mk-catalogue" }, "Catalogue"), catalogue));
  await loadCatalogue(catalogue, sources.length, onInstalled);
}

function addSourceForm(alert, reload) {
  const set = fieldSet([{ name: "url", label: "Index address", type: "url", required: true,
    placeholder: "https://plugins.example.com/index.json" }]);
  set.el.className = "grow";
  const form = h("form", { novalidate: true, class: "filters", "aria-label": "Add a marketplace source" }, set.el,
    h("button", { type: "submit", class: "primary", id: "market-add" }, "Add source"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    showError(alert, null);
    try {
      await api("POST", `${BASE}/marketplace/sources`, { url: v.url.trim() });
      toast("Source added");
      await reload();
    } catch (e) {
      showError(alert, e);
    }
  });
  return form;
}

function sourcesTable(sources, alert, reload) {
  return table("Marketplace sources", [
    { label: "Address", cell: (s) => h("code", { class: "break" }, s.url) },
    { label: "Added", cell: (s) => when(s.created_at) },
    { label: "Actions", cell: (s) => h("button", { type: "button", class: "small danger", "aria-label": `Remove source ${s.url}`,
      onclick: async () => {
        if (!await confirmDialog(`Remove the source ${s.url}? Plugins installed from it stay installed.`, "Remove")) return;
        try {
          await api("DELETE", `${BASE}/marketplace/sources?url=${encodeURIComponent(s.url)}`);
          toast("Source removed");
          await reload();
        } catch (e) {
          showError(alert, e);
        }
      } }, "Remove") },
  ], sources, "No sources yet. Add the address of a marketplace index to browse its plugins.");
}

async function loadCatalogue(el, sourceCount, onInstalled) {
  if (!sourceCount) {
    el.replaceChildren(h("div", { class: "table-wrap" }, h("p", { class: "empty" }, "Add a source to browse its plugins.")));
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
    showError(alert, { message: "Some sources could not be read:", problems: failed.map((f) => ({ path: f.source, message: f.message })) });
  }
  const reload = () => loadCatalogue(el, sourceCount, onInstalled);
  el.replaceChildren(alert, table("Marketplace catalogue", [
    { label: "Plugin", cell: (p) => h("div", {}, h("strong", {}, p.name || p.key), " ", h("code", {}, p.key),
      text(p.description) ? h("div", { class: "muted small" }, text(p.description)) : null) },
    { label: "Author", cell: (p) => authorName(p.author) || h("span", { class: "muted" }, "—") },
    { label: "Source", cell: (p) => h("span", { title: p.source }, hostOf(p.source)) },
    { label: "Installed", cell: (p) => (p.installed ? badge(`active ${p.active_version || "—"}`, "ok") : h("span", { class: "muted" }, "no")) },
    { label: "Install", cell: (p) => installControls(p, alert, async () => { await onInstalled(); await reload(); }) },
  ], items(data), "The sources list no plugins."));
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
  const sel = h("select", { "aria-label": `Version of ${p.key} to install` }, [...versions].reverse().map((v) => h("option", { value: v }, v)));
  const activate = h("input", { type: "checkbox", checked: !p.installed, "aria-label": `Activate ${p.key} after installing` });
  const btn = h("button", { type: "button", class: "small primary", "aria-label": `Install ${p.key}`, disabled: !versions.length }, "Install");
  btn.addEventListener("click", async () => {
    btn.disabled = true;
    showError(alert, null);
    try {
      const r = await api("POST", `${BASE}/marketplace/install`, { source: p.source, key: p.key, version: sel.value, activate: activate.checked });
      toast(r.unchanged ? `${r.key} ${r.version} was already installed` : `Installed ${r.key} ${r.version}${r.active ? " (active)" : ""}`);
      await done();
    } catch (e) {
      showError(alert, e);
    } finally {
      btn.disabled = false;
    }
  });
  return h("div", { class: "actions nowrap" }, sel, h("label", { class: "check inline" }, activate, "activate"), btn);
}
