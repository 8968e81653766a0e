"""Chapter B4's accuracy-matched comparison: training to a target accuracy replays the run and
keeps the closest check, the search window, which networks stop, and the checks that the
matched pair is the same run and matched."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from normbook.paper_b.b1_setup_accuracy.spec import B1
from normbook.paper_b.b4_stress import claims, matching
from normbook.paper_b.cached import training
from normbook.paper_b.runs import classify
from normbook.runtime import cache


@pytest.fixture(scope="module")
def tiny_run(patch_images, tiny_cfg):
    """A tiny MNIST-shaped run on synthetic images: config, splits and its full result."""
    x, y = patch_images(500, seed=1)
    raw = ((x[:, 0, 2:30, 2:30] - x.min()) / (x.max() - x.min()) * 255).astype(np.uint8)
    full = classify.Splits("mnist", raw[:400], y[:400], raw[:0], y[:0], raw[400:], y[400:],
                           "synthetic")  # fmt: skip
    cfg = tiny_cfg(optimizer="sgd", lr=0.05, momentum=0.9, max_epochs=3, patience=6,
                    n_train=300, n_val=100)  # fmt: skip
    splits = full.of(cfg)
    return cfg, splits, classify.train_one(cfg, 0, splits, show_progress=False)


def test_training_to_a_target_accuracy_replays_the_run_and_keeps_the_closest_check(tiny_run):
    cfg, splits, res = tiny_run
    target = float(np.sort(res.curves["val_acc"])[len(res.curves["val_acc"]) // 2])
    curves = {f"curve_{k}": v for k, v in res.curves.items()}
    full = classify.TrainedModel(cfg, 0, cache.Entry(curves))
    lo, hi = window = matching.match_window(full, target)
    r = int(np.argmax(res.curves["val_acc"] >= target))
    assert hi == res.curves["epoch"][r] and lo == (res.curves["epoch"][r - 1] if r else 0.0)

    def run(every):
        return classify.train_one(cfg, 0, splits, show_progress=False, until_val_acc=target,
                                  check_every=every, window=window)  # fmt: skip

    part = run(3)
    assert lo < part.reached_epoch <= hi
    n = len(part.curves["val_loss"])
    assert n == r + 1  # stopped at the window's end
    for c in ("train_loss", "val_loss", "val_acc"):  # the same run, bit for bit
        np.testing.assert_array_equal(part.curves[c], res.curves[c][:n])
    model = classify.model_from_state(cfg, part.state)
    va = training.evaluate(model, *splits.tensors("val"))[1]
    assert va == part.reached_val_acc  # the weights returned are the kept check's
    off = abs(part.reached_val_acc - target)
    assert off <= abs(res.curves["val_acc"][r] - target)  # the window's end is a candidate
    assert abs(run(1).reached_val_acc - target) <= off  # every step: a superset of candidates


def test_a_target_needs_a_window_that_reaches_it(tiny_run):
    cfg, splits, res = tiny_run
    with pytest.raises(ValueError, match="window"):
        classify.train_one(cfg, 0, splits, show_progress=False, until_val_acc=0.5, check_every=3)
    fake = _fake("mnist", True, 0, [0.5, 0.9], 2)
    assert matching.match_window(fake, 0.6) == (1.0, 2.0)
    assert matching.match_window(fake, 0.4) == (0.0, 1.0)
    with pytest.raises(ValueError, match="never reaches"):
        matching.match_window(fake, 0.95)


def _fake(ds, bn, seed, val_accs, best, stage=None):
    """A ``TrainedModel`` whose curves say its kept weights (at epoch ``best``) have accuracy
    ``val_accs[best - 1]``; with a ``stage``, stopped at its last evaluation."""
    cfg = replace(B1_CFGS[ds, bn])
    n = len(val_accs)
    curves = {"curve_epoch": np.arange(1.0, n + 1), "curve_val_acc": np.asarray(val_accs, float),
              "curve_val_loss": -np.asarray(val_accs, float),
              "curve_train_loss": 2 - 0.1 * np.arange(n)}  # fmt: skip
    meta = {"best_epoch": float(best), "test_acc": 0.0}
    if stage:
        meta |= {"reached_epoch": float(n), "reached_val_acc": float(val_accs[-1])}
    return classify.TrainedModel(cfg, seed, cache.Entry(curves, meta=meta), stage or {})


B1_CFGS = classify.Setup.from_params(B1.resolve("smoke")).configs


def test_match_plan_stops_the_more_accurate_network_at_the_lower_accuracy():
    models = classify.Models({
        ("mnist", True): [_fake("mnist", True, 0, [0.5, 0.9], 2),
                          _fake("mnist", True, 1, [0.4, 0.5], 2)],
        ("mnist", False): [_fake("mnist", False, 0, [0.6, 0.5], 1),
                           _fake("mnist", False, 1, [0.5, 0.7], 2)],
    }, {})  # fmt: skip
    target, todo = matching.match_plan(models, ["mnist"])
    np.testing.assert_array_equal(target["mnist"], [0.6, 0.5])
    assert todo == [(("mnist", True), 0), (("mnist", False), 1)]


def test_matched_checks_fail_for_another_run_or_an_unmatched_pair():
    def matched(stopped, other):
        kept = _fake("mnist", True, 0, [0.5, 0.7, 0.9], 3)
        m = classify.Models({("mnist", True): [stopped], ("mnist", False): [other]}, {})
        k = classify.Models({("mnist", True): [kept], ("mnist", False): [other]}, {})
        return matching.Matched(m, k, {"mnist": np.array([0.7])}, None, None)

    stage = {"until_val_acc": 0.7, "check_every": 1}
    other = _fake("mnist", False, 0, [0.6, 0.7], 2)
    good = claims.matched_checks(
        matched(_fake("mnist", True, 0, [0.5, 0.7], 2, stage), other), 0.01
    )
    assert [c.holds for c in good] == [True, True]
    rerun = _fake("mnist", True, 0, [0.5, 0.7], 2, stage)
    rerun.entry["curve_train_loss"] = rerun.entry["curve_train_loss"] + 1e-12  # not the run
    rerun_checks = claims.matched_checks(matched(rerun, other), 0.01)
    assert [c.holds for c in rerun_checks] == [False, True]
    overshoot = _fake("mnist", True, 0, [0.5, 0.7], 2, stage)  # its curve is the full run's,
    overshoot.entry.meta["reached_val_acc"] = 0.75  # but it stopped at a check above 0.7
    overshoot_checks = claims.matched_checks(matched(overshoot, other), 0.01)
    assert [c.holds for c in overshoot_checks] == [True, False]


def test_matched_checks_hold_when_no_pair_needed_a_replay():
    """Equal kept accuracies: nothing is replayed, so nothing can fail to retrace (it is no
    bug), and the pair is matched."""
    m = classify.Models({("mnist", bn): [_fake("mnist", bn, 0, [0.5, 0.7], 2)]
                         for bn in (True, False)}, {})  # fmt: skip
    checks = claims.matched_checks(
        matching.Matched(m, m, {"mnist": np.array([0.7])}, None, None), 0.01
    )
    assert [c.holds for c in checks] == [True, True]
    assert "no network needed a replay" in checks[0].evidence
