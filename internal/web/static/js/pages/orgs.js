// Organisations and teams (admin, CONTRACT §18): their limits, models and
// default group, a team's shared balance and its members.
import { h, splitList } from "../dom.js";
import { api, items } from "../api.js";
import { pageHead, table, formDialog, confirmDialog, guard } from "../ui.js";
import { limitFields, limitBody, limitsCell, budgetCell } from "../limits.js";
import { money, toQuota, unitField } from "../money.js";
import { t } from "../i18n.js";
import { groupNames } from "./users.js";
import { teamMembers } from "./teammembers.js";

export async function render(main) {
  const orgList = h("div", { id: "orgs-list" });
  const teamList = h("div", { id: "teams-list" });
  const members = h("div", { id: "team-members", "aria-live": "polite" });
  const groups = await groupNames();
  let orgs = [];
  main.append(pageHead(t("orgs.title"), t("orgs.sub"),
    h("button", { type: "button", class: "primary", id: "org-create", onclick: () => editOrg(null) }, t("orgs.createOrg")),
    h("button", { type: "button", class: "primary", id: "team-create", onclick: () => editTeam(null) }, t("orgs.createTeam"))),
  h("section", { class: "card" }, h("h2", {}, t("orgs.orgs")), orgList),
  h("section", { class: "card" }, h("h2", {}, t("orgs.teams")), teamList), members);

  // levelFields are the members an organisation and a team share.
  const levelFields = (x) => [
    { name: "name", label: t("common.name"), required: true, maxlength: 64, value: x?.name },
    { name: "models", label: t("common.models"), value: (x?.models || []).join(", "), hint: t("orgs.modelsHint") },
    { name: "group", label: t("orgs.group"), type: "select", options: [["", t("orgs.noGroup")], ...groups], value: x?.group || "", hint: t("orgs.groupHint") },
    ...limitFields(x),
  ];
  const levelBody = (v) => ({ name: v.name, models: splitList(v.models), group: v.group, ...limitBody(v) });

  async function editOrg(o) {
    const saved = await formDialog({
      title: o ? t("orgs.editOrg", { name: o.name }) : t("orgs.createOrg"),
      submitLabel: o ? t("common.save") : t("common.create"),
      fields: levelFields(o),
      onSubmit: (v) => (o ? api("PATCH", `/api/orgs/${o.id}`, levelBody(v)) : api("POST", "/api/orgs", levelBody(v))),
    });
    if (saved) await load();
  }

  async function editTeam(tm) {
    const saved = await formDialog({
      title: tm ? t("orgs.editTeam", { name: tm.name }) : t("orgs.createTeam"),
      submitLabel: tm ? t("common.save") : t("common.create"),
      fields: [
        { name: "org_id", label: t("orgs.org"), type: "select", required: true, options: orgs.map((o) => [o.id, o.name]), value: tm?.org_id },
        { name: "billing", label: t("orgs.billing"), type: "select", options: [["own", t("orgs.billing.own")], ["shared", t("orgs.billing.shared")]],
          value: tm?.billing || "own", hint: t("orgs.billingHint") },
        ...levelFields(tm),
      ],
      onSubmit: (v) => {
        const body = { ...levelBody(v), org_id: Number(v.org_id), billing: v.billing };
        return tm ? api("PATCH", `/api/teams/${tm.id}`, body) : api("POST", "/api/teams", body);
      },
    });
    if (saved) await load();
  }

  async function topUp(tm) {
    const done = await formDialog({
      title: t("orgs.topUpTitle", { name: tm.name }),
      intro: t("users.topUpIntro", { balance: money(tm.quota) }),
      submitLabel: t("common.apply"),
      fields: [{ name: "delta", label: t("users.amount"), type: "number", required: true, step: "any",
        validate: (v, all) => (toQuota(v, all.unit) === 0 ? t("users.nonZero") : "") }, unitField()],
      onSubmit: (v) => api("POST", `/api/teams/${tm.id}/quota`, { delta: toQuota(v.delta, v.unit) }),
    });
    if (done) await load();
  }

  const remove = async (kind, x) => {
    if (await confirmDialog(t(`orgs.confirm.${kind}`, { name: x.name }))) {
      await guard(async () => { await api("DELETE", `/api/${kind}s/${x.id}`); await load(); }, t("orgs.deleted"));
    }
  };
  const orgName = (id) => orgs.find((o) => o.id === id)?.name || `#${id}`;
  const models = (x) => (x.models?.length ? x.models.join(", ") : t("plans.allModels"));
  const actions = (x, ...extra) => h("div", { class: "actions" }, ...extra,
    h("button", { type: "button", class: "small danger", "aria-label": `${t("common.delete")} ${x.name}`, onclick: () => remove(x.org_id ? "team" : "org", x) }, t("common.delete")));

  async function load() {
    orgs = items(await api("GET", "/api/orgs"));
    const teams = items(await api("GET", "/api/teams"));
    orgList.replaceChildren(table(t("orgs.orgs"), [
      { label: t("common.name"), cell: (o) => o.name },
      { label: t("common.models"), cell: models },
      { label: t("orgs.group"), cell: (o) => o.group || "—" },
      { label: t("common.limits"), cell: (o) => limitsCell(o) },
      { label: t("common.budget"), cell: (o) => budgetCell(o) },
      { label: t("common.actions"), cell: (o) => actions(o,
        h("button", { type: "button", class: "small", "aria-label": t("orgs.editOrg", { name: o.name }), onclick: () => editOrg(o) }, t("common.edit"))) },
    ], orgs, t("orgs.noOrgs")));
    teamList.replaceChildren(table(t("orgs.teams"), [
      { label: t("common.name"), cell: (x) => x.name },
      { label: t("orgs.org"), cell: (x) => orgName(x.org_id) },
      { label: t("orgs.billing"), cell: (x) => t(`orgs.billing.${x.billing}`) },
      { label: t("orgs.balance"), num: true, cell: (x) => money(x.quota) },
      { label: t("common.models"), cell: models },
      { label: t("common.limits"), cell: (x) => limitsCell(x) },
      { label: t("common.budget"), cell: (x) => budgetCell(x) },
      { label: t("common.actions"), cell: (x) => actions(x,
        h("button", { type: "button", class: "small", "aria-label": t("orgs.editTeam", { name: x.name }), onclick: () => editTeam(x) }, t("common.edit")),
        h("button", { type: "button", class: "small", "aria-label": t("orgs.topUpTitle", { name: x.name }), onclick: () => topUp(x) }, t("users.topUp")),
        h("button", { type: "button", class: "small team-members-open", "aria-label": t("orgs.membersOf", { name: x.name }),
          onclick: () => teamMembers(members, x) }, t("orgs.members"))) },
    ], teams, t("orgs.noTeams")));
  }
  await load();
}
