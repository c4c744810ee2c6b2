// Groups (admin): name → price ratio.
import { h } from "../dom.js";
import { api, items } from "../api.js";
import { pageHead, table, formDialog, confirmDialog, guard } from "../ui.js";
import { t } from "../i18n.js";

export async function render(main) {
  const list = h("div", { id: "groups-list" });
  main.append(pageHead(t("groups.title"), t("groups.sub"),
    h("button", { type: "button", class: "primary", id: "group-create", onclick: () => edit(null) }, t("groups.add"))), list);

  async function edit(g) {
    const saved = await formDialog({
      title: g ? t("groups.edit", { name: g.name }) : t("groups.add"),
      fields: [
        { name: "name", label: t("groups.name"), required: true, maxlength: 64, value: g?.name, pattern: "\\S(.*\\S)?",
          hint: g ? t("groups.rename") : "" },
        { name: "ratio", label: t("groups.ratio"), type: "number", required: true, min: 0, step: "any", value: g?.ratio ?? 1,
          hint: t("groups.ratioHint") },
      ],
      onSubmit: (v) => api("PUT", `/api/groups/${encodeURIComponent(v.name)}`, { ratio: v.ratio }),
    });
    if (saved) await load();
  }

  async function load() {
    const data = await api("GET", "/api/groups?page_size=1000");
    list.replaceChildren(table(t("groups.title"), [
      { label: t("groups.name"), cell: (g) => g.name },
      { label: t("groups.ratio"), num: true, cell: (g) => String(g.ratio) },
      { label: t("groups.actions"), cell: (g) => h("div", { class: "actions" },
        h("button", { type: "button", class: "small", "aria-label": t("groups.edit", { name: g.name }), onclick: () => edit(g) }, t("groups.editBtn")),
        h("button", { type: "button", class: "small danger", "aria-label": `${t("groups.delete")} ${g.name}`,
          onclick: async () => { if (await confirmDialog(t("groups.confirm", { name: g.name }), t("groups.delete"))) await guard(async () => { await api("DELETE", `/api/groups/${encodeURIComponent(g.name)}`); await load(); }, t("groups.deleted")); } },
          t("groups.delete"))) },
    ], items(data), t("groups.none")));
  }
  await load();
}
