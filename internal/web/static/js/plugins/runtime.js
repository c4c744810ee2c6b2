// The runtime tab: the plugin generation this node serves, and whether it
// has caught up with the database.
import { h, badge, statusBadge } from "../dom.js";
import { api } from "../api.js";
import { alertBox, showError, table } from "../ui.js";
import { BASE, list, loading, failure } from "./common.js";
import { t as tr } from "../i18n.js";

/** loadRuntime fills el with GET /api/plugin/task/runtime/status. */
export function loadRuntime(el) {
  return loading(el, async () => {
    try {
      const s = await api("GET", `${BASE}/runtime/status`);
      return () => renderRuntime(el, s);
    } catch (e) {
      return () => el.replaceChildren(failure(e));
    }
  });
}

function renderRuntime(el, s) {
  const errors = s.errors || [];
  const errBox = alertBox();
  if (errors.length) {
    showError(errBox, { message: tr("pl.rtErrors"),
      problems: errors.map((e) => ({ path: `${e.key} ${e.version}`, message: e.message })) });
  }
  el.replaceChildren(
    h("dl", { class: "facts card", id: "runtime-summary" },
      fact(tr("pl.generation"), h("strong", {}, String(s.generation))),
      fact(tr("pl.revision"), h("code", {}, s.revision || "—")),
      fact(tr("pl.database"), sync(s)),
      fact(tr("pl.node"), h("code", {}, s.node || "—"))),
    errBox,
    h("div", { id: "runtime-plugins" }, topAligned(table(tr("pl.rtCaption"), [
      { label: tr("pl.c.plugin"), cell: (p) => h("div", {}, h("code", {}, p.key), " ", h("span", { class: "muted" }, p.version)) },
      { label: tr("pl.c.state"), cell: (p) => (p.held_back ? badge(tr("pl.heldBackBadge"), "warn") : statusBadge(p.enabled ? "enabled" : "disabled")) },
      { label: tr("pl.c.routes"), cell: (p) => routes(p.routes) },
      { label: tr("pl.c.protocols"), cell: (p) => claims(p) },
      { label: tr("pl.c.channelTypes"), cell: (p) => list(p.channel_types) },
    ], s.plugins || [], tr("pl.rtNone")))));
}

function fact(k, v) {
  return h("div", {}, h("dt", {}, k), h("dd", {}, v));
}

// sync compares this node's revision with the database's: another node's
// change shows up as "behind" until this node rebuilds.
function sync(s) {
  if (s.database_error) return badge(s.database_error, "bad");
  if (!s.database_revision) return h("span", { class: "muted" }, "—");
  return s.database_revision === s.revision ? badge(tr("pl.upToDate"), "ok")
    : h("span", {}, badge(tr("pl.behind"), "warn"), " ", h("code", {}, s.database_revision));
}

function routes(rs) {
  if (!rs || !rs.length) return h("span", { class: "muted" }, "—");
  return h("ul", { class: "plain" }, rs.map((r) => h("li", {}, h("code", {}, `${r.method} ${r.path}`),
    r.type ? h("span", { class: "muted small" }, ` ${r.type}`) : null)));
}

function claims(p) {
  const cs = p.protocol_claims || (p.protocols || []).map((name) => ({ name }));
  if (!cs.length) return h("span", { class: "muted" }, "—");
  return h("ul", { class: "plain" }, cs.map((c) => h("li", {}, h("code", {}, c.name),
    c.models && c.models.length ? h("span", { class: "muted" }, ` ${c.models.join(", ")}`) : null,
    c.supports && c.supports.length ? h("span", { class: "muted" }, ` (${c.supports.join(", ")})`) : null)));
}

// topAligned lines cells up at the top: the route lists make rows tall.
function topAligned(el) {
  el.classList.add("top");
  return el;
}
