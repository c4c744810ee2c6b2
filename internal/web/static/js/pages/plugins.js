// Task plugins (root): upload, versions, activation, enable/disable, delete,
// marketplace sources and install, dry run, and the runtime generation.
import { h, badge } from "../dom.js";
import { api, items } from "../api.js";
import { pageHead, table, fieldSet, alertBox, showError, confirmDialog, guard, toast } from "../ui.js";

const BASE = "/api/plugin/task";

export async function render(main) {
  const list = h("div", { id: "plugins-list" });
  const runtime = h("div", { id: "plugins-runtime" });
  const market = h("div", { id: "plugins-market" });
  main.append(pageHead("Task plugins", "Plugins adapt asynchronous upstream APIs (video, image, music) to the gateway."),
    uploadCard(refresh),
    h("section", { class: "card", "aria-labelledby": "pl-installed" }, h("h2", { id: "pl-installed" }, "Installed plugins"), list),
    h("section", { class: "card", "aria-labelledby": "pl-runtime" }, h("h2", { id: "pl-runtime" }, "Runtime status"), runtime),
    h("section", { class: "card", "aria-labelledby": "pl-market" }, h("h2", { id: "pl-market" }, "Marketplace"), market),
    dryRunCard());

  async function refresh() {
    await Promise.all([loadList(list, refresh), loadRuntime(runtime), loadMarket(market, refresh)]);
  }
  await refresh();
}

function uploadCard(onDone) {
  const set = fieldSet([
    { name: "file", label: "Plugin file", type: "file", required: true, accept: ".js,.mjs,text/javascript",
      hint: "The plugin.js module. It is compiled and validated before anything is stored." },
    { name: "activate", label: "Make this version active", type: "checkbox", value: false },
    { name: "enabled", label: "Enabled", type: "checkbox", value: true },
    { name: "force", label: "Store despite conflicts with other plugins (stays disabled until resolved)", type: "checkbox", value: false },
  ]);
  const alert = alertBox();
  alert.id = "plugin-upload-error";
  const ok = h("div", { class: "alert ok", role: "status", id: "plugin-upload-ok" });
  const submit = h("button", { type: "submit", class: "primary", id: "plugin-upload" }, "Upload");
  const form = h("form", { novalidate: true, "aria-labelledby": "pl-upload" }, set.el, alert, ok, submit);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    const fd = new FormData();
    fd.append("file", v.file, v.file.name);
    fd.append("activate", String(v.activate));
    fd.append("enabled", String(v.enabled));
    fd.append("force", String(v.force));
    submit.disabled = true;
    showError(alert, null);
    ok.textContent = "";
    try {
      const r = await api("POST", BASE, fd);
      ok.textContent = `Stored ${r.key} ${r.version}${r.active ? " (active)" : ""}${r.enabled === false ? ", disabled" : ""}.`;
      form.reset();
      await onDone();
    } catch (e) {
      showError(alert, e);
    } finally {
      submit.disabled = false;
    }
  });
  return h("section", { class: "card" }, h("h2", { id: "pl-upload" }, "Upload a plugin"), form);
}

// unavailable renders a load failure; a 404 means this server has no plugin
// administration at all, which deserves a plain sentence, not "HTTP 404".
function unavailable(el, e) {
  if (e.status === 404) {
    el.replaceChildren(h("p", { class: "empty" }, "Plugin administration is not available on this server."));
    return;
  }
  const box = alertBox();
  showError(box, e);
  el.replaceChildren(box);
}

// text picks a readable string from a LocalizedText (a string or a map of
// language to string).
function text(t) {
  if (!t) return "";
  if (typeof t === "string") return t;
  return t.en || t["en-US"] || Object.values(t)[0] || "";
}

function versionsOf(p) {
  return (p.versions || []).map((v) => (typeof v === "string" ? v : v.version)).filter(Boolean);
}

function activeOf(p) {
  return p.active_version || (typeof p.active === "string" ? p.active : "") ||
    ((p.versions || []).find((v) => v && v.active) || {}).version || "";
}

