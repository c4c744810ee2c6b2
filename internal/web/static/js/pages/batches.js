// Batches: the signed-in user's batches (OpenAI form and Message Batches)
// with their state and what they hold or cost, and the files they uploaded.
import { h, when, badge } from "../dom.js";
import { t as tr } from "../i18n.js";
import { money } from "../money.js";
import { api, items } from "../api.js";
import { pageHead, table, alertBox, showError } from "../ui.js";

const TERMINAL = new Set(["completed", "failed", "expired", "cancelled"]);
// While a batch runs the page reloads itself, so its counts move.
const LIVE_MS = 3000;

export async function render(main) {
  let timer = null;
  const alert = alertBox();
  const batches = h("div", { id: "batches-list", "aria-live": "polite" });
  const files = h("div", { id: "files-list" });
  const refresh = h("button", { type: "button", id: "batches-refresh", onclick: () => load() }, tr("batches.refresh"));
  main.append(pageHead(tr("batches.title"), tr("batches.sub"), refresh), alert, batches,
    h("h2", {}, tr("batches.files")), files);

  async function load() {
    clearTimeout(timer);
    let bs, fs;
    try {
      [bs, fs] = await Promise.all([api("GET", "/api/batches"), api("GET", "/api/files")]);
    } catch (e) {
      showError(alert, e);
      return;
    }
    showError(alert, null);
    const rows = items(bs);
    batches.replaceChildren(table(tr("batches.title"), batchColumns(), rows, tr("batches.none")));
    files.replaceChildren(table(tr("batches.files"), fileColumns(), items(fs), tr("batches.noFiles")));
    if (rows.some((b) => !TERMINAL.has(b.status) || !b.billed) && batches.isConnected) timer = setTimeout(load, LIVE_MS);
  }
  await load();
  return () => clearTimeout(timer);
}

function batchColumns() {
  return [
    { label: tr("batches.batch"), cell: (b) => h("div", {}, h("span", { class: "mono small" }, b.id),
      h("div", { class: "muted small" }, [b.endpoint, b.mode === "provider" ? tr("batches.provider") : tr("batches.gateway")].join(" · "))) },
    { label: tr("batches.status"), cell: (b) => badge(b.status) },
    { label: tr("batches.lines"), num: true, cell: (b) => tr("batches.counts", { done: b.completed, failed: b.failed, total: b.total }) },
    { label: tr("batches.cost"), num: true, cell: (b) => b.billed ? money(b.charged)
      : h("span", { title: tr("batches.heldTitle") }, money(b.held), h("span", { class: "muted" }, ` ${tr("batches.held")}`)) },
    { label: tr("batches.created"), cell: (b) => h("span", { class: "nowrap" }, when(b.created_at)) },
  ];
}

function fileColumns() {
  return [
    { label: tr("batches.file"), cell: (f) => h("div", {}, h("span", { class: "mono small" }, f.id), h("div", { class: "muted small" }, f.filename)) },
    { label: tr("batches.purpose"), cell: (f) => f.purpose },
    { label: tr("batches.bytes"), num: true, cell: (f) => f.bytes.toLocaleString() },
    { label: tr("batches.created"), cell: (f) => h("span", { class: "nowrap" }, when(f.created_at)) },
  ];
}
