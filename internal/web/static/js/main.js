// The console shell: session check, navigation, theme toggle and a small
// history-based router that loads each page module on first use.
import { h, clear } from "./dom.js";
import { api, onUnauthorized } from "./api.js";
import { alertBox, showError, fieldSet } from "./ui.js";

const ROLE_RANK = { user: 1, admin: 2, root: 3 };

// Each route names its module, its nav label and the least role that sees it.
const ROUTES = [
  { path: "/", module: "dashboard", label: "Dashboard", role: "user", section: "Workspace" },
  { path: "/playground", module: "playground", label: "Playground", role: "user", section: "Workspace" },
  { path: "/keys", module: "keys", label: "API keys", role: "user", section: "Workspace" },
  { path: "/logs", module: "logs", label: "Usage logs", role: "user", section: "Workspace" },
  { path: "/tasks", module: "tasks", label: "Tasks", role: "user", section: "Workspace" },
  { path: "/users", module: "users", label: "Users", role: "admin", section: "Administration" },
  { path: "/channels", module: "channels", label: "Channels", role: "admin", section: "Administration" },
  { path: "/models", module: "models", label: "Model prices", role: "admin", section: "Administration" },
  { path: "/groups", module: "groups", label: "Groups", role: "admin", section: "Administration" },
  { path: "/plugins", module: "plugins", label: "Task plugins", role: "root", section: "Root" },
];

const state = { me: null, cleanup: null, main: null, nav: null };

function allowed(route) {
  return state.me && (ROLE_RANK[state.me.role] || 0) >= ROLE_RANK[route.role];
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
    renderLogin();
    return;
  }
  if (path === "/login") {
    navigate("/", true);
    return;
  }
  if (!state.main) renderShell();
  const r = ROUTES.find((x) => x.path === path);
  updateNav(r);
  const main = clear(state.main);
  if (!r) {
    main.append(h("h1", {}, "Page not found"), h("p", {}, h("a", { href: "/", "data-link": true }, "Back to the dashboard")));
    return;
  }
  if (!allowed(r)) {
    main.append(h("h1", {}, r.label), h("p", { class: "alert error" }, `This page needs the ${r.role} role.`));
    return;
  }
  document.title = `${r.label} · Turnpike`;
  main.setAttribute("aria-busy", "true");
  try {
    const mod = await import(`./pages/${r.module}.js`);
    const ctx = { me: state.me, navigate, refreshMe, isAdmin: ROLE_RANK[state.me.role] >= 2, isRoot: state.me.role === "root" };
    state.cleanup = (await mod.render(main, ctx)) || null;
  } catch (e) {
    const box = alertBox();
    showError(box, e);
    main.append(box);
  } finally {
    main.removeAttribute("aria-busy");
    main.dataset.page = r.module;
  }
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
  state.nav = h("nav", { "aria-label": "Console" }, sections.map((s) => [
    h("div", { class: "nav-section", "aria-hidden": "true" }, s.name),
    h("ul", { class: "nav" }, s.routes.map((r) => h("li", {}, h("a", { href: r.path, "data-link": true, id: `nav-${r.module}` }, r.label)))),
  ]));
  state.main = h("main", { id: "main", class: "content", tabindex: "-1" });
  const user = h("div", {}, h("strong", { id: "whoami" }, state.me.username), " ", h("span", { class: "badge info" }, state.me.role));
  const shell = h("div", { class: "shell" },
    h("aside", { class: "sidebar" },
      h("div", { class: "brand" }, h("img", { src: faviconURL(), alt: "" }), "Turnpike"),
      state.nav,
      h("div", { class: "sidebar-foot" }, user, themeToggle(), h("button", { type: "button", id: "logout", onclick: logout }, "Log out"))),
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
    b.textContent = dark ? "Light theme" : "Dark theme";
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

function renderLogin() {
  const set = fieldSet([
    { name: "username", label: "Username", required: true, autocomplete: "username" },
    { name: "password", label: "Password", type: "password", required: true, autocomplete: "current-password" },
  ]);
  const alert = alertBox();
  const submit = h("button", { type: "submit", class: "primary", id: "login-submit" }, "Log in");
  const form = h("form", { novalidate: true, "aria-labelledby": "login-title" }, set.el, alert, submit);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = set.validate();
    if (!v) return;
    submit.disabled = true;
    showError(alert, null);
    try {
      state.me = await api("POST", "/api/auth/login", { username: v.username, password: v.password }, { quiet401: true });
      const next = location.pathname === "/login" ? "/" : location.pathname;
      const fresh = h("div", { id: "app" });
      document.getElementById("app").replaceWith(fresh);
      navigate(next, true);
    } catch (e) {
      showError(alert, e);
      submit.disabled = false;
    }
  });
  document.title = "Log in · Turnpike";
  const root = h("div", { id: "app", class: "login-wrap" },
    h("main", { id: "main", class: "card login" },
      h("div", { class: "brand" }, h("img", { src: faviconURL(), alt: "" }), "Turnpike"),
      h("h1", { id: "login-title", class: "visually-hidden" }, "Log in"),
      h("p", { class: "muted" }, "Log in to manage keys, channels and usage, or to chat in the playground."),
      form));
  document.getElementById("app").replaceWith(root);
  state.main = null;
  if (location.pathname !== "/login" && location.pathname !== "/") history.replaceState(null, "", location.pathname);
  set.inputs.username.focus();
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
    await refreshMe();
  } catch {
    state.me = null;
  }
  route();
})();
