// The upload tab: a plugin.js file (or pasted source) with the activate,
// enabled and force options of CONTRACT §7.
import { h } from "../dom.js";
import { api } from "../api.js";
import { fieldSet, alertBox, showError } from "../ui.js";
import { BASE } from "./common.js";
import { t as tr } from "../i18n.js";

/**
 * uploadForm returns the upload form; onStored runs after the server kept a
 * version, with the answer {key, version, active, enabled, held_back,
 * unchanged, problems}.
 */
export function uploadForm(onStored) {
  const files = fieldSet([
    { name: "file", label: tr("pl.file"), type: "file", accept: ".js,.mjs,text/javascript",
      hint: tr("pl.fileHint") },
    { name: "icon", label: tr("pl.icon"), type: "file", accept: "image/png,image/svg+xml,image/jpeg,image/webp",
      hint: tr("pl.iconHint") },
  ], { grid: true });
  const paste = fieldSet([{ name: "source", label: tr("pl.sourceField"), type: "textarea", rows: 8 }]);
  paste.inputs.source.classList.add("mono");
  const pasteBox = h("details", { id: "plugin-paste" }, h("summary", {}, tr("pl.pasteInstead")), paste.el);
  const options = fieldSet([
    { name: "activate", label: tr("pl.makeActive"), type: "checkbox", value: false,
      hint: tr("pl.makeActiveHint") },
    { name: "enabled", label: tr("pl.enabled"), type: "checkbox", value: true, hint: tr("pl.enabledHint") },
    { name: "force", label: tr("pl.forceStore"), type: "checkbox", value: false,
      hint: tr("pl.forceStoreHint") },
  ], { grid: true });
  const alert = alertBox();
  alert.id = "plugin-upload-error";
  const ok = h("div", { class: "alert ok", role: "status", id: "plugin-upload-ok" });
  const submit = h("button", { type: "submit", class: "primary", id: "plugin-upload" }, tr("plugins.upload"));
  const form = h("form", { novalidate: true, "aria-labelledby": "pl-upload" }, files.el, pasteBox,
    h("fieldset", { class: "options" }, h("legend", {}, tr("pl.options")), options.el), alert, ok, submit);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = { ...files.read(), ...paste.read(), ...options.read() };
    showError(alert, null);
    ok.replaceChildren();
    if (!v.file && !v.source.trim()) {
      showError(alert, { message: tr("pl.chooseOrPaste") });
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
  return h("section", { class: "card", "aria-labelledby": "pl-upload" }, h("h2", { id: "pl-upload" }, tr("pl.uploadOne")), form);
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
    return [h("strong", {}, tr("pl.unchanged", { id }))];
  }
  let state;
  if (!r.active) state = tr("pl.notActive");
  else if (r.held_back) state = tr("pl.heldBack");
  else state = tr(r.enabled ? "pl.activeEnabled" : "pl.activeDisabled");
  const out = [h("strong", {}, tr("pl.stored", { id })), " ", state];
  if (r.problems && r.problems.length) {
    out.push(h("ul", { class: "problems" }, r.problems.map((p) => h("li", {}, h("code", {}, p.path), `: ${p.message}`))));
  }
  return out;
}
