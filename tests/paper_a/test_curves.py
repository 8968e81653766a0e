"""Compute-to-effect curves, the budget calibration and batched evaluation."""

from dataclasses import asdict, replace

import numpy as np
import pytest
import torch

from normbook.grading.claims import Rise
from normbook.paper_a.cached import cache_keys as steps
from normbook.paper_a.cached import evaluation
from normbook.paper_a.calibration_page import budget
from normbook.paper_a.calibration_page.spec import BUDGET
from normbook.paper_a.grading import late
from normbook.paper_a.runs import batchstats, localization
from normbook.runtime.params import ParameterError


def test_curve_evaluates_kept_states_and_ends_at_the_trained_model(tiny_setup):
    setup = tiny_setup(seeds=(0, 1), steps=8, curve_fractions=[0.25, 0.5])
    cnn = setup.cnn("instance")
    c = localization.curve(setup, cnn)
    assert c.steps.tolist() == [2, 4, 8] and c.fractions.tolist() == [0.25, 0.5, 1.0]
    assert c.slope.shape == (3, 2) and c.frac.shape == (3, 2)
    same_n = replace(setup, eval=replace(setup.eval, n_samples=setup.curve_samples))
    final = localization.localize(same_n, cnn, with_probes=False)
    np.testing.assert_array_equal(c.slope[-1], final.slope_interior)
    # a kept state is a different network from the trained one
    early, _, _ = localization.trained(cnn, setup.train, [0, 1], at_step=2)
    late, _, _ = localization.trained(cnn, setup.train, [0, 1])
    w = "convs.1.weight"
    assert not torch.equal(early.model_state(0)[w], late.model_state(0)[w])
    with pytest.raises(ValueError, match="no state kept at step 3"):
        localization.trained(cnn, setup.train, [0], at_step=3)


def test_probe_curve_probes_the_late_states_and_leaves_the_output_curves_keys(tiny_setup):
    setup = tiny_setup(seeds=(0, 1), steps=8, curve_fractions=[0.25, 0.5])
    cnn = setup.cnn("instance")
    localization.curve(setup, cnn)
    # the outputs-only curve's entries are keyed as before the probes option existed
    ev = replace(setup.eval, n_samples=setup.curve_samples, probe_batches=0)
    for at in (2, 4, None):
        assert steps.EVAL.is_cached({
            "cnn": asdict(localization.training_identity(cnn)), "batch_eval": cnn.batch_eval,
            "train": asdict(setup.train), "eval": asdict(ev), "seeds": [0, 1],
            "probes": False, "at_step": at,
        })  # fmt: skip
    probed = localization.curve(setup, cnn, with_probes=True)
    # only what a late gain reads: the last state kept by half the budget, and the end
    assert list(probed.fractions) == [0.5, 1.0]
    assert [r.probe_distances.shape for r in probed.runs] == [(setup.depth, 2)] * 2
    assert not any(r.cache_hit for r in probed.runs)  # entries of their own
    assert isinstance(late.reach_rising(probed, 3.0), Rise)
    assert late.reach_rising(None, 3.0) is None


def test_batch_mean_curve_keeps_the_trained_runs_keys(tiny_setup):
    setup = tiny_setup(seeds=(0, 1), steps=8, curve_fractions=[0.5], n_eval=64)
    bn = setup.cnn("batch")
    c = batchstats.curve(setup, bn, 8)
    assert c.fractions.tolist() == [0.5, 1.0]
    assert c.values(batchstats.boundary_fractions).shape == (2, 2)
    # the kept state is another network than the trained one, evaluated alike
    assert not np.array_equal(c.runs[0].out.mean, c.runs[1].out.mean)
    key = {"cnn": asdict(localization.training_identity(bn)), "train": asdict(setup.train),
           "seeds": [0, 1], "n_samples": setup.curve_samples, "batch_size": 8,
           "mode": "minibatch", "padding": "zeros"}  # fmt: skip
    assert steps.BATCHSTATS.is_cached(key)  # the trained model's key has no at_step


def test_batched_evaluation_matches_one_batch_per_pass(monkeypatch, tiny_setup):
    # 16 samples x 24 indices per batch: draws in one pass equal draws batch by batch
    setup = tiny_setup(seeds=(0, 1), n_eval=128)
    net, _, _ = localization.trained(setup.cnn("instance"), setup.train, [0, 1])
    batched = evaluation.evaluate(net, 24, setup.eval, None)
    monkeypatch.setattr(evaluation, "EVAL_PASS_SAMPLES", setup.eval.batch_size)
    single = evaluation.evaluate(net, 24, setup.eval, None)
    for k in batched:
        np.testing.assert_allclose(batched[k], single[k], rtol=1e-5, atol=1e-6)


