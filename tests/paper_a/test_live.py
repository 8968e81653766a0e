"""Live views: the generator both sides share, the weights exported from a network, the control
states the browser check sets, and, in headless Chromium, live.js's forward pass against
PyTorch's on the same weights and inputs (a planted difference must fail the check)."""

from __future__ import annotations

import base64
import importlib.util
import json
import shutil
from dataclasses import dataclass

import numpy as np
import pytest

from normbook.pages.live import LiveView
from normbook.pages.views import write_bundle
from normbook.paper_a import live
from normbook.paper_a.cached.cnn import CNNConfig, StackedCNN
from normbook.publish import browser, browser_live
from normbook.publish.project import ROOT


@dataclass
class Run:
    """What live.export reads of an evaluated run."""

    net: StackedCNN
    cnn: CNNConfig
    seeds: list
    seq_len: int


def _runs(seq_len: int = 24) -> dict:
    out = {}
    for label, norm, init in (("no norm", "none", "he"), ("InstanceNorm", "instance", "default")):
        cfg = CNNConfig(depth=2, width=4, kernel=3, norm=norm, init=init)
        out[label] = Run(StackedCNN(cfg, [0, 1]).eval(), cfg, [0, 1], seq_len)
    return out


def test_uniforms_are_mulberry32_as_live_js_computes_them():
    # first values of live.js's uniforms(0, 3) and uniforms(12345, 2), from Node
    assert live.uniforms(0, 3).tolist() == [0.26642920868471265, 0.0003297457005828619,
                                            0.2232720274478197]  # fmt: skip
    assert live.uniforms(12345, 2).tolist() == [0.9797282677609473, 0.3067522644996643]
    z = live.normals(3, 20_000)
    assert z.dtype == np.float32 and abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03


def test_inputs_are_what_their_names_say():
    noise = live.make_input("noise", 30, 5, 0, 3)
    assert np.array_equal(noise, live.normals(5, 30))
    assert np.all(live.make_input("constant", 30, 5, 0, 3) == noise[0])
    spike = live.make_input("spike", 30, 5, 7, 3)
    assert spike[7] == 1 and np.count_nonzero(spike) == 1
    assert np.array_equal(live.make_input("shifted", 30, 5, 4, 3), np.roll(noise, 4))
    zeroed = live.make_input("zeroed", 30, 5, 10, 3)
    assert np.all(zeroed[7:14] == 0) and np.array_equal(zeroed[14:], noise[14:])
    with pytest.raises(ValueError, match="input kind"):
        live.make_input("ramp", 30, 5, 0, 3)


def _state_key(name: str) -> str:
    """The state-dict key of a layout name: conv1.w -> convs.1.weight, head.b -> head.bias."""
    layer, kind = name.split(".")
    part = "head" if layer == "head" else f"{layer[:4]}s.{layer[4:]}"
    return f"{part}.{'weight' if kind == 'w' else 'bias'}"


def test_exported_weights_are_each_models_own():
    run = _runs()["InstanceNorm"]
    spec = live.export("InstanceNorm", run)
    assert spec["groups"] == [4, 4] and spec["radius"] == 2
    for i in range(2):
        flat = np.frombuffer(base64.b64decode(spec["weights"][i]), dtype="<f4")
        state, at = run.net.model_state(i), 0
        for name, shape in spec["layout"]:
            size = int(np.prod(shape))
            assert np.array_equal(flat[at : at + size], state[_state_key(name)].numpy().ravel())
            at += size
        assert at == flat.size


def test_a_network_the_page_cannot_run_is_refused():
    run = _runs()["no norm"]
    cfg = CNNConfig(depth=2, width=4, kernel=3, norm="batch")
    with pytest.raises(ValueError, match="live view runs"):
        live.export("BN", Run(StackedCNN(cfg, [0]).eval(), cfg, [0], run.seq_len))


def test_the_checks_move_every_control():
    runs = list(_runs().values())
    first = {"net": 0, "seed": 0, "kind": "noise", "input_seed": 0, "at": 24 >> 2,
             "j": 24 >> 1, "size": 1.0, "freeze": False}  # fmt: skip  # live.js's first state
    for freeze in (False, True):
        moved, now = set(), dict(first)
        for st in live.states(runs, 2, freeze=freeze):
            c = st.controls()
            moved |= {k for k in c if c[k] != now[k]}
            now = c
        controls = live.live_view("v", _runs(), "d", 2, freeze=freeze).payload["controls"]
        assert moved == set(controls) == set(live.CONTROLS) | ({"freeze"} if freeze else set())


