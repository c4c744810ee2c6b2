// Channels (admin): upstream providers, their health (and each key's, for
// a channel with several keys), and a test button.
import { h, when, splitList, badge, statusBadge } from "../dom.js";
import { api, items, qs } from "../api.js";
import { pageHead, table, pager, formDialog, confirmDialog, guard, jsonObject, toast } from "../ui.js";
import { groupNames } from "./users.js";
import { t } from "../i18n.js";

const PAGE_SIZE = 25;

// The channel types of the contract; the server accepts either form.
const TYPES = [["openai", 1], ["azure", 3], ["ollama", 4], ["custom", 8], ["anthropic", 14], ["ali", 17],
  ["openrouter", 20], ["gemini", 24], ["moonshot", 25], ["zhipu_v4", 26], ["perplexity", 27], ["aws", 33],
  ["cohere", 34], ["minimax", 35], ["sunoapi", 36], ["siliconflow", 40], ["vertex", 41], ["mistral", 42],
  ["deepseek", 43], ["volcengine", 45], ["xai", 48], ["kling", 50], ["jimeng", 51], ["vidu", 52],
  ["doubao_video", 54], ["sora", 55], ["peer_api", 60], ["task_plugin", 61]];

// discoverButton fills the models field with what the channel's provider
// lists, keeping the names already there.
function discoverButton(c) {
  return (input) => {
    const b = h("button", { type: "button", class: "small", id: "channel-discover" }, t("ch.fetchModels"));
    b.addEventListener("click", async () => {
      b.disabled = true;
      const r = await guard(() => api("GET", `/api/channels/${c.id}/upstream-models`));
      b.disabled = false;
      if (!r) return;
      const have = splitList(input.value);
      const added = r.models.filter((m) => !have.includes(m));
      input.value = [...have, ...added].join(", ");
      toast(t("ch.fetchedModels", { n: added.length }));
    });
    return h("div", { class: "field-actions" }, b);
  };
}

