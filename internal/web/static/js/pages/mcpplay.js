// MCP playground: with one of your API keys (typed here; the console never
// holds a key's secret), list the tools the key may use at /mcp and call
// one. Each call is billed to that key like any client's.
import { h } from "../dom.js";
import { pageHead, formDialog, guard } from "../ui.js";
import { t } from "../i18n.js";

let seq = 0;

// rpc sends one JSON-RPC message to /mcp as a client that takes JSON
// answers, and returns its result (or throws its error).
async function rpc(key, session, method, params) {
  const headers = { "Content-Type": "application/json", Accept: "application/json", Authorization: `Bearer ${key}` };
  if (session.id) headers["Mcp-Session-Id"] = session.id;
  if (session.version) headers["Mcp-Protocol-Version"] = session.version;
  const call = method.startsWith("notifications/") ? {} : { id: ++seq };
  const res = await fetch("/mcp", { method: "POST", credentials: "omit", headers, body: JSON.stringify({ jsonrpc: "2.0", method, params, ...call }) });
  if (res.headers.get("Mcp-Session-Id")) session.id = res.headers.get("Mcp-Session-Id");
  const text = await res.text();
  const msg = text ? JSON.parse(text) : {};
  if (msg.error) throw new Error(msg.error.message);
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return msg.result;
}

export async function render(main) {
  const key = h("input", { id: "mcp-key", type: "password", autocomplete: "off", placeholder: "sk-…", "aria-label": t("mcpplay.key") });
  const out = h("div", { id: "mcp-tools" });
  const session = {};
  const connect = h("button", { type: "button", class: "primary", id: "mcp-connect", onclick: () => guard(async () => {
    session.id = null;
    const init = await rpc(key.value, session, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "turnpike-console", version: "1" } });
    session.version = init.protocolVersion;
    await rpc(key.value, session, "notifications/initialized", {});
    const { tools } = await rpc(key.value, session, "tools/list", {});
    show(tools);
  }) }, t("mcpplay.list"));
  main.append(pageHead(t("mcpplay.title"), t("mcpplay.sub")), h("div", { class: "row" }, h("label", { for: "mcp-key" }, t("mcpplay.key")), key, connect), out);

  function show(tools) {
    if (!tools.length) {
      out.replaceChildren(h("p", { class: "muted", id: "mcp-none" }, t("mcpplay.none")));
      return;
    }
    out.replaceChildren(h("ul", { class: "tool-list" }, tools.map((tl) => h("li", {},
      h("strong", {}, tl.name), " ", h("span", { class: "muted" }, tl.description || ""), " ",
      h("button", { type: "button", class: "small", "data-tool": tl.name, onclick: () => callTool(tl) }, t("mcpplay.call"))))));
  }

  async function callTool(tl) {
    let result;
    await formDialog({
      title: t("mcpplay.callTitle", { name: tl.name }),
      fields: [{ name: "args", label: t("mcpplay.args"), type: "json", value: {}, hint: JSON.stringify(tl.inputSchema?.properties || {}) }],
      submitLabel: t("mcpplay.call"),
      onSubmit: async (v) => { result = await rpc(key.value, session, "tools/call", { name: tl.name, arguments: v.args.trim() ? JSON.parse(v.args) : {} }); return result; },
    });
    if (!result) return;
    const text = (result.content || []).map((c) => c.text ?? JSON.stringify(c)).join("\n");
    out.append(h("pre", { class: "mono", id: "mcp-result" }, (result.isError ? `${t("mcpplay.toolError")}\n` : "") + text));
  }
}