async function loadList(el, refresh) {
  let data;
  try {
    data = await api("GET", BASE);
  } catch (e) {
    unavailable(el, e);
    return;
  }
  const plugins = items(data, "plugins");
  el.replaceChildren(table("Installed plugins", [
    { label: "Key", cell: (p) => h("code", {}, p.key) },
    { label: "Name", cell: (p) => text(p.name || (p.meta && p.meta.name)) },
    { label: "Active version", cell: (p) => activeOf(p) || "—" },
    { label: "Status", cell: (p) => badge(p.enabled === false ? "disabled" : "enabled") },
    { label: "Versions", cell: (p) => versionControls(p, refresh) },
    { label: "Actions", cell: (p) => h("div", { class: "actions" },
      h("button", { type: "button", class: "small", "aria-label": `${p.enabled === false ? "Enable" : "Disable"} plugin ${p.key}`,
        onclick: () => guard(async () => { await api("POST", `${BASE}/${encodeURIComponent(p.key)}/status`, { enabled: p.enabled === false }); await refresh(); }) },
        p.enabled === false ? "Enable" : "Disable"),
      h("button", { type: "button", class: "small danger", "aria-label": `Delete plugin ${p.key}`,
        onclick: async () => { if (await confirmDialog(`Delete plugin ${p.key} and every version of it?`)) await guard(async () => { await api("DELETE", `${BASE}/${encodeURIComponent(p.key)}`); await refresh(); }, "Plugin deleted"); } },
        "Delete")) },
  ], plugins, "No plugins installed. Upload one above or install one from a marketplace."));
}

function versionControls(p, refresh) {
  const versions = versionsOf(p);
  const active = activeOf(p);
  const id = `ver-${p.key}`;
  const sel = h("select", { id, "aria-label": `Version of ${p.key}` }, versions.map((v) => h("option", { value: v, selected: v === active }, v + (v === active ? " (active)" : ""))));
  const key = encodeURIComponent(p.key);
  return h("div", { class: "actions" }, sel,
    h("button", { type: "button", class: "small", onclick: () => guard(async () => { await api("POST", `${BASE}/${key}/activate`, { version: sel.value }); await refresh(); }, "Version activated") }, "Activate"),
    h("button", { type: "button", class: "small", onclick: async () => {
      const src = await guard(() => fetch(`${BASE}/${key}/source?version=${encodeURIComponent(sel.value)}`, { credentials: "same-origin" }).then((r) => r.text()));
      if (src !== undefined) showSource(`${p.key} ${sel.value}`, src);
    } }, "Source"),
    h("button", { type: "button", class: "small danger", onclick: async () => {
      if (sel.value === active) { toast("The active version cannot be deleted; activate another one first.", "error"); return; }
      if (await confirmDialog(`Delete version ${sel.value} of ${p.key}?`)) await guard(async () => { await api("DELETE", `${BASE}/${key}/versions/${encodeURIComponent(sel.value)}`); await refresh(); }, "Version deleted");
    } }, "Delete version"));
}

function showSource(title, src) {
  const dlg = h("dialog", { "aria-label": `Source of ${title}`, style: "width:min(60rem,94vw)" }, h("h2", {}, title), h("pre", {}, src),
    h("div", { class: "dialog-actions" }, h("button", { type: "button", onclick: () => dlg.close() }, "Close")));
  dlg.addEventListener("close", () => dlg.remove());
  document.body.append(dlg);
  dlg.showModal();
}

async function loadRuntime(el) {
  try {
    const s = await api("GET", `${BASE}/runtime/status`);
    el.replaceChildren(h("p", {}, `Generation ${s.generation} · revision `, h("code", {}, s.revision || "—"), ` · node ${s.node || "—"}`),
      table("Runtime plugins", [
        { label: "Key", cell: (p) => h("code", {}, p.key) },
        { label: "Version", cell: (p) => p.version },
        { label: "Enabled", cell: (p) => badge(p.enabled ? "enabled" : "disabled") },
        { label: "Routes", cell: (p) => (p.routes || []).map((r) => (typeof r === "string" ? r : `${r.method || ""} ${r.path || ""}`.trim())).join(", ") || "—" },
        { label: "Protocols", cell: (p) => (p.protocols || []).join(", ") || "—" },
      ], s.plugins || [], "No plugin is live in this generation."));
  } catch (e) {
    unavailable(el, e);
  }
}

