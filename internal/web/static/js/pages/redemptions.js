// Redemption codes (admin): make codes worth an amount in quota or dollars,
// list them masked with their state.
import { h, when } from "../dom.js";
import { api, items, qs } from "../api.js";
import { pageHead, table, pager, formDialog, infoDialog, copyButton, alertBox, showError } from "../ui.js";
import { t } from "../i18n.js";
import { money, toQuota, unitField } from "../money.js";

const PAGE_SIZE = 25;

export async function render(main) {
  let page = 1;
  const list = h("div", { id: "redemptions-list", "aria-live": "polite" });
  const alert = alertBox();
  const create = h("button", { type: "button", class: "primary", id: "redemptions-create", onclick: make }, t("red.create"));
  main.append(pageHead(t("red.title"), t("red.sub"), create), alert, list);

  async function make() {
    const codes = await formDialog({
      title: t("red.create"),
      submitLabel: t("red.create"),
      fields: [
        { name: "name", label: t("red.name"), maxlength: 64 },
        { name: "amount", label: t("red.amount"), type: "number", required: true, min: 0, step: "any" },
        unitField(),
        { name: "count", label: t("red.count"), type: "number", required: true, min: 1, max: 1000, step: 1, value: 1 },
        { name: "expires", label: t("red.expires"), type: "datetime-local", hint: t("red.expiresHint") },
      ],
      onSubmit: async (v) => {
        const body = { name: v.name, quota: toQuota(v.amount, v.unit), count: v.count };
        if (v.expires) body.expires_at = new Date(v.expires).toISOString();
        return (await api("POST", "/api/redemptions", body)).codes;
      },
    });
    if (!codes) return;
    infoDialog(t("red.made"), h("p", {}, t("red.madeIntro")),
      h("ul", { class: "codes", id: "new-codes" }, codes.map((c) => h("li", {}, h("code", {}, c)))),
      copyButton(codes.join("\n"), t("common.copy")));
    page = 1;
    load();
  }

  async function load() {
    showError(alert, null);
    try {
      const data = await api("GET", `/api/redemptions${qs({ page, page_size: PAGE_SIZE })}`);
      list.replaceChildren(table(t("red.title"), [
        { label: t("red.name"), cell: (r) => r.name || "—" },
        { label: t("red.code"), cell: (r) => h("code", {}, r.code) },
        { label: t("red.value"), num: true, cell: (r) => money(r.quota) },
        { label: t("red.state"), cell: (r) => h("span", { class: `badge ${{ unused: "ok", used: "info", expired: "warn" }[r.state] || ""}` }, t(`red.s.${r.state}`)) },
        { label: t("red.expires"), cell: (r) => (r.expires_at ? when(r.expires_at) : t("common.never")) },
        { label: t("red.usedBy"), cell: (r) => (r.used_by ? `#${r.used_by}` : "—") },
      ], items(data), t("red.none")),
      pager({ page, pageSize: PAGE_SIZE, total: data.total }, (p) => { page = p; load(); }));
    } catch (e) {
      showError(alert, e);
    }
  }
  await load();
}
