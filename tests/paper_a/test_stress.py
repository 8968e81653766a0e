"""Chapter A4's stress tests: constant inputs, statistics interventions, hop bands, and the
verdict rules, each able to come out either way."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from normbook.grading.claims import Rise
from normbook.grading.verdicts import NOT_SHOWN, REFUTED, REPRODUCED
from normbook.paper_a.a4_stress import claims, text
from normbook.paper_a.a4_stress.spec import A4
from normbook.paper_a.cached import interventions
from normbook.paper_a.cached.cnn import CNNConfig, StackedCNN
from normbook.paper_a.grading.sesoi import SLOPE
from normbook.paper_a.measures import bands
from normbook.paper_a.measures.detector import Moments
from normbook.paper_a.runs import arch_runs, stress
from normbook.paper_a.runs.localization import Curve
from normbook.paper_a.runs.packnorm import Accuracy


def _net(norm="instance", kernel=3, depth=3, seeds=(0, 1)):
    torch.manual_seed(0)
    return StackedCNN(CNNConfig(depth=depth, width=4, kernel=kernel, norm=norm), list(seeds)).eval()


def _run(net, seq_len=30):
    return SimpleNamespace(
        net=net, seq_len=seq_len, name=net.cfg.label, radius=net.cfg.receptive_radius
    )


@pytest.mark.parametrize("norm", ["none", "instance", "layer"])
def test_constant_input_is_flat_beyond_R_and_differs_only_near_the_ends(norm):
    c = stress.constant_input(_run(_net(norm)), [0.0, 1.5, -2.0])
    assert c.out.shape == (3, 2, 30)
    assert np.all(c.interior_spread <= 1e-6)
    assert np.all(c.boundary_reach < c.radius)
    assert claims.constant_checks([c])[0].holds


def test_constant_check_fails_for_an_output_that_varies_inside():
    c = stress.constant_input(_run(_net()), [1.0])
    c.out[..., 15] += 0.5  # a bug: an interior index differs
    assert not claims.constant_checks([c])[0].holds


def _x(n=16, m=2, L=30):
    return torch.randn(n, m, L, generator=torch.Generator().manual_seed(1))


def test_interventions_restore_the_network_and_change_only_inside_the_block():
    net, x = _net(), _x()
    with torch.no_grad():
        before = net(x)
        pop = interventions.population_stats(net, 30, 64)
        for mode in interventions.MODES:
            with interventions.intervened(net, mode, [0, 1, 2], pop):
                assert not torch.allclose(net(x), before)
            assert torch.equal(net(x), before)


def test_interior_statistics_with_kernel_one_are_the_samples_own():
    """With k = 1 nothing touches the padding: the interior is every position."""
    net, x = _net(kernel=1), _x()
    with torch.no_grad(), interventions.intervened(net, "interior", [0, 1, 2]):
        out = net(x)
    assert torch.allclose(out, net(x), atol=1e-4)  # float summation order only


def test_shuffled_statistics_of_identical_samples_change_nothing():
    net = _net()
    x = _x(n=1).expand(8, -1, -1).contiguous()
    with torch.no_grad(), interventions.intervened(net, "shuffled", [0, 1, 2]):
        out = net(x)
    assert torch.allclose(out, net(x), atol=1e-4)  # float summation order only


def test_interventions_refuse_other_norms():
    with pytest.raises(ValueError, match="GroupNorm/InstanceNorm"):
        interventions.norm_layers(_net("none"))
    with pytest.raises(ValueError, match="intervention must be one of"):
        with interventions.intervened(_net(), "median", [0]):
            pass


def _bands(mean_fn, L=61, R=4, m=3, n=10_000):
    mean = np.stack([mean_fn(np.arange(L)) for _ in range(m)])
    mom = Moments(np.stack([mean, mean]), np.full((2, m, L), 0.1), np.array([n, n]))
    return bands.hop_bands(SimpleNamespace(out=mom, seq_len=L, radius=R, name="t"))


def test_hop_bands_of_a_ramp_are_one_and_of_a_one_hop_signal_fade():
    L, R = 61, 4
    ramp = _bands(lambda i: i / (L - 1))
    assert list(ramp.edges) == [4, 12, 20, 28]  # a last band under R wide is dropped
    assert np.allclose(ramp.slope, 1.0) and np.allclose(ramp.slope[:, 1] / ramp.slope[:, 0], 1.0)
    assert np.allclose(ramp.boundary, 1.0)

    # the signal climbs only within one hop (3R) of each end, flat in the middle
    def one_hop(i):
        d = np.minimum(i, L - 1 - i)
        return np.sign(i - (L - 1) / 2) * np.maximum(3 * R - d, 0) / (L - 1)

    hop = _bands(one_hop)
    assert np.allclose(hop.slope[:, 0], 1.0) and np.allclose(hop.slope[:, 1:], 0.0)
    assert np.allclose(hop.slope[:, 1] / hop.slope[:, 0], 0.0)


def _flat_curve(run):
    return SimpleNamespace(fractions=np.array([0.25, 0.5, 1.0]), runs=[run] * 3,
                           values=lambda m: np.array([np.asarray(m(run), float)] * 3))  # fmt: skip


def test_circular_training_is_a_check_and_its_flat_interior_an_equivalence_claim(fake_run, profile):
    flat = fake_run(profile["flat"], name="circular", jitter=0.0002)  # noise at its SE
    assert all(c.holds for c in claims.circular_trained_checks(flat, np.zeros(5)))
    assert not all(c.holds for c in claims.circular_trained_checks(flat, np.ones(5)))
    assert claims.circular_flat(flat).verdict == REPRODUCED
    sloped = fake_run(profile["ramp"], name="leaky")
    assert claims.circular_flat(sloped).verdict == REFUTED
    se = {m: {"all": np.full(5, 0.001)} for m in interventions.MODES}
    small = np.array([0.0005, -0.0003, 0.001, 0.0, -0.0008])
    sweep = SimpleNamespace(name="instance", slopes=lambda m, c: small, se=se)
    rows = claims.symmetric_interventions(sweep)
    assert len(rows) == 2 and all(v.verdict == REPRODUCED for v in rows)
    assert rows[0].claim.startswith("(ours) instance with") and rows[0].test.band
    sweep.slopes = lambda m, c: np.array([0.09, 0.08, 0.1, 0.07, 0.09])  # beyond the SESOI
    assert all(v.verdict == REFUTED for v in claims.symmetric_interventions(sweep))
    # seeds scattered as widely as the SESOI, each "not significant": no longer "flat"
    sweep.slopes = lambda m, c: np.array([0.06, -0.07, 0.01, 0.05, -0.04])
    sweep.se = {m: {"all": np.full(5, 0.02)} for m in interventions.MODES}
    noisy = claims.symmetric_interventions(sweep)
    assert all(v.verdict == NOT_SHOWN for v in noisy)
    assert "straddles" in noisy[0].grade.why and noisy[0].sesoi_text().startswith("± ")


def _sweep(base, after):
    return SimpleNamespace(
        baseline_slopes=np.array(base), slopes=lambda mode, cond: np.array(after)
    )


def test_interior_statistics_rule_goes_every_way(fake_run, profile):
    normed = fake_run(profile["one_hop"])
    base = [0.2, 0.18, 0.21, 0.19, 0.2]
    gone = [0.001, -0.01, 0.0, 0.01, -0.002]
    assert claims.interior_statistics(_sweep(base, gone), normed).verdict == REPRODUCED
    half = [0.1, 0.09, 0.11, 0.1, 0.12]  # half removed: below 90 %, but no kept states
    v = claims.interior_statistics(_sweep(base, half), normed)
    assert v.verdict == NOT_SHOWN and v.test.below() and "no kept states" in v.grade.why
    flat = _flat_curve(_sweep(base, half))  # the share removed no longer moves: refuted
    assert claims.interior_statistics(_sweep(base, half), normed, flat).verdict == REFUTED
    no_channel = fake_run(profile["boundary"])
    assert claims.interior_statistics(_sweep(base, gone), no_channel).verdict == NOT_SHOWN


def test_intervention_curve_ends_at_the_trained_networks_sweep(tiny_setup):
    setup = tiny_setup(seeds=(0, 1), steps=8, curve_fractions=[0.5])
    sweep = stress.interventions(setup, setup.chapter_cnn, 64, 32)
    c = stress.intervention_curve(setup, setup.chapter_cnn, 64, 32)
    removed = c.values(claims.interior_removed)
    assert c.fractions.tolist() == [0.5, 1.0] and removed.shape == (2, 2)
    np.testing.assert_array_equal(removed[-1], claims.interior_removed(sweep))
    assert not np.array_equal(c.runs[0].baseline_slopes, sweep.baseline_slopes)


def test_another_architecture_is_refuted_only_once_its_slope_stopped_rising(fake_run, profile):
    """The U-Net's and the 2-D CNN's row: a family that learned the ramp only near the ends is
    refuted when its interior slope gained less than half the SESOI from the state kept by half
    the budget to the end; while it may still be rising, or with no kept state, not shown."""
    norm = fake_run(profile["boundary"], name="group", seed=3)
    none = fake_run(profile["boundary"], name="none", seed=1)
    circ = fake_run(profile["flat"], name="circular", seed=2)

    def row(half):
        curve = None if half is None else Curve(norm.cnn, np.array([50, 100]), 100, [half, norm])
        return claims.architecture_localizes(arch_runs.Runs(norm, none, circ, curve), "x")

    flat = row(norm)
    assert flat.verdict == REFUTED and flat.test.high < SLOPE.value
    assert isinstance(flat.grade.rising, Rise) and flat.grade.rising.margin == SLOPE.value / 2
    assert "rising judged at 0.5 of the budget and the end" in flat.evidence
    lower = SimpleNamespace(slope_interior=np.asarray(norm.slope_interior) - 0.2)
    assert row(lower).verdict == NOT_SHOWN and "may still be rising" in row(lower).grade.why
    blocked = row(None)
    assert blocked.verdict == NOT_SHOWN and not blocked.grade.refutable
    assert "no kept states" in blocked.evidence


def _acc(per_overlap, full=0.99, n_test=4000, seeds=3):
    correct = np.array([[round(p * n_test)] * seeds for p in [*per_overlap, full]])
    o = list(range(0, 2 * len(correct), 2))
    return Accuracy(o, list(range(seeds)), correct, n_test, loss=np.zeros((1, len(o), seeds)))


def test_receptive_field_rule_goes_every_way():
    rng = np.random.default_rng(0)
    flat = _acc(0.5 + rng.normal(0, 0.004, 5))
    assert claims.receptive_field_rows({"pool": flat})[0].verdict == REPRODUCED
    rises = _acc([0.5, 0.6, 0.7, 0.8, 0.9])
    assert claims.receptive_field_rows({"pool": rises})[0].verdict == REFUTED
    few = _acc(0.5 + rng.normal(0, 0.004, 5), n_test=40, seeds=1)  # cannot tell 0.55 apart
    assert claims.receptive_field_rows({"centre": few})[0].verdict == NOT_SHOWN
    never = _acc([0.5] * 5, full=0.5)  # not even identical paths: the family never learned
    assert claims.receptive_field_rows({"pool": never})[0].verdict == NOT_SHOWN
    # the prose names the head whose check failed and the head that passed, both ways
    both = claims.receptive_field_rows({"pool": flat, "centre": never})
    held = text.rf_checks(both)
    assert "kernel 1, centre head failed its check" in held
    assert "kernel 1, pool head, trained alike, passed" in held
    assert text.rf_checks(both[:1]) == "every head passed its learning check"


def test_spec_refuses_impossible_geometries_before_compute():
    from normbook.runtime.params import ParameterError

    with pytest.raises(ParameterError, match="unet_len"):
        A4.resolve("smoke", unet_len=62)
    with pytest.raises(ParameterError, match="interventions replace"):
        A4.resolve("smoke", norm="batch")