async function loadMarket(el, refresh) {
  const alert = alertBox();
  const set = fieldSet([{ name: "url", label: "Index address", type: "url", required: true, placeholder: "https://example.com/plugins/index.json" }]);
  const add = h("form", { novalidate: true, class: "filters", "aria-label": "Add a marketplace source" }, set.el, h("button", { type: "submit" }, "Add source"));
  add.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    try {
      await api("POST", `${BASE}/marketplace/sources`, { url: v.url });
      await loadMarket(el, refresh);
    } catch (e) {
      showError(alert, e);
    }
  });
  let sources = [];
  let catalogue = [];
  try {
    sources = items(await api("GET", `${BASE}/marketplace/sources`), "sources").map((s) => (typeof s === "string" ? { url: s } : s));
    catalogue = sources.length ? items(await api("GET", `${BASE}/marketplace`), "plugins") : [];
  } catch (e) {
    showError(alert, e);
  }
  el.replaceChildren(add, alert,
    h("h3", {}, "Sources"),
    table("Marketplace sources", [
      { label: "Address", cell: (s) => h("code", {}, s.url) },
      { label: "Actions", cell: (s) => h("button", { type: "button", class: "small danger", "aria-label": `Remove source ${s.url}`,
        onclick: () => guard(async () => { await api("DELETE", `${BASE}/marketplace/sources?url=${encodeURIComponent(s.url)}`); await loadMarket(el, refresh); }, "Source removed") }, "Remove") },
    ], sources, "No marketplace sources."),
    h("h3", { style: "margin-top:1rem" }, "Catalogue"),
    table("Marketplace catalogue", [
      { label: "Key", cell: (p) => h("code", {}, p.key) },
      { label: "Name", cell: (p) => text(p.name) },
      { label: "Version", cell: (p) => p.version || (p.versions || []).join(", ") },
      { label: "Description", cell: (p) => text(p.description) },
      { label: "Install", cell: (p) => h("button", { type: "button", class: "small",
        onclick: () => guard(async () => {
          await api("POST", `${BASE}/marketplace/install`, { source: p.source || (sources[0] && sources[0].url), key: p.key, version: p.version || (p.versions || [])[0] });
          await refresh();
        }, `Installed ${p.key}`) }, "Install") },
    ], catalogue, sources.length ? "The sources list no plugins." : "Add a source to browse its plugins."));
}

function dryRunCard() {
  const set = fieldSet([
    { name: "source", label: "Plugin source", type: "textarea", rows: 8, required: true },
    { name: "hook", label: "Hook to run (optional)", placeholder: "protocols.std_video.decodeRequest" },
    { name: "args", label: "Arguments (JSON array)", type: "textarea", rows: 2, placeholder: "[]",
      validate: (v) => {
        if (!v.trim()) return "";
        try { return Array.isArray(JSON.parse(v)) ? "" : "Must be a JSON array."; } catch (e) { return `Not valid JSON: ${e.message}`; }
      } },
  ]);
  const alert = alertBox();
  const out = h("pre", { id: "dry-run-result", hidden: true });
  const form = h("form", { novalidate: true, "aria-labelledby": "pl-dry" }, set.el, alert, h("button", { type: "submit" }, "Dry run"), out);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    showError(alert, null);
    out.hidden = true;
    const body = { source: v.source };
    if (v.hook.trim()) {
      body.hook = v.hook.trim();
      body.args = v.args.trim() ? JSON.parse(v.args) : [];
    }
    try {
      const r = await api("POST", `${BASE}/dry-run`, body);
      out.textContent = JSON.stringify(r, null, 2);
      out.hidden = false;
    } catch (e) {
      showError(alert, e);
    }
  });
  return h("section", { class: "card" }, h("h2", { id: "pl-dry" }, "Dry run"),
    h("p", { class: "muted" }, "Compile and validate a plugin without storing it; optionally run one hook in a sandbox with no network."), form);
}