def test_candidates_share_the_sample_budget(tiny_setup):
    setup = tiny_setup(steps=8, batch_size=8)
    small = budget.setup_for(setup, budget.Candidate("onecycle", 1e-2, 4))
    assert (small.train.steps, small.train.batch_size, small.train.schedule) == (16, 4, "onecycle")
    with pytest.raises(ValueError, match="one entry per candidate"):
        budget.candidates(["constant"], [1e-3, 1e-2], [8])


def _state(slopes):
    """A kept state as a curve reads it: per-seed interior slopes and fractions."""
    from types import SimpleNamespace

    return SimpleNamespace(slope_interior=list(slopes), frac_interior=[0.0] * len(slopes))


def test_best_candidate_is_the_largest_slope_per_minute():
    def result(slope, seconds):
        c = localization.Curve(cnn=None, steps=np.array([5, 10]), total=10,
                               runs=[_state([0.0, 0.0]), _state([slope, slope])])  # fmt: skip
        return budget.Result(budget.Candidate("constant", 1e-3, 8), c, np.array([seconds] * 2))

    slow_big, fast_small = result(0.4, 120.0), result(0.3, 30.0)
    assert fast_small.slope_per_minute == pytest.approx(0.6)
    assert budget.best([slow_big, fast_small]) is fast_small
    assert fast_small.onset_minutes == pytest.approx(0.5)  # first kept state >= ONSET
    assert np.isnan(result(0.01, 30.0).onset_minutes)


def _final_only(seconds, batch=32, slope=0.0, schedule="constant"):
    """A candidate's result with one kept state (the end of its budget), one seed."""
    c = localization.Curve(None, np.array([10]), 10, [_state([slope])])
    return budget.Result(budget.Candidate(schedule, 1e-2, batch), c, np.array([float(seconds)]))


def test_timing_noise_cannot_rank_candidates_of_one_batch_size():
    """Same batch size = same arithmetic: both are charged their mean time, so the larger final
    slope wins even when its own run was measured slower."""
    steady = _final_only(72.0, slope=0.146, schedule="constant")
    lucky = _final_only(60.0, slope=0.129, schedule="onecycle")
    assert budget.best([steady, lucky]) is lucky  # raw measured minutes: the noise decides
    other = _final_only(10.0, batch=8, slope=0.2, schedule="cosine")
    charged = budget.charge_by_batch_size([steady, lucky, other])
    assert [r.charged_seconds for r in charged] == [66.0, 66.0, 10.0]
    assert budget.best(charged[:2]).candidate.schedule == "constant"
    assert charged[0].minutes[-1] == charged[1].minutes[-1] == pytest.approx(1.1)
    assert budget.timing_spread(charged) == (32, "20%")  # still reports the measured noise


def test_budget_study_runs_and_times_training(tiny_setup):
    setup = tiny_setup(seeds=(100,), steps=8, curve_fractions=[0.5])
    res = budget.study(setup, [budget.Candidate("constant", 1e-2, 8)])
    assert res[0].seconds[0] > 0 and res[0].minutes.shape == (2,)
    assert res[0].charged_seconds == pytest.approx(res[0].seconds.mean())


def test_calibration_refuses_the_chapters_seeds_and_ragged_candidates():
    with pytest.raises(ParameterError, match="must not use the chapters' seeds"):
        BUDGET.resolve("cpu", seeds=[0, 100])
    with pytest.raises(ParameterError, match="one entry per candidate"):
        BUDGET.resolve("cpu", cal_lrs=[1e-3])
    with pytest.raises(ParameterError, match="cal_schedules"):
        BUDGET.resolve("cpu", cal_schedules=["constant", "constant", "warmup", "constant"])


def test_setup_replace_keeps_checkpoints(tiny_setup):
    setup = tiny_setup(steps=8, curve_fractions=[0.5])
    assert replace(setup.train, steps=16).checkpoint_steps == [8]


def test_timing_spread_compares_candidates_of_equal_arithmetic():
    same = [_final_only(60, batch=32), _final_only(72, batch=32), _final_only(10, batch=16)]
    assert budget.timing_spread(same) == (32, "20%")
    batch, spread = budget.timing_spread([_final_only(60, batch=16)])
    assert batch == 16 and spread.startswith("– (") and "n/a" not in spread
