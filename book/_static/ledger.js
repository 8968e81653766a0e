/* The claims ledger's table, sortable and filterable in the page (no other host, no library).
 * Without JavaScript it stays the plain table the build wrote. Every table inside a
 * `.ledger-table` container gets: a filter per column named in data-filters (a select of the
 * column's values), a text search over the rows, header buttons that sort (numbers by value,
 * text alphabetically; a second press reverses), and a live count of the rows shown. */
(function () {
  "use strict";

  function cellText(cell) {
    // the verdict column reads "**reproduced** (why)": filter on the bold word
    var strong = cell.querySelector("strong");
    return (strong ? strong.textContent : cell.textContent).trim();
  }

  function sortKey(text) {
    var m = text.replace(/\u2212/g, "-").match(/^[-+]?\d[\d,]*\.?\d*(e[-+]?\d+)?/i);
    return m ? { num: parseFloat(m[0].replace(/,/g, "")), text: text } : { num: null, text: text };
  }

  // One name for one thing in the search: "BatchNorm", "batch norm" and "BN" find the same rows
  // (the claims mostly say "BN"), and so on for the other normalizations and the index.
  var SYNONYMS = [
    [/\bbatch[ -]?norm(alization)?\b|\bbn\b/g, "batchnorm"],
    [/\binstance[ -]?norm(alization)?\b/g, "instancenorm"],
    [/\bgroup[ -]?norm(alization)?\b|\bgn\b/g, "groupnorm"],
    [/\bdavies[-\u2013 ]+bouldin( index)?\b|\bdbi\b/g, "dbi"]
  ];
  function normalized(text) {
    var t = text.toLowerCase();
    SYNONYMS.forEach(function (s) { t = t.replace(s[0], s[1]); });
    return t;
  }

  function enhance(container) {
    var tbl = container.querySelector("table");
    if (!tbl || !tbl.tBodies.length) return;
    var body = tbl.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var heads = Array.prototype.slice.call(tbl.tHead ? tbl.tHead.rows[0].cells : []);
    var names = heads.map(function (h) { return h.textContent.trim(); });
    var wanted = (container.getAttribute("data-filters") || "paper,chapter,verdict,vs reference").split(",");

    var bar = document.createElement("div");
    bar.className = "ledger-controls";
    bar.setAttribute("role", "search");
    var filters = [];
    wanted.forEach(function (name) {
      var col = names.indexOf(name);
      if (col < 0) return;
      var values = {};
      rows.forEach(function (r) { values[cellText(r.cells[col])] = true; });
      if (Object.keys(values).length < 2) return;  // one value: nothing to filter by
      var label = document.createElement("label");
      label.textContent = name + " ";
      var select = document.createElement("select");
      select.setAttribute("data-column", name);
      select.appendChild(new Option("all", ""));
      Object.keys(values).sort().forEach(function (v) { select.appendChild(new Option(v, v)); });
      select.addEventListener("change", apply);
      label.appendChild(select);
      bar.appendChild(label);
      filters.push({ col: col, select: select });
    });
    var search = document.createElement("input");
    search.type = "search";
    search.placeholder = "search the rows";
    search.setAttribute("aria-label", "search the rows");
    search.addEventListener("input", apply);
    bar.appendChild(search);
    var count = document.createElement("span");
    count.className = "ledger-count";
    count.setAttribute("aria-live", "polite");
    bar.appendChild(count);
    container.insertBefore(bar, container.firstChild);

    // a row's text without its "code: rule · effect · SESOI" links, which every row has
    function searchable(r) {
      var copy = r.cloneNode(true);
      copy.querySelectorAll(".code-links").forEach(function (c) { c.remove(); });
      return copy.textContent;
    }

    function apply() {
      var q = normalized(search.value.trim());
      var shown = 0;
      rows.forEach(function (r) {
        var ok = filters.every(function (f) {
          return !f.select.value || cellText(r.cells[f.col]) === f.select.value;
        });
        ok = ok && (!q || normalized(searchable(r)).indexOf(q) >= 0);
        r.hidden = !ok;
        shown += ok ? 1 : 0;
      });
      count.textContent = shown + " of " + rows.length + " rows";
    }

    heads.forEach(function (h, col) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "ledger-sort";
      button.textContent = h.textContent;
      button.title = "sort by " + h.textContent.trim();
      h.textContent = "";
      h.appendChild(button);
      button.addEventListener("click", function () {
        var ascending = h.getAttribute("aria-sort") !== "ascending";
        heads.forEach(function (o) { o.removeAttribute("aria-sort"); });
        h.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var keyed = rows.map(function (r, i) { return { r: r, i: i, k: sortKey(cellText(r.cells[col])) }; });
        keyed.sort(function (a, b) {
          var c;
          if (a.k.num !== null && b.k.num !== null) c = a.k.num - b.k.num;
          else if (a.k.num !== null) c = -1;
          else if (b.k.num !== null) c = 1;
          else c = a.k.text.localeCompare(b.k.text);
          return (ascending ? c : -c) || a.i - b.i;
        });
        keyed.forEach(function (x) { body.appendChild(x.r); });
      });
    });
    apply();
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll(".ledger-table"), enhance);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
