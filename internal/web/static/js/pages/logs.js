// Usage logs with filters by type, model and key, newest first, paged.
import { h, num, when, badge } from "../dom.js";
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
    { name: "type", label: "Type", type: "select", options: [["", "All"], ["consume", "Consume"], ["refund", "Refund"], ["error", "Error"]] },
    { name: "model", label: "Model", placeholder: "any model" },
    { name: "token_id", label: "API key", type: "select", options: [["", "All keys"], ...tokens.map((t) => [String(t.id), t.name])] },
  ]);
  filters.el.className = "filters";
  filters.el.append(h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Apply"),
    h("button", { type: "reset" }, "Reset")));
  const form = h("form", { class: "card", role: "search", "aria-label": "Filter logs" }, filters.el);
  form.addEventListener("submit", (ev) => { ev.preventDefault(); page = 1; load(); });
  form.addEventListener("reset", () => setTimeout(() => { page = 1; load(); }));
  const list = h("div", { id: "logs-list", "aria-live": "polite" });
  const alert = alertBox();
  main.append(pageHead("Usage logs", ctx.isAdmin ? "Every user's calls, newest first." : "Your calls, newest first."), form, alert, list);
  const tokenName = new Map(tokens.map((t) => [t.id, t.name]));

  async function load() {
    showError(alert, null);
    const f = filters.read();
    try {
      const data = await api("GET", `/api/logs${qs({ ...f, page, page_size: PAGE_SIZE })}`);
      list.replaceChildren(table("Usage logs", [
        { label: "Time", cell: (l) => when(l.created_at) },
        { label: "Type", cell: (l) => badge(l.type) },
        { label: "Model", cell: (l) => l.model },
        { label: "Key", cell: (l) => keyCell(l, tokenName) },
        ctx.isAdmin ? { label: "User", num: true, cell: (l) => `#${l.user_id}` } : null,
        { label: "Prompt", num: true, cell: (l) => num(l.prompt_tokens) },
        { label: "Completion", num: true, cell: (l) => num(l.completion_tokens) },
        { label: "Quota", num: true, cell: (l) => num(l.quota) },
        { label: "Latency", num: true, cell: (l) => `${num(l.latency_ms)} ms` },
      ].filter(Boolean), items(data), "No log entries match these filters."),
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
  const keyless = ["consume", "refund", "error"].includes(l.type) ? "playground" : "—";
  return h("span", { class: "muted" }, keyless);
}
