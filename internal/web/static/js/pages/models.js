// Model prices (admin): US dollars per million tokens or per call.
import { h, splitList } from "../dom.js";
import { api, items } from "../api.js";
import { pageHead, table, formDialog, confirmDialog, guard, jsonObject } from "../ui.js";
import { t } from "../i18n.js";

const RATES = [
  ["input_per_mtok", "mp.input"],
  ["output_per_mtok", "mp.output"],
  ["cache_read_per_mtok", "mp.cacheRead"],
  ["cache_write_per_mtok", "mp.cacheWrite"],
  ["per_call", "mp.perCall"],
];

export async function render(main) {
  const list = h("div", { id: "models-list" });
  main.append(pageHead(t("mp.title"), t("mp.sub"),
    h("button", { type: "button", class: "primary", id: "model-create", onclick: () => edit(null) }, t("mp.add"))), list);

  async function edit(m) {
    const saved = await formDialog({
      title: m ? t("mp.priceOf", { name: m.name }) : t("mp.addTitle"),
      fields: [
        { name: "name", label: t("mp.model"), required: true, maxlength: 128, value: m?.name, pattern: "\\S(.*\\S)?" },
        ...RATES.map(([name, key]) => ({ name, label: t(key), type: "number", min: 0, step: "any", value: m?.[name] ?? "" })),
        { name: "free", label: t("mp.freeField"), type: "checkbox", value: m?.free },
        { name: "extra", label: t("mp.extra"), type: "json", value: m?.extra ?? "", validate: jsonObject,
          hint: t("mp.extraHint") },
        { name: "fallbacks", label: t("mp.fallbacks"), value: (m?.fallbacks || []).join(", "),
          hint: t("mp.fallbacksHint") },
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
    list.replaceChildren(table(t("mp.title"), [
      { label: t("mp.model"), cell: (m) => h("code", {}, m.name) },
      ...RATES.map(([name, key]) => ({ label: t(key), num: true, cell: (m) => (m[name] ? String(m[name]) : "—") })),
      { label: t("mp.free"), cell: (m) => (m.free ? t("common.yes") : "") },
      { label: t("mp.fallbacksCol"), cell: (m) => (m.fallbacks?.length ? m.fallbacks.join(" → ") : "") },
      { label: t("common.actions"), cell: (m) => h("div", { class: "actions" },
        h("button", { type: "button", class: "small", "aria-label": t("mp.editPrice", { name: m.name }), onclick: () => edit(m) }, t("common.edit")),
        h("button", { type: "button", class: "small danger", "aria-label": t("mp.deletePrice", { name: m.name }),
          onclick: async () => { if (await confirmDialog(t("mp.confirmDelete", { name: m.name }))) await guard(async () => { await api("DELETE", `/api/models/${encodeURIComponent(m.name)}`); await load(); }, t("mp.deleted")); } },
          t("common.delete"))) },
    ], items(data), t("mp.none")));
  }
  await load();
}
