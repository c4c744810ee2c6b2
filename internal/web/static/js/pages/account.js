// Account & security: balance, redeeming a code, password change,
// two-factor sign-in (setup with a QR code, recovery codes shown once) and
// the link to the single sign-on provider.
import { h, clear, when, badge } from "../dom.js";
import { api } from "../api.js";
import { pageHead, fieldSet, alertBox, showError, toast, infoDialog, copyButton, confirmDialog, table } from "../ui.js";
import { t } from "../i18n.js";
import { money } from "../money.js";

export async function render(main, ctx) {
  const me = await ctx.refreshMe();
  const balance = h("dd", { id: "account-balance" }, money(me.quota));
  // append writes a null as the text "null": cards a gateway does not
  // offer are left out instead.
  main.append(...[pageHead(t("account.title"), t("account.sub")),
    h("div", { class: "cards" }, h("div", { class: "card" }, h("dl", { class: "stat" }, h("dt", {}, t("account.balance")), balance))),
    ctx.status && ctx.status.payments ? creditCard(ctx.status.payments) : null,
    redeemCard(ctx, balance), twoFactorCard(), ssoCard(), passwordCard()].filter(Boolean));
}

// creditCard buys credit by card: the order is made here, paid on Stripe's
// page, and credited when Stripe tells the gateway (the webhook), which may
// be a moment after the buyer is sent back.
function creditCard(pay) {
  const params = new URLSearchParams(location.search);
  const back = params.get("topup");
  if (back === "paid") toast(t("credit.returned"));
  if (back === "cancelled") toast(t("credit.cancelled"));
  if (back) history.replaceState(null, "", location.pathname);
  const set = fieldSet([{ name: "amount", label: t("credit.amount"), type: "number", required: true, step: "0.01",
    min: String(pay.min_usd), max: String(pay.max_usd), hint: t("credit.hint", { min: pay.min_usd, max: pay.max_usd }) }]);
  const alert = alertBox();
  const submit = h("button", { type: "submit", class: "primary", id: "credit-submit" }, t("credit.submit"));
  const form = h("form", { novalidate: true, id: "credit-form" }, set.el, alert, submit);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    showError(alert, null);
    submit.disabled = true;
    try {
      const r = await api("POST", "/api/user/topup", { amount_usd: Number(v.amount) });
      location.assign(r.checkout_url);
    } catch (e) {
      showError(alert, e);
      submit.disabled = false;
    }
  });
  const list = h("div", { id: "credit-orders" });
  async function paint() {
    clear(list);
    try {
      const r = await api("GET", "/api/user/topups?page_size=20");
      const fmt = new Intl.NumberFormat(undefined, { style: "currency", currency: (pay.currency || "usd").toUpperCase() });
      list.append(table(t("credit.orders"), [
        { label: t("credit.when"), cell: (o) => when(o.created_at) },
        { label: t("credit.amount"), num: true, cell: (o) => fmt.format(o.amount_usd) },
        { label: t("credit.state"), cell: (o) => badge(t(`credit.${o.state}`), { paid: "ok", expired: "bad", pending: "info" }[o.state]) },
        { label: t("credit.credited"), num: true, cell: (o) => (o.state === "paid" ? money(o.quota) : "—") },
        { label: "", cell: (o) => (o.checkout_url ? h("a", { href: o.checkout_url, class: "button" }, t("credit.pay")) : "") },
      ], r.items, t("credit.none")));
    } catch (e) {
      const a = alertBox();
      showError(a, e);
      list.append(a);
    }
  }
  paint();
  return section("credit", "credit.title", form, h("h3", {}, t("credit.orders")), list);
}

// ssoCard shows whether the account is linked to the OpenID Connect
// provider. Linking is a full-page trip to the provider and back (the
// callback returns here with oidc_linked or oidc_error).
function ssoCard() {
  const body = h("div", { id: "sso-body" });
  const alert = alertBox();
  const card = section("sso", "sso.title", body);
  const params = new URLSearchParams(location.search);
  if (params.get("oidc_linked")) toast(t("sso.linkedNow"));
  const failed = params.get("oidc_error");
  if (params.has("oidc_linked") || params.has("oidc_error")) history.replaceState(null, "", location.pathname);

  async function paint() {
    clear(body);
    let st;
    try {
      st = await api("GET", "/api/auth/oidc/identity");
    } catch (e) {
      showError(alert, e);
      body.append(alert);
      return;
    }
    if (!st.enabled) {
      card.hidden = true;
      return;
    }
    if (failed) alert.textContent = t("sso.failed", { code: failed });
    if (st.linked) {
      const unlink = h("button", { type: "button", class: "danger", id: "sso-unlink" }, t("sso.unlink"));
      unlink.addEventListener("click", async () => {
        if (!(await confirmDialog(t("sso.unlinkConfirm"), t("sso.unlink")))) return;
        showError(alert, null);
        try {
          await api("DELETE", "/api/auth/oidc/link");
          toast(t("sso.unlinked"));
          paint();
        } catch (e) {
          showError(alert, e);
        }
      });
      body.append(h("p", { id: "sso-state" }, t("sso.on", { since: when(st.linked_at) })), alert, unlink);
    } else {
      body.append(h("p", { id: "sso-state" }, t("sso.off")), alert,
        h("a", { class: "button primary", id: "sso-link", href: "/api/auth/oidc/link" }, t("sso.link")));
    }
  }
  paint();
  return card;
}

