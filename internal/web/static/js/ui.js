// Shared widgets: toasts, forms with validation, dialogs, tables, paging.
import { h, clear, uid } from "./dom.js";
import { t } from "./i18n.js";

const MAX_TOASTS = 3;

/** toast shows a short message in the polite live region. */
export function toast(message, kind = "") {
  const box = document.getElementById("toasts");
  const t = h("div", { class: `toast ${kind}` }, message);
  box.append(t);
  // A burst of actions would otherwise stack toasts up the whole screen.
  while (box.children.length > MAX_TOASTS) box.firstElementChild.remove();
  setTimeout(() => t.remove(), kind === "error" ? 7000 : 3500);
}

/** errorBox renders an error (with a server's problem list) into el. */
export function showError(el, err) {
  clear(el);
  if (!err) return;
  el.append(h("strong", {}, err.message || String(err)));
  const problems = err.problems || [];
  if (problems.length) {
    el.append(h("ul", { class: "problems" }, problems.map((p) => h("li", {},
      typeof p === "string" ? p : [p.path ? h("code", {}, p.path) : null, p.path ? ": " : "", p.message || JSON.stringify(p)]))));
  }
}

/** alertBox is an initially empty region that announces errors. */
export function alertBox() {
  return h("div", { class: "alert error", role: "alert" });
}

/**
 * fieldSet builds labelled inputs from specs and returns the element plus
 * read and validate functions. Validation uses the browser's constraints
 * first, then each spec's validate(value, values) for rules HTML cannot say.
 */
export function fieldSet(specs, { grid = false } = {}) {
  const rows = specs.map(buildField);
  const el = h("div", { class: grid ? "form-grid" : "" }, rows.map((r) => r.row));
  const read = () => Object.fromEntries(rows.map((r) => [r.spec.name, r.read()]));
  const validate = () => {
    const values = read();
    let first = null;
    for (const r of rows) {
      let msg = "";
      r.input.setCustomValidity("");
      // A custom editor is a fieldset, valid when every input in it is;
      // the message is that of its first invalid input.
      if (!r.input.checkValidity()) msg = r.input.validationMessage || r.input.querySelector(":invalid")?.validationMessage || "";
      else if (r.spec.validate) msg = r.spec.validate(values[r.spec.name], values) || "";
      r.setError(msg);
      if (msg && !first) first = r;
    }
    if (first) first.focus();
    return first ? null : values;
  };
  return { el, read, validate, inputs: Object.fromEntries(rows.map((r) => [r.spec.name, r.input])) };
}

function buildField(spec) {
  const id = uid(spec.name);
  const hintId = `${id}-hint`;
  const errId = `${id}-err`;
  const input = makeInput(spec, id);
  const err = h("span", { class: "field-error", id: errId, "aria-live": "polite" });
  input.setAttribute("aria-describedby", `${spec.hint ? hintId : ""} ${errId}`.trim());
  const setError = (msg) => {
    err.textContent = msg;
    if (msg) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  };
  let row;
  let focus = () => input.focus();
  if (spec.type === "custom") {
    // spec.editor is {el: a fieldset, read()}: an editor of several inputs,
    // such as a list of rows. Its label is the fieldset's legend.
    input.prepend(h("legend", {}, spec.label));
    row = h("div", { class: "field" }, input, spec.hint ? h("span", { class: "hint", id: hintId }, spec.hint) : null, err);
    focus = () => (input.querySelector(":invalid") || input.querySelector("input, select, textarea, button"))?.focus();
  } else if (spec.type === "checkbox") {
    row = h("div", { class: "field" }, h("label", { class: "check", for: id }, input, spec.label),
      spec.hint ? h("span", { class: "hint", id: hintId }, spec.hint) : null, err);
  } else {
    row = h("div", { class: "field" }, h("label", { for: id }, spec.label, spec.required ? h("span", { "aria-hidden": "true" }, " *") : null),
      input, spec.extra ? spec.extra(input) : null, spec.hint ? h("span", { class: "hint", id: hintId }, spec.hint) : null, err);
  }
  return { spec, input, row, setError, focus, read: () => readInput(spec, input) };
}

function makeInput(spec, id) {
  if (spec.type === "custom") {
    spec.editor.el.id = id;
    return spec.editor.el;
  }
  const common = { id, name: spec.name, required: spec.required, placeholder: spec.placeholder, autocomplete: spec.autocomplete || "off" };
  if (spec.type === "select") {
    return h("select", common, (spec.options || []).map((o) => {
      const [value, label] = Array.isArray(o) ? o : [o, o];
      return h("option", { value, selected: String(value) === String(spec.value ?? "") }, label);
    }));
  }
  if (spec.type === "textarea" || spec.type === "json") {
    const v = spec.type === "json" && spec.value !== undefined && typeof spec.value !== "string"
      ? JSON.stringify(spec.value, null, 2) : spec.value;
    return h("textarea", { ...common, rows: spec.rows || 3, class: spec.type === "json" || spec.mono ? "mono" : "",
      spellcheck: spec.type === "json" || spec.mono ? "false" : null, value: v ?? "" });
  }
  if (spec.type === "checkbox") return h("input", { id, name: spec.name, type: "checkbox", checked: spec.value });
  if (spec.type === "file") return h("input", { id, name: spec.name, type: "file", required: spec.required, accept: spec.accept });
  return h("input", { ...common, type: spec.type || "text", value: spec.value ?? "", min: spec.min, max: spec.max,
    step: spec.step, pattern: spec.pattern, minlength: spec.minlength, maxlength: spec.maxlength, list: spec.list });
}

