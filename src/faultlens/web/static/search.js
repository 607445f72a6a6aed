// Search of the static site: filters the prebuilt index (search-index.js) as you type.
// Results are built with textContent, never innerHTML.
(function () {
  "use strict";
  var index = window.FAULTLENS_INDEX || [];
  var input = document.getElementById("q");
  var list = document.getElementById("results");
  var count = document.getElementById("result-count");
  if (!input || !list) { return; }

  function score(entry, words, phrase) {
    var s = 0;
    var fields = [[3, entry.id.replace(/-/g, " ")], [3, entry.title], [1.5, entry.symptoms],
                  [2, entry.messages], [1, entry.summary]];
    fields.forEach(function (f) {
      var text = f[1].toLowerCase();
      if (phrase && text.indexOf(phrase) >= 0) { s += 2 * f[0]; }
      words.forEach(function (w) { if (text.indexOf(w) >= 0) { s += f[0] / words.length; } });
    });
    return s;
  }

  function show(query) {
    var phrase = query.trim().toLowerCase();
    var words = phrase.split(/\W+/).filter(Boolean);
    list.textContent = "";
    if (!words.length) { list.hidden = true; count.hidden = true; return; }
    var found = index.map(function (e) { return [score(e, words, phrase), e]; })
      .filter(function (x) { return x[0] > 0; })
      .sort(function (a, b) { return b[0] - a[0] || (a[1].id < b[1].id ? -1 : 1); })
      .slice(0, 20);
    found.forEach(function (x) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = x[1].url;
      a.textContent = x[1].title;
      var meta = document.createElement("span");
      meta.className = "meta";
      meta.textContent = " " + x[1].id + " · " + x[1].category;
      li.appendChild(a);
      li.appendChild(meta);
      list.appendChild(li);
    });
    count.textContent = !found.length ? "No reference matches; try fewer words or the exact error message."
      : found.length === 1 ? "1 reference matches." : found.length + " references match, best first.";
    count.hidden = false;
    list.hidden = !found.length;
  }

  var initial = new URLSearchParams(window.location.search).get("q");
  if (initial) { input.value = initial; }
  input.addEventListener("input", function () { show(input.value); });
  show(input.value);
})();
