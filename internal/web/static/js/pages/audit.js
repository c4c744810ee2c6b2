// Audit log (root): every state-changing /api call, filtered and paged.
import { h, when } from "../dom.js";
import { api, items, qs } from "../api.js";
import { pageHead, table, pager, fieldSet, alertBox, showError } from "../ui.js";
import { t } from "../i18n.js";

const PAGE_SIZE = 50;

export async function render(main) {
  let page = 1;
  const filters = fieldSet([
    { name: "user", label: t("audit.user") },
    { name: "method", label: t("audit.method"), type: "select", options: [["", t("common.all")], "POST", "PUT", "PATCH", "DELETE"] },
    { name: "path", label: t("audit.path"), placeholder: "/api/users" },
    { name: "since", label: t("audit.since"), type: "datetime-local" },
    { name: "until", label: t("audit.until"), type: "datetime-local" },
  ]);
  filters.el.className = "filters";
  filters.el.append(h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, t("common.apply")),
    h("button", { type: "reset" }, t("common.reset"))));
  const form = h("form", { class: "card", role: "search", "aria-label": t("audit.filter") }, filters.el);
  form.addEventListener("submit", (ev) => { ev.preventDefault(); page = 1; load(); });
  form.addEventListener("reset", () => setTimeout(() => { page = 1; load(); }));
  const list = h("div", { id: "audit-list", "aria-live": "polite" });
  const alert = alertBox();
  main.append(pageHead(t("audit.title"), t("audit.sub")), form, alert, list);

  async function load() {
    showError(alert, null);
    const f = filters.read();
    const iso = (v) => (v ? new Date(v).toISOString().replace(/\.\d{3}Z$/, "Z") : "");
    try {
      const data = await api("GET", `/api/audit${qs({ user: f.user, method: f.method, path: f.path, since: iso(f.since), until: iso(f.until), page, page_size: PAGE_SIZE })}`);
      list.replaceChildren(table(t("audit.title"), [
        { label: t("common.time"), cell: (e) => when(e.created_at) },
        { label: t("audit.user"), cell: (e) => (e.username ? [e.username, " ", h("span", { class: "badge" }, e.role)] : h("span", { class: "muted" }, t("audit.anonymous"))) },
        { label: t("audit.method"), cell: (e) => h("code", {}, e.method) },
        { label: t("audit.pathCol"), cell: (e) => h("code", {}, e.path) },
        { label: t("audit.target"), cell: (e) => e.target || "—" },
        { label: t("audit.status"), num: true, cell: (e) => String(e.status) },
        { label: t("audit.outcome"), cell: (e) => h("span", { class: `badge ${{ success: "ok", denied: "warn", failure: "bad" }[e.outcome] || ""}` }, e.outcome) },
        { label: t("audit.ip"), cell: (e) => e.client_ip },
      ], items(data), t("audit.none")),
      pager({ page, pageSize: PAGE_SIZE, total: data.total }, (p) => { page = p; load(); }));
    } catch (e) {
      showError(alert, e);
    }
  }
  await load();
}
