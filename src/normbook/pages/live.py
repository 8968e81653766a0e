"""Live views: trained networks run in the reader's browser, offline and without a kernel.

An explorable view (:mod:`normbook.pages.views`) replays numbers the build computed; a live
view computes new ones. Its payload (the networks' weights, exported from the cache at build
time, and the checks the page is held to) travels as JSON in the page. ``_static/views.js``
loads the runtime, ``_static/live.js`` (a forward pass of conv -> norm -> ReLU in plain
JavaScript, a few kilobytes), and the Vega bundle the first time a reader opens the view; the
plots are Vega-Lite, updated in place as the controls move.

The runtime was chosen by measurement: chapter A1's network (d = 4, C = 32, k = 5, InstanceNorm,
l = 75) exported with ``torch.onnx`` and run by ONNX Runtime Web 1.31.1's wasm-only build,
against live.js running the same weights, each page opened from ``file://`` in headless Chromium
156 three times (the first with an empty browser cache), on 2026-12-06 on an AMD EPYC Zen 3
(family 25 model 1, 2 cores, a cold book build beside it). The script that measured it has since
been removed: it needed packages the book does not install (onnx, onnxscript, onnxruntime, and
onnxruntime-web from npm) and nothing ran it; commit ec350b1, the one it measured, has it
(``src/normbook/tools/live_bench.py``). Its numbers: ONNX Runtime Web is 14.9 MB of script and
wasm and gave its first result after 605 ms (171-211 ms from the browser's cache); live.js is 17
kB and gave it after 144 ms (40-51 ms). ONNX Runtime is faster per forward pass (1.1-2.5 ms
against 6.4-10.3 ms), but an update needs at most 18 passes and stays near 100 ms; the export
matched PyTorch within 2e-6 only past three pitfalls (GroupNorm exported as Reshape ->
InstanceNormalization -> Mul/Add, the default dynamo exporter's external ``.onnx.data`` weight
file the page cannot mount, a batch size fixed at export unless declared dynamic), and live.js
is one file that the browser check compares with PyTorch on every build.
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
