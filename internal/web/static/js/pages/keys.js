// API keys: create (the whole key is shown once), list masked, toggle, delete.
import { h, quota, when, splitList, statusBadge } from "../dom.js";
import { api, items, qs } from "../api.js";
import { pageHead, table, pager, formDialog, confirmDialog, infoDialog, copyButton, guard } from "../ui.js";
import { limitFields, limitBody, limitsCell, budgetCell } from "../limits.js";
import { toQuota, unitField } from "../money.js";
import { t } from "../i18n.js";

const PAGE_SIZE = 20;

export async function render(main) {
  let page = 1;
  const list = h("div", { id: "keys-list" });
  const create = h("button", { type: "button", class: "primary", id: "key-create", onclick: () => createKey(load) }, t("keys.create"));
  main.append(pageHead(t("keys.title"), t("keys.sub"), create), list);

  async function load() {
    const data = await api("GET", `/api/tokens${qs({ page, page_size: PAGE_SIZE })}`);
    list.replaceChildren(table(t("keys.title"), [
      { label: t("common.name"), cell: (k) => k.name },
      { label: t("keys.key"), cell: (k) => h("code", {}, k.key) },
      { label: t("keys.quotaLeft"), num: true, cell: (k) => quota(k.quota) },
      { label: t("common.used"), num: true, cell: (k) => quota(k.used_quota) },
      { label: t("common.models"), cell: (k) => (k.models && k.models.length ? k.models.join(", ") : h("span", { class: "muted" }, t("keys.all"))) },
      { label: t("keys.expires"), cell: (k) => (k.expires_at ? when(k.expires_at) : h("span", { class: "muted" }, t("common.never"))) },
      { label: t("common.limits"), cell: (k) => limitsCell(k) },
      { label: t("common.budget"), cell: (k) => budgetCell(k) },
      { label: t("keys.mcp"), cell: (k) => (k.mcp ? grantText(k.mcp) : h("span", { class: "muted" }, t("keys.mcpNone"))) },
      { label: t("common.status"), cell: (k) => statusBadge(k.status) },
      { label: t("common.actions"), cell: (k) => h("div", { class: "actions" },
        h("button", { type: "button", class: "small", "aria-label": t("keys.limitsOf", { name: k.name }), onclick: () => editLimits(k, load) }, t("common.limits")),
        h("button", { type: "button", class: "small", "aria-label": t("keys.mcpOf", { name: k.name }), onclick: () => editGrant(k, load) }, t("keys.mcp")),
        h("button", { type: "button", class: "small", "aria-label": t(k.status === "enabled" ? "keys.disableKey" : "keys.enableKey", { name: k.name }),
          onclick: () => guard(async () => { await api("PATCH", `/api/tokens/${k.id}`, { status: k.status === "enabled" ? "disabled" : "enabled" }); await load(); }) },
          t(k.status === "enabled" ? "common.disable" : "common.enable")),
        h("button", { type: "button", class: "small danger", "aria-label": t("keys.deleteKey", { name: k.name }),
          onclick: async () => { if (await confirmDialog(t("keys.confirmDelete", { name: k.name }))) await guard(async () => { await api("DELETE", `/api/tokens/${k.id}`); await load(); }, t("keys.deleted")); } },
          t("common.delete"))) },
    ], items(data), t("keys.none")),
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
    title: t("keys.createTitle"),
    submitLabel: t("common.create"),
    fields: [
      { name: "name", label: t("common.name"), required: true, maxlength: 64, placeholder: t("keys.namePh"),
        validate: (v) => (v.trim() !== v ? t("keys.trim") : "") },
      { name: "models", label: t("keys.allowed"), placeholder: known.slice(0, 3).join(", ") || "gpt-4o-mini, claude-3-5-haiku",
        hint: t("keys.allowedHint") },
      { name: "expires", label: t("keys.expires"), type: "datetime-local", hint: t("keys.expiresHint"),
        validate: (v) => (v && new Date(v).getTime() <= Date.now() ? t("keys.future") : "") },
      { name: "quota", label: t("keys.quota"), type: "number", min: 0, step: "any", hint: t("keys.quotaHint") },
      { ...unitField("quota_unit"), label: t("money.quotaUnit") },
      ...limitFields(null, { models: true }),
    ],
    onSubmit: (v) => api("POST", "/api/tokens", {
      name: v.name, models: splitList(v.models), quota: v.quota === null ? -1 : toQuota(v.quota, v.quota_unit),
      expires_at: v.expires ? new Date(v.expires).toISOString() : null, ...limitBody(v, { models: true }),
    }),
  });
  if (!created) return;
  await reload();
  infoDialog(t("keys.newTitle"),
    h("p", {}, t("keys.newIntro")),
    h("div", { class: "secret" }, h("code", { id: "new-key" }, created.key), copyButton(created.key)));
}

async function editLimits(k, reload) {
  const saved = await formDialog({
    title: t("keys.limitsTitle", { name: k.name }),
    intro: t("keys.limitsIntro"),
    submitLabel: t("common.save"),
    fields: limitFields(k, { models: true }),
    onSubmit: (v) => api("PATCH", `/api/tokens/${k.id}`, limitBody(v, { models: true })),
  });
  if (saved) await reload();
}

// grantText shows a key's MCP grant: its servers, and its tools when it
// names some.
function grantText(g) {
  const servers = g.servers.length ? g.servers.join(", ") : t("keys.mcpNoServer");
  return g.tools && g.tools.length ? `${servers} (${g.tools.join(", ")})` : servers;
}

// editGrant sets which MCP servers and tools a key may use; no servers
// removes the grant (the key may then use none, unless its account's
// grant says otherwise).
async function editGrant(k, reload) {
  const saved = await formDialog({
    title: t("keys.mcpTitle", { name: k.name }),
    intro: t("keys.mcpIntro"),
    submitLabel: t("common.save"),
    fields: [
      { name: "servers", label: t("keys.mcpServers"), value: k.mcp ? k.mcp.servers.join(", ") : "", placeholder: "files, search or *" },
      { name: "tools", label: t("keys.mcpTools"), value: k.mcp ? k.mcp.tools.join(", ") : "", placeholder: "files__read", hint: t("keys.mcpToolsHint") },
    ],
    onSubmit: (v) => {
      const servers = splitList(v.servers);
      return api("PATCH", `/api/tokens/${k.id}`, { mcp: servers.length ? { servers, tools: splitList(v.tools) } : null });
    },
  });
  if (saved) await reload();
}
