// Channels (admin): upstream providers, their health, and a test button.
import { h, when, splitList, badge } from "../dom.js";
import { api, items, qs } from "../api.js";
import { pageHead, table, pager, formDialog, confirmDialog, guard, jsonObject, toast } from "../ui.js";
import { groupNames } from "./users.js";

const PAGE_SIZE = 25;

// The channel types of the contract; the server accepts either form.
const TYPES = [["openai", 1], ["azure", 3], ["ollama", 4], ["anthropic", 14], ["ali", 17], ["gemini", 24],
  ["minimax", 35], ["sunoapi", 36], ["vertex", 41], ["deepseek", 43], ["volcengine", 45], ["kling", 50],
  ["jimeng", 51], ["vidu", 52], ["doubao_video", 54], ["sora", 55], ["peer_api", 60], ["task_plugin", 61]];

export async function render(main) {
  let page = 1;
  const list = h("div", { id: "channels-list" });
  const groups = await groupNames();
  main.append(pageHead("Channels", "Upstream providers. Higher priority is tried first; weight splits traffic within a priority.",
    h("button", { type: "button", class: "primary", id: "channel-create", onclick: () => edit(null) }, "Add channel")), list);

  function fields(c) {
    return [
      { name: "name", label: "Name", required: true, maxlength: 128, value: c?.name, pattern: "\\S(.*\\S)?" },
      { name: "type", label: "Type", type: "select", value: c ? String(c.type) : "1",
        options: TYPES.map(([n, id]) => [String(id), `${n} (${id})`]) },
      { name: "base_url", label: "Base URL", type: "url", value: c?.base_url, placeholder: "https://api.openai.com",
        hint: "The provider's origin, without /v1." },
      { name: "key", label: "Provider key", type: "password", autocomplete: "off",
        hint: c ? `Leave empty to keep the current key (${c.key_masked || "none"}).` : "Sent to the provider; never shown again." },
      { name: "models", label: "Models", required: true, type: "textarea", rows: 2, value: c?.models?.join(", "),
        hint: "Comma-separated model names this channel serves.",
        validate: (v) => (splitList(v).length ? "" : "List at least one model.") },
      { name: "groups", label: "Groups", value: (c?.groups || ["default"]).join(", "),
        hint: groups.length ? `Known groups: ${groups.join(", ")}` : "Comma-separated." },
      { name: "priority", label: "Priority", type: "number", step: 1, value: c?.priority ?? 0 },
      { name: "weight", label: "Weight", type: "number", min: 0, step: 1, value: c?.weight ?? 1 },
      { name: "model_mapping", label: "Model mapping (JSON)", type: "json", rows: 2, value: c?.model_mapping && Object.keys(c.model_mapping).length ? c.model_mapping : "",
        validate: jsonObject, hint: "Optional, e.g. {\"gpt-4o\": \"gpt-4o-2024-08-06\"}." },
      { name: "settings", label: "Settings (JSON)", type: "json", rows: 2, value: c?.settings && Object.keys(c.settings).length ? c.settings : "",
        validate: jsonObject, hint: "Per-type settings such as task_plugin_key; health: failure_threshold, cooldown_seconds, max_cooldown_seconds, retry_statuses, disable_statuses, probe_interval_seconds." },
    ];
  }

  async function edit(c) {
    const saved = await formDialog({
      title: c ? `Edit channel ${c.name}` : "Add channel",
      submitLabel: c ? "Save" : "Create",
      fields: fields(c),
      onSubmit: (v) => {
        const body = {
          name: v.name, type: Number(v.type), base_url: v.base_url, models: splitList(v.models), groups: splitList(v.groups),
          priority: v.priority ?? 0, weight: v.weight ?? 1,
          model_mapping: v.model_mapping.trim() ? JSON.parse(v.model_mapping) : {},
          settings: v.settings.trim() ? JSON.parse(v.settings) : {},
        };
        if (v.key) body.key = v.key;
        return c ? api("PATCH", `/api/channels/${c.id}`, body) : api("POST", "/api/channels", body);
      },
    });
    if (saved) {
      toast(c ? "Channel saved" : "Channel created");
      await load();
    }
  }

  async function test(c, button) {
    button.disabled = true;
    button.textContent = "Testing…";
    const r = await guard(() => api("POST", `/api/channels/${c.id}/test`));
    button.disabled = false;
    button.textContent = "Test";
    if (!r) return;
    if (r.success) toast(`${c.name}: OK in ${r.latency_ms} ms`);
    else toast(`${c.name}: ${r.error || "failed"}`, "error");
    await load();
  }

  async function load() {
    const data = await api("GET", `/api/channels${qs({ page, page_size: PAGE_SIZE })}`);
    list.replaceChildren(table("Channels", [
      { label: "Name", cell: (c) => h("strong", {}, c.name) },
      { label: "Type", cell: (c) => c.type_name || String(c.type) },
      { label: "Models", cell: (c) => c.models.join(", ") },
      { label: "Groups", cell: (c) => c.groups.join(", ") },
      { label: "Priority", num: true, cell: (c) => String(c.priority) },
      { label: "Weight", num: true, cell: (c) => String(c.weight) },
      { label: "Status", cell: (c) => badge(c.status) },
      { label: "Health", cell: health },
      { label: "Actions", cell: (c) => {
        const testBtn = h("button", { type: "button", class: "small", "aria-label": `Test channel ${c.name}` }, "Test");
        testBtn.addEventListener("click", () => test(c, testBtn));
        return h("div", { class: "actions" }, testBtn,
          h("button", { type: "button", class: "small", "aria-label": `Edit channel ${c.name}`, onclick: () => edit(c) }, "Edit"),
          h("button", { type: "button", class: "small", "aria-label": `${c.status === "enabled" ? "Disable" : "Enable"} channel ${c.name}`,
            onclick: () => guard(async () => { await api("PATCH", `/api/channels/${c.id}`, { status: c.status === "enabled" ? "disabled" : "enabled" }); await load(); }) },
            c.status === "enabled" ? "Disable" : "Enable"),
          h("button", { type: "button", class: "small danger", "aria-label": `Delete channel ${c.name}`,
            onclick: async () => { if (await confirmDialog(`Delete channel ${c.name}?`)) await guard(async () => { await api("DELETE", `/api/channels/${c.id}`); await load(); }, "Channel deleted"); } },
            "Delete"));
      } },
    ], items(data), "No channels yet. Add one to route requests to a provider."),
    pager({ page, pageSize: PAGE_SIZE, total: data.total }, (p) => { page = p; load(); }));
  }
  await load();
}

// STATES are the four health states of the contract, with their badge.
const STATES = { healthy: ["healthy", "ok"], cooling: ["cooling", "warn"], auto_disabled: ["auto-disabled", "bad"], disabled: ["disabled", "bad"] };

function health(c) {
  const s = c.health || {};
  const [label, kind] = STATES[s.state] || [s.state || "healthy", ""];
  const parts = [badge(label, kind)];
  if (s.state === "cooling" && s.until) parts.push(h("span", { class: "muted" }, ` until ${when(s.until)}`));
  if (s.state !== "healthy" && s.reason) parts.push(h("div", { class: "muted small" }, s.reason));
  return h("span", { title: s.since ? `since ${when(s.since)}` : "", "data-health": s.state || "healthy" }, ...parts);
}
