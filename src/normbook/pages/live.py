"""Live views: trained networks run in the reader's browser, offline and without a kernel.

An explorable view (:mod:`normbook.pages.views`) replays numbers the build computed; a live
view computes new ones. Its payload (the networks' weights, exported from the cache at build
time, and the checks the page is held to) travels as JSON in the page. ``_static/views.js``
loads the runtime, ``_static/live.js`` (a forward pass of conv -> norm -> ReLU in plain
JavaScript, a few kilobytes), and the Vega bundle the first time a reader opens the view; the
plots are Vega-Lite, updated in place as the controls move.

The runtime was chosen by measurement (:mod:`normbook.tools.live_bench`, chapter A1's network
from ``file://`` in headless Chromium): ONNX Runtime Web's wasm-only build is 14.9 MB and gave
its first result after 605 ms, live.js is 17 kB and gave it after 144 ms. ONNX Runtime is
faster per forward pass (1.1-2.5 ms against 6.4-10.3 ms), but an update needs at most 18 passes
and stays near 100 ms; exporting to ONNX has pitfalls (GroupNorm decomposed, external weight
files, fixed batch sizes), and live.js is one file that the browser check compares with PyTorch
on every build.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from normbook.pages.views import inline_json

MAX_PAYLOAD_BYTES = 2_500_000  # one live view's weights and checks (A5's four networks: 1.6 MB)


@dataclass(frozen=True, repr=False)
class LiveView:
    """One live view: its payload (``nets``, ``checks``, ...) and a description for screen
    readers."""

    name: str
    payload: dict
    description: str

    def __repr__(self) -> str:  # the notebook's plain-text output: not the weights
        nets = ", ".join(n["name"] for n in self.payload.get("nets", []))
        return f"<live view {self.name}: {nets}>"

    def payload_json(self) -> str:
        return inline_json(self.payload, MAX_PAYLOAD_BYTES,
                           f"live view {self.name!r}: its payload",
                           "export fewer networks or seeds (live_seeds)")  # fmt: skip

    def _repr_html_(self) -> str:
        return (
            f'<details class="nb-live" data-live="{html.escape(self.name)}">'
            "<summary>Run the trained networks here: pick a network, a seed and an input, "
            "and nudge one index</summary>"
            f'<div class="nb-live-body" role="figure" '
            f'aria-label="{html.escape(self.description)}"></div>'
            f'<script type="application/json" class="nb-live-data">{self.payload_json()}'
            "</script>"
            '<p class="nb-view-nojs">This view runs the networks in JavaScript, which is off '
            "here: the figures above show the build's results.</p></details>"
        )
