// Model prices (admin): US dollars per million tokens or per call.
import { h, splitList } from "../dom.js";
import { api, items } from "../api.js";
import { pageHead, table, formDialog, confirmDialog, guard, jsonObject } from "../ui.js";

const RATES = [
  ["input_per_mtok", "Input $/M tokens"],
  ["output_per_mtok", "Output $/M tokens"],
  ["cache_read_per_mtok", "Cache read $/M"],
  ["cache_write_per_mtok", "Cache write $/M"],
  ["per_call", "Per call $"],
];

export async function render(main) {
  const list = h("div", { id: "models-list" });
  main.append(pageHead("Model prices", "A routed model needs a price (or Free) before it can be billed.",
    h("button", { type: "button", class: "primary", id: "model-create", onclick: () => edit(null) }, "Add price")), list);

  async function edit(m) {
    const saved = await formDialog({
      title: m ? `Price of ${m.name}` : "Add model price",
      fields: [
        { name: "name", label: "Model", required: true, maxlength: 128, value: m?.name, pattern: "\\S(.*\\S)?" },
        ...RATES.map(([name, label]) => ({ name, label, type: "number", min: 0, step: "any", value: m?.[name] ?? "" })),
        { name: "free", label: "Free (no charge)", type: "checkbox", value: m?.free },
        { name: "extra", label: "Extra pricing (JSON)", type: "json", value: m?.extra ?? "", validate: jsonObject,
          hint: "Optional per-kind factors, e.g. image sizes." },
        { name: "fallbacks", label: "Fallback models", value: (m?.fallbacks || []).join(", "),
          hint: "Comma-separated, tried in order when every channel of this model fails before answering." },
      ],
      onSubmit: (v) => {
        const body = { free: v.free };
        for (const [name] of RATES) if (v[name] !== null) body[name] = v[name];
        if (v.extra.trim()) body.extra = JSON.parse(v.extra);
        body.fallbacks = splitList(v.fallbacks);
        return api("PUT", `/api/models/${encodeURIComponent(v.name)}`, body);
      },
    });
    if (saved) await load();
  }

  async function load() {
    const data = await api("GET", "/api/models?page_size=1000");
    list.replaceChildren(table("Model prices", [
      { label: "Model", cell: (m) => h("code", {}, m.name) },
      ...RATES.map(([name, label]) => ({ label, num: true, cell: (m) => (m[name] ? String(m[name]) : "—") })),
      { label: "Free", cell: (m) => (m.free ? "yes" : "") },
      { label: "Fallbacks", cell: (m) => (m.fallbacks?.length ? m.fallbacks.join(" → ") : "") },
      { label: "Actions", cell: (m) => h("div", { class: "actions" },
        h("button", { type: "button", class: "small", "aria-label": `Edit price of ${m.name}`, onclick: () => edit(m) }, "Edit"),
        h("button", { type: "button", class: "small danger", "aria-label": `Delete price of ${m.name}`,
          onclick: async () => { if (await confirmDialog(`Delete the price of ${m.name}? Calls to it will fail to bill.`)) await guard(async () => { await api("DELETE", `/api/models/${encodeURIComponent(m.name)}`); await load(); }, "Price deleted"); } },
          "Delete")) },
    ], items(data), "No prices yet."));
  }
  await load();
}
