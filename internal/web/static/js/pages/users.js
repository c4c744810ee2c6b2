// Users (admin): create, edit, top up quota, delete.
import { h, statusBadge } from "../dom.js";
import { api, items, qs } from "../api.js";
import { pageHead, table, pager, formDialog, confirmDialog, guard } from "../ui.js";
import { limitFields, limitBody, limitsCell, budgetCell } from "../limits.js";
import { money, toQuota, unitField } from "../money.js";
import { t } from "../i18n.js";

// roleName shows a role in the user's language; an unknown one as it is.
const roleName = (r) => (["user", "admin", "root"].includes(r) ? t(`role.${r}`) : r);

const PAGE_SIZE = 25;

export async function render(main, ctx) {
  let page = 1;
  const list = h("div", { id: "users-list" });
  const groups = await groupNames();
  const roles = ctx.isRoot ? ["user", "admin", "root"] : ["user"];
  main.append(pageHead(t("users.title"), t("users.sub"),
    h("button", { type: "button", class: "primary", id: "user-create", onclick: () => editUser(null) }, t("users.create"))), list);

  function fields(u) {
    return [
      { name: "username", label: t("users.username"), required: true, maxlength: 64, value: u?.username, autocomplete: "off" },
      { name: "password", label: u ? t("users.newPw") : t("users.password"), type: "password", required: !u, maxlength: 72,
        autocomplete: "new-password", hint: u ? t("users.pwKeep") : "" },
      { name: "role", label: t("users.role"), type: "select", options: (roles.includes(u?.role) || !u ? roles : [u.role, ...roles]).map((r) => [r, roleName(r)]), value: u?.role || "user" },
      { name: "group", label: t("users.group"), type: "select", options: groups.length ? groups : ["default"], value: u?.group || "default" },
      u ? { name: "status", label: t("common.status"), type: "select", options: ["enabled", "disabled"].map((s) => [s, t(`status.${s}`)]), value: u.status }
        : { name: "quota", label: t("users.initialQuota"), type: "number", min: 0, step: "any", value: 0 },
      u ? null : { ...unitField("quota_unit"), label: t("money.quotaUnit") },
      ...limitFields(u),
    ].filter(Boolean);
  }

  async function editUser(u) {
    const saved = await formDialog({
      title: u ? t("users.edit", { name: u.username }) : t("users.create"),
      submitLabel: u ? t("common.save") : t("common.create"),
      fields: fields(u),
      onSubmit: (v) => {
        const body = { username: v.username, role: v.role, group: v.group, ...limitBody(v) };
        if (v.password) body.password = v.password;
        if (u) body.status = v.status;
        else body.quota = v.quota ? toQuota(v.quota, v.quota_unit) : 0;
        return u ? api("PATCH", `/api/users/${u.id}`, body) : api("POST", "/api/users", body);
      },
    });
    if (saved) await load();
  }

  async function topUp(u) {
    const r = await formDialog({
      title: t("users.topUpTitle", { name: u.username }),
      intro: t("users.topUpIntro", { balance: money(u.quota) }),
      submitLabel: t("common.apply"),
      fields: [{ name: "delta", label: t("users.amount"), type: "number", required: true, step: "any",
        validate: (v, all) => (toQuota(v, all.unit) === 0 ? t("users.nonZero") : "") }, unitField()],
      onSubmit: (v) => api("POST", `/api/users/${u.id}/quota`, { delta: toQuota(v.delta, v.unit) }),
    });
    if (r) await load();
  }

  async function load() {
    const data = await api("GET", `/api/users${qs({ page, page_size: PAGE_SIZE })}`);
    list.replaceChildren(table(t("users.title"), [
      { label: t("users.id"), num: true, cell: (u) => u.id },
      { label: t("users.username"), cell: (u) => u.username },
      { label: t("users.role"), cell: (u) => roleName(u.role) },
      { label: t("users.group"), cell: (u) => u.group },
      { label: t("users.quota"), num: true, cell: (u) => money(u.quota) },
      { label: t("common.used"), num: true, cell: (u) => money(u.used_quota) },
      { label: t("common.limits"), cell: (u) => limitsCell(u) },
      { label: t("common.budget"), cell: (u) => budgetCell(u) },
      { label: t("common.status"), cell: (u) => statusBadge(u.status) },
      { label: t("common.actions"), cell: (u) => h("div", { class: "actions" },
        h("button", { type: "button", class: "small", "aria-label": t("users.edit", { name: u.username }), onclick: () => editUser(u) }, t("common.edit")),
        h("button", { type: "button", class: "small", "aria-label": t("users.topUpUser", { name: u.username }), onclick: () => topUp(u) }, t("users.topUp")),
        u.id === ctx.me.id ? null : h("button", { type: "button", class: "small danger", "aria-label": t("users.deleteUser", { name: u.username }),
          onclick: async () => { if (await confirmDialog(t("users.confirmDelete", { name: u.username }))) await guard(async () => { await api("DELETE", `/api/users/${u.id}`); await load(); }, t("users.deleted")); } },
          t("common.delete"))) },
    ], items(data), t("users.none")), pager({ page, pageSize: PAGE_SIZE, total: data.total }, (p) => { page = p; load(); }));
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
