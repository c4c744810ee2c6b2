// Model prices (admin): US dollars per million tokens or per call, with
// optional long-context tiers.
import { h, num, splitList, when } from "../dom.js";
import { api, items } from "../api.js";
import { pageHead, table, formDialog, confirmDialog, infoDialog, guard, jsonObject } from "../ui.js";
import { t } from "../i18n.js";

const RATES = [
  ["input_per_mtok", "mp.input"],
  ["output_per_mtok", "mp.output"],
  ["cache_read_per_mtok", "mp.cacheRead"],
  ["cache_write_per_mtok", "mp.cacheWrite"],
  ["reasoning_per_mtok", "mp.reasoning"],
  ["per_call", "mp.perCall"],
];

// FORM_RATES adds the batch prices, set in the form but not listed.
const FORM_RATES = [...RATES, ["batch_input_per_mtok", "mp.batchInput"], ["batch_output_per_mtok", "mp.batchOutput"]];

// TIER_RATES are the prices a tier may replace; per_call is not one.
const TIER_RATES = RATES.filter(([name]) => name !== "per_call");

// STRATEGIES are the routing strategies a model entry may take (CONTRACT §14).
const STRATEGIES = ["weighted", "least_busy", "latency", "cost"];

// SHORT names a tier's prices in the list, where the column is narrow.
const SHORT = { input_per_mtok: "mp.shortIn", output_per_mtok: "mp.shortOut", cache_read_per_mtok: "mp.shortCacheRead",
  cache_write_per_mtok: "mp.shortCacheWrite", reasoning_per_mtok: "mp.shortReasoning" };

export async function render(main) {
  const list = h("div", { id: "models-list" });
  main.append(pageHead(t("mp.title"), t("mp.sub"),
    h("button", { type: "button", class: "primary", id: "model-create", onclick: () => edit(null) }, t("mp.add"))), list);

  async function edit(m) {
    const tiers = tierEditor(m?.tiers || []);
    const saved = await formDialog({
      title: m ? t("mp.priceOf", { name: m.name }) : t("mp.addTitle"),
      fields: [
        { name: "name", label: t("mp.model"), required: true, maxlength: 128, value: m?.name, pattern: "\\S(.*\\S)?" },
        ...FORM_RATES.map(([name, key]) => ({ name, label: t(key), type: "number", min: 0, step: "any", value: m?.[name] ?? "",
          hint: name === "reasoning_per_mtok" ? t("mp.reasoningHint") : undefined })),
        { name: "tiers", label: t("mp.tiers"), type: "custom", editor: tiers, hint: t("mp.tiersHint"), validate: checkTiers },
        { name: "free", label: t("mp.freeField"), type: "checkbox", value: m?.free },
        { name: "extra", label: t("mp.extra"), type: "json", value: m?.extra ?? "", validate: jsonObject,
          hint: t("mp.extraHint") },
        { name: "fallbacks", label: t("mp.fallbacks"), value: (m?.fallbacks || []).join(", "),
          hint: t("mp.fallbacksHint") },
        { name: "effective_from", label: t("mp.effectiveFromField"), type: "datetime-local", hint: t("mp.effectiveFromHint") },
        // Routing (not prices): kept on every save, as PUT replaces the entry.
        { name: "affinity", label: t("mp.affinity"), type: "checkbox", value: m?.affinity?.enabled ?? true, hint: t("mp.affinityHint") },
        { name: "affinity_ttl", label: t("mp.affinityTtl"), type: "number", min: 1, max: 86400, step: 1,
          value: m?.affinity?.ttl_seconds ?? 300 },
        { name: "strategy", label: t("mp.strategy"), type: "select", value: m?.routing?.strategy || "weighted",
          options: STRATEGIES.map((s) => [s, t(`mp.strategy.${s}`)]) },
      ],
      onSubmit: (v) => {
        const body = { free: v.free };
        for (const [name] of FORM_RATES) if (v[name] !== null) body[name] = v[name];
        if (v.effective_from) body.effective_from = new Date(v.effective_from).toISOString();
        body.tiers = v.tiers;
        if (v.extra.trim()) body.extra = JSON.parse(v.extra);
        body.fallbacks = splitList(v.fallbacks);
        body.affinity = { enabled: v.affinity, ttl_seconds: v.affinity_ttl ?? 300 };
        body.routing = { strategy: v.strategy };
        return api("PUT", `/api/models/${encodeURIComponent(v.name)}`, body);
      },
    });
    if (saved) await load();
  }

  async function load() {
    const data = await api("GET", "/api/models?page_size=1000");
    list.replaceChildren(table(t("mp.title"), [
      { label: t("mp.model"), cell: (m) => h("code", {}, m.name) },
      ...RATES.map(([name, key]) => ({ label: t(key), num: true, cell: (m) => (m[name] ? String(m[name]) : "—") })),
      { label: t("mp.tiersCol"), cell: tiersCell },
      { label: t("mp.free"), cell: (m) => (m.free ? t("common.yes") : "") },
      { label: t("mp.fallbacksCol"), cell: (m) => (m.fallbacks?.length ? m.fallbacks.join(" → ") : "") },
      { label: t("common.actions"), cell: (m) => h("div", { class: "actions" },
        h("button", { type: "button", class: "small", "aria-label": t("mp.editPrice", { name: m.name }), onclick: () => edit(m) }, t("common.edit")),
        h("button", { type: "button", class: "small", "aria-label": t("mp.historyOfShort", { name: m.name }), onclick: () => guard(() => history(m.name)) }, t("mp.history")),
        h("button", { type: "button", class: "small danger", "aria-label": t("mp.deletePrice", { name: m.name }),
          onclick: async () => { if (await confirmDialog(t("mp.confirmDelete", { name: m.name }))) await guard(async () => { await api("DELETE", `/api/models/${encodeURIComponent(m.name)}`); await load(); }, t("mp.deleted")); } },
          t("common.delete"))) },
    ], items(data), t("mp.none")));
  }
  await load();
}

