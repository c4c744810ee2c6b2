// The console shell: session check, navigation, theme toggle and a small
// history-based router that loads each page module on first use.
import { h } from "./dom.js";
import { api, onUnauthorized } from "./api.js";
import { alertBox, showError } from "./ui.js";
import { t, lang, setLang, LANGUAGES } from "./i18n.js";
import { setQuotaPerUSD } from "./money.js";
import { renderLogin, renderSignup } from "./login.js";

const ROLE_RANK = { user: 1, admin: 2, root: 3 };

// Each route names its module, its catalogue key and the least role that
// sees it; when, if set, is a further condition on the signed-in user.
const ROUTES = [
  { path: "/", module: "dashboard", role: "user", section: "Workspace" },
  { path: "/playground", module: "playground", role: "user", section: "Workspace" },
  { path: "/keys", module: "keys", role: "user", section: "Workspace" },
  { path: "/logs", module: "logs", role: "user", section: "Workspace" },
  { path: "/tasks", module: "tasks", role: "user", section: "Workspace" },
  { path: "/batches", module: "batches", role: "user", section: "Workspace" },
  { path: "/mcp-playground", module: "mcpplay", role: "user", section: "Workspace" },
  { path: "/plans", module: "plans", role: "user", section: "Workspace" },
  // Only a team's manager has a team page (CONTRACT §18).
  { path: "/my-team", module: "myteam", role: "user", section: "Workspace", when: (me) => me.team_role === "manager" && me.team_id > 0 },
  { path: "/account", module: "account", role: "user", section: "Workspace" },
  { path: "/users", module: "users", role: "admin", section: "Administration" },
  { path: "/channels", module: "channels", role: "admin", section: "Administration" },
  { path: "/models", module: "models", role: "admin", section: "Administration" },
  { path: "/groups", module: "groups", role: "admin", section: "Administration" },
  { path: "/orgs", module: "orgs", role: "admin", section: "Administration" },
  { path: "/redemptions", module: "redemptions", role: "admin", section: "Administration" },
  { path: "/plugins", module: "plugins", role: "root", section: "Root" },
  { path: "/guardrails", module: "guardrails", role: "root", section: "Root" },
  { path: "/plan-admin", module: "planadmin", role: "root", section: "Root" },
  { path: "/prices", module: "prices", role: "root", section: "Root" },
  { path: "/audit", module: "audit", role: "root", section: "Root" },
  { path: "/mcp-servers", module: "mcpservers", role: "root", section: "Root" },
];

const label = (r) => t(`nav.${r.module}`);

const state = { me: null, cleanup: null, main: null, nav: null, status: {}, seq: 0 };

function allowed(route) {
  return state.me && (ROLE_RANK[state.me.role] || 0) >= ROLE_RANK[route.role] && (!route.when || route.when(state.me));
}

/** navigate changes the route without reloading the page. */
export function navigate(path, replace = false) {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  route();
}

async function route() {
  if (state.cleanup) {
    state.cleanup();
    state.cleanup = null;
  }
  const path = location.pathname.replace(/\/+$/, "") || "/";
  if (!state.me) {
    const opts = { status: state.status, onSignedIn, languageSwitch, faviconURL };
    if (path === "/signup" && state.status.registration) renderSignup(opts);
    else renderLogin(opts);
    state.main = null;
    return;
  }
  if (path === "/login" || path === "/signup") {
    navigate("/", true);
    return;
  }
  if (!state.main) renderShell();
  const r = ROUTES.find((x) => x.path === path);
  updateNav(r);
  // Each navigation renders into a <main> of its own: a page still loading
  // when the user moves on keeps writing into its own, detached element
  // instead of mixing into the next page.
  const main = newMain();
  state.main.replaceWith(main);
  state.main = main;
  const seq = ++state.seq;
  if (!r) {
    main.append(h("h1", {}, t("shell.notFound")), h("p", {}, h("a", { href: "/", "data-link": true }, t("shell.backHome"))));
    return;
  }
  if (!allowed(r)) {
    const ranked = (ROLE_RANK[state.me.role] || 0) >= ROLE_RANK[r.role];
    main.append(h("h1", {}, label(r)), h("p", { class: "alert error" }, ranked ? t("shell.needsManager") : t("shell.needsRole", { role: r.role })));
    return;
  }
  document.title = `${label(r)} · Turnpike`;
  main.setAttribute("aria-busy", "true");
  try {
    const mod = await import(`./pages/${r.module}.js`);
    const ctx = { me: state.me, status: state.status, navigate, refreshMe, isAdmin: ROLE_RANK[state.me.role] >= 2, isRoot: state.me.role === "root" };
    const cleanup = (await mod.render(main, ctx)) || null;
    if (seq === state.seq) state.cleanup = cleanup;
    else cleanup?.(); // the user already moved on
  } catch (e) {
    const box = alertBox();
    showError(box, e);
    main.append(box);
  } finally {
    main.removeAttribute("aria-busy");
    main.dataset.page = r.module;
  }
}

