// Tasks: asynchronous jobs (video, image, music…) with their status and
// progress, filtered by status, platform and model, newest first.
import { h, when, badge } from "../dom.js";
import { t as tr } from "../i18n.js";
import { money } from "../money.js";
import { api, items, qs } from "../api.js";
import { pageHead, table, pager, fieldSet, alertBox, showError, infoDialog } from "../ui.js";

const PAGE_SIZE = 25;
const STATUSES = ["NOT_START", "SUBMITTED", "QUEUED", "IN_PROGRESS", "SUCCESS", "FAILURE", "UNKNOWN"];
const TERMINAL = new Set(["SUCCESS", "FAILURE"]);
// While a listed task is still running the page reloads itself this often,
// so progress moves without pressing Refresh.
const LIVE_MS = 3000;

export async function render(main, ctx) {
  let page = 1;
  let timer = null;
  const filters = fieldSet([
    { name: "status", label: tr("tasks.status"), type: "select", options: [["", tr("tasks.anyStatus")], ...STATUSES.map((s) => [s, label(s)])] },
    { name: "platform", label: tr("tasks.platform"), placeholder: tr("tasks.platformHint") },
    { name: "model", label: tr("tasks.model"), placeholder: tr("tasks.anyModel") },
    ctx.isAdmin ? { name: "user_id", label: tr("tasks.userId"), type: "number", min: 1, step: 1, placeholder: tr("tasks.everyone") } : null,
  ].filter(Boolean));
  filters.el.className = "filters";
  filters.el.append(h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", id: "tasks-apply" }, tr("common.apply")),
    h("button", { type: "reset" }, tr("common.reset"))));
  const form = h("form", { class: "card", role: "search", "aria-label": tr("tasks.filter"), novalidate: true }, filters.el);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (!filters.validate()) return;
    page = 1;
    load();
  });
  form.addEventListener("reset", () => setTimeout(() => { page = 1; load(); }));
  const list = h("div", { id: "tasks-list", "aria-live": "polite" });
  const alert = alertBox();
  const refresh = h("button", { type: "button", id: "tasks-refresh", onclick: () => load() }, tr("tasks.refresh"));
  main.append(pageHead(tr("tasks.title"), ctx.isAdmin ? tr("tasks.subAll") : tr("tasks.subOwn"), refresh),
    form, alert, list);

  // seq numbers the loads: a slow answer to an older query (the live
  // refresh racing a new filter) must not replace a newer one.
  let seq = 0;
  async function load() {
    clearTimeout(timer);
    const mine = ++seq;
    const f = filters.read();
    list.setAttribute("aria-busy", "true");
    let data;
    try {
      data = await api("GET", `/api/tasks${qs({ ...f, page, page_size: PAGE_SIZE })}`);
    } catch (e) {
      if (mine === seq) {
        showError(alert, e);
        list.removeAttribute("aria-busy");
      }
      return;
    }
    if (mine !== seq) return;
    showError(alert, null);
    list.removeAttribute("aria-busy");
    const rows = items(data);
    const filtered = Object.values(f).some((v) => v !== "" && v !== null);
    const tbl = table(tr("tasks.title"), columns(ctx), rows,
      filtered ? tr("tasks.noneFiltered") : tr("tasks.none"));
    tbl.classList.add("compact");
    list.replaceChildren(tbl,
    data.total > PAGE_SIZE ? pager({ page, pageSize: PAGE_SIZE, total: data.total }, (p) => { page = p; load(); }) : "");
    if (rows.some((t) => !TERMINAL.has(t.status)) && list.isConnected) timer = setTimeout(load, LIVE_MS);
  }
  await load();
  return () => clearTimeout(timer);
}

function label(s) {
  return s.charAt(0) + s.slice(1).toLowerCase().replace(/_/g, " ");
}

