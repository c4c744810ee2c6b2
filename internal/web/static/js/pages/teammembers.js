// A team's membership as an administrator sets it: add a user as member or
// manager, remove one (PATCH /api/users/{id} {team_id, team_role}).
import { h } from "../dom.js";
import { api, items } from "../api.js";
import { table, formDialog, confirmDialog, guard } from "../ui.js";
import { limitsCell, budgetCell } from "../limits.js";
import { t } from "../i18n.js";

const ROLES = ["member", "manager"];

/** teamMembers shows team tm's members in box, with add and remove. */
export async function teamMembers(box, tm) {
  const list = h("div", { id: "team-members-list" });
  box.className = "card";
  box.replaceChildren(h("h2", {}, t("orgs.membersOf", { name: tm.name })),
    h("button", { type: "button", class: "primary", id: "team-member-add", onclick: add }, t("orgs.addMember")), list);

  async function add() {
    const done = await formDialog({
      title: t("orgs.addMemberTo", { name: tm.name }),
      submitLabel: t("orgs.addMember"),
      fields: [
        { name: "user", label: t("orgs.user"), required: true, hint: t("orgs.userHint") },
        { name: "team_role", label: t("orgs.teamRole"), type: "select", options: ROLES.map((r) => [r, t(`team.role.${r}`)]), value: "member" },
      ],
      onSubmit: async (v) => api("PATCH", `/api/users/${await userID(v.user)}`, { team_id: tm.id, team_role: v.team_role }),
    });
    if (done) await load();
  }

  async function remove(u) {
    if (!(await confirmDialog(t("orgs.confirmRemove", { name: u.username, team: tm.name }), t("orgs.remove")))) return;
    await guard(async () => { await api("PATCH", `/api/users/${u.id}`, { team_id: 0 }); await load(); }, t("orgs.removed"));
  }

  async function load() {
    const all = items(await api("GET", `/api/teams/${tm.id}/members`));
    list.replaceChildren(table(t("orgs.membersOf", { name: tm.name }), [
      { label: t("users.id"), num: true, cell: (u) => u.id },
      { label: t("users.username"), cell: (u) => u.username },
      { label: t("orgs.teamRole"), cell: (u) => t(`team.role.${u.team_role || "member"}`) },
      { label: t("common.limits"), cell: (u) => limitsCell(u) },
      { label: t("common.budget"), cell: (u) => budgetCell(u) },
      { label: t("common.actions"), cell: (u) => h("button", { type: "button", class: "small danger",
        "aria-label": t("orgs.removeUser", { name: u.username }), onclick: () => remove(u) }, t("orgs.remove")) },
    ], all, t("orgs.noMembers")));
  }
  await guard(load);
}

// userID reads a user id, or finds the user of that name.
async function userID(s) {
  const v = String(s).trim();
  if (/^\d+$/.test(v)) return Number(v);
  const found = items(await api("GET", "/api/users?page_size=1000")).find((u) => u.username === v);
  if (!found) throw new Error(t("orgs.noSuchUser", { name: v }));
  return found.id;
}
