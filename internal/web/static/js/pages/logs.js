// Usage logs with filters by type, model and key, newest first, paged. Each
// row opens its detail: the request id, how the call was routed (every
// upstream attempt in order, as a small timeline) and, for a call whose
// content was logged, its request and answer.
import { h, num, when, badge } from "../dom.js";
import { t } from "../i18n.js";
import { money } from "../money.js";
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
        { label: t("logs.detail"), cell: (l) => h("button", { type: "button", class: "small", "aria-label": t("logs.detailOf", { id: l.id }),
          onclick: () => showDetail(l.id, channelName) }, t("logs.detail")) },
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
    h("dt", {}, t("logs.requestId")), h("dd", {}, l.request_id ? h("span", { class: "secret" }, h("code", {}, l.request_id), copyButton(l.request_id)) : "—"),
    h("dt", {}, t("logs.model")), h("dd", {}, o.fallback_from ? t("logs.fallbackFrom", { model: l.model, from: o.fallback_from }) : l.model || "—"),
    o.upstream_model ? [h("dt", {}, t("logs.upstreamModel")), h("dd", {}, o.upstream_model)] : null,
    o.mcp ? [h("dt", {}, t("logs.mcpTool")), h("dd", { id: "log-mcp" }, `${o.mcp.server} / ${o.mcp.tool}${o.mcp.is_error ? ` (${t("logs.mcpError")})` : ""}, ${num(o.mcp.ms)} ms`)] : null,
    h("dt", {}, t("common.time")), h("dd", {}, when(l.created_at)),
    h("dt", {}, t("logs.latency")), h("dd", {}, `${num(l.latency_ms)} ms`));
  infoDialog(t("logs.entry", { id: l.id }), facts, h("h4", {}, t("logs.routing")), attemptsTimeline(o.attempts || [], channelName),
    o.guardrails?.length ? [h("h4", {}, t("logs.guardrails")), guardrailList(o.guardrails)] : null,
    o.content ? [h("h4", {}, t("logs.content")), await contentView(l.id)] : null);
}

// contentView shows a row's kept request and answer (content logging,
// GET /api/logs/{id}/content), secrets already redacted by the gateway;
// a side cut at the setting's max_kb says so.
async function contentView(id) {
  let c;
  try {
    c = await api("GET", `/api/logs/${id}/content`);
  } catch {
    return h("p", { class: "muted", id: "log-content" }, t("logs.contentMissing"));
  }
  const side = (label, text, cut) => [
    h("h5", {}, label, cut ? h("span", { class: "muted" }, ` (${t("logs.contentTruncated")})`) : null),
    h("pre", { class: "log-content" }, text || "—")];
  return h("div", { id: "log-content" }, side(t("logs.contentRequest"), c.request, c.request_truncated),
    side(t("logs.contentAnswer"), c.answer, c.answer_truncated));
}

// guardrailList shows what each guardrail that fired did: its stage, its
// action and the kinds it found with their counts (never the text).
export function guardrailList(records) {
  return h("ul", { class: "guardrail-hits", "aria-label": t("logs.guardrails") }, records.map((g) =>
    h("li", {}, h("strong", {}, g.name), " ", badge(g.action, g.action === "block" ? "bad" : g.action === "redact" ? "warn" : ""),
      h("span", { class: "muted" }, ` ${t("logs.gStage", { stage: g.stage })} · `),
      Object.entries(g.matches || {}).map(([k, n]) => `${k} × ${n}`).join(", "))));
}

// attemptsTimeline draws the attempts in order: channel, status, error code
// and a latency bar scaled to the slowest attempt.
export function attemptsTimeline(attempts, channelName = new Map()) {
  if (!attempts.length) return h("p", { class: "muted" }, t("logs.noAttempt"));
  const slowest = Math.max(1, ...attempts.map((a) => a.latency_ms || 0));
  return h("ol", { class: "timeline", "aria-label": t("logs.attempts") }, attempts.map((a, i) => {
    const ok = a.status >= 200 && a.status < 300;
    const name = channelName.get(a.channel_id) || `channel #${a.channel_id}`;
    const width = Math.max(2, Math.round(((a.latency_ms || 0) / slowest) * 100));
    return h("li", { class: ok ? "ok" : "failed" },
      h("span", { class: "step" }, String(i + 1)),
      h("span", { class: "who" }, name, a.key_index ? h("span", { class: "muted" }, t("logs.keyIndex", { n: a.key_index })) : null),
      badge(String(a.status), ok ? "ok" : "bad"),
      h("span", { class: "code muted" }, a.error_code || ""),
      h("span", { class: "bar", title: `${num(a.latency_ms)} ms` }, h("span", { style: `width:${width}%` })),
      h("span", { class: "ms" }, `${num(a.latency_ms)} ms`));
  }));
}
