// Live views (normbook.pages.live): paper A's trained networks run in the reader's browser.
// views.js loads this file and the Vega bundle the first time a reader opens a live view, then
// calls normbookLive.mount(details). The forward pass is paper A's CNN (normbook.paper_a.cached
// .cnn): per layer a convolution with zero padding, GroupNorm (InstanceNorm is G = C) or none,
// ReLU; a 1x1 head. It runs in float64 on the exported float32 weights, so one index's nudge
// leaves every output outside its receptive field exactly unchanged when nothing is pooled
// over positions. The inputs come from the generator normbook.paper_a.live implements the
// same way (Mulberry32, Box-Muller), so the build's PyTorch values can be compared with ours.
(function () {
  "use strict";

  // n uniforms in [0, 1) from Mulberry32 (normbook.paper_a.live.uniforms)
  function uniforms(seed, n) {
    var a = seed >>> 0, out = new Float64Array(n);
    for (var i = 0; i < n; i++) {
      a = (a + 0x6D2B79F5) >>> 0;
      var t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = ((t + Math.imul(t ^ (t >>> 7), 61 | t)) >>> 0) ^ t;
      out[i] = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    }
    return out;
  }

  // n N(0, 1) draws, rounded to float32 as the networks see them (live.normals)
  function normals(seed, n) {
    var u = uniforms(seed, 2 * n), out = new Float64Array(n);
    for (var i = 0; i < n; i++) {
      out[i] = Math.fround(Math.sqrt(-2 * Math.log(1 - u[2 * i])) *
                           Math.cos(2 * Math.PI * u[2 * i + 1]));
    }
    return out;
  }

  // the inputs the view offers (live.make_input)
  function makeInput(kind, len, seed, at, radius) {
    var noise = normals(seed, len), x = new Float64Array(len), i;
    if (kind === "noise") return noise;
    if (kind === "constant") { x.fill(noise[0]); return x; }
    if (kind === "spike") { x[at] = 1; return x; }
    if (kind === "shifted") {
      for (i = 0; i < len; i++) x[(i + at) % len] = noise[i];
      return x;
    }
    if (kind === "zeroed") {
      x.set(noise);
      for (i = Math.max(0, at - radius); i <= Math.min(len - 1, at + radius); i++) x[i] = 0;
      return x;
    }
    throw new Error("unknown input kind " + kind);
  }

  // one seed's weights: float32, little-endian, in the export's layout order
  function unpack(spec, s) {
    var bin = atob(spec.weights[s]), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var all = new Float32Array(bytes.buffer), at = 0, w = {};
    spec.layout.forEach(function (entry) {
      var size = entry[1].reduce(function (p, d) { return p * d; }, 1);
      w[entry[0]] = all.subarray(at, at + size);
      at += size;
    });
    if (at !== all.length) throw new Error("weights do not match their layout");
    return w;
  }

  // the network's predictions for one input x (Float64Array of its length); with stats.keep
  // every norm layer's statistics are kept in stats.kept, with stats.use those are used instead
  // of the input's own (the nudged input normalized as the un-nudged one was)
  function forward(spec, w, x, eps, stats) {
    var len = x.length, c = spec.width, h = x, cin = 1;
    for (var d = 0; d < spec.kernels.length; d++) {
      var k = spec.kernels[d], pad = k >> 1, wt = w["conv" + d + ".w"], b = w["conv" + d + ".b"];
      var out = new Float64Array(c * len);
      for (var o = 0; o < c; o++) {
        var at = o * len;
        out.fill(b[o], at, at + len);
        // every output index gets its terms in the same order (input channel, then tap), so
        // equal inputs in its receptive field give it exactly the same value
        for (var ch = 0; ch < cin; ch++) {
          var base = (o * cin + ch) * k, row = ch * len - pad;
          for (var t = 0; t < k; t++) {
            var wv = wt[base + t], lo = Math.max(0, pad - t), hi = Math.min(len, len + pad - t);
            for (var i = lo; i < hi; i++) out[at + i] += wv * h[row + i + t];
          }
        }
      }
      var g = spec.groups[d];
      if (g > 0) groupNorm(out, c, len, g, w["norm" + d + ".w"], w["norm" + d + ".b"], eps,
                           stats, d);
      for (var q = 0; q < out.length; q++) if (out[q] < 0) out[q] = 0;
      h = out;
      cin = c;
    }
    var y = new Float64Array(len), hw = w["head.w"], hb = w["head.b"][0];
    for (var j = 0; j < len; j++) {
      var s = hb;
      for (var m = 0; m < c; m++) s += hw[m] * h[m * len + j];
      y[j] = s;
    }
    return y;
  }

  // GroupNorm in place: each group's mean and (biased) variance over its channels and length
  function groupNorm(a, c, len, groups, gw, gb, eps, stats, d) {
    var per = c / groups, n = per * len;
    for (var g = 0; g < groups; g++) {
      var lo = g * per * len, hi = lo + n, mean = 0, v = 0, i, inv;
      if (stats && stats.use) {
        mean = stats.use[d][g][0];
        inv = stats.use[d][g][1];
      } else {
        for (i = lo; i < hi; i++) mean += a[i];
        mean /= n;
        for (i = lo; i < hi; i++) v += (a[i] - mean) * (a[i] - mean);
        inv = 1 / Math.sqrt(v / n + eps);
      }
      if (stats && stats.keep) (stats.kept[d] = stats.kept[d] || [])[g] = [mean, inv];
      for (var ch = g * per; ch < (g + 1) * per; ch++) {
        for (i = 0; i < len; i++) {
          var q = ch * len + i;
          a[q] = (a[q] - mean) * inv * gw[ch] + gb[ch];
        }
      }
    }
  }

  // What the page shows for one setting of the controls.
  function compute(data, st, cache) {
    var spec = data.nets[st.net], len = spec.seq_len, r = spec.radius;
    var key = st.net + "/" + st.seed;
    if (!cache.w || cache.wKey !== key) { cache.w = unpack(spec, st.seed); cache.wKey = key; }
    var x = makeInput(st.kind, len, st.input_seed, st.at, r);
    var nudged = Float64Array.from(x);
    nudged[st.j] = Math.fround(nudged[st.j] + Math.fround(st.size));
    var stats = { keep: true, kept: {} };
    var pred = forward(spec, cache.w, x, data.eps, stats);
    var moved = forward(spec, cache.w, nudged, data.eps, st.freeze ? { use: stats.kept } : null);
    var delta = new Float64Array(len), beyond = 0;
    for (var i = 0; i < len; i++) {
      delta[i] = moved[i] - pred[i];
      if (Math.abs(i - st.j) > r) beyond = Math.max(beyond, Math.abs(delta[i]));
    }
    var meanKey = key + "/" + st.input_seed;
    if (cache.meanKey !== meanKey) {  // the mean needs the draws only, not the input's kind
      var draws = normals(st.input_seed, data.draws * len), mean = new Float64Array(len);
      for (var dr = 0; dr < data.draws; dr++) {
        var yd = forward(spec, cache.w, draws.subarray(dr * len, (dr + 1) * len), data.eps);
        for (i = 0; i < len; i++) mean[i] += yd[i] / data.draws;
      }
      cache.mean = mean;
      cache.meanKey = meanKey;
    }
    return { input: x, pred: pred, nudged: moved, delta: delta, mean: cache.mean,
             beyond: beyond, radius: r };
  }

  // the legend's names for the two predictions (the first was "input": read as the input)
  var PLAIN = "prediction (no nudge)", NUDGED = "prediction (nudged)";

  // rows of the lines [[name, values], ...]
  function lineRows(len, series) {
    var rows = [];
    series.forEach(function (s) {
      for (var i = 0; i < len; i++) rows.push({ i: i, value: s[1][i], series: s[0] });
    });
    return rows;
  }

  function ramp(len) {
    var t = new Float64Array(len);
    for (var i = 0; i < len; i++) t[i] = i / (len - 1);
    return t;
  }

  // the rows each plot draws, for one computed setting
  function plotRows(r, st) {
    var len = r.pred.length, target = ramp(len);
    return {
      pred: lineRows(len, [[PLAIN, r.pred], [NUDGED, r.nudged], ["target", target]]),
      mean: lineRows(len, [["mean", r.mean], ["target", target]]),
      delta: lineRows(len, [["change", r.delta.map(Math.abs)]]),
      band: [{ lo: Math.max(0, st.j - r.radius), hi: Math.min(len - 1, st.j + r.radius) }],
      nudge: [{ j: st.j }],
    };
  }

  // three plots over the index, their data inline (named, so that updates replace them)
  function chartSpec(draws, rows) {
    // the axis ends at the last index (a nice scale ran it to 80 for 75 indices); from the
    // data, so another network's length moves it
    var xScale = { nice: false };
    var x = { field: "i", type: "quantitative", title: "index", scale: xScale };
    var y = { field: "value", type: "quantitative", title: "prediction" };
    var color = { field: "series", type: "nominal", title: null,
                  legend: { orient: "top", direction: "horizontal" } };
    function data(name) { return { name: name, values: rows[name] }; }
    return {
      config: { view: { stroke: null } },
      vconcat: [
        { title: "Prediction per index, against the target ramp", width: 520, height: 130,
          data: data("pred"), mark: { type: "line", strokeWidth: 1.5 },
          encoding: { x: x, y: y, color: color } },
        { title: "Mean prediction over " + draws + " noise draws of the noise seed",
          width: 520, height: 130, data: data("mean"), mark: { type: "line", strokeWidth: 1.5 },
          encoding: { x: x, y: y, color: color } },
        { title: "|change| of every output caused by the nudge (shaded: j ± R)",
          width: 520, height: 130,
          layer: [
            { data: data("band"), mark: { type: "rect", opacity: 0.15, color: "#4c78a8" },
              encoding: { x: { field: "lo", type: "quantitative", title: "index", scale: xScale },
                          x2: { field: "hi" } } },
            { data: data("delta"), mark: { type: "line", point: true, strokeWidth: 1 },
              encoding: { x: x, y: { field: "value", type: "quantitative", title: "|change|",
                                     // zero stays on the axis, and every decade from 1e-6 shows
                                     scale: { type: "symlog", constant: 1e-6 },
                                     axis: { values: [0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1],
                                             format: ".0e",
                                             labelExpr: "datum.value === 0 ? '0' : datum.label" } } } },
            { data: data("nudge"), mark: { type: "rule", color: "#e45756" },
              encoding: { x: { field: "j", type: "quantitative", scale: xScale } } },
          ] },
      ],
    };
  }

  function control(parent, label, el) {
    var wrap = document.createElement("label");
    wrap.className = "nb-live-control";
    var name = document.createElement("span");
    name.textContent = label + " ";
    wrap.appendChild(name);
    wrap.appendChild(el);
    var shown = document.createElement("output");
    wrap.appendChild(shown);
    parent.appendChild(wrap);
    return shown;
  }

  function select(name, options) {
    var s = document.createElement("select");
    s.name = name;
    options.forEach(function (o, i) {
      var opt = document.createElement("option");
      opt.value = String(i);
      opt.textContent = o;
      s.appendChild(opt);
    });
    return s;
  }

  function range(name, min, max, step, value) {
    var r = document.createElement("input");
    r.type = "range";
    r.name = name;
    r.min = min; r.max = max; r.step = step; r.value = value;
    return r;
  }

  function mount(details) {
    var data = JSON.parse(details.querySelector(".nb-live-data").textContent);
    var body = details.querySelector(".nb-live-body");
    var t0 = details.liveOpened || performance.now();
    var panel = document.createElement("div");
    panel.className = "nb-live-controls";
    body.appendChild(panel);
    var els = {
      net: select("net", data.nets.map(function (n) { return n.name; })),
      seed: select("seed", data.nets[0].seeds.map(function (s) { return "seed " + s; })),
      kind: select("kind", data.kinds),
      input_seed: document.createElement("input"),
      at: range("at", 0, data.nets[0].seq_len - 1, 1, data.nets[0].seq_len >> 2),
      j: range("j", 0, data.nets[0].seq_len - 1, 1, data.nets[0].seq_len >> 1),
      // steps of 0.01 (were 0.1): nudges down to a hundredth of the noise's sd, which is 1
      size: range("size", -3, 3, 0.01, 1),
    };
    if (data.controls.indexOf("freeze") >= 0) {
      els.freeze = document.createElement("input");
      els.freeze.type = "checkbox";
      els.freeze.name = "freeze";
    }
    els.input_seed.type = "number";
    els.input_seed.name = "input_seed";
    els.input_seed.min = 0; els.input_seed.max = 99999; els.input_seed.value = 0;
    var shown = {
      net: control(panel, "network", els.net),
      seed: control(panel, "trained seed", els.seed),
      kind: control(panel, "input", els.kind),
      input_seed: control(panel, "noise seed", els.input_seed),
      at: control(panel, "position (spike, shift, zeroed region)", els.at),
      j: control(panel, "nudge index j", els.j),
      size: control(panel, "nudge size", els.size),
    };
    if (els.freeze) {
      shown.freeze = control(panel, "freeze the norm statistics at the un-nudged input's",
                             els.freeze);
    }
    if (data.left_out.length) {
      var note = document.createElement("p");
      note.className = "nb-live-note";
      note.textContent = "Not run here: " + data.left_out.join(", ") + " (this view runs " +
        "networks without normalization, with InstanceNorm or with GroupNorm).";
      body.appendChild(note);
    }
    var readout = document.createElement("p");
    readout.className = "nb-live-readout";
    readout.setAttribute("aria-live", "polite");
    body.appendChild(readout);
    var chart = document.createElement("div");
    chart.className = "nb-live-chart";
    body.appendChild(chart);
    var cache = {}, live = { data: data, last: null, timings: { first: null, update: null } };
    details.live = live;

    function state() {
      return { net: Number(els.net.value), seed: Number(els.seed.value), kind: data.kinds[
        Number(els.kind.value)], input_seed: Math.max(0, Math.floor(Number(els.input_seed.value) || 0)),
        at: Number(els.at.value), j: Number(els.j.value), size: Number(els.size.value),
        freeze: els.freeze ? els.freeze.checked : false };
    }

    function onNet() {  // another network: its seeds and its length
      var spec = data.nets[Number(els.net.value)];
      var keep = Math.min(Number(els.seed.value), spec.seeds.length - 1);
      els.seed.innerHTML = "";
      spec.seeds.forEach(function (s, i) {
        var opt = document.createElement("option");
        opt.value = String(i);
        opt.textContent = "seed " + s;
        els.seed.appendChild(opt);
      });
      els.seed.value = String(keep);
      ["at", "j"].forEach(function (n) {
        els[n].max = spec.seq_len - 1;
        if (Number(els[n].value) > spec.seq_len - 1) els[n].value = spec.seq_len - 1;
      });
    }

    function update(started) {
      var st = state(), r = compute(data, st, cache), len = r.pred.length;
      live.last = { controls: st, pred: Array.from(r.pred), delta: Array.from(r.delta),
                    mean: Array.from(r.mean), beyond: r.beyond, radius: r.radius };
      Object.keys(shown).forEach(function (n) {
        shown[n].textContent = els[n].tagName === "SELECT" || els[n].type === "checkbox" ? ""
          : " " + els[n].value;
      });
      readout.textContent = data.nets[st.net].name + (st.freeze ? ", statistics frozen" : "") +
        ", R = " + r.radius +
        ": largest change beyond j ± R " + (r.beyond === 0
          ? "0, exactly (nothing outside the receptive field moved)"
          : r.beyond.toExponential(2) + " (the nudge reached past R)");
      var rows = plotRows(r, st), view = live.view;
      if (!view) return embed(rows, started);
      Object.keys(rows).forEach(function (name) { view.data(name, rows[name]); });
      return view.runAsync().then(function () { drawn(started); });
    }

    function embed(rows, started) {  // the first drawing, with its data inline
      return window.vegaEmbed(chart, chartSpec(data.draws, rows), { mode: "vega-lite",
                                                                     renderer: "svg",
                                                                     actions: false })
        .then(function (res) { live.view = res.view; drawn(started); });
    }

    function drawn(started) {
      var ms = performance.now() - started;
      if (live.timings.first === null) live.timings.first = ms;
      else {  // the last update, and the slowest (a new network, seed or noise seed redraws
        live.timings.update = ms;  // the mean over the draws)
        live.timings.slowest = Math.max(live.timings.slowest || 0, ms);
      }
      details.dataset.state = "rendered";
      live.drawn = live.view.data("pred").filter(function (d) { return d.series === PLAIN; })
        .map(function (d) { return d.value; });
    }

    Object.keys(els).forEach(function (n) {
      var ev = els[n].type === "range" ? "input" : "change";
      els[n].addEventListener(ev, function () {
        var started = performance.now();
        if (n === "net") onNet();
        live.pending = update(started).catch(fail);
      });
    });

    function fail(err) {
      details.dataset.state = "failed";
      readout.textContent = "The networks could not run here (" + err.message + ").";
      console.error("normbook live view " + details.dataset.live + ": " + err.message);
    }

    return update(t0);
  }

  window.normbookLive = { mount: mount, uniforms: uniforms, normals: normals,
                          makeInput: makeInput, forward: forward, unpack: unpack };
})();
