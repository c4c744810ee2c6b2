// Users (admin): create, edit, top up quota, delete.
import { h, badge } from "../dom.js";
import { api, items, qs } from "../api.js";
import { pageHead, table, pager, formDialog, confirmDialog, guard } from "../ui.js";
import { limitFields, limitBody, limitsCell, budgetCell } from "../limits.js";
import { money, toQuota, unitField } from "../money.js";

const PAGE_SIZE = 25;

export async function render(main, ctx) {
  let page = 1;
  const list = h("div", { id: "users-list" });
  const groups = await groupNames();
  const roles = ctx.isRoot ? ["user", "admin", "root"] : ["user"];
  main.append(pageHead("Users", "People who can sign in, their group and their quota.",
    h("button", { type: "button", class: "primary", id: "user-create", onclick: () => editUser(null) }, "Create user")), list);

  function fields(u) {
    return [
      { name: "username", label: "Username", required: true, maxlength: 64, value: u?.username, autocomplete: "off" },
      { name: "password", label: u ? "New password" : "Password", type: "password", required: !u, maxlength: 72,
        autocomplete: "new-password", hint: u ? "Leave empty to keep the current password." : "" },
      { name: "role", label: "Role", type: "select", options: roles.includes(u?.role) || !u ? roles : [u.role, ...roles], value: u?.role || "user" },
      { name: "group", label: "Group", type: "select", options: groups.length ? groups : ["default"], value: u?.group || "default" },
      u ? { name: "status", label: "Status", type: "select", options: ["enabled", "disabled"], value: u.status }
        : { name: "quota", label: "Initial quota", type: "number", min: 0, step: 1, value: 0 },
      ...limitFields(u),
    ];
  }

  async function editUser(u) {
    const saved = await formDialog({
      title: u ? `Edit ${u.username}` : "Create user",
      submitLabel: u ? "Save" : "Create",
      fields: fields(u),
      onSubmit: (v) => {
        const body = { username: v.username, role: v.role, group: v.group, ...limitBody(v) };
        if (v.password) body.password = v.password;
        if (u) body.status = v.status;
        else body.quota = v.quota || 0;
        return u ? api("PATCH", `/api/users/${u.id}`, body) : api("POST", "/api/users", body);
      },
    });
    if (saved) await load();
  }

  async function topUp(u) {
    const r = await formDialog({
      title: `Change quota of ${u.username}`,
      intro: `Current balance: ${money(u.quota)}. A negative amount removes quota.`,
      submitLabel: "Apply",
      fields: [{ name: "delta", label: "Amount", type: "number", required: true, step: "any",
        validate: (v, all) => (toQuota(v, all.unit) === 0 ? "Enter a non-zero amount." : "") }, unitField()],
      onSubmit: (v) => api("POST", `/api/users/${u.id}/quota`, { delta: toQuota(v.delta, v.unit) }),
    });
    if (r) await load();
  }

  async function load() {
    const data = await api("GET", `/api/users${qs({ page, page_size: PAGE_SIZE })}`);
    list.replaceChildren(table("Users", [
      { label: "ID", num: true, cell: (u) => u.id },
      { label: "Username", cell: (u) => u.username },
      { label: "Role", cell: (u) => u.role },
      { label: "Group", cell: (u) => u.group },
      { label: "Quota", num: true, cell: (u) => money(u.quota) },
      { label: "Used", num: true, cell: (u) => money(u.used_quota) },
      { label: "Limits", cell: (u) => limitsCell(u) },
      { label: "Budget", cell: (u) => budgetCell(u) },
      { label: "Status", cell: (u) => badge(u.status) },
      { label: "Actions", cell: (u) => h("div", { class: "actions" },
        h("button", { type: "button", class: "small", "aria-label": `Edit ${u.username}`, onclick: () => editUser(u) }, "Edit"),
        h("button", { type: "button", class: "small", "aria-label": `Top up ${u.username}`, onclick: () => topUp(u) }, "Top up"),
        u.id === ctx.me.id ? null : h("button", { type: "button", class: "small danger", "aria-label": `Delete ${u.username}`,
          onclick: async () => { if (await confirmDialog(`Delete user ${u.username} and their keys?`)) await guard(async () => { await api("DELETE", `/api/users/${u.id}`); await load(); }, "User deleted"); } },
          "Delete")) },
    ], items(data), "No users."), pager({ page, pageSize: PAGE_SIZE, total: data.total }, (p) => { page = p; load(); }));
  }
  await load();
}

export async function groupNames() {
  try {
    return items(await api("GET", "/api/groups?page_size=1000")).map((g) => g.name);
  } catch {
    return [];
  }
}
