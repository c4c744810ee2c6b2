// Usage logs with filters by type, model and key, newest first, paged.
import { h, num, when, badge } from "../dom.js";
import { t } from "../i18n.js";
import { money } from "../money.js";
import { api, items, qs } from "../api.js";
import { pageHead, table, pager, fieldSet, alertBox, showError } from "../ui.js";

const PAGE_SIZE = 25;

export async function render(main, ctx) {
  let page = 1;
  let tokens = [];
  try {
    tokens = items(await api("GET", "/api/tokens?page_size=200"));
  } catch {
    tokens = [];
  }
  const filters = fieldSet([
    { name: "type", label: t("logs.type"), type: "select", options: [["", t("common.all")], ...["consume", "refund", "error", "topup"].map((k) => [k, t(`logs.t.${k}`)])] },
    { name: "model", label: t("logs.model"), placeholder: t("logs.anyModel") },
    { name: "token_id", label: t("logs.key"), type: "select", options: [["", t("logs.allKeys")], ...tokens.map((k) => [String(k.id), k.name])] },
  ]);
  filters.el.className = "filters";
  filters.el.append(h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, t("common.apply")),
    h("button", { type: "reset" }, t("common.reset"))));
  const form = h("form", { class: "card", role: "search", "aria-label": t("logs.filter") }, filters.el);
  form.addEventListener("submit", (ev) => { ev.preventDefault(); page = 1; load(); });
  form.addEventListener("reset", () => setTimeout(() => { page = 1; load(); }));
  const list = h("div", { id: "logs-list", "aria-live": "polite" });
  const alert = alertBox();
  main.append(pageHead(t("logs.title"), ctx.isAdmin ? t("logs.subAll") : t("logs.subOwn")), form, alert, list);
  const tokenName = new Map(tokens.map((t) => [t.id, t.name]));

  async function load() {
    showError(alert, null);
    const f = filters.read();
    try {
      const data = await api("GET", `/api/logs${qs({ ...f, page, page_size: PAGE_SIZE })}`);
      list.replaceChildren(table(t("logs.title"), [
        { label: t("common.time"), cell: (l) => when(l.created_at) },
        { label: t("logs.type"), cell: (l) => badge(l.type) },
        { label: t("logs.model"), cell: (l) => l.model },
        { label: t("logs.key"), cell: (l) => keyCell(l, tokenName) },
        ctx.isAdmin ? { label: t("common.user"), num: true, cell: (l) => `#${l.user_id}` } : null,
        { label: t("logs.prompt"), num: true, cell: (l) => num(l.prompt_tokens) },
        { label: t("logs.completion"), num: true, cell: (l) => num(l.completion_tokens) },
        { label: t("logs.quota"), num: true, cell: (l) => money(l.quota) },
        { label: t("logs.latency"), num: true, cell: (l) => `${num(l.latency_ms)} ms` },
      ].filter(Boolean), items(data), t("logs.none")),
      pager({ page, pageSize: PAGE_SIZE, total: data.total }, (p) => { page = p; load(); }));
    } catch (e) {
      showError(alert, e);
    }
  }
  await load();
}

// keyCell names the key a row was billed to. Rows without a key are
// playground calls, except balance changes such as top-ups, which no key
// made.
function keyCell(l, tokenName) {
  if (l.token_id) return tokenName.get(l.token_id) || `#${l.token_id}`;
  const keyless = ["consume", "refund", "error"].includes(l.type) ? t("logs.playground") : "—";
  return h("span", { class: "muted" }, keyless);
}