function readInput(spec, input) {
  switch (spec.type) {
    case "checkbox": return input.checked;
    case "file": return input.files && input.files[0];
    case "number": return input.value === "" ? null : Number(input.value);
    case "custom": return spec.editor.read();
    default: return input.value;
  }
}

/** jsonObject validates a textarea holding a JSON object (empty allowed). */
export function jsonObject(v) {
  if (!String(v).trim()) return "";
  try {
    const o = JSON.parse(v);
    return o && typeof o === "object" && !Array.isArray(o) ? "" : t("ui.jsonObject");
  } catch (e) {
    return t("ui.badJson", { error: e.message });
  }
}

/**
 * formDialog opens a modal form. onSubmit receives the validated values and
 * may throw an ApiError, which is shown inside the dialog so the user can
 * fix the input without retyping it. Resolves with onSubmit's result, or
 * null when cancelled.
 */
export function formDialog({ title, intro, fields, submitLabel = t("common.save"), onSubmit }) {
  return new Promise((resolve) => {
    const titleId = uid("dlg");
    const set = fieldSet(fields);
    const alert = alertBox();
    const submit = h("button", { type: "submit", class: "primary" }, submitLabel);
    const cancel = h("button", { type: "button", onclick: () => dlg.close() }, t("common.cancel"));
    const form = h("form", { novalidate: true }, h("h2", { id: titleId }, title),
      intro ? h("p", { class: "muted" }, intro) : null, set.el, alert, h("div", { class: "dialog-actions" }, cancel, submit));
    const dlg = h("dialog", { "aria-labelledby": titleId }, form);
    let result = null;
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const values = set.validate();
      if (!values) return;
      submit.disabled = true;
      showError(alert, null);
      try {
        result = await onSubmit(values);
        dlg.close();
      } catch (e) {
        showError(alert, e);
      } finally {
        submit.disabled = false;
      }
    });
    dlg.addEventListener("close", () => {
      dlg.remove();
      resolve(result);
    });
    document.body.append(dlg);
    dlg.showModal();
  });
}

/** confirmDialog asks a yes/no question; resolves true on confirm. */
export function confirmDialog(message, confirmLabel = t("common.delete")) {
  return new Promise((resolve) => {
    let ok = false;
    const yes = h("button", { type: "button", class: "danger", onclick: () => { ok = true; dlg.close(); } }, confirmLabel);
    const no = h("button", { type: "button", onclick: () => dlg.close() }, t("common.cancel"));
    const dlg = h("dialog", { role: "alertdialog", "aria-label": t("common.confirm") }, h("p", {}, message), h("div", { class: "dialog-actions" }, no, yes));
    dlg.addEventListener("close", () => { dlg.remove(); resolve(ok); });
    document.body.append(dlg);
    dlg.showModal();
    no.focus();
  });
}

/** infoDialog shows content with a single close button. */
export function infoDialog(title, ...content) {
  const titleId = uid("dlg");
  const dlg = h("dialog", { "aria-labelledby": titleId }, h("h2", { id: titleId }, title), ...content,
    h("div", { class: "dialog-actions" }, h("button", { type: "button", class: "primary", onclick: () => dlg.close() }, t("common.done"))));
  dlg.addEventListener("close", () => dlg.remove());
  document.body.append(dlg);
  dlg.showModal();
  return dlg;
}

/** copyButton copies text to the clipboard and confirms it. */
export function copyButton(text, label = t("common.copy")) {
  const b = h("button", { type: "button", class: "copy" }, label);
  b.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // The clipboard API needs a secure context; fall back to selection.
      const ta = h("textarea", { class: "visually-hidden", value: text });
      document.body.append(ta);
      ta.select();
      document.execCommand("copy");
      ta.remove();
    }
    b.textContent = t("common.copied");
    setTimeout(() => { b.textContent = label; }, 2000);
  });
  return b;
}

/**
 * table renders rows with columns {label, cell(row), num?}. caption names
 * the table for screen readers.
 */
export function table(caption, columns, rows, emptyText = t("common.empty")) {
  if (!rows.length) return h("div", { class: "table-wrap" }, h("p", { class: "empty" }, emptyText));
  return h("div", { class: "table-wrap" }, h("table", {},
    h("caption", { class: "visually-hidden" }, caption),
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", class: c.num ? "num" : "" }, c.label)))),
    h("tbody", {}, rows.map((r) => h("tr", {}, columns.map((c) => h("td", { class: c.num ? "num" : "" }, c.cell(r))))))));
}

/** pager renders previous/next controls for a {page, pageSize, total}. */
export function pager({ page, pageSize, total }, go) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  return h("nav", { class: "pager", "aria-label": t("common.pages") },
    h("span", { class: "muted" }, t("common.pageOf", { page, pages, total })),
    h("button", { type: "button", disabled: page <= 1, onclick: () => go(page - 1) }, t("common.previous")),
    h("button", { type: "button", disabled: page >= pages, onclick: () => go(page + 1) }, t("common.next")));
}

/** pageHead renders the page title, a sentence under it and actions. */
export function pageHead(title, sub, ...actions) {
  return h("div", { class: "page-head" }, h("div", {}, h("h1", {}, title), sub ? h("p", { class: "muted" }, sub) : null),
    actions.length ? h("div", { class: "actions" }, actions) : null);
}

/**
 * guard runs an action and reports its failure as a toast, so a button
 * never fails silently.
 */
export async function guard(fn, okMessage) {
  try {
    const r = await fn();
    if (okMessage) toast(okMessage);
    return r;
  } catch (e) {
    toast(e.message || String(e), "error");
    return undefined;
  }
}
