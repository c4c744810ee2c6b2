// The dry-run tab: validate a source without storing it and optionally run
// one hook in a sandbox with no network.
import { h } from "../dom.js";
import { api } from "../api.js";
import { fieldSet, alertBox, showError } from "../ui.js";
import { BASE } from "./common.js";
import { t as tr } from "../i18n.js";

/** dryRunForm returns the dry-run form and its result area. */
export function dryRunForm() {
  const set = fieldSet([
    { name: "source", label: tr("pl.sourceField"), type: "textarea", rows: 14, required: true,
      hint: tr("pl.dryHint") },
    { name: "hook", label: tr("pl.hook"), placeholder: "native.decodeSubmit",
      hint: tr("pl.hookHint") },
    { name: "args", label: tr("pl.args"), type: "textarea", rows: 3, placeholder: '[{"body": {"kind": "json", "value": {}}}]',
      validate: (v, all) => {
        if (!v.trim()) return "";
        if (!all.hook.trim()) return tr("pl.nameHook");
        try {
          return Array.isArray(JSON.parse(v)) ? "" : tr("pl.mustArray");
        } catch (e) {
          return tr("ui.badJson", { error: e.message });
        }
      } },
  ]);
  set.inputs.source.classList.add("mono");
  set.inputs.args.classList.add("mono");
  const file = h("input", { type: "file", id: "dry-run-file", accept: ".js,.mjs,text/javascript" });
  file.addEventListener("change", async () => {
    if (file.files[0]) set.inputs.source.value = await file.files[0].text();
  });
  const alert = alertBox();
  alert.id = "dry-run-error";
  const idle = h("p", { class: "empty" }, tr("pl.dryIdle"));
  const out = h("div", { id: "dry-run-result", "aria-live": "polite" }, idle);
  const submit = h("button", { type: "submit", class: "primary", id: "dry-run" }, tr("plugins.dryRun"));
  const form = h("form", { novalidate: true, "aria-labelledby": "pl-dry" },
    h("div", { class: "field" }, h("label", { for: "dry-run-file" }, tr("pl.loadFile")), file),
    set.el, alert, submit);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    showError(alert, null);
    out.replaceChildren(idle);
    const body = { source: v.source };
    if (v.hook.trim()) {
      body.hook = v.hook.trim();
      body.args = v.args.trim() ? JSON.parse(v.args) : [];
    }
    submit.disabled = true;
    try {
      out.replaceChildren(...result(await api("POST", `${BASE}/dry-run`, body), body.hook));
    } catch (e) {
      showError(alert, e);
    } finally {
      submit.disabled = false;
    }
  });
  return h("section", { class: "card", "aria-labelledby": "pl-dry" }, h("h2", { id: "pl-dry" }, tr("plugins.dryRun")),
    h("p", { class: "muted" }, tr("pl.dryIntro")),
    h("div", { class: "split" }, form, h("div", { class: "result-pane" }, h("h3", {}, tr("pl.result")), out)));
}

// result renders {valid, key, version, meta, result?, error?}.
function result(r, hook) {
  const out = [h("p", { class: "alert ok" }, h("strong", {}, tr("pl.valid")), tr("pl.passes", { id: `${r.key} ${r.version}` }))];
  if (hook) {
    if (r.error) {
      out.push(h("div", { class: "alert error", id: "dry-run-hook-error" }, h("strong", {}, tr("pl.threw", { hook })),
        r.error.name ? ` ${r.error.name}` : "", `: ${r.error.message}`));
    } else {
      out.push(h("h3", {}, tr("pl.returned", { hook })), h("pre", { id: "dry-run-hook-result" }, JSON.stringify(r.result, null, 2)));
    }
  }
  out.push(h("details", {}, h("summary", {}, tr("pl.meta")), h("pre", {}, JSON.stringify(r.meta, null, 2))));
  return out;
}
