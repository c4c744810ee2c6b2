// Tasks: asynchronous jobs (video, image…) with their status and progress.
import { h, when, badge } from "../dom.js";
import { api, items, qs } from "../api.js";
import { pageHead, table, pager, alertBox, showError } from "../ui.js";

const PAGE_SIZE = 25;

export async function render(main) {
  let page = 1;
  const list = h("div", { id: "tasks-list" });
  const alert = alertBox();
  const refresh = h("button", { type: "button", onclick: () => load() }, "Refresh");
  main.append(pageHead("Tasks", "Asynchronous jobs submitted through task plugins.", refresh), alert, list);

  async function load() {
    showError(alert, null);
    try {
      const data = await api("GET", `/api/tasks${qs({ page, page_size: PAGE_SIZE })}`);
      const rows = items(data, "data", "tasks");
      list.replaceChildren(table("Tasks", [
        { label: "Task", cell: (t) => h("code", {}, t.task_id || t.id) },
        { label: "Platform", cell: (t) => t.platform || "—" },
        { label: "Model", cell: (t) => t.model || "—" },
        { label: "Status", cell: (t) => badge(t.status || "UNKNOWN") },
        { label: "Progress", cell: (t) => progress(t.progress) },
        { label: "Failure", cell: (t) => t.fail_reason || "" },
        { label: "Created", cell: (t) => when(t.created_at) },
      ], rows, "No tasks yet."),
      data && data.total > PAGE_SIZE ? pager({ page, pageSize: PAGE_SIZE, total: data.total }, (p) => { page = p; load(); }) : "");
    } catch (e) {
      // A server without the task service answers 404: that is simply
      // "no tasks here", not an error worth alarming the user about.
      if (e.status === 404) list.replaceChildren(h("div", { class: "table-wrap" }, h("p", { class: "empty" }, "No tasks yet. Tasks appear here when task plugins run jobs for you.")));
      else showError(alert, e);
    }
  }
  await load();
}

function progress(p) {
  if (p === undefined || p === null || p === "") return h("span", { class: "muted" }, "—");
  const n = Math.max(0, Math.min(100, parseFloat(String(p))));
  if (Number.isNaN(n)) return String(p);
  return h("span", {}, h("span", { class: "progress", role: "progressbar", "aria-valuenow": n, "aria-valuemin": 0, "aria-valuemax": 100 },
    h("span", { style: `width:${n}%` })), ` ${n}%`);
}
