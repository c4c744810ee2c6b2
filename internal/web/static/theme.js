// Applies the saved theme before the first paint so a dark-mode user never
// sees a white flash. It is a classic script on purpose: modules run late.
(function () {
  try {
    var t = localStorage.getItem("turnpike-theme");
    if (t === "light" || t === "dark") document.documentElement.dataset.theme = t;
  } catch (e) { /* storage may be disabled; the system preference applies */ }
})();
