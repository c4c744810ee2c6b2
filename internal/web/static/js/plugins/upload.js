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
  const set = fieldSet([
    { name: "file", label: "Plugin file", type: "file", accept: ".js,.mjs,text/javascript",
      hint: "The plugin.js module. It is compiled and every rule is checked before anything is stored." },
    { name: "source", label: "…or paste the source", type: "textarea", rows: 4,
      validate: (v, all) => (!all.file && !v.trim() ? "Choose a plugin file or paste its source." : "") },
    { name: "icon", label: "Icon (optional)", type: "file", accept: "image/png,image/svg+xml,image/jpeg,image/webp",
      hint: "Only sent with a file upload." },
    { name: "activate", label: "Make this version active", type: "checkbox", value: false,
      hint: "The first version of a plugin is always made active; later ones only when this is ticked." },
    { name: "enabled", label: "Enabled", type: "checkbox", value: true },
    { name: "force", label: "Store despite conflicts with other plugins", type: "checkbox", value: false,
      hint: "The plugin is kept but held back (serves nothing) until the conflict is gone. Its own errors are never skipped." },
  ]);
  set.inputs.source.classList.add("mono");
  const alert = alertBox();
  alert.id = "plugin-upload-error";
  const ok = h("div", { class: "alert ok", role: "status", id: "plugin-upload-ok" });
  const submit = h("button", { type: "submit", class: "primary", id: "plugin-upload" }, "Upload");
  const form = h("form", { novalidate: true, "aria-labelledby": "pl-upload" }, set.el, alert, ok, submit);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    submit.disabled = true;
    showError(alert, null);
    ok.replaceChildren();
    try {
      const r = await api("POST", BASE, body(v));
      ok.replaceChildren(...outcome(r));
      form.reset();
      await onStored(r);
    } catch (e) {
      showError(alert, e);
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