function section(id, titleKey, ...content) {
  return h("section", { class: "card", id, "aria-labelledby": `${id}-title` }, h("h2", { id: `${id}-title` }, t(titleKey)), ...content);
}

function redeemCard(ctx, balance) {
  const set = fieldSet([{ name: "code", label: t("account.code"), required: true, hint: t("account.redeemHint"), placeholder: "tpr-…" }]);
  const alert = alertBox();
  const form = h("form", { novalidate: true }, set.el, alert, h("button", { type: "submit", class: "primary", id: "redeem-submit" }, t("account.redeemSubmit")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    showError(alert, null);
    try {
      const r = await api("POST", "/api/user/redeem", { code: v.code.trim() });
      balance.textContent = money(r.balance);
      form.reset();
      toast(t("account.redeemed", { amount: money(r.quota) }));
    } catch (e) {
      showError(alert, e);
    }
  });
  return section("redeem", "account.redeem", form);
}

function passwordCard() {
  const set = fieldSet([
    { name: "old", label: t("account.oldPw"), type: "password", required: true, autocomplete: "current-password" },
    { name: "new", label: t("account.newPw"), type: "password", required: true, autocomplete: "new-password", maxlength: 72 },
  ]);
  const alert = alertBox();
  const form = h("form", { novalidate: true }, set.el, alert, h("button", { type: "submit", class: "primary" }, t("common.save")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    showError(alert, null);
    try {
      await api("POST", "/api/auth/password", v);
      form.reset();
      toast(t("account.pwChanged"));
    } catch (e) {
      showError(alert, e);
    }
  });
  return section("password", "account.password", form);
}

function twoFactorCard() {
  const body = h("div", { id: "tfa-body" });
  const card = section("tfa", "tfa.title", body);
  const alert = alertBox();

  async function paint() {
    clear(body);
    showError(alert, null);
    let st;
    try {
      st = await api("GET", "/api/auth/2fa");
    } catch (e) {
      showError(alert, e);
      body.append(alert);
      return;
    }
    if (st.enabled) {
      body.append(h("p", { id: "tfa-state" }, t("tfa.on", { left: st.recovery_codes_left })),
        codeForm("tfa-disable", t("tfa.disable"), t("tfa.disableHint"), "danger", async (code) => {
          await api("POST", "/api/auth/2fa/disable", { code });
          toast(t("tfa.turnedOff"));
          paint();
        }));
    } else {
      body.append(h("p", { id: "tfa-state" }, t("tfa.off")),
        h("button", { type: "button", class: "primary", id: "tfa-start", onclick: start }, t("tfa.start")), alert);
    }
  }

  async function start() {
    showError(alert, null);
    let setup;
    try {
      setup = await api("POST", "/api/auth/2fa/setup");
    } catch (e) {
      showError(alert, e);
      return;
    }
    clear(body);
    body.append(h("p", {}, t("tfa.scan")),
      h("div", { class: "tfa-setup" },
        setup.qr_code ? h("img", { src: setup.qr_code, class: "qr", id: "tfa-qr", alt: t("tfa.qr"), width: 200, height: 200 }) : null,
        h("dl", {}, h("dt", {}, t("tfa.secret")), h("dd", {}, h("code", { id: "tfa-secret" }, setup.secret), " ", copyButton(setup.secret, t("common.copy"))))),
      codeForm("tfa-enable", t("tfa.enable"), "", "primary", async (code) => {
        const r = await api("POST", "/api/auth/2fa/enable", { code });
        showRecovery(r.recovery_codes || []);
        paint();
      }));
  }
  paint();
  return card;
}

function codeForm(id, label, hint, kind, submit) {
  const set = fieldSet([{ name: "code", label: t("login.code"), required: true, autocomplete: "one-time-code", hint }]);
  const alert = alertBox();
  const form = h("form", { novalidate: true, id }, set.el, alert, h("button", { type: "submit", class: kind }, label));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    showError(alert, null);
    try {
      await submit(v.code.trim());
    } catch (e) {
      showError(alert, e);
    }
  });
  return form;
}

function showRecovery(codes) {
  infoDialog(t("tfa.recoveryTitle"), h("p", {}, t("tfa.recoveryIntro")),
    h("ul", { class: "codes", id: "recovery-codes" }, codes.map((c) => h("li", {}, h("code", {}, c)))),
    copyButton(codes.join("\n"), t("common.copy")));
}
