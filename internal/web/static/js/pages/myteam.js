// My team (a team's manager, CONTRACT §18): the members with their limits
// and period spending, their budgets, their keys and the team's usage.
import { h, num, statusBadge } from "../dom.js";
import { api, items, qs } from "../api.js";
import { pageHead, table, formDialog, fieldSet, alertBox, showError } from "../ui.js";
import { limitFields, limitBody, limitsCell, budgetCell } from "../limits.js";
import { money } from "../money.js";
import { t } from "../i18n.js";

const BY = ["user", "key", "model"];
const DAY = 86400000;

export async function render(main, ctx) {
  const id = ctx.me.team_id;
  const team = await api("GET", `/api/teams/${id}`);
  const memberList = h("div", { id: "myteam-members" });
  const keyList = h("div", { id: "myteam-keys" });
  let members = [];
  let keys = [];
  main.append(pageHead(t("myteam.title"), t("myteam.sub", { name: team.name })),
    team.billing === "shared" ? h("p", { id: "myteam-balance" }, t("myteam.balance", { balance: money(team.quota) })) : null,
    h("section", { class: "card" }, h("h2", {}, t("myteam.members")), memberList),
    h("section", { class: "card" }, h("h2", {}, t("myteam.keys")), keyList));

  async function setBudget(u) {
    const saved = await formDialog({
      title: t("myteam.budgetOf", { name: u.username }),
      fields: limitFields(u),
      onSubmit: (v) => api("PATCH", `/api/teams/${id}/members/${u.id}`, limitBody(v)),
    });
    if (saved) await load();
  }

  async function load() {
    members = items(await api("GET", `/api/teams/${id}/members`));
    keys = items(await api("GET", `/api/teams/${id}/keys`));
    memberList.replaceChildren(table(t("myteam.members"), [
      { label: t("users.username"), cell: (u) => u.username },
      { label: t("orgs.teamRole"), cell: (u) => t(`team.role.${u.team_role || "member"}`) },
      { label: t("common.limits"), cell: (u) => limitsCell(u) },
      { label: t("common.budget"), cell: (u) => budgetCell(u) },
      { label: t("common.actions"), cell: (u) => (u.id === ctx.me.id ? null : h("button", { type: "button", class: "small myteam-budget",
        "aria-label": t("myteam.budgetOf", { name: u.username }), onclick: () => setBudget(u) }, t("myteam.setBudget"))) },
    ], members, t("orgs.noMembers")));
    keyList.replaceChildren(table(t("myteam.keys"), [
      { label: t("common.name"), cell: (k) => k.name },
      { label: t("common.user"), cell: (k) => userName(k.user_id) },
      { label: t("myteam.key"), cell: (k) => h("code", {}, k.key) },
      { label: t("common.used"), num: true, cell: (k) => money(k.used_quota) },
      { label: t("common.status"), cell: (k) => statusBadge(k.status) },
    ], keys, t("myteam.noKeys")));
  }
  const userName = (uid) => members.find((u) => u.id === uid)?.username || `#${uid}`;
  const keyName = (kid) => keys.find((k) => k.id === kid)?.name || `#${kid}`;
  await load();
  main.append(usage(id, (by, key) => (by === "user" ? userName(Number(key)) : by === "key" ? keyName(Number(key)) : key)));
}

// usage is the team's usage over a date range, grouped as chosen.
function usage(id, name) {
  const today = new Date().toISOString().slice(0, 10);
  const set = fieldSet([
    { name: "since", label: t("myteam.since"), type: "date", required: true, value: new Date(Date.now() - 6 * DAY).toISOString().slice(0, 10) },
    { name: "until", label: t("myteam.until"), type: "date", required: true, value: today },
    { name: "group_by", label: t("myteam.groupBy"), type: "select", options: BY.map((b) => [b, t(`myteam.by.${b}`)]), value: "user" },
  ], { grid: true });
  const alert = alertBox();
  const out = h("div", { id: "myteam-usage", "aria-live": "polite" });
  const form = h("form", { novalidate: true, class: "card" }, h("h2", {}, t("myteam.usage")), set.el, alert,
    h("button", { type: "submit", class: "primary", id: "myteam-usage-show" }, t("myteam.show")), out);
  const show = async () => {
    const v = set.validate();
    if (!v) return;
    showError(alert, null);
    try {
      // The range is whole days: until is the end of its day.
      const since = new Date(`${v.since}T00:00:00`).toISOString();
      const until = new Date(new Date(`${v.until}T00:00:00`).getTime() + DAY).toISOString();
      const r = await api("GET", `/api/teams/${id}/usage${qs({ since, until, group_by: v.group_by })}`);
      out.replaceChildren(table(t("myteam.usage"), [
        { label: t(`myteam.by.${r.group_by}`), cell: (g) => name(r.group_by, g.key) },
        { label: t("myteam.requests"), num: true, cell: (g) => num(g.requests) },
        { label: t("myteam.promptTokens"), num: true, cell: (g) => num(g.prompt_tokens) },
        { label: t("myteam.completionTokens"), num: true, cell: (g) => num(g.completion_tokens) },
        { label: t("myteam.spent"), num: true, cell: (g) => money(g.quota) },
      ], items(r), t("myteam.noUsage")));
    } catch (e) {
      showError(alert, e);
    }
  };
  form.addEventListener("submit", (ev) => { ev.preventDefault(); show(); });
  show();
  return form;
}
