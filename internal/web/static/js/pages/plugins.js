// Task plugins (root): installed plugins with their versions, upload,
// marketplace, dry run and the runtime generation, one tab each.
import { h } from "../dom.js";
import { pageHead } from "../ui.js";
import { t as tr } from "../i18n.js";
import { loadInstalled } from "../plugins/installed.js";
import { uploadForm } from "../plugins/upload.js";
import { loadMarket } from "../plugins/market.js";
import { dryRunForm } from "../plugins/dryrun.js";
import { loadRuntime } from "../plugins/runtime.js";

export async function render(main) {
  const installed = h("div", { id: "plugins-list" });
  const market = h("div", { id: "plugins-market" });
  const runtime = h("div", { id: "plugins-runtime" });
  let show = () => {};
  const refreshInstalled = () => loadInstalled(installed, (id) => show(id));
  const tabs = [
    { id: "installed", label: tr("plugins.installed"), panel: installed, load: refreshInstalled },
    { id: "upload", label: tr("plugins.upload"), panel: uploadForm(refreshInstalled) },
    { id: "marketplace", label: tr("plugins.marketplace"), panel: market, load: () => loadMarket(market, refreshInstalled) },
    { id: "dry-run", label: tr("plugins.dryRun"), panel: dryRunForm() },
    { id: "runtime", label: tr("plugins.runtime"), panel: runtime, load: () => loadRuntime(runtime) },
  ];
  const bar = tabBar(tabs);
  show = bar.show;
  main.append(pageHead(tr("plugins.title"), tr("plugins.sub")),
    ...bar.elements);
  await refreshInstalled();
}

// tabBar builds an ARIA tab list and returns its elements and show(id): arrow keys, Home and End move between
// tabs, and the chosen tab is kept in the address's fragment so a reload
// returns to it. Tabs with a loader refresh whenever they are shown.
function tabBar(tabs) {
  const buttons = tabs.map((t) => h("button", { type: "button", role: "tab", id: `tab-${t.id}`, "aria-controls": `panel-${t.id}` }, t.label));
  const panels = tabs.map((t) => h("section", { role: "tabpanel", id: `panel-${t.id}`, "aria-labelledby": `tab-${t.id}`, tabindex: "0" }, t.panel));
  const select = (i, focus, initial = false) => {
    tabs.forEach((t, j) => {
      buttons[j].setAttribute("aria-selected", String(i === j));
      buttons[j].tabIndex = i === j ? 0 : -1;
      panels[j].hidden = i !== j;
    });
    if (focus) buttons[i].focus();
    history.replaceState(null, "", i === 0 ? location.pathname : `#${tabs[i].id}`);
    // render loads the installed list itself; every other showing reloads.
    if (tabs[i].load && !(initial && i === 0)) tabs[i].load();
  };
  buttons.forEach((b, i) => {
    b.addEventListener("click", () => select(i, false));
    b.addEventListener("keydown", (ev) => {
      const n = tabs.length;
      const to = { ArrowRight: (i + 1) % n, ArrowLeft: (i + n - 1) % n, Home: 0, End: n - 1 }[ev.key];
      if (to === undefined) return;
      ev.preventDefault();
      select(to, true);
    });
  });
  const start = Math.max(0, tabs.findIndex((t) => `#${t.id}` === location.hash));
  select(start, false, true);
  return {
    elements: [h("div", { class: "tabs", role: "tablist", "aria-label": tr("plugins.sections") }, buttons), ...panels],
    show: (id) => select(tabs.findIndex((t) => t.id === id), true),
  };
}