def test_pytorch_moves_no_output_beyond_r_without_normalization():
    runs = _runs()
    st = live.State(0, 0, "noise", 1, 0, 12, 2.0)
    far = np.abs(np.arange(24) - 12) > 2
    assert np.all(np.asarray(live.expected(runs["no norm"], st)["delta"])[far] == 0)
    st = live.State(1, 0, "noise", 1, 0, 12, 2.0)
    assert np.abs(np.asarray(live.expected(runs["InstanceNorm"], st)["delta"])[far]).max() > 1e-4
    # frozen statistics: what reaches past R is the statistics' doing
    frozen = live.expected(runs["InstanceNorm"], live.State(1, 0, "noise", 1, 0, 12, 2.0, True))
    assert np.all(np.asarray(frozen["delta"])[far] == 0)
    x = live.make_input("noise", 24, 1, 0, 2)
    pair = live.predict_frozen(runs["InstanceNorm"], 0, x, x)
    assert np.abs(pair[0] - live.predict(runs["InstanceNorm"], 0, x[None])[0]).max() < 1e-5


def test_the_reach_rule_fails_either_way():
    none, inst = {"name": "no norm", "groups": [0, 0]}, {"name": "IN", "groups": [4, 4]}

    def last(beyond, freeze=False, kind="noise"):
        return {"beyond": beyond, "controls": {"freeze": freeze, "kind": kind}}

    assert browser_live._reach("w", none, last(0.0), "… 0, exactly …", 1e-4) == []
    assert browser_live._reach("w", none, last(1e-9), "", 1e-4)
    assert browser_live._reach("w", none, last(0.0), "3e-3", 1e-4)
    assert browser_live._reach("w", inst, last(2e-3), "", 1e-4) == []
    assert browser_live._reach("w", inst, last(5e-5), "", 1e-4)
    assert browser_live._reach("w", inst, last(5e-5, kind="spike"), "", 1e-4) == []  # see _reach
    assert browser_live._reach("w", none, last(1e-9, kind="spike"), "", 1e-4)
    assert browser_live._reach("w", inst, last(0.0, True), "0, exactly", 1e-4) == []
    assert browser_live._reach("w", inst, last(2e-3, True), "", 1e-4)


def test_one_seed_has_no_seed_control_and_zero_seeds_no_view():
    view = live.live_view("v", _runs(), "d", 1)
    assert "seed" not in view.payload["controls"]
    assert all(len(n["weights"]) == 1 for n in view.payload["nets"])
    assert {c["controls"]["seed"] for c in view.payload["checks"]} == {0}
    off = live.live_view("v", _runs(), "d", 0)
    assert isinstance(off, live.LiveOff) and "live_seeds" in off._repr_markdown_()


def test_a_payload_over_its_budget_is_refused(monkeypatch):
    monkeypatch.setattr("normbook.pages.live.MAX_PAYLOAD_BYTES", 100)
    with pytest.raises(ValueError, match="over the 100-byte budget"):
        LiveView("v", {"x": list(range(100))}, "d").payload_json()


needs_chromium = pytest.mark.skipif(
    not (shutil.which(browser.CHROMIUM) and shutil.which(browser.DRIVER))
    or importlib.util.find_spec("selenium") is None,
    reason="needs Debian's chromium and chromium-driver, and selenium",
)


def _page(tmp_path, view: LiveView):
    static = tmp_path / "_static"
    static.mkdir()
    for name in ("views.js", "live.js"):
        shutil.copy(ROOT / "book" / "_static" / name, static / name)
    write_bundle(static)
    page = tmp_path / "page.html"
    page.write_text('<!DOCTYPE html><html><head><meta charset="utf-8">'
                    '<script src="_static/views.js"></script></head><body>'
                    f"{view._repr_html_()}</body></html>")  # fmt: skip
    return page


@needs_chromium
def test_the_page_computes_what_pytorch_computes(tmp_path):
    view = live.live_view("t", _runs(), "two small networks", 2, freeze=True)
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir(), bad.mkdir()
    planted = json.loads(json.dumps(view.payload))
    planted["checks"][0]["pred"][5] += 3 * live.TOLERANCE  # PyTorch "said" something else
    driver = browser.chromium_driver()
    try:
        driver.get(_page(good, view).as_uri())
        problems, timings = browser_live.check_view(driver, 0)
        assert problems == []
        assert timings["first"] > 0 and timings["update"] > 0 and timings["controls"] == 8
        driver.get(_page(bad, LiveView("t", planted, "planted")).as_uri())
        problems, _ = browser_live.check_view(driver, 0)
    finally:
        driver.quit()
    assert len(problems) == 2 and "pred differs from PyTorch's" in problems[0]
    assert "drawn predictions differ" in problems[1]


def test_the_seeds_the_view_runs_are_said_in_words():
    assert live.seeds_text(5, [0, 1, 2, 3, 4]) == "every seed"
    assert live.seeds_text(1, [0, 1, 2, 3, 4]) == "1 of the 5 seeds"