function newMain() {
  return h("main", { id: "main", class: "content", tabindex: "-1" });
}

function updateNav(current) {
  for (const a of state.nav.querySelectorAll("a")) {
    if (current && a.getAttribute("href") === current.path) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

function renderShell() {
  const sections = [];
  for (const r of ROUTES.filter(allowed)) {
    if (!sections.length || sections[sections.length - 1].name !== r.section) sections.push({ name: r.section, routes: [] });
    sections[sections.length - 1].routes.push(r);
  }
  state.nav = h("nav", { "aria-label": t("nav.aria") }, sections.map((s) => [
    h("div", { class: "nav-section", "aria-hidden": "true" }, t(`nav.section.${s.name}`)),
    h("ul", { class: "nav" }, s.routes.map((r) => h("li", {}, h("a", { href: r.path, "data-link": true, id: `nav-${r.module}` }, label(r))))),
  ]));
  state.main = newMain();
  const user = h("div", {}, h("strong", { id: "whoami" }, state.me.username), " ", h("span", { class: "badge info" }, state.me.role));
  const shell = h("div", { class: "shell" },
    h("aside", { class: "sidebar" },
      h("div", { class: "brand" }, h("img", { src: faviconURL(), alt: "" }), "Turnpike"),
      state.nav,
      h("div", { class: "sidebar-foot" }, user, languageSwitch(), themeToggle(),
        h("a", { href: "/api/openapi.json", id: "api-reference", target: "_blank", rel: "noopener" }, t("shell.apiReference")),
        h("button", { type: "button", id: "logout", onclick: logout }, t("shell.logout")))),
    state.main);
  shell.id = "app";
  document.getElementById("app").replaceWith(shell);
}

function faviconURL() {
  return document.querySelector('link[rel="icon"]').getAttribute("href");
}

function currentTheme() {
  const set = document.documentElement.dataset.theme;
  if (set) return set;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function themeToggle() {
  const b = h("button", { type: "button", id: "theme-toggle" });
  const paint = () => {
    const dark = currentTheme() === "dark";
    b.textContent = dark ? t("shell.themeLight") : t("shell.themeDark");
    b.setAttribute("aria-pressed", String(dark));
  };
  b.addEventListener("click", () => {
    const next = currentTheme() === "dark" ? "light" : "dark";
    document.documentElement.dataset.theme = next;
    try { localStorage.setItem("turnpike-theme", next); } catch { /* private mode */ }
    paint();
  });
  paint();
  return b;
}

async function logout() {
  try {
    await api("POST", "/api/auth/logout");
  } finally {
    location.assign("/login");
  }
}

async function refreshMe() {
  state.me = await api("GET", "/api/auth/me", undefined, { quiet401: true });
  return state.me;
}

// onSignedIn enters the console after a sign-in or registration.
function onSignedIn(me) {
  state.me = me;
  const next = ["/login", "/signup"].includes(location.pathname) ? "/" : location.pathname;
  const fresh = h("div", { id: "app" });
  document.getElementById("app").replaceWith(fresh);
  navigate(next, true);
}

// languageSwitch changes the language and redraws the current page in it.
function languageSwitch() {
  const sel = h("select", { id: "lang-switch", "aria-label": t("shell.language") },
    Object.entries(LANGUAGES).map(([code, l]) => h("option", { value: code, selected: code === lang() }, l.name)));
  sel.addEventListener("change", () => {
    setLang(sel.value);
    if (state.me) {
      const fresh = h("div", { id: "app" });
      document.getElementById("app").replaceWith(fresh);
      state.main = null;
    }
    route();
  });
  return sel;
}

document.addEventListener("click", (ev) => {
  const a = ev.target.closest("a[data-link]");
  if (!a || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.button !== 0) return;
  ev.preventDefault();
  navigate(a.getAttribute("href"));
  state.main?.focus();
});
window.addEventListener("popstate", route);

// A 401 anywhere means the session ended; go back to the sign-in form.
onUnauthorized(() => {
  state.me = null;
  state.main = null;
  route();
});

(async () => {
  try {
    state.status = await api("GET", "/api/status");
    setQuotaPerUSD(state.status.quota_per_usd);
  } catch {
    state.status = {};
  }
  try {
    await refreshMe();
  } catch {
    state.me = null;
  }
  route();
})();