export async function render(main) {
  let page = 1;
  const list = h("div", { id: "channels-list" });
  const groups = await groupNames();
  main.append(pageHead(t("ch.title"), t("ch.sub"),
    h("button", { type: "button", class: "primary", id: "channel-create", onclick: () => edit(null) }, t("ch.add"))), list);

  function fields(c) {
    return [
      { name: "name", label: t("common.name"), required: true, maxlength: 128, value: c?.name, pattern: "\\S(.*\\S)?" },
      { name: "type", label: t("ch.type"), type: "select", value: c ? String(c.type) : "1",
        options: TYPES.map(([n, id]) => [String(id), `${n} (${id})`]) },
      { name: "base_url", label: t("ch.baseUrl"), type: "url", value: c?.base_url, placeholder: "https://api.openai.com",
        hint: t("ch.baseUrlHint") },
      // One key per line: the server spreads calls over them.
      { name: "key", label: t("ch.key"), type: "textarea", rows: 3, mono: true, autocomplete: "off",
        hint: `${c ? t("ch.keyKeep", { masked: c.key_masked || t("common.none") }) : t("ch.keyNew")} ${t("ch.keysHint")}` },
      { name: "models", label: t("common.models"), required: true, type: "textarea", rows: 2, value: c?.models?.join(", "),
        hint: t("ch.modelsHint"), extra: c ? discoverButton(c) : null,
        validate: (v) => (splitList(v).length ? "" : t("ch.needModel")) },
      { name: "groups", label: t("common.groups"), value: (c?.groups || ["default"]).join(", "),
        hint: groups.length ? t("ch.knownGroups", { list: groups.join(", ") }) : t("ch.commaSep") },
      { name: "priority", label: t("ch.priority"), type: "number", step: 1, value: c?.priority ?? 0 },
      { name: "weight", label: t("ch.weight"), type: "number", min: 0, step: 1, value: c?.weight ?? 1 },
      { name: "model_mapping", label: t("ch.mapping"), type: "json", rows: 2, value: c?.model_mapping && Object.keys(c.model_mapping).length ? c.model_mapping : "",
        validate: jsonObject, hint: t("ch.mappingHint", { example: '{"gpt-4o": "gpt-4o-2024-08-06"}' }) },
      { name: "settings", label: t("ch.settings"), type: "json", rows: 2, value: c?.settings && Object.keys(c.settings).length ? c.settings : "",
        validate: jsonObject, hint: t("ch.settingsHint") },
    ];
  }

  async function edit(c) {
    const saved = await formDialog({
      title: c ? t("ch.edit", { name: c.name }) : t("ch.add"),
      submitLabel: c ? t("common.save") : t("common.create"),
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
      toast(c ? t("ch.saved") : t("ch.created"));
      await load();
    }
  }

  // keyList shows each key of a channel, masked, with its own state and a
  // Re-enable button for a key health took out; only when there is
  // something to say beyond the channel's own badge (several keys, or the
  // one key out).
  function keyList(c) {
    const keys = c.keys || [];
    const out = (k) => k.state === "auto_disabled" || k.state === "cooling";
    if (keys.length < 2 && !keys.some(out)) return null;
    return h("ul", { class: "key-states", "aria-label": t("ch.keysOf", { name: c.name }) }, keys.map((k) => {
      const [label, kind] = k.state in STATES ? [t(`ch.h.${k.state}`), STATES[k.state]] : [k.state, ""];
      return h("li", { "data-key-index": k.index, "data-state": k.state },
        h("code", {}, `#${k.index} ${k.masked || t("ch.noKey")}`), " ", badge(label, kind),
        out(k) ? h("button", { type: "button", class: "small", "aria-label": t("ch.reenableKey", { index: k.index, name: c.name }),
          onclick: () => guard(async () => {
            await api("PATCH", `/api/channels/${c.id}`, { key_states: { [k.index]: "enabled" } });
            await load();
          }, t("ch.keyReenabled", { index: k.index })) }, t("ch.reenable")) : null,
        out(k) && k.reason ? h("div", { class: "muted small" }, k.reason) : null);
    }));
  }

  async function test(c, button) {
    button.disabled = true;
    button.textContent = t("ch.testing");
    const r = await guard(() => api("POST", `/api/channels/${c.id}/test`));
    button.disabled = false;
    button.textContent = t("ch.test");
    if (!r) return;
    if (r.success) toast(t("ch.testOk", { name: c.name, ms: r.latency_ms }));
    else toast(t("ch.testFail", { name: c.name, error: r.error || t("ch.failed") }), "error");
    await load();
  }

  async function load() {
    const [data, cache] = await Promise.all([
      api("GET", `/api/channels${qs({ page, page_size: PAGE_SIZE })}`),
      // The report is a nicety: the list shows without it.
      api("GET", "/api/reports/cache?group_by=channel").catch(() => ({ items: [] })),
    ]);
    const hits = new Map((cache.items || []).map((it) => [it.key, it]));
    list.replaceChildren(table(t("ch.title"), [
      { label: t("common.name"), cell: (c) => h("strong", {}, c.name) },
      { label: t("ch.type"), cell: (c) => c.type_name || String(c.type) },
      { label: t("common.models"), cell: (c) => c.models.join(", ") },
      { label: t("common.groups"), cell: (c) => c.groups.join(", ") },
      { label: t("ch.priority"), num: true, cell: (c) => String(c.priority) },
      { label: t("ch.weight"), num: true, cell: (c) => String(c.weight) },
      { label: t("common.status"), cell: (c) => statusBadge(c.status) },
      { label: t("ch.health"), cell: (c) => h("div", {}, health(c), keyList(c)) },
      { label: t("ch.cacheHit"), num: true, cell: (c) => cacheHit(hits.get(c.name)) },
      { label: t("common.actions"), cell: (c) => {
        const testBtn = h("button", { type: "button", class: "small", "aria-label": t("ch.testChannel", { name: c.name }) }, t("ch.test"));
        testBtn.addEventListener("click", () => test(c, testBtn));
        return h("div", { class: "actions" }, testBtn,
          h("button", { type: "button", class: "small", "aria-label": t("ch.edit", { name: c.name }), onclick: () => edit(c) }, t("common.edit")),
          h("button", { type: "button", class: "small", "aria-label": t(c.status === "enabled" ? "ch.disableChannel" : "ch.enableChannel", { name: c.name }),
            onclick: () => guard(async () => { await api("PATCH", `/api/channels/${c.id}`, { status: c.status === "enabled" ? "disabled" : "enabled" }); await load(); }) },
            t(c.status === "enabled" ? "common.disable" : "common.enable")),
          h("button", { type: "button", class: "small danger", "aria-label": t("ch.deleteChannel", { name: c.name }),
            onclick: async () => { if (await confirmDialog(t("ch.confirmDelete", { name: c.name }))) await guard(async () => { await api("DELETE", `/api/channels/${c.id}`); await load(); }, t("ch.deleted")); } },
            t("common.delete")));
      } },
    ], items(data), t("ch.none")),
    pager({ page, pageSize: PAGE_SIZE, total: data.total }, (p) => { page = p; load(); }));
  }
  await load();
}

// cacheHit shows the share of a channel's prompt tokens the provider read
// from its cache over the last 24 hours (cache affinity's effect).
function cacheHit(it) {
  if (!it || !it.input_tokens) return h("span", { class: "muted", "data-cache-hit": "" }, "—");
  return h("span", {
    "data-cache-hit": it.hit_ratio.toFixed(4),
    title: t("ch.cacheHitTitle", { read: it.cache_read_tokens.toLocaleString(), input: it.input_tokens.toLocaleString(), n: it.requests.toLocaleString() }),
  }, `${(it.hit_ratio * 100).toFixed(1)} %`);
}

// STATES are the four health states of the contract, with their badge.
const STATES = { healthy: "ok", cooling: "warn", auto_disabled: "bad", disabled: "bad" };

function health(c) {
  const s = c.health || {};
  const state = s.state || "healthy";
  const [label, kind] = state in STATES ? [t(`ch.h.${state}`), STATES[state]] : [state, ""];
  const parts = [badge(label, kind)];
  if (s.state === "cooling" && s.until) parts.push(h("span", { class: "muted" }, t("ch.until", { when: when(s.until) })));
  if (s.state !== "healthy" && s.reason) parts.push(h("div", { class: "muted small" }, s.reason));
  return h("span", { title: s.since ? t("ch.since", { when: when(s.since) }) : "", "data-health": s.state || "healthy" }, ...parts);
}
