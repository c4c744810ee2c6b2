// The dry-run tab: validate a source without storing it and optionally run
// one hook in a sandbox with no network.
import { h } from "../dom.js";
import { api } from "../api.js";
import { fieldSet, alertBox, showError } from "../ui.js";
import { BASE } from "./common.js";

/** dryRunForm returns the dry-run form and its result area. */
export function dryRunForm() {
  const set = fieldSet([
    { name: "source", label: "Plugin source", type: "textarea", rows: 14, required: true,
      hint: "Paste a plugin.js, or load one from a file above." },
    { name: "hook", label: "Hook to run (optional)", placeholder: "native.decodeSubmit",
      hint: "A dotted path of an exported function, such as protocols.std_video.decodeRequest." },
    { name: "args", label: "Arguments (JSON array)", type: "textarea", rows: 3, placeholder: '[{"body": {"kind": "json", "value": {}}}]',
      validate: (v, all) => {
        if (!v.trim()) return "";
        if (!all.hook.trim()) return "Name a hook to run with these arguments.";
        try {
          return Array.isArray(JSON.parse(v)) ? "" : "Must be a JSON array, one item per argument.";
        } catch (e) {
          return `Not valid JSON: ${e.message}`;
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
  const idle = h("p", { class: "empty" }, "Run a dry run to see the verdict and the hook's answer here.");
  const out = h("div", { id: "dry-run-result", "aria-live": "polite" }, idle);
  const submit = h("button", { type: "submit", class: "primary", id: "dry-run" }, "Dry run");
  const form = h("form", { novalidate: true, "aria-labelledby": "pl-dry" },
    h("div", { class: "field" }, h("label", { for: "dry-run-file" }, "Load the source from a file"), file),
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
  return h("section", { class: "card", "aria-labelledby": "pl-dry" }, h("h2", { id: "pl-dry" }, "Dry run"),
    h("p", { class: "muted" }, "Compile and validate a plugin without storing it. Naming a hook also runs it once in a sandbox that has no network."),
    h("div", { class: "split" }, form, h("div", { class: "result-pane" }, h("h3", {}, "Result"), out)));
}

// result renders {valid, key, version, meta, result?, error?}.
function result(r, hook) {
  const out = [h("p", { class: "alert ok" }, h("strong", {}, "Valid. "), `${r.key} ${r.version} passes every check.`)];
  if (hook) {
    if (r.error) {
      out.push(h("div", { class: "alert error", id: "dry-run-hook-error" }, h("strong", {}, `${hook} threw`),
        r.error.name ? ` ${r.error.name}` : "", `: ${r.error.message}`));
    } else {
      out.push(h("h3", {}, `${hook} returned`), h("pre", { id: "dry-run-hook-result" }, JSON.stringify(r.result, null, 2)));
    }
  }
  out.push(h("details", {}, h("summary", {}, "Normalised meta"), h("pre", {}, JSON.stringify(r.meta, null, 2))));
  return out;
}
