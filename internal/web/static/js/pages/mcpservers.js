// MCP servers (root): the tool servers keys reach at /mcp, with their
// price per call, timeout and tool subset. Header values are credentials:
// the API answers them masked, and a value sent back masked keeps the
// stored one, so editing without retyping them is safe.
import { h } from "../dom.js";
import { api, items } from "../api.js";
import { pageHead, table, formDialog, confirmDialog, guard, jsonObject } from "../ui.js";
import { t } from "../i18n.js";

export async function render(main) {
  const list = h("div", { id: "mcp-servers-list" });
  main.append(pageHead(t("mcp.title"), t("mcp.sub"),
    h("button", { type: "button", class: "primary", id: "mcp-create", onclick: () => edit(null) }, t("mcp.add"))), list);

  async function edit(s) {
    const saved = await formDialog({
      title: s ? t("mcp.edit", { name: s.name }) : t("mcp.add"),
      fields: [
        { name: "name", label: t("common.name"), required: true, maxlength: 64, value: s?.name, pattern: "[A-Za-z0-9][A-Za-z0-9_\\-]*", hint: t("mcp.nameHint") },
        { name: "url", label: t("mcp.url"), required: true, type: "url", value: s?.url, placeholder: "https://tools.example.com/mcp" },
        { name: "headers", label: t("mcp.headers"), type: "json", value: s?.headers ?? {}, hint: t("mcp.headersHint"), validate: jsonObject },
        { name: "price", label: t("mcp.price"), type: "number", min: 0, step: "any", value: s?.price_per_call_usd ?? 0 },
        { name: "timeout", label: t("mcp.timeout"), type: "number", min: 0, max: 3600, step: 1, value: s?.timeout_seconds ?? 0, hint: t("mcp.timeoutHint") },
        { name: "tools", label: t("mcp.tools"), value: s?.tools ? s.tools.join(", ") : "", hint: t("mcp.toolsHint") },
      ],
      onSubmit: (v) => {
        const tools = v.tools.split(",").map((x) => x.trim()).filter(Boolean);
        const body = { name: v.name, url: v.url, headers: v.headers.trim() ? JSON.parse(v.headers) : {},
          price_per_call_usd: v.price ?? 0, timeout_seconds: v.timeout ?? 0, tools: tools.length ? tools : null };
        return s ? api("PATCH", `/api/mcp/servers/${s.id}`, body) : api("POST", "/api/mcp/servers", body);
      },
    });
    if (saved) await load();
  }

  async function load() {
    const data = await api("GET", "/api/mcp/servers?page_size=1000");
    list.replaceChildren(table(t("mcp.title"), [
      { label: t("common.name"), cell: (s) => s.name },
      { label: t("mcp.url"), cell: (s) => h("code", {}, s.url) },
      { label: t("mcp.price"), num: true, cell: (s) => `$${s.price_per_call_usd}` },
      { label: t("mcp.timeout"), num: true, cell: (s) => String(s.timeout_seconds || 60) },
      { label: t("mcp.tools"), cell: (s) => (s.tools ? s.tools.join(", ") : h("span", { class: "muted" }, t("mcp.allTools"))) },
      { label: t("common.actions"), cell: (s) => h("div", { class: "actions" },
        h("button", { type: "button", class: "small", "aria-label": t("mcp.edit", { name: s.name }), onclick: () => edit(s) }, t("mcp.editBtn")),
        h("button", { type: "button", class: "small danger", "aria-label": t("mcp.deleteOf", { name: s.name }),
          onclick: async () => { if (await confirmDialog(t("mcp.confirm", { name: s.name }))) await guard(async () => { await api("DELETE", `/api/mcp/servers/${s.id}`); await load(); }, t("mcp.deleted")); } },
          t("common.delete"))) },
    ], items(data), t("mcp.none")));
  }
  await load();
}
