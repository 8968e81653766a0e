"""How the explorable views' library was chosen: one equivalent view (5 seeds x 6 training
states x 75 indices, a slider over the states) in Vega-Lite (Altair + vl-convert's bundle),
Bokeh and Plotly, each page loading its library from a local file, opened in headless Chromium:
script weight, time to the first drawing, SVG text and ARIA roles.

    python -m pip install bokeh==3.9.2 plotly==7.1.0   # in a scratch environment, not the book's
    python -m normbook.tools.view_bench /tmp/view-bench

Measured on 2026-12-02 (Intel Xeon, family 6 model 207, 2 cores; Chromium 156), in two runs
(the first while a book build ran beside it): Vega-Lite 0.90 MB of script, first drawing 248
and 162 ms (median of 7), 38 SVG text nodes, 9 ARIA roles; Bokeh 1.65 MB, 426 and 269 ms, a
canvas (no text nodes, no roles); Plotly 4.82 MB, 482 and 299 ms, 19 text nodes, 8 roles.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from normbook.pages.views import bundle_js
from normbook.publish.browser import chromium_driver

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]


def _data() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [dict(seed=s, state=t, index=i,
                 mean=float(np.tanh((i - 37) / 10) * t / 5 + rng.normal(0, 0.05)))
            for s in range(5) for t in range(6) for i in range(75)]  # fmt: skip
    return pd.DataFrame(rows)


def _vega(out: Path, df: pd.DataFrame) -> None:
    import altair as alt

    (out / "vega.js").write_text(bundle_js())
    sel = alt.param(value=5, bind=alt.binding_range(min=0, max=5, step=1), name="state")
    chart = (alt.Chart(df).mark_line().encode(x="index:Q", y="mean:Q", color="seed:N")
             .add_params(sel).transform_filter(alt.datum.state == sel)
             .properties(width=600, height=300))  # fmt: skip
    spec = json.dumps(chart.to_dict())
    (out / "vega.html").write_text(
        f'<html><head><meta charset="utf-8"><script src="vega.js"></script></head><body>'
        f'<div id="v"></div><script>vegaEmbed("#v", {spec}, {{renderer: "svg", actions: false}})'
        ".then(() => { window.rendered = performance.now(); });</script></body></html>"
    )


def _bokeh(out: Path, df: pd.DataFrame) -> None:
    import bokeh
    from bokeh.embed import components
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, CustomJS, Slider
    from bokeh.plotting import figure

    js = Path(bokeh.__file__).parent / "server/static/js"
    for f in ("bokeh.min.js", "bokeh-widgets.min.js"):
        shutil.copy(js / f, out / f)
    full = {f"s{s}_t{t}": df[(df.seed == s) & (df.state == t)]["mean"].tolist()
            for s in range(5) for t in range(6)}  # fmt: skip
    p = figure(width=600, height=300)
    srcs = [ColumnDataSource(dict(x=list(range(75)), y=full[f"s{s}_t5"])) for s in range(5)]
    for s, src in enumerate(srcs):
        p.line("x", "y", source=src, color=COLORS[s])
    sl = Slider(start=0, end=5, value=5, step=1, title="training state")
    sl.js_on_change("value", CustomJS(args=dict(srcs=srcs, full=full), code=(
        "for (let s = 0; s < srcs.length; s++) { srcs[s].data = {x: srcs[s].data.x, "
        "y: full['s' + s + '_t' + cb_obj.value]}; }")))  # fmt: skip
    script, div = components(column(sl, p))
    (out / "bokeh.html").write_text(
        '<html><head><meta charset="utf-8"><script src="bokeh.min.js"></script>'
        f'<script src="bokeh-widgets.min.js"></script></head><body>{div}{script}<script>'
        "(function w() { if (window.Bokeh && Bokeh.index && Object.keys(Bokeh.index).length) "
        "window.rendered = performance.now(); else setTimeout(w, 5); })();</script></body></html>"
    )


def _plotly(out: Path, df: pd.DataFrame) -> None:
    import plotly
    import plotly.graph_objects as go

    shutil.copy(Path(plotly.__file__).parent / "package_data/plotly.min.js", out)
    full = {(s, t): df[(df.seed == s) & (df.state == t)]["mean"].tolist()
            for s in range(5) for t in range(6)}  # fmt: skip
    fig = go.Figure()
    for s in range(5):
        fig.add_trace(go.Scatter(x=list(range(75)), y=full[s, 5], mode="lines"))
    steps = [dict(method="restyle", args=[{"y": [full[s, t] for s in range(5)]}], label=str(t))
             for t in range(6)]  # fmt: skip
    fig.update_layout(sliders=[dict(active=5, steps=steps)], width=600, height=350)
    body = fig.to_html(full_html=False, include_plotlyjs=False, div_id="p")
    (out / "plotly.html").write_text(
        '<html><head><meta charset="utf-8"><script src="plotly.min.js"></script></head><body>'
        f"{body}<script>(function w() {{ if (document.querySelector('#p svg')) "
        "window.rendered = performance.now(); else setTimeout(w, 5); })();</script></body></html>"
    )


SCRIPTS = {"vega": ["vega.js"], "bokeh": ["bokeh.min.js", "bokeh-widgets.min.js"],
           "plotly": ["plotly.min.js"]}  # fmt: skip


def measure(out: Path, repeats: int = 7) -> dict[str, dict]:
    """Each library's script bytes, median time to its first drawing, SVG text and roles."""
    out.mkdir(parents=True, exist_ok=True)
    df = _data()
    for make in (_vega, _bokeh, _plotly):
        make(out, df)
    driver, results = chromium_driver(), {}
    try:
        for lib, scripts in SCRIPTS.items():
            times = []
            for _ in range(repeats):
                driver.get((out / f"{lib}.html").resolve().as_uri())
                t0 = time.time()
                while driver.execute_script("return window.rendered || null") is None:
                    if time.time() - t0 > 20:
                        break
                    time.sleep(0.01)
                times.append(driver.execute_script("return window.rendered || 1e9"))
            results[lib] = {
                "script_bytes": sum((out / s).stat().st_size for s in scripts),
                "first_drawing_ms": statistics.median(times),
                "svg_text": driver.execute_script(
                    "return document.querySelectorAll('svg text').length"
                ),  # fmt: skip
                "aria": driver.execute_script(
                    "return document.querySelectorAll('[aria-label],[role=graphics-document],"
                    "[role=img]').length"
                ),
            }
    finally:
        driver.quit()
    return results


if __name__ == "__main__":
    for lib, r in measure(Path(sys.argv[1] if len(sys.argv) > 1 else "view-bench")).items():
        print(lib, r)
