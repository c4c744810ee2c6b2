// Resolves the theme before the first paint so a dark-mode user never sees
// a white flash: the saved choice, else the system preference, which is
// followed live until the user picks one. The stylesheet then only needs
// [data-theme] rules. It is a classic script on purpose: modules run late.
(function () {
  var root = document.documentElement;
  var saved = null;
  try {
    saved = localStorage.getItem("turnpike-theme");
  } catch (e) { /* storage may be disabled; the system preference applies */ }
  if (saved === "light" || saved === "dark") {
    root.dataset.theme = saved;
    return;
  }
  var query = matchMedia("(prefers-color-scheme: dark)");
  var follow = function () {
    var stored = null;
    try { stored = localStorage.getItem("turnpike-theme"); } catch (e) { /* as above */ }
    if (stored !== "light" && stored !== "dark") root.dataset.theme = query.matches ? "dark" : "light";
  };
  follow();
  query.addEventListener("change", follow);
})();
