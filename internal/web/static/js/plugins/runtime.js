// The runtime tab: the plugin generation this node serves, and whether it
// has caught up with the database.
import { h, badge } from "../dom.js";
import { api } from "../api.js";
import { alertBox, showError, table } from "../ui.js";
import { BASE, list, loading, failure } from "./common.js";

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
    showError(errBox, { message: "Some plugins could not be loaded into this generation:",
      problems: errors.map((e) => ({ path: `${e.key} ${e.version}`, message: e.message })) });
  }
  el.replaceChildren(
    h("dl", { class: "facts card", id: "runtime-summary" },
      fact("Generation", h("strong", {}, String(s.generation))),
      fact("Revision", h("code", {}, s.revision || "—")),
      fact("Database", sync(s)),
      fact("Node", h("code", {}, s.node || "—"))),
    errBox,
    h("div", { id: "runtime-plugins" }, topAligned(table("Plugins in this generation", [
      { label: "Plugin", cell: (p) => h("div", {}, h("code", {}, p.key), " ", h("span", { class: "muted" }, p.version)) },
      { label: "State", cell: (p) => (p.held_back ? badge("held back") : badge(p.enabled ? "enabled" : "disabled")) },
      { label: "Routes", cell: (p) => routes(p.routes) },
      { label: "Protocols", cell: (p) => claims(p) },
      { label: "Channel types", cell: (p) => list(p.channel_types) },
    ], s.plugins || [], "No plugin is loaded in this generation."))));
}

function fact(k, v) {
  return h("div", {}, h("dt", {}, k), h("dd", {}, v));
}

// sync compares this node's revision with the database's: another node's
// change shows up as "behind" until this node rebuilds.
function sync(s) {
  if (s.database_error) return badge(s.database_error, "bad");
  if (!s.database_revision) return h("span", { class: "muted" }, "—");
  return s.database_revision === s.revision ? badge("up to date", "ok")
    : h("span", {}, badge("behind", "warn"), " ", h("code", {}, s.database_revision));
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
