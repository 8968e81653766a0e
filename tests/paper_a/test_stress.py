"""Chapter A4's stress tests: constant inputs, statistics interventions, hop bands, and the
verdict rules, each able to come out either way."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from normbook.core.verdicts import INCONCLUSIVE, NOT, PARTLY, REPRODUCED
from normbook.paper_a import stress
from normbook.paper_a import stress_verdicts as sv
from normbook.paper_a.cnn import CNNConfig, StackedCNN
from normbook.paper_a.detector import Moments
from normbook.paper_a.packnorm import Accuracy
from normbook.paper_a.specs import A4


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
    assert sv.constant_checks([c])[0].holds


def test_constant_check_fails_for_an_output_that_varies_inside():
    c = stress.constant_input(_run(_net()), [1.0])
    c.out[..., 15] += 0.5  # a bug: an interior index differs
    assert not sv.constant_checks([c])[0].holds


def _x(n=16, m=2, L=30):
    return torch.randn(n, m, L, generator=torch.Generator().manual_seed(1))


def test_interventions_restore_the_network_and_change_only_inside_the_block():
    net, x = _net(), _x()
    with torch.no_grad():
        before = net(x)
        pop = stress.population_stats(net, 30, 64)
        for mode in stress.MODES:
            with stress.intervened(net, mode, [0, 1, 2], pop):
                assert not torch.allclose(net(x), before)
            assert torch.equal(net(x), before)


def test_interior_statistics_with_kernel_one_are_the_samples_own():
    """With k = 1 nothing touches the padding: the interior is every position."""
    net, x = _net(kernel=1), _x()
    with torch.no_grad(), stress.intervened(net, "interior", [0, 1, 2]):
        out = net(x)
    assert torch.allclose(out, net(x), atol=1e-4)  # float summation order only


def test_shuffled_statistics_of_identical_samples_change_nothing():
    net = _net()
    x = _x(n=1).expand(8, -1, -1).contiguous()
    with torch.no_grad(), stress.intervened(net, "shuffled", [0, 1, 2]):
        out = net(x)
    assert torch.allclose(out, net(x), atol=1e-4)  # float summation order only


def test_interventions_refuse_other_norms():
    with pytest.raises(ValueError, match="GroupNorm/InstanceNorm"):
        stress.norm_layers(_net("none"))
    with pytest.raises(ValueError, match="intervention must be one of"):
        with stress.intervened(_net(), "median", [0]):
            pass


def _bands(mean_fn, L=61, R=4, m=3, n=10_000):
    mean = np.stack([mean_fn(np.arange(L)) for _ in range(m)])
    mom = Moments(np.stack([mean, mean]), np.full((2, m, L), 0.1), np.array([n, n]))
    return stress.hop_bands(SimpleNamespace(out=mom, seq_len=L, radius=R, name="t"))


def test_hop_bands_of_a_ramp_are_one_and_of_a_one_hop_signal_fade():
    L, R = 61, 4
    ramp = _bands(lambda i: i / (L - 1))
    assert list(ramp.edges) == [4, 12, 20, 28]  # a last band under R wide is dropped
    assert np.allclose(ramp.slope, 1.0) and np.allclose(ramp.attenuation, 1.0)

    # the signal climbs only within one hop (3R) of each end, flat in the middle
    def one_hop(i):
        d = np.minimum(i, L - 1 - i)
        return np.sign(i - (L - 1) / 2) * np.maximum(3 * R - d, 0) / (L - 1)

    hop = _bands(one_hop)
    assert np.allclose(hop.slope[:, 0], 1.0) and np.allclose(hop.slope[:, 1:], 0.0)
    assert np.allclose(hop.attenuation, 0.0)


def _localized(values):
    return SimpleNamespace(
        frac_interior=list(values), slope_interior=list(values), name="n", per_seed=[]
    )


def test_boundary_rule_goes_both_ways():
    zero, flat = _localized([0.6, 0.7, 0.5, 0.8, 0.6]), _localized([0.1, 0.05, 0.1, 0.08, 0.1])
    assert sv.boundary_needed(zero, flat, flat).verdict == REPRODUCED
    assert sv.boundary_needed(flat, zero, flat).verdict == NOT


def _sweep(base, after):
    return SimpleNamespace(
        baseline_slopes=np.array(base), slopes=lambda mode, cond: np.array(after)
    )


def test_statistics_channel_rule_reproduced_partly_not():
    none = _localized([0.0, 0.01, -0.01, 0.0, 0.005])
    base = [0.2, 0.18, 0.21, 0.19, 0.2]
    collapsed = [0.001, -0.01, 0.0, 0.01, -0.002]
    assert sv.statistics_channel(_sweep(base, collapsed), none, "population").verdict == REPRODUCED
    half = [0.1, 0.09, 0.11, 0.1, 0.12]
    assert sv.statistics_channel(_sweep(base, half), none, "shuffled").verdict == PARTLY
    assert sv.statistics_channel(_sweep(base, base), none, "interior").verdict == NOT


def _acc(per_overlap, n_test=4000, seeds=3):
    correct = np.array([[round(p * n_test)] * seeds for p in per_overlap])
    o = list(range(0, 2 * len(per_overlap), 2))
    return Accuracy(o, list(range(seeds)), correct, n_test, loss=np.zeros((1, len(o), seeds)))


def test_receptive_field_rule_goes_every_way():
    rng = np.random.default_rng(0)
    flat = _acc(0.5 + rng.normal(0, 0.004, 6))
    assert sv.overlap_needs_rf(flat, 0.75)[0] == REPRODUCED
    assert sv.overlap_needs_rf(_acc([0.5, 0.6, 0.7, 0.8, 0.9, 0.95]), 0.75)[0] == NOT
    assert sv.overlap_needs_rf(_acc([0.5, 0.52, 0.55, 0.58, 0.6, 0.62]), 0.75)[0] == PARTLY
    few = _acc(0.5 + rng.normal(0, 0.004, 6), n_test=4, seeds=1)  # cannot tell 0.75 apart
    assert sv.overlap_needs_rf(few, 0.75)[0] == INCONCLUSIVE


def test_fading_rule_goes_both_ways():
    def bands(L, kept):
        return SimpleNamespace(seq_len=L, slope=np.ones((3, 2)), attenuation=np.array(kept))

    faster = [bands(75, [0.5, 0.45, 0.55]), bands(150, [0.1, 0.12, 0.08])]
    assert sv.fades_with_length(faster).verdict == REPRODUCED
    slower = [bands(75, [0.1, 0.12, 0.08]), bands(150, [0.5, 0.45, 0.55])]
    assert sv.fades_with_length(slower).verdict == NOT


def test_spec_refuses_impossible_geometries_before_compute():
    from normbook.core.params import ParameterError

    with pytest.raises(ParameterError, match="unet_len"):
        A4.resolve("smoke", unet_len=62)
    with pytest.raises(ParameterError, match="decay_lens"):
        A4.resolve("smoke", decay_lens=[20])
    with pytest.raises(ParameterError, match="interventions replace"):
        A4.resolve("smoke", norm="batch")


def test_persistence_rule_goes_every_way():
    def bands(first, second):
        slope = np.column_stack([first, second]) if second is not None else np.array(first)[:, None]
        return SimpleNamespace(slope=slope, attenuation=slope[:, -1] / slope[:, 0])

    first = [0.5, 0.55, 0.6, 0.52, 0.58]
    null = bands([0.001, -0.001, 0.002, 0.0005, -0.002], [0.001, -0.002, 0.0, 0.001, -0.001])
    kept = bands(first, [0.4, 0.45, 0.5, 0.41, 0.5])
    faded = bands(first, [0.01, 0.012, 0.009, 0.011, 0.013])
    assert sv.persists_beyond_hop(kept, null, null).verdict == REPRODUCED
    assert sv.persists_beyond_hop(faded, null, null).verdict == PARTLY
    assert sv.persists_beyond_hop(null, kept, kept).verdict == NOT
    assert sv.persists_beyond_hop(bands(first, None), null, null).verdict == INCONCLUSIVE
