/* Pinework dashboard: keyboard focus after partial updates. No inline script anywhere
   (CSP script-src 'self'); htmx's own settings are in the page's htmx-config meta tag. */
(function () {
  "use strict";
  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail && event.detail.elt;
    if (!target || !target.querySelector) { return; }
    var focus = target.matches && target.matches("[data-focus]") ? target : target.querySelector("[data-focus]");
    if (focus) {
      if (!focus.hasAttribute("tabindex")) { focus.setAttribute("tabindex", "-1"); }
      focus.focus();
    }
  });
})();