/** tiersCell lists a price's tiers, one line each: threshold and the prices it replaces. */
function tiersCell(m) {
  if (!m.tiers?.length) return "";
  return h("ul", { class: "tier-list" }, m.tiers.map((tier) => h("li", {},
    t("mp.tierAboveCell", { n: num(tier.above_input_tokens) }), " ",
    TIER_RATES.filter(([name]) => tier[name]).map(([name]) => `${t(SHORT[name])} ${tier[name]}`).join(" · "))));
}

/**
 * tierEditor is the form's list of long-context tiers: one row per tier
 * with its threshold and the prices it replaces (blank keeps the base
 * price), and buttons to add and remove rows. read() returns the rows as
 * the API's tiers, in the order shown.
 */
function tierEditor(initial) {
  const rows = [];
  const box = h("div", { class: "tier-rows" });
  const add = h("button", { type: "button", class: "small", id: "tier-add", onclick: () => { addRow({}).inputs.above_input_tokens.focus(); } },
    t("mp.addTier"));
  const el = h("fieldset", { class: "options tiers" }, box, add);

  function renumber() {
    rows.forEach((r, i) => {
      r.el.setAttribute("aria-label", t("mp.tierN", { n: i + 1 }));
      r.title.textContent = t("mp.tierN", { n: i + 1 });
      r.remove.setAttribute("aria-label", t("mp.removeTier", { n: i + 1 }));
    });
  }

  function field(name, label, attrs, value) {
    // Named apart from the base price inputs of the same form.
    const input = h("input", { type: "number", name: `tier-${name}`, step: "any", min: 0, ...attrs, value: value ?? "" });
    return { input, el: h("label", { class: "tier-field" }, label, input) };
  }

  function addRow(tier) {
    const inputs = {};
    const cells = [];
    const threshold = field("above_input_tokens", t("mp.tierAbove"), { min: 1, step: 1, required: true }, tier.above_input_tokens);
    inputs.above_input_tokens = threshold.input;
    cells.push(threshold.el);
    for (const [name, key] of TIER_RATES) {
      const f = field(name, t(key), {}, tier[name] || "");
      inputs[name] = f.input;
      cells.push(f.el);
    }
    const title = h("span", { class: "tier-title" });
    const remove = h("button", { type: "button", class: "small danger", onclick: () => {
      rows.splice(rows.indexOf(row), 1);
      row.el.remove();
      renumber();
      add.focus();
    } }, t("mp.removeTierShort"));
    const row = { inputs, title, remove, el: h("div", { class: "tier-row", role: "group" },
      h("div", { class: "tier-head" }, title, remove), h("div", { class: "tier-grid" }, cells)) };
    rows.push(row);
    box.append(row.el);
    renumber();
    return row;
  }

  for (const tier of initial) addRow(tier);

  return {
    el,
    read: () => rows.map((r) => {
      const tier = { above_input_tokens: r.inputs.above_input_tokens.value === "" ? null : Number(r.inputs.above_input_tokens.value) };
      for (const [name] of TIER_RATES) {
        const v = r.inputs[name].value;
        if (v !== "" && Number(v) > 0) tier[name] = Number(v);
      }
      return tier;
    }),
  };
}

/** checkTiers says what the browser cannot: a repeated threshold, a tier without a price. */
function checkTiers(tiers) {
  const seen = new Map();
  for (const [i, tier] of tiers.entries()) {
    if (seen.has(tier.above_input_tokens)) return t("mp.tierRepeated", { n: i + 1, m: seen.get(tier.above_input_tokens) + 1 });
    seen.set(tier.above_input_tokens, i);
    if (!TIER_RATES.some(([name]) => tier[name] > 0)) return t("mp.tierNoPrice", { n: i + 1 });
  }
  return "";
}

/** history shows every version of a model's price, newest first. */
async function history(name) {
  const data = await api("GET", `/api/models/${encodeURIComponent(name)}/history?page_size=100`);
  infoDialog(t("mp.historyOf", { name }), table(t("mp.historyOf", { name }), [
    { label: t("mp.version"), num: true, cell: (v) => String(v.version) },
    { label: t("mp.effectiveFrom"), cell: (v) => when(v.effective_from) },
    ...FORM_RATES.map(([field, key]) => ({ label: t(key), num: true, cell: (v) => (v[field] ? String(v[field]) : "—") })),
    { label: t("mp.free"), cell: (v) => (v.free ? t("common.yes") : "") },
    { label: t("mp.source"), cell: (v) => v.source },
    { label: t("mp.actor"), cell: (v) => v.actor },
  ], items(data), t("mp.none")));
}
