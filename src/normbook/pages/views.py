"""Explorable figures: Vega-Lite views over a chapter's executed results, drawn in the reader's
browser with no kernel and no network.

A view is an Altair chart whose data are the numbers the chapter computed (never recomputed in
the browser). :func:`show` puts it on the page under its static figure as a closed
``<details>`` element: the spec travels as JSON in the page; ``_static/views.js`` loads the
Vega bundle (``_static/vega-bundle.js``, written once per site by :func:`write_bundle`, from
the pinned ``vl-convert-python``) the first time a reader opens a view, and draws it as SVG.
Without JavaScript, and in print, the static figure above it is the figure.

Vega-Lite was chosen by measurement (:mod:`normbook.tools.view_bench`): for one equivalent
view its bundle is 0.90 MB against Bokeh's 1.65 MB and Plotly's 4.82 MB, it drew first (162 ms
in headless Chromium, against 269 and 299 ms), and it renders SVG with ARIA roles (Bokeh draws
on a canvas with neither text nor roles).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path

BUNDLE = "vega-bundle.js"
MAX_SPEC_BYTES = 500_000  # one view's inline data (B3's CIFAR-10 view at 300 images: 361 kB)


@dataclass(frozen=True, repr=False)
class View:
    """One explorable view: a Vega-Lite spec, what the reader can change, and a description
    for screen readers."""

    name: str
    spec: dict
    controls: str  # e.g. "a slider over the training states and a seed selector"
    description: str

    def __repr__(self) -> str:  # the notebook's plain-text output: not the spec's data
        return f"<explorable view {self.name}: {self.controls}>"

    def spec_json(self) -> str:
        return inline_json(self.spec, MAX_SPEC_BYTES, f"view {self.name!r}: its spec",
                           "thin its data")  # fmt: skip

    def _repr_html_(self) -> str:
        return (
            f'<details class="nb-view" data-view="{html.escape(self.name)}">'
            f"<summary>Explore this figure: {html.escape(self.controls)}</summary>"
            f'<div class="nb-view-chart" role="figure" '
            f'aria-label="{html.escape(self.description)}"></div>'
            f'<script type="application/json" class="nb-view-spec">{self.spec_json()}</script>'
            '<p class="nb-view-nojs">This view is drawn by JavaScript, which is off here: the '
            "static figure above shows the same results.</p></details>"
        )


def inline_json(data, budget: int, what: str, fix: str) -> str:
    """``data`` as JSON to place inside a ``<script>`` element of the page, refused when over
    ``budget`` bytes (``what`` is over it; ``fix`` says what to do)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    if len(text) > budget:
        raise ValueError(f"{what} is {len(text):,} bytes, over the {budget:,}-byte budget of "
                         f"one view; {fix}")  # fmt: skip
    return text.replace("</", "<\\/")  # a "</script>" in a string cannot end the tag


def view(name: str, chart, controls: str, description: str) -> View:
    """A :class:`View` of an Altair ``chart`` (its data inline, any size: the spec budget
    guards page weight instead of Altair's row limit)."""
    import altair as alt

    with alt.data_transformers.disable_max_rows():
        spec = chart.to_dict()
    spec.pop("$schema", None)  # an address on another host; views.js names the mode instead
    return View(name, spec, controls, description)


def show(v: View) -> None:
    """Display a view in the chapter's output (placed where its cell is)."""
    from IPython.display import display

    display(v)


def round_floats(values, digits: int = 4) -> list[float]:
    """Values rounded for the page (a view shows shapes, not the seventh digit)."""
    return [float(f"{float(x):.{digits}g}") for x in values]


def bundle_js() -> str:
    """Vega, Vega-Lite and vega-embed in one classic script (vl-convert's bundle is an ES
    module, which browsers refuse to load from ``file://`` pages; wrapped in a function, its
    top-level names stay private and it sets ``window.vegaEmbed``)."""
    import vl_convert

    return "(function () {\n" + vl_convert.javascript_bundle() + "\n})();\n"


def write_bundle(static_dir: Path) -> Path:
    """Write :data:`BUNDLE` into a built site's ``_static`` (once: kept when present and
    from this vl-convert version)."""
    import vl_convert

    target = Path(static_dir) / BUNDLE
    stamp = target.with_suffix(".version")
    version = vl_convert.__version__ if hasattr(vl_convert, "__version__") else "?"
    if target.is_file() and stamp.is_file() and stamp.read_text() == version:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(bundle_js(), encoding="utf-8")
    tmp.replace(target)
    stamp.write_text(version)
    return target
