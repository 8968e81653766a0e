"""How the live views' runtime was chosen (:mod:`normbook.pages.live`): chapter A1's network
(d = 4, C = 32, k = 5, InstanceNorm, l = 75), exported with ``torch.onnx`` and run by ONNX
Runtime Web's wasm-only build, against ``_static/live.js`` running the same weights; each page
opened from ``file://`` in headless Chromium: script weight, time to the first result, time per
forward pass (a batch of two: an input and its nudged copy), and the export's agreement with
PyTorch.

    npm pack onnxruntime-web@1.31.1 && tar xzf onnxruntime-web-1.31.1.tgz   # in OUT
    python -m pip install --target /tmp/onnxpkgs onnx onnxscript onnxruntime  # not the book's
    PYTHONPATH=... python -m normbook.tools.live_bench OUT

Measured on 2026-12-06 (AMD EPYC Zen 3, family 25 model 1, 2 cores, a cold book build running
beside it; Chromium 156, three loads each, the first with an empty browser cache): ONNX Runtime
Web 14.9 MB of script and wasm (``ort.wasm.min.js`` 54 kB, ``ort-wasm-simd-threaded.wasm``
14.85 MB), first result after 605 ms (171-211 ms from the browser's cache), 1.1-2.5 ms per
pass; live.js 17 kB, first result after 144 ms (40-51 ms), 6.4-10.3 ms per pass. The export
matched PyTorch within 2e-6 (onnxruntime in Python), after three pitfalls: GroupNorm is
exported as Reshape -> InstanceNormalization -> Mul/Add, the dynamo exporter (the default)
puts the weights in an external ``.onnx.data`` file the page cannot mount, and the batch size
is fixed at export unless declared dynamic.
"""

from __future__ import annotations

import base64
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import torch

from normbook.paper_a import live
from normbook.paper_a.cached.cnn import CNNConfig, StackedCNN
from normbook.publish.browser import chromium_driver
from normbook.publish.project import ROOT

ORT_FILES = ("ort.wasm.min.js", "ort-wasm-simd-threaded.wasm", "ort-wasm-simd-threaded.mjs")
_TIMED = """
window.t0 = performance.now();
function timed(first, pass) {  // the first result (from the page's start), then 20 passes
  return Promise.resolve(first()).then(async y0 => {
    const t1 = performance.now();
    for (let k = 0; k < 20; k++) await pass();
    window.result = {first_ms: t1 - window.t0, run_ms: (performance.now() - t1) / 20, y0};
  });
}
"""
_ORT = """
const s = document.createElement("script"); s.src = "ort.wasm.min.js";
s.onload = async () => {
  ort.env.wasm.numThreads = 1; ort.env.wasm.wasmPaths = "./";
  const bytes = Uint8Array.from(atob(MODEL), c => c.charCodeAt(0));
  const sess = await ort.InferenceSession.create(bytes, {executionProviders: ["wasm"]});
  const x = new ort.Tensor("float32", new Float32Array(150).fill(0.5), [2, 1, 75]);
  const pass = () => sess.run({x});
  await timed(async () => (await pass()).y.data[0], pass);
};
document.head.appendChild(s);
"""
_LIVE = """
const s = document.createElement("script"); s.src = "live.js";
s.onload = () => {
  const L = window.normbookLive, w = L.unpack(SPEC, 0), x = new Float64Array(75).fill(0.5);
  const pass = () => { L.forward(SPEC, w, x, 1e-5); return L.forward(SPEC, w, x, 1e-5); };
  timed(() => pass()[0], pass);
};
document.head.appendChild(s);
"""


class _Run:
    def __init__(self, net, cfg):
        self.net, self.cnn, self.seeds, self.seq_len = net, cfg, [0], 75


def main(argv: list[str] | None = None) -> int:
    out = Path((argv if argv is not None else sys.argv[1:])[0]).resolve()
    import onnxruntime

    cfg = CNNConfig(depth=4, width=32, kernel=5, norm="instance")
    net = StackedCNN(cfg, [0]).eval()
    x = torch.full((2, 1, 75), 0.5)
    torch.onnx.export(net, (x,), out / "a1.onnx", dynamo=False, input_names=["x"],
                      output_names=["y"])  # fmt: skip
    y = onnxruntime.InferenceSession(out / "a1.onnx").run(None, {"x": x.numpy()})[0]
    agree = float(np.abs(y - net(x).detach().numpy()).max())
    for name in ORT_FILES:  # beside the page: the runtime looks for its wasm there
        shutil.copy(out / "package" / "dist" / name, out / name)
    shutil.copy(ROOT / "book" / "_static" / "live.js", out / "live.js")
    model = base64.b64encode((out / "a1.onnx").read_bytes()).decode()
    spec = json.dumps(live.export("IN", _Run(net, cfg)))
    pages = {"onnxruntime-web": _ORT.replace("MODEL", json.dumps(model)),
             "live.js": _LIVE.replace("SPEC", spec)}  # fmt: skip
    weights = {"onnxruntime-web": sum((out / n).stat().st_size for n in ORT_FILES),
               "live.js": (out / "live.js").stat().st_size}  # fmt: skip
    driver, results = chromium_driver(), {}
    try:
        for name, script in pages.items():
            page = out / f"{name}.html"
            page.write_text(f'<!DOCTYPE html><meta charset="utf-8"><script>{_TIMED}{script}'
                            "</script>")  # fmt: skip
            runs = []
            for _ in range(3):
                driver.get(page.as_uri())
                driver.set_script_timeout(60)
                runs.append(driver.execute_async_script(
                    "const done = arguments[0]; (function wait() { window.result ? "
                    "done(window.result) : requestAnimationFrame(wait); })();"))  # fmt: skip
            results[name] = {"script_bytes": weights[name], "runs": runs}
    finally:
        driver.quit()
    results["onnx_export_max_diff"] = agree
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
