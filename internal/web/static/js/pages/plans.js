// My plans: each plan held with every window's use and reset time, what a
// spent window does (plan_overflow), the plans on sale with a subscribe
// button each (Stripe Checkout), and the way to top up the balance.
import { h, clear, when, badge } from "../dom.js";
import { api, items } from "../api.js";
import { pageHead, alertBox, showError, toast, table } from "../ui.js";
import { t } from "../i18n.js";
import { money } from "../money.js";

export async function render(main, ctx) {
  const back = new URLSearchParams(location.search).get("subscribe");
  if (back === "paid") toast(t("plans.returned"));
  if (back === "cancelled") toast(t("plans.cancelled"));
  if (back) history.replaceState(null, "", location.pathname);
  const topup = h("a", { href: "/account", "data-link": true, class: "button", id: "plans-topup" }, t("plans.topup"));
  const alert = alertBox();
  const held = h("div", { id: "plans-held", "aria-live": "polite" });
  const sale = h("div", { id: "plans-sale" });
  main.append(pageHead(t("plans.title"), t("plans.sub"), topup), alert, held, sale);
  try {
    const mine = await api("GET", "/api/user/plans");
    paintHeld(held, mine);
    const all = items(await api("GET", "/api/plans"));
    paintSale(sale, all, ctx, alert);
  } catch (e) {
    showError(alert, e);
  }
}

function windowName(w) {
  if (w.days) return t("plans.days", { n: w.days });
  if (w.hours) return t("plans.hours", { n: w.hours });
  return t("plans.minutes", { n: w.minutes });
}

function paintHeld(el, mine) {
  clear(el);
  el.append(h("h2", {}, t("plans.held")), overflowSwitch(mine.plan_overflow));
  if (!mine.items.length) {
    el.append(h("p", { id: "plans-none" }, t("plans.none")));
    return;
  }
  for (const p of mine.items) {
    el.append(h("section", { class: "card plan-held", "data-plan": p.plan_id },
      h("h3", {}, p.name, " ", badge(t("plans.until", { when: when(p.until) }), "info")),
      table(t("plans.windows"), [
        { label: t("plans.window"), cell: (w) => windowName(w) },
        { label: t("plans.used"), num: true, cell: (w) => h("span", { class: "window-used" }, money(w.used)) },
        { label: t("plans.quota"), num: true, cell: (w) => money(w.quota) },
        { label: t("plans.resets"), cell: (w) => (w.resets_at ? when(w.resets_at) : t("plans.notOpen")) },
      ], p.windows)));
  }
}

// overflowSwitch chooses what a call covered by a spent window does.
function overflowSwitch(mode) {
  const sel = h("select", { id: "plans-overflow", name: "plan_overflow" },
    ["balance", "wait"].map((v) => h("option", { value: v, selected: v === mode }, t(`plans.overflow.${v}`))));
  sel.addEventListener("change", async () => {
    try {
      await api("PATCH", "/api/auth/me", { plan_overflow: sel.value });
      toast(t("plans.overflowSaved"));
    } catch (e) {
      toast(e.message, "bad");
    }
  });
  return h("label", { class: "inline" }, t("plans.overflow"), " ", sel);
}

function paintSale(el, all, ctx, alert) {
  clear(el);
  const pay = ctx.status && ctx.status.payments;
  el.append(h("h2", {}, t("plans.sale")), table(t("plans.sale"), [
    { label: t("plans.name"), cell: (p) => p.name },
    { label: t("plans.price"), num: true, cell: (p) => `$${Number(p.price_usd).toFixed(2)} / ${p.period}` },
    { label: t("plans.windows"), cell: (p) => p.windows.map((w) => `${windowName(w)}: ${money(w.quota)}`).join(" · ") },
    { label: t("plans.models"), cell: (p) => (p.models.length ? p.models.join(", ") : t("plans.allModels")) },
    { label: "", cell: (p) => (pay && p.price_usd > 0 ? subscribeButton(p, alert) : "") },
  ], all, t("plans.noneForSale")));
}

function subscribeButton(p, alert) {
  const b = h("button", { type: "button", class: "primary", id: `plans-subscribe-${p.id}` }, t("plans.subscribe"));
  b.addEventListener("click", async () => {
    b.disabled = true;
    try {
      const r = await api("POST", "/api/user/subscribe", { plan_id: p.id });
      location.assign(r.checkout_url);
    } catch (e) {
      showError(alert, e);
      b.disabled = false;
    }
  });
  return b;
}
