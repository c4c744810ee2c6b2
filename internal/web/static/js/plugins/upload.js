// The upload tab: a plugin.js file (or pasted source) with the activate,
// enabled and force options of CONTRACT §7.
import { h } from "../dom.js";
import { api } from "../api.js";
import { fieldSet, alertBox, showError } from "../ui.js";
import { BASE } from "./common.js";

/**
 * uploadForm returns the upload form; onStored runs after the server kept a
 * version, with the answer {key, version, active, enabled, held_back,
 * unchanged, problems}.
 */
export function uploadForm(onStored) {
  const files = fieldSet([
    { name: "file", label: "Plugin file", type: "file", accept: ".js,.mjs,text/javascript",
      hint: "The plugin.js module. It is compiled and every rule is checked before anything is stored." },
    { name: "icon", label: "Icon (optional)", type: "file", accept: "image/png,image/svg+xml,image/jpeg,image/webp",
      hint: "Sent with a file upload only." },
  ], { grid: true });
  const paste = fieldSet([{ name: "source", label: "Plugin source", type: "textarea", rows: 8 }]);
  paste.inputs.source.classList.add("mono");
  const pasteBox = h("details", { id: "plugin-paste" }, h("summary", {}, "Paste the source instead of choosing a file"), paste.el);
  const options = fieldSet([
    { name: "activate", label: "Make this version active", type: "checkbox", value: false,
      hint: "The first version of a plugin is always made active; a later one only when this is ticked." },
    { name: "enabled", label: "Enabled", type: "checkbox", value: true, hint: "A disabled plugin is stored but serves nothing." },
    { name: "force", label: "Store despite conflicts", type: "checkbox", value: false,
      hint: "Kept but held back while it conflicts with another plugin. Its own errors are never skipped." },
  ], { grid: true });
  const alert = alertBox();
  alert.id = "plugin-upload-error";
  const ok = h("div", { class: "alert ok", role: "status", id: "plugin-upload-ok" });
  const submit = h("button", { type: "submit", class: "primary", id: "plugin-upload" }, "Upload");
  const form = h("form", { novalidate: true, "aria-labelledby": "pl-upload" }, files.el, pasteBox,
    h("fieldset", { class: "options" }, h("legend", {}, "Options"), options.el), alert, ok, submit);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = { ...files.read(), ...paste.read(), ...options.read() };
    showError(alert, null);
    ok.replaceChildren();
    if (!v.file && !v.source.trim()) {
      showError(alert, { message: "Choose a plugin file, or paste its source." });
      return;
    }
    submit.disabled = true;
    try {
      const r = await api("POST", BASE, body(v));
      ok.replaceChildren(...outcome(r));
      form.reset();
      await onStored(r);
    } catch (e) {
      showError(alert, e);
      alert.scrollIntoView({ block: "nearest" });
    } finally {
      submit.disabled = false;
    }
  });
  return h("section", { class: "card", "aria-labelledby": "pl-upload" }, h("h2", { id: "pl-upload" }, "Upload a plugin"), form);
}

// body picks the multipart form for a file (the icon can only travel that
// way) and the JSON form for pasted source.
function body(v) {
  if (!v.file) {
    return { source: v.source, activate: v.activate, enabled: v.enabled, force: v.force };
  }
  const fd = new FormData();
  fd.append("file", v.file, v.file.name);
  if (v.icon) fd.append("icon", v.icon, v.icon.name);
  fd.append("activate", String(v.activate));
  fd.append("enabled", String(v.enabled));
  fd.append("force", String(v.force));
  return fd;
}

function outcome(r) {
  const id = `${r.key} ${r.version}`;
  if (r.unchanged) {
    return [h("strong", {}, `${id} was already stored with this source; nothing changed.`)];
  }
  let state;
  if (!r.active) state = "It is not active: activate it in the Installed tab when you are ready.";
  else if (r.held_back) state = "It is active but held back by a conflict with another plugin:";
  else state = r.enabled ? "It is active and enabled." : "It is active but disabled.";
  const out = [h("strong", {}, `Stored ${id}.`), " ", state];
  if (r.problems && r.problems.length) {
    out.push(h("ul", { class: "problems" }, r.problems.map((p) => h("li", {}, h("code", {}, p.path), `: ${p.message}`))));
  }
  return out;
}
