// Guardrails (root): checks of requests and answers (CONTRACT §21), and a
// dry run on a sample text that stores nothing and calls no upstream.
import { h } from "../dom.js";
import { api, items } from "../api.js";
import { pageHead, table, formDialog, confirmDialog, guard, jsonObject, fieldSet, alertBox, showError } from "../ui.js";
import { t } from "../i18n.js";
import { guardrailList } from "./logs.js";

const TYPES = ["pii", "secrets", "regex", "max_input_tokens", "plugin"];

const list = (v) => String(v || "").split(",").map((s) => s.trim()).filter(Boolean);
const ids = (v) => list(v).map(Number).filter((n) => Number.isInteger(n) && n > 0);

export async function render(main) {
  const listEl = h("div", { id: "guardrails-list" });
  main.append(pageHead(t("gr.title"), t("gr.sub"),
    h("button", { type: "button", class: "primary", id: "guardrail-create", onclick: () => edit(null) }, t("gr.add"))),
  listEl, dryRun());

  async function edit(g) {
    const scope = g?.applies_to || {};
    const saved = await formDialog({
      title: g ? t("gr.edit", { name: g.name }) : t("gr.add"),
      fields: [
        { name: "name", label: t("gr.name"), required: true, maxlength: 64, value: g?.name },
        { name: "type", label: t("gr.type"), type: "select", options: TYPES, value: g?.type || "pii" },
        { name: "mode", label: t("gr.mode"), type: "select", options: [["enforce", t("gr.enforce")], ["monitor", t("gr.monitor")]], value: g?.mode || "enforce" },
        { name: "request", label: t("gr.stageRequest"), type: "checkbox", value: g ? g.stages.includes("request") : true },
        { name: "response", label: t("gr.stageResponse"), type: "checkbox", value: g ? g.stages.includes("response") : true },
        { name: "config", label: t("gr.config"), type: "json", rows: 5, value: g?.config || { action: "block" }, hint: t("gr.configHint"), validate: jsonObject },
        { name: "groups", label: t("common.groups"), value: (scope.groups || []).join(", "), hint: t("gr.scopeHint") },
        { name: "models", label: t("common.models"), value: (scope.models || []).join(", ") },
        { name: "keys", label: t("gr.keys"), value: (scope.keys || []).join(", ") },
        { name: "teams", label: t("gr.teams"), value: (scope.teams || []).join(", ") },
      ],
      onSubmit: (v) => {
        const body = {
          name: v.name, type: v.type, mode: v.mode,
          stages: [v.request && "request", v.response && "response"].filter(Boolean),
          config: v.config.trim() ? JSON.parse(v.config) : {},
          applies_to: { groups: list(v.groups), models: list(v.models), keys: ids(v.keys), teams: ids(v.teams) },
        };
        return g ? api("PATCH", `/api/guardrails/${g.id}`, body) : api("POST", "/api/guardrails", body);
      },
    });
    if (saved) await load();
  }

  async function load() {
    const data = await api("GET", "/api/guardrails?page_size=1000");
    listEl.replaceChildren(table(t("gr.title"), [
      { label: t("gr.name"), cell: (g) => g.name },
      { label: t("gr.type"), cell: (g) => g.type },
      { label: t("gr.mode"), cell: (g) => (g.mode === "monitor" ? t("gr.monitor") : t("gr.enforce")) },
      { label: t("gr.stages"), cell: (g) => g.stages.map((s) => (s === "request" ? t("gr.stageRequest") : t("gr.stageResponse"))).join(", ") },
      { label: t("gr.action"), cell: (g) => g.config?.action || "block" },
      { label: t("gr.scope"), cell: (g) => scopeText(g.applies_to) },
      { label: t("groups.actions"), cell: (g) => h("div", { class: "actions" },
        h("button", { type: "button", class: "small", "aria-label": t("gr.edit", { name: g.name }), onclick: () => edit(g) }, t("groups.editBtn")),
        h("button", { type: "button", class: "small danger", "aria-label": `${t("groups.delete")} ${g.name}`,
          onclick: async () => { if (await confirmDialog(t("gr.confirm", { name: g.name }), t("groups.delete"))) await guard(async () => { await api("DELETE", `/api/guardrails/${g.id}`); await load(); }, t("gr.deleted")); } },
          t("groups.delete"))) },
    ], items(data), t("gr.none")));
  }
  await load();
}

function scopeText(s = {}) {
  const parts = [];
  if (s.groups?.length) parts.push(`${t("common.groups")}: ${s.groups.join(", ")}`);
  if (s.models?.length) parts.push(`${t("common.models")}: ${s.models.join(", ")}`);
  if (s.keys?.length) parts.push(`${t("gr.keys")}: ${s.keys.join(", ")}`);
  if (s.teams?.length) parts.push(`${t("gr.teams")}: ${s.teams.join(", ")}`);
  return parts.length ? parts.join("; ") : t("gr.everyCall");
}

// dryRun checks a sample with every stored guardrail that applies to the
// model and group given, and shows what would happen.
function dryRun() {
  const set = fieldSet([
    { name: "text", label: t("gr.sample"), type: "textarea", rows: 4, required: true },
    { name: "stage", label: t("gr.stage"), type: "select", options: [["request", t("gr.stageRequest")], ["response", t("gr.stageResponse")]] },
    { name: "model", label: t("common.models"), hint: t("gr.dryHint") },
    { name: "group", label: t("common.groups") },
  ], { grid: true });
  const alert = alertBox();
  const out = h("div", { id: "guardrail-dry-result", "aria-live": "polite" });
  const form = h("form", { novalidate: true, class: "card" }, h("h3", {}, t("gr.dryRun")), set.el, alert,
    h("button", { type: "submit", class: "primary" }, t("gr.check")), out);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    showError(alert, null);
    try {
      const r = await api("POST", "/api/guardrails/dry-run", { text: v.text, stage: v.stage, model: v.model, group: v.group });
      out.replaceChildren(
        h("p", {}, r.blocked ? t("gr.blocked", { name: r.blocked_by }) : r.redacted ? t("gr.redacted") : t("gr.passed")),
        r.blocked ? h("p", { class: "muted" }, r.message) : h("pre", { class: "mono" }, r.text),
        r.guardrails.length ? guardrailList(r.guardrails) : h("p", { class: "muted" }, t("gr.nothing")));
    } catch (e) {
      showError(alert, e);
    }
  });
  return form;
}
