// Explorable figures (normbook.pages.views): each <details class="nb-view"> holds a Vega-Lite
// spec as JSON. The Vega bundle (vega-bundle.js, beside this file) is loaded the first time a
// reader opens a view, so pages whose views stay closed do not pay for it; the view is then
// drawn as SVG, with its sliders and selectors. Without JavaScript the static figure above
// each view is the figure. A live view (<details class="nb-live">, normbook.pages.live) loads
// live.js as well, the runtime that runs its networks, also only when first opened.
(function () {
  "use strict";
  var here = document.currentScript ? document.currentScript.src : "";
  var loading = {};

  function loadScript(name) {
    if (!loading[name]) {
      var url = here.replace(/[^/]*$/, name);
      loading[name] = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = url;
        s.onload = resolve;
        s.onerror = function () { reject(new Error("could not load " + url)); };
        document.head.appendChild(s);
      });
    }
    return loading[name];
  }

  function loadBundle() {
    return window.vegaEmbed ? Promise.resolve() : loadScript("vega-bundle.js");
  }

  function live(details) {
    if (details.dataset.state) return;
    details.dataset.state = "loading";
    details.liveOpened = performance.now();
    details.liveReady = Promise.all([loadBundle(), loadScript("live.js")])
      .then(function () { return window.normbookLive.mount(details); })
      .catch(function (err) {
        details.dataset.state = "failed";
        details.querySelector(".nb-live-body").textContent = "This view could not run (" +
          err.message + "); the figures above show the build's results.";
        console.error("normbook live view " + details.dataset.live + ": " + err.message);
        // stay rejected: whoever waits on liveReady (the browser check) must learn that the
        // view never loaded, not find it resolved with no runtime mounted
        throw err;
      });
    // the failure is handled above (said in the view and on the console): not an uncaught one
    details.liveReady.catch(function () {});
  }

  function render(details) {
    if (details.dataset.state) return;
    details.dataset.state = "loading";
    var chart = details.querySelector(".nb-view-chart");
    var spec = JSON.parse(details.querySelector(".nb-view-spec").textContent);
    loadBundle()
      .then(function () {
        return window.vegaEmbed(chart, spec, { mode: "vega-lite", renderer: "svg", actions: false });
      })
      .then(function (result) {
        details.dataset.state = "rendered";
        details.vegaView = result.view; // for the browser check
      })
      .catch(function (err) {
        details.dataset.state = "failed";
        chart.textContent = "This view could not be drawn (" + err.message + "); the static " +
          "figure above shows the same results.";
        console.error("normbook view " + details.dataset.view + ": " + err.message);
      });
  }

  // A sweep page: one view per grid point, one shown at a time, a slider over the points.
  function sweep(container) {
    var points = Array.prototype.slice.call(container.querySelectorAll(".nb-sweep-point"));
    if (points.length < 2) return;
    var label = document.createElement("label");
    label.className = "nb-sweep-control";
    var name = document.createElement("span");
    name.textContent = "sweep point (" + container.dataset.axis + ") ";
    var slider = document.createElement("input");
    slider.type = "range";
    slider.className = "nb-sweep-slider";
    slider.min = 0;
    slider.max = points.length - 1;
    slider.step = 1;
    slider.value = 0;
    var shown = document.createElement("output");
    label.appendChild(name);
    label.appendChild(slider);
    label.appendChild(shown);
    container.insertBefore(label, container.firstChild);
    function show() {
      var k = Number(slider.value);
      points.forEach(function (p, i) {
        p.hidden = i !== k;
        var d = p.querySelector("details.nb-view");
        if (i === k && d) { d.open = true; render(d); }
      });
      shown.textContent = " " + points[k].dataset.label;
    }
    slider.addEventListener("input", show);
    show();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".nb-sweep-view").forEach(sweep);
    document.querySelectorAll("details.nb-view").forEach(function (details) {
      var nojs = details.querySelector(".nb-view-nojs");
      if (nojs) nojs.hidden = true;
      details.addEventListener("toggle", function () { if (details.open) render(details); });
      if (details.open) render(details);
    });
    document.querySelectorAll("details.nb-live").forEach(function (details) {
      var nojs = details.querySelector(".nb-view-nojs");
      if (nojs) nojs.hidden = true;
      details.addEventListener("toggle", function () { if (details.open) live(details); });
    });
  });
})();