// columns keep the table narrow enough for a laptop screen: secondary
// facts sit under the main one in the same cell, and the task id opens the
// details.
function columns(ctx) {
  return [
    { label: tr("tasks.task"), cell: (t) => h("div", {}, h("button", { type: "button", class: "linklike mono small", "aria-label": tr("tasks.details", { id: t.task_id }),
      onclick: () => details(t) }, t.task_id),
    h("div", { class: "muted small" }, [t.platform, t.action].filter(Boolean).join(" · "))) },
    ctx.isAdmin ? { label: tr("common.user"), num: true, cell: (t) => `#${t.user_id}` } : null,
    { label: tr("tasks.model"), cell: (t) => h("span", { class: "nowrap" }, t.model || "—") },
    { label: tr("tasks.status"), cell: (t) => h("div", { class: "status-cell" }, badge(t.status || "UNKNOWN"),
      t.fail_reason ? h("div", { class: "fail small" }, t.fail_reason) : null) },
    { label: tr("tasks.progress"), cell: (t) => progress(t) },
    { label: tr("tasks.created"), cell: (t) => h("div", { class: "nowrap", title: when(t.created_at) }, short(t.created_at),
      t.finished_at ? h("div", { class: "muted small" }, tr("tasks.took", { d: took(t.finished_at - t.created_at) })) : null) },
    { label: tr("tasks.quota"), num: true, cell: quotaCell },
  ].filter(Boolean);
}

// quotaCell: the API reports the reserved amount until a task settles, and
// keeps reporting it after a refund, when nothing was charged.
function quotaCell(t) {
  if (t.billing_status === "refunded") return h("span", { class: "muted", title: tr("tasks.refundedTitle", { q: money(t.quota) }) }, tr("tasks.refunded"));
  if (t.billing_status === "held") return h("span", { title: tr("tasks.heldTitle") }, money(t.quota), h("span", { class: "muted" }, ` ${tr("tasks.held")}`));
  return money(t.quota);
}

// short shows only the time for today's tasks and drops the seconds and
// year otherwise; the full time is in the cell's title and the details.
function short(sec) {
  if (!sec) return "—";
  const d = new Date(sec * 1000);
  const today = d.toDateString() === new Date().toDateString();
  return today ? d.toLocaleTimeString() : d.toLocaleString(undefined, { month: "short", day: "numeric", hour: "numeric", minute: "2-digit" });
}

function took(sec) {
  if (!(sec >= 0)) return "—";
  if (sec < 60) return `${sec} s`;
  if (sec < 3600) return `${Math.floor(sec / 60)} min ${sec % 60} s`;
  return `${Math.floor(sec / 3600)} h ${Math.floor((sec % 3600) / 60)} min`;
}

// progress reads the task's progress string ("40%"); a finished task counts
// as complete even when the vendor never reported a number.
function progress(t) {
  let p = t.progress;
  if ((p === undefined || p === null || p === "") && t.status === "SUCCESS") p = "100%";
  if (p === undefined || p === null || p === "") return h("span", { class: "muted" }, "—");
  const n = Math.max(0, Math.min(100, parseFloat(String(p))));
  if (Number.isNaN(n)) return String(p);
  return h("span", { class: "nowrap" }, h("span", { class: "progress", role: "progressbar", "aria-label": tr("tasks.progressOf", { id: t.task_id }),
    "aria-valuenow": n, "aria-valuemin": 0, "aria-valuemax": 100 }, h("span", { style: `width:${n}%` })), ` ${n}%`);
}

function details(t) {
  const rows = [
    [tr("tasks.task"), h("code", {}, t.task_id)], [tr("tasks.status"), badge(t.status)], [tr("tasks.platform"), t.platform], [tr("tasks.action"), t.action],
    [tr("tasks.model"), t.model], [tr("tasks.upstreamModel"), t.upstream_model], [tr("tasks.channel"), t.channel_id ? `#${t.channel_id}` : ""],
    [tr("tasks.billing"), t.billing_status], [tr("tasks.quota"), money(t.quota)], [tr("tasks.created"), when(t.created_at)], [tr("tasks.submitted"), when(t.submitted_at)],
    [tr("tasks.updated"), when(t.updated_at)], [tr("tasks.finished"), when(t.finished_at)], [tr("tasks.failReason"), t.fail_reason],
    [tr("tasks.result"), t.result_url ? h("a", { href: t.result_url, target: "_blank", rel: "noopener noreferrer", class: "break" }, t.result_url) : ""],
  ].filter(([, v]) => v !== "" && v !== undefined && v !== null);
  infoDialog(tr("tasks.dialog", { id: t.task_id }),
    h("dl", { class: "facts" }, rows.map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", {}, v)))),
    t.data !== null && t.data !== undefined ? h("details", {}, h("summary", {}, tr("tasks.vendorData")), h("pre", {}, JSON.stringify(t.data, null, 2))) : null);
}
