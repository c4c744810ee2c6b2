// Plans (root): define plans with their rolling windows, delete them, and
// grant one to a user.
import { h, splitList } from "../dom.js";
import { api, items } from "../api.js";
import { pageHead, table, formDialog, confirmDialog, alertBox, showError, toast } from "../ui.js";
import { t } from "../i18n.js";
import { money, toQuota, unitField } from "../money.js";

// parseWindows reads "5h:10, 7d:50" (minutes m, hours h, days d; quota in
// the unit chosen) into the API's windows.
export function parseWindows(text, unit) {
  return text.split(",").map((s) => s.trim()).filter(Boolean).map((s) => {
    const m = /^(\d+)\s*([mhd])\s*:\s*([\d.]+)$/.exec(s);
    if (!m) throw new Error(t("padmin.windowsBad", { part: s }));
    const key = { m: "minutes", h: "hours", d: "days" }[m[2]];
    return { [key]: Number(m[1]), quota: toQuota(Number(m[3]), unit) };
  });
}

export async function render(main) {
  const alert = alertBox();
  const list = h("div", { id: "padmin-list", "aria-live": "polite" });
  const create = h("button", { type: "button", class: "primary", id: "padmin-create", onclick: make }, t("padmin.create"));
  main.append(pageHead(t("padmin.title"), t("padmin.sub"), create), alert, list);

  async function make() {
    const made = await formDialog({
      title: t("padmin.create"),
      submitLabel: t("padmin.create"),
      fields: [
        { name: "name", label: t("plans.name"), required: true, maxlength: 64 },
        { name: "price", label: t("padmin.price"), type: "number", min: 0, step: "0.01", value: 0 },
        { name: "period", label: t("padmin.period"), type: "select", options: ["month", "week", "day", "year"], value: "month" },
        { name: "windows", label: t("plans.windows"), required: true, placeholder: "5h:10, 7d:50", hint: t("padmin.windowsHint") },
        unitField(),
        { name: "models", label: t("plans.models"), hint: t("padmin.listHint") },
        { name: "groups", label: t("padmin.groups"), hint: t("padmin.listHint") },
        { name: "priority", label: t("padmin.priority"), type: "number", step: 1, value: 0 },
      ],
      onSubmit: (v) => api("POST", "/api/plans", { name: v.name, price_usd: Number(v.price || 0), period: v.period,
        windows: parseWindows(v.windows, v.unit), models: splitList(v.models), groups: splitList(v.groups), priority: Number(v.priority || 0) }),
    });
    if (made) load();
  }

  async function grant(p) {
    const done = await formDialog({
      title: t("padmin.grantTitle", { name: p.name }),
      submitLabel: t("padmin.grant"),
      fields: [
        { name: "user", label: t("padmin.userId"), type: "number", required: true, min: 1, step: 1 },
        { name: "until", label: t("padmin.until"), type: "datetime-local", hint: t("padmin.untilHint") },
      ],
      onSubmit: (v) => api("POST", `/api/users/${Number(v.user)}/plans`, v.until
        ? { plan_id: p.id, until: new Date(v.until).toISOString() } : { plan_id: p.id }),
    });
    if (done) toast(t("padmin.granted"));
  }

  async function remove(p) {
    if (!(await confirmDialog(t("padmin.deleteConfirm", { name: p.name })))) return;
    try {
      await api("DELETE", `/api/plans/${p.id}`);
      load();
    } catch (e) {
      showError(alert, e);
    }
  }

  async function load() {
    try {
      const all = items(await api("GET", "/api/plans"));
      list.replaceChildren(table(t("padmin.title"), [
        { label: t("plans.name"), cell: (p) => p.name },
        { label: t("padmin.priority"), num: true, cell: (p) => String(p.priority) },
        { label: t("plans.price"), num: true, cell: (p) => `$${Number(p.price_usd).toFixed(2)} / ${p.period}` },
        { label: t("plans.windows"), cell: (p) => p.windows.map((w) => `${w.days ? w.days + "d" : w.hours ? w.hours + "h" : w.minutes + "m"}: ${money(w.quota)}`).join(" · ") },
        { label: t("plans.models"), cell: (p) => (p.models.length ? p.models.join(", ") : t("plans.allModels")) },
        { label: "", cell: (p) => h("span", { class: "row-actions" },
          h("button", { type: "button", class: "padmin-grant", onclick: () => grant(p) }, t("padmin.grant")),
          h("button", { type: "button", class: "danger", onclick: () => remove(p) }, t("common.delete"))) },
      ], all, t("plans.noneForSale")));
    } catch (e) {
      showError(alert, e);
    }
  }
  load();
}
