// The sign-in and sign-up pages: password (with a second step for a
// two-factor code), single sign-on, and self-registration when the server
// allows it.
import { h } from "./dom.js";
import { api } from "./api.js";
import { alertBox, showError, fieldSet } from "./ui.js";
import { t } from "./i18n.js";

function page(opts, titleKey, introKey, form, foot) {
  document.title = `${t(titleKey)} · Turnpike`;
  const root = h("div", { id: "app", class: "login-wrap" },
    h("main", { id: "main", class: "card login" },
      h("div", { class: "brand" }, h("img", { src: opts.faviconURL(), alt: "" }), "Turnpike"),
      h("h1", { id: "login-title", class: titleKey === "login.title" ? "visually-hidden" : "" }, t(titleKey)),
      h("p", { class: "muted" }, t(introKey)),
      form, foot, h("div", { class: "login-lang" }, opts.languageSwitch())));
  document.getElementById("app").replaceWith(root);
}

/** renderLogin shows the sign-in form. */
export function renderLogin(opts) {
  const set = fieldSet([
    { name: "username", label: t("login.username"), required: true, autocomplete: "username" },
    { name: "password", label: t("login.password"), type: "password", required: true, autocomplete: "current-password" },
  ]);
  // The code field appears only once the server says this account needs it.
  const codeSet = fieldSet([{ name: "code", label: t("login.code"), autocomplete: "one-time-code", hint: t("login.codeHint") }]);
  codeSet.el.hidden = true;
  const alert = alertBox();
  const params = new URLSearchParams(location.search);
  if (params.get("oidc_error")) alert.textContent = t("login.oidcError", { code: params.get("oidc_error") });
  const submit = h("button", { type: "submit", class: "primary", id: "login-submit" }, t("login.submit"));
  const form = h("form", { novalidate: true, "aria-labelledby": "login-title" }, set.el, codeSet.el, alert, submit);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    const body = { username: v.username, password: v.password };
    if (!codeSet.el.hidden && codeSet.read().code.trim()) body.code = codeSet.read().code.trim();
    submit.disabled = true;
    showError(alert, null);
    try {
      opts.onSignedIn(await api("POST", "/api/auth/login", body, { quiet401: true }));
    } catch (e) {
      if (e.code === "two_factor_required" || e.code === "invalid_two_factor_code") {
        codeSet.el.hidden = false;
        codeSet.inputs.code.focus();
      }
      if (e.code !== "two_factor_required") showError(alert, e);
      submit.disabled = false;
    }
  });
  const foot = h("div", { class: "login-foot" },
    opts.status.oidc ? h("a", { class: "button", id: "login-sso", href: "/api/auth/oidc/login" }, t("login.sso")) : null,
    opts.status.registration ? h("p", {}, t("login.noAccount"), " ", h("a", { href: "/signup", "data-link": true, id: "to-signup" }, t("login.signup"))) : null);
  page(opts, "login.title", "login.intro", form, foot);
  if (location.pathname !== "/login" && location.pathname !== "/") history.replaceState(null, "", location.pathname);
  set.inputs.username.focus();
}

/** renderSignup shows the registration form. */
export function renderSignup(opts) {
  const set = fieldSet([
    { name: "username", label: t("login.username"), required: true, autocomplete: "username", maxlength: 64 },
    { name: "password", label: t("login.password"), type: "password", required: true, autocomplete: "new-password",
      validate: (v) => (v.length < 8 ? t("signup.short") : "") },
    { name: "confirm", label: t("signup.confirm"), type: "password", required: true, autocomplete: "new-password",
      validate: (v, all) => (v !== all.password ? t("signup.mismatch") : "") },
  ]);
  const alert = alertBox();
  const submit = h("button", { type: "submit", class: "primary", id: "signup-submit" }, t("signup.submit"));
  const form = h("form", { novalidate: true, "aria-labelledby": "login-title" }, set.el, alert, submit);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    submit.disabled = true;
    showError(alert, null);
    try {
      opts.onSignedIn(await api("POST", "/api/auth/register", { username: v.username, password: v.password }, { quiet401: true }));
    } catch (e) {
      showError(alert, e);
      submit.disabled = false;
    }
  });
  const foot = h("p", { class: "login-foot" }, t("signup.haveAccount"), " ", h("a", { href: "/login", "data-link": true }, t("signup.login")));
  page(opts, "signup.title", "signup.intro", form, foot);
  set.inputs.username.focus();
}
