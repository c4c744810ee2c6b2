// Price catalogue (root): compare a catalogue (an address, or one pasted)
// with the gateway's prices, see what would change, and apply it as new
// price versions. Suspicious changes are held back unless accepted.
import { h, splitList } from "../dom.js";
import { api } from "../api.js";
import { pageHead, table, fieldSet, alertBox, showError, guard } from "../ui.js";
import { t } from "../i18n.js";

export async function render(main) {
  const form = fieldSet([
    { name: "url", label: t("pc.url"), type: "url", placeholder: "https://…/model_prices_and_context_window.json", hint: t("pc.urlHint") },
    { name: "catalogue", label: t("pc.paste"), type: "json", rows: 4, hint: t("pc.pasteHint") },
    { name: "models", label: t("pc.models"), hint: t("pc.modelsHint") },
    { name: "max_change_ratio", label: t("pc.ratio"), type: "number", min: 1.01, step: "any", value: 3 },
  ]);
  const err = alertBox();
  const out = h("div", { id: "catalogue-diff", "aria-live": "polite" });
  const preview = h("button", { type: "button", class: "primary", id: "catalogue-preview", onclick: () => run(false) }, t("pc.preview"));
  const exportLink = h("a", { href: "/api/models/catalogue", download: "turnpike-prices.json", id: "catalogue-export" }, t("pc.export"));
  main.append(pageHead(t("pc.title"), t("pc.sub"), exportLink),
    h("section", { class: "card" }, form.el, err, h("div", { class: "actions" }, preview)), out);

  /** body is the request both preview and apply send. */
  function body() {
    const v = form.validate();
    if (!v) return null;
    const b = {};
    if (v.catalogue.trim()) {
      try {
        b.catalogue = JSON.parse(v.catalogue);
      } catch (e) {
        showError(err, new Error(t("ui.badJson", { error: e.message })));
        return null;
      }
    } else if (v.url.trim()) {
      b.url = v.url.trim();
    } else {
      showError(err, new Error(t("pc.noSource")));
      return null;
    }
    const models = splitList(v.models);
    if (models.length) b.models = models;
    if (v.max_change_ratio !== null) b.max_change_ratio = v.max_change_ratio;
    return b;
  }

  async function run() {
    const b = body();
    if (!b) return;
    showError(err, null);
    preview.disabled = true;
    try {
      show(b, await api("POST", "/api/models/catalogue/preview", b));
    } catch (e) {
      showError(err, e);
    } finally {
      preview.disabled = false;
    }
  }

  function show(b, d) {
    const accept = h("input", { type: "checkbox", id: "catalogue-accept" });
    const pending = d.changed.length + d.added.length + d.suspicious.length;
    const apply = h("button", { type: "button", class: "primary", id: "catalogue-apply", disabled: pending === 0, onclick: async () => {
      const r = await guard(() => api("POST", "/api/models/catalogue/apply", { ...b, accept_suspicious: accept.checked }));
      if (!r) return;
      out.replaceChildren(h("p", { role: "status" }, t("pc.applied", { n: r.versions.length, held: r.held_back.length })),
        table(t("pc.versions"), [
          { label: t("mp.model"), cell: (v) => h("code", {}, v.model) },
          { label: t("pc.version"), num: true, cell: (v) => String(v.version) },
        ], r.versions, t("pc.nothingApplied")));
    } }, t("pc.apply"));
    out.replaceChildren(
      h("p", { class: "muted" }, t("pc.summary", { changed: d.changed.length, suspicious: d.suspicious.length, added: d.added.length, unchanged: d.unchanged })),
      h("h2", {}, t("pc.changed")), changeTable(t("pc.changed"), d.changed),
      h("h2", {}, t("pc.suspicious")), h("p", { class: "muted" }, t("pc.suspiciousHint")), changeTable(t("pc.suspicious"), d.suspicious),
      h("h2", {}, t("pc.added")), table(t("pc.added"), [
        { label: t("mp.model"), cell: (a) => h("code", {}, a.model) },
        { label: t("pc.prices"), cell: (a) => Object.entries(a).filter(([k]) => k !== "model").map(([k, v]) => `${k} ${v}`).join(" · ") },
      ], d.added, t("pc.none")),
      d.missing.length ? h("p", { class: "muted" }, t("pc.missing", { models: d.missing.join(", ") })) : null,
      h("div", { class: "actions" }, h("label", { class: "check", for: "catalogue-accept" }, accept, t("pc.accept")), apply));
  }
}

/** changeTable lists field changes with their ratio, old and new in $/M tokens (per_call in $). */
function changeTable(caption, rows) {
  return table(caption, [
    { label: t("mp.model"), cell: (c) => h("code", {}, c.model) },
    { label: t("pc.field"), cell: (c) => c.field },
    { label: t("pc.old"), num: true, cell: (c) => (c.old ? String(c.old) : "—") },
    { label: t("pc.new"), num: true, cell: (c) => String(c.new) },
    { label: t("pc.ratioCol"), num: true, cell: (c) => (c.ratio === null ? t("pc.newlySet") : `×${Number(c.ratio.toPrecision(4))}`) },
  ], rows, t("pc.none"));
}
