// Copy buttons: a fix's text (data-copy), a link (data-copy-link, made absolute), and every
// inline command in fixes, checks and how-to text. Text only: textContent, never innerHTML.
(function () {
  "use strict";
  function copy(button, text) {
    var done = function () {
      var label = button.textContent;
      button.textContent = "copied";
      button.classList.add("copied");
      setTimeout(function () { button.textContent = label; button.classList.remove("copied"); }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallback(text); done(); });
    } else { fallback(text); done(); }
  }
  function fallback(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); } catch (e) { /* nothing more to try */ }
    document.body.removeChild(area);
  }
  document.querySelectorAll("ol.fix code, ul.checks .detail code, .how code").forEach(function (code) {
    if (code.textContent.length < 6) { return; }
    var b = document.createElement("button");
    b.type = "button";
    b.className = "copy copy-code";
    b.textContent = "copy";
    b.setAttribute("data-copy", code.textContent);
    b.setAttribute("aria-label", "copy " + code.textContent.slice(0, 40));
    code.insertAdjacentElement("afterend", b);
  });
  document.addEventListener("click", function (ev) {
    var b = ev.target.closest("button.copy");
    if (!b) { return; }
    var link = b.getAttribute("data-copy-link");
    copy(b, link ? new URL(link, window.location.href).href : b.getAttribute("data-copy"));
  });
}());
