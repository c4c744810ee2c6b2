// Account & security: balance, redeeming a code, password change,
// two-factor sign-in (setup with a QR code, recovery codes shown once) and
// the link to the single sign-on provider.
import { h, clear, when } from "../dom.js";
import { api } from "../api.js";
import { pageHead, fieldSet, alertBox, showError, toast, infoDialog, copyButton, confirmDialog } from "../ui.js";
import { t } from "../i18n.js";
import { money } from "../money.js";

export async function render(main, ctx) {
  const me = await ctx.refreshMe();
  const balance = h("dd", { id: "account-balance" }, money(me.quota));
  main.append(pageHead(t("account.title"), t("account.sub")),
    h("div", { class: "cards" }, h("div", { class: "card" }, h("dl", { class: "stat" }, h("dt", {}, t("account.balance")), balance))),
    redeemCard(ctx, balance), twoFactorCard(), ssoCard(), passwordCard());
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
