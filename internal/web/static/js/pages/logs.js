// Usage logs with filters by type, model and key, newest first, paged. Each
// row opens its detail: the request id and how the call was routed (every
// upstream attempt in order, as a small timeline).
import { h, num, when, badge } from "../dom.js";
import { api, items, qs } from "../api.js";
import { pageHead, table, pager, fieldSet, alertBox, showError, infoDialog, copyButton, toast } from "../ui.js";

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
  // Channel names are for administrators; others see channel ids.
  let channelName = new Map();
  if (ctx.isAdmin) {
    try {
      channelName = new Map(items(await api("GET", "/api/channels?page_size=500")).map((c) => [c.id, c.name]));
    } catch {
      channelName = new Map();
    }
  }

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
        { label: "Detail", cell: (l) => h("button", { type: "button", class: "small", "aria-label": `Detail of log entry ${l.id}`,
          onclick: () => showDetail(l.id, channelName) }, "Detail") },
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

// showDetail reads one row (GET /api/logs/{id}) and shows its request id
// and routing.
async function showDetail(id, channelName) {
  let l;
  try {
    l = await api("GET", `/api/logs/${id}`);
  } catch (e) {
    toast(e.message || String(e), "error");
    return;
  }
  const o = l.other || {};
  const facts = h("dl", { class: "log-facts" },
    h("dt", {}, "Request id"), h("dd", {}, l.request_id ? h("span", { class: "secret" }, h("code", {}, l.request_id), copyButton(l.request_id)) : "—"),
    h("dt", {}, "Model"), h("dd", {}, o.fallback_from ? `${l.model} (fallback from ${o.fallback_from})` : l.model || "—"),
    o.upstream_model ? [h("dt", {}, "Upstream model"), h("dd", {}, o.upstream_model)] : null,
    h("dt", {}, "Time"), h("dd", {}, when(l.created_at)),
    h("dt", {}, "Latency"), h("dd", {}, `${num(l.latency_ms)} ms`));
  infoDialog(`Log entry ${l.id}`, facts, h("h4", {}, "Routing"), attemptsTimeline(o.attempts || [], channelName));
}

// attemptsTimeline draws the attempts in order: channel, status, error code
// and a latency bar scaled to the slowest attempt.
export function attemptsTimeline(attempts, channelName = new Map()) {
  if (!attempts.length) return h("p", { class: "muted" }, "No upstream attempt was made.");
  const slowest = Math.max(1, ...attempts.map((a) => a.latency_ms || 0));
  return h("ol", { class: "timeline", "aria-label": "Upstream attempts in order" }, attempts.map((a, i) => {
    const ok = a.status >= 200 && a.status < 300;
    const name = channelName.get(a.channel_id) || `channel #${a.channel_id}`;
    const width = Math.max(2, Math.round(((a.latency_ms || 0) / slowest) * 100));
    return h("li", { class: ok ? "ok" : "failed" },
      h("span", { class: "step" }, String(i + 1)),
      h("span", { class: "who" }, name, a.key_index ? h("span", { class: "muted" }, ` · key ${a.key_index}`) : null),
      badge(String(a.status), ok ? "ok" : "bad"),
      h("span", { class: "code muted" }, a.error_code || ""),
      h("span", { class: "bar", title: `${num(a.latency_ms)} ms` }, h("span", { style: `width:${width}%` })),
      h("span", { class: "ms" }, `${num(a.latency_ms)} ms`));
  }));
}
