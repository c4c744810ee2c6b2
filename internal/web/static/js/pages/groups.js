// Groups (admin): name → price ratio.
import { h } from "../dom.js";
import { api, items } from "../api.js";
import { pageHead, table, formDialog, confirmDialog, guard } from "../ui.js";

export async function render(main) {
  const list = h("div", { id: "groups-list" });
  main.append(pageHead("Groups", "A group's ratio multiplies every price for its users; channels serve chosen groups.",
    h("button", { type: "button", class: "primary", id: "group-create", onclick: () => edit(null) }, "Add group")), list);

  async function edit(g) {
    const saved = await formDialog({
      title: g ? `Edit group ${g.name}` : "Add group",
      fields: [
        { name: "name", label: "Name", required: true, maxlength: 64, value: g?.name, pattern: "\\S(.*\\S)?",
          hint: g ? "Renaming creates a new group; the old one stays." : "" },
        { name: "ratio", label: "Price ratio", type: "number", required: true, min: 0, step: "any", value: g?.ratio ?? 1,
          hint: "1 is the list price, 0.5 half price." },
      ],
      onSubmit: (v) => api("PUT", `/api/groups/${encodeURIComponent(v.name)}`, { ratio: v.ratio }),
    });
    if (saved) await load();
  }

  async function load() {
    const data = await api("GET", "/api/groups?page_size=1000");
    list.replaceChildren(table("Groups", [
      { label: "Name", cell: (g) => g.name },
      { label: "Ratio", num: true, cell: (g) => String(g.ratio) },
      { label: "Actions", cell: (g) => h("div", { class: "actions" },
        h("button", { type: "button", class: "small", "aria-label": `Edit group ${g.name}`, onclick: () => edit(g) }, "Edit"),
        h("button", { type: "button", class: "small danger", "aria-label": `Delete group ${g.name}`,
          onclick: async () => { if (await confirmDialog(`Delete group ${g.name}?`)) await guard(async () => { await api("DELETE", `/api/groups/${encodeURIComponent(g.name)}`); await load(); }, "Group deleted"); } },
          "Delete")) },
    ], items(data), "No groups yet."));
  }
  await load();
}
