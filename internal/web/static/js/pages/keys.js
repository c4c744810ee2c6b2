// API keys: create (the whole key is shown once), list masked, toggle, delete.
import { h, quota, when, num, splitList, badge } from "../dom.js";
import { api, items, qs } from "../api.js";
import { pageHead, table, pager, formDialog, confirmDialog, infoDialog, copyButton, guard } from "../ui.js";
import { limitFields, limitBody, limitsCell, budgetCell } from "../limits.js";

const PAGE_SIZE = 20;

export async function render(main) {
  let page = 1;
  const list = h("div", { id: "keys-list" });
  const create = h("button", { type: "button", class: "primary", id: "key-create", onclick: () => createKey(load) }, "Create key");
  main.append(pageHead("API keys", "Keys authenticate calls to /v1. A key is shown in full only once, when it is created.", create), list);

  async function load() {
    const data = await api("GET", `/api/tokens${qs({ page, page_size: PAGE_SIZE })}`);
    list.replaceChildren(table("API keys", [
      { label: "Name", cell: (t) => t.name },
      { label: "Key", cell: (t) => h("code", {}, t.key) },
      { label: "Quota left", num: true, cell: (t) => quota(t.quota) },
      { label: "Used", num: true, cell: (t) => num(t.used_quota) },
      { label: "Models", cell: (t) => (t.models && t.models.length ? t.models.join(", ") : h("span", { class: "muted" }, "all")) },
      { label: "Expires", cell: (t) => (t.expires_at ? when(t.expires_at) : h("span", { class: "muted" }, "never")) },
      { label: "Limits", cell: (t) => limitsCell(t) },
      { label: "Budget", cell: (t) => budgetCell(t) },
      { label: "Status", cell: (t) => badge(t.status) },
      { label: "Actions", cell: (t) => h("div", { class: "actions" },
        h("button", { type: "button", class: "small", "aria-label": `Limits of key ${t.name}`, onclick: () => editLimits(t, load) }, "Limits"),
        h("button", { type: "button", class: "small", "aria-label": `${t.status === "enabled" ? "Disable" : "Enable"} key ${t.name}`,
          onclick: () => guard(async () => { await api("PATCH", `/api/tokens/${t.id}`, { status: t.status === "enabled" ? "disabled" : "enabled" }); await load(); }) },
          t.status === "enabled" ? "Disable" : "Enable"),
        h("button", { type: "button", class: "small danger", "aria-label": `Delete key ${t.name}`,
          onclick: async () => { if (await confirmDialog(`Delete the key "${t.name}"? Clients using it stop working at once.`)) await guard(async () => { await api("DELETE", `/api/tokens/${t.id}`); await load(); }, "Key deleted"); } },
          "Delete")) },
    ], items(data), "No API keys yet. Create one to call the gateway from your code."),
    data.total > PAGE_SIZE ? pager({ page, pageSize: PAGE_SIZE, total: data.total }, (p) => { page = p; load(); }) : "");
  }
  await load();
}

async function modelOptions() {
  try {
    return items(await api("GET", "/pg/models", undefined, { quiet401: true }), "data").map((m) => m.id);
  } catch {
    return [];
  }
}

async function createKey(reload) {
  const known = await modelOptions();
  const created = await formDialog({
    title: "Create API key",
    submitLabel: "Create",
    fields: [
      { name: "name", label: "Name", required: true, maxlength: 64, placeholder: "e.g. backend-prod",
        validate: (v) => (v.trim() !== v ? "Remove the spaces at the start or end." : "") },
      { name: "models", label: "Allowed models", placeholder: known.slice(0, 3).join(", ") || "gpt-4o-mini, claude-3-5-haiku",
        hint: "Comma-separated. Leave empty to allow every model of your group." },
      { name: "expires", label: "Expires", type: "datetime-local", hint: "Leave empty for a key that never expires.",
        validate: (v) => (v && new Date(v).getTime() <= Date.now() ? "Pick a time in the future." : "") },
      { name: "quota", label: "Quota", type: "number", min: 0, step: 1, hint: "Quota units this key may spend. Leave empty for unlimited (your balance still applies)." },
      ...limitFields(null, { models: true }),
    ],
    onSubmit: (v) => api("POST", "/api/tokens", {
      name: v.name, models: splitList(v.models), quota: v.quota === null ? -1 : v.quota,
      expires_at: v.expires ? new Date(v.expires).toISOString() : null, ...limitBody(v, { models: true }),
    }),
  });
  if (!created) return;
  await reload();
  infoDialog("Your new API key",
    h("p", {}, "Copy it now: this is the only time the whole key is shown."),
    h("div", { class: "secret" }, h("code", { id: "new-key" }, created.key), copyButton(created.key)));
}

async function editLimits(t, reload) {
  const saved = await formDialog({
    title: `Limits of ${t.name}`,
    intro: "Rate limits and a spending budget for this key; your account's own limits still apply.",
    submitLabel: "Save",
    fields: limitFields(t, { models: true }),
    onSubmit: (v) => api("PATCH", `/api/tokens/${t.id}`, limitBody(v, { models: true })),
  });
  if (saved) await reload();
}
