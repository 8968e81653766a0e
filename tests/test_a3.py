"""Chapters A2/A3 library pieces: multi-hop bounds, normalization variants, BatchNorm
evaluation statistics, verdict rules and the A2/A3 parameter specs."""
import numpy as np
import pytest
import torch

from normbook import batchstats, checks, multihop, verdicts
from normbook.models import CNNConfig, StackedCNN, set_batch_eval
from normbook.norms import make_norm
from normbook.params import ParameterError
from normbook.specs import A1, A2, A3
from normbook.training import TrainConfig


# ----------------------------------------------------------------------------- multi-hop

def test_hop_bounds_follow_the_recursion():
    r = multihop.radius_per_depth(5, 4)                       # floor(5/2) * d
    np.testing.assert_array_equal(r, [2, 4, 6, 8])
    np.testing.assert_array_equal(multihop.single_hop_reach(5, 4), [6, 12, 18, 24])
    d = np.arange(1, 5)
    np.testing.assert_array_equal(multihop.iterated_reach(5, 4), 2 * (d**2 + d + 1))  # r(d^2+d+1)
    assert multihop.iterated_reach(5, 4, factor=2.0)[0] == 2 * 2


@pytest.mark.parametrize("distance,hops", [(-1, 0), (8, 0), (9, 1), (24, 1), (25, 2), (40, 2), (41, 3)])
def test_hops_needed(distance, hops):
    assert multihop.hops_needed(distance, radius=8, factor=3.0) == hops


def test_compare_caps_bounds_at_the_middle_and_flags_excess():
    maps = np.zeros((3, 2, 41), dtype=bool)
    dist = np.minimum(np.arange(41), 40 - np.arange(41))
    maps[0, 0] = dist <= 2          # within R(1) = 2
    maps[2, 1] = True               # everything at depth 3 for model 1
    distances = multihop.probe_distances(maps, window=1, threshold=0.5)
    assert distances[0, 0] == 2 and distances[0, 1] == -1 and distances[2, 1] == 20
    rows = multihop.compare(distances, kernel=5, seq_len=41)
    assert rows[2]["iterated"] == 20.0                         # 2*13 = 26 capped at the middle
    assert rows[2]["beyond_single"] == [False, True]           # 20 > 3R(3) = 18
    assert rows[2]["beyond_iterated"] == [False, False]
    assert rows[0]["hops"] == [0, 0]


# ----------------------------------------------------------------------------- normalization variants

def test_group_norm_pools_within_groups_only():
    """G groups give G independent statistics: perturbing a channel moves its own group's
    outputs at every position, and leaves the other groups untouched."""
    norm = make_norm("group", 1, 8, groups=4)                  # groups of 2 channels
    x = torch.randn(2, 8, 12)
    x2 = x.clone()
    x2[:, 0, 5] += 3.0
    delta = (norm(x2) - norm(x)).abs().amax(dim=0)             # (channels, positions)
    assert (delta[1] > 1e-4).all()                             # same group, every position
    assert (delta[0, [0, 11]] > 1e-4).all()
    assert delta[2:].max() == 0.0                              # other groups: nothing


def test_group_norm_one_group_couples_every_channel_and_position():
    norm = make_norm("group", 1, 6, groups=1)
    x = torch.randn(3, 6, 10)
    x2 = x.clone()
    x2[:, 2, 7] -= 2.0
    delta = (norm(x2) - norm(x)).abs().amax(dim=0)
    assert (delta > 1e-5).all()
    ref = torch.nn.functional.group_norm(x, 1, norm.weight, norm.bias, eps=norm.eps)
    torch.testing.assert_close(norm(x), ref)


def _trained_batchnorm(seed=0):
    net = StackedCNN(CNNConfig(depth=3, width=4, kernel=3, norm="batch"), [seed])
    net.train()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _ in range(20):
            net(torch.randn(16, 1, 40, generator=g))
    net.eval()
    return net


def test_batchnorm_population_statistics_make_the_network_translation_equivariant():
    """Proposition C.1 applies to BatchNorm with population statistics (a fixed affine map),
    not to BatchNorm with minibatch statistics."""
    net = _trained_batchnorm()
    set_batch_eval(net, "population")
    assert checks.shift_check(net, 60, shift=4)[0] == 0.0
    set_batch_eval(net, "minibatch")
    assert checks.shift_check(net, 60, shift=4)[0] > 1e-4


def test_batchnorm_minibatch_with_one_sample_is_instance_norm_statistics():
    bn = make_norm("batch", 1, 4, batch_eval="minibatch")
    inn = make_norm("instance", 1, 4)
    bn.eval()
    x = torch.randn(1, 4, 15)
    torch.testing.assert_close(bn(x), inn(x), rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------- batch statistics

class _SharedOffset(torch.nn.Module):
    """Predictions = input + c * (one N(0,1) number per batch): samples in a batch move together,
    as they do when they share minibatch statistics."""

    def __init__(self, c):
        super().__init__()
        self.c, self.seeds, self.n_models = c, [0], 1

    def forward(self, x):
        b, m, length = x.shape
        shared = x.mean(dim=(0, 2), keepdim=True) * (b * length) ** 0.5
        return x + self.c * shared


@pytest.mark.parametrize("c,expected", [(0.0, 1.0), (1.0, (1 + 16) / 2)])
def test_design_effect_measures_within_batch_dependence(c, expected):
    b = 16
    entry = batchstats.evaluate_batches(_SharedOffset(c), 20, 16384, b, "minibatch")
    assert entry["bmean_count"].tolist() == [512, 512] and entry["out_count"].tolist() == [8192, 8192]
    np.testing.assert_allclose(entry["bmean_mean"], entry["out_mean"], rtol=1e-6, atol=1e-6)
    assert batchstats.design_effect(entry, b)[0] == pytest.approx(expected, rel=0.15)


def test_run_is_cached_and_shares_trained_models():
    cnn = CNNConfig(depth=2, width=4, kernel=3, norm="batch")
    tc = TrainConfig(seq_len=24, steps=3, batch_size=8)
    first = batchstats.run(cnn, tc, [0], 256, 16, "minibatch")
    again = batchstats.run(cnn, tc, [0], 256, 16, "minibatch")
    other_mode = batchstats.run(cnn, tc, [0], 256, 16, "population")
    assert not first.hit and again.hit and not other_mode.hit
    assert other_mode.meta["train_cache_hits"] == [True]       # same trained model
    np.testing.assert_array_equal(first["out_mean"], again["out_mean"])
    assert not np.array_equal(first["out_mean"], other_mode["out_mean"])


def test_boundary_fraction():
    loc = np.zeros(20, dtype=bool)
    loc[[0, 1, 19]] = True
    assert batchstats.boundary_fraction(loc, radius=2) == pytest.approx(3 / 4)


# ----------------------------------------------------------------------------- verdict rules

def test_verdict_rules():
    assert verdicts.transition_matches(0.55, 0.5, 0.62, 0.1) == verdicts.REPRODUCED
    assert verdicts.transition_matches(0.42, 0.5, 0.62, 0.1) == verdicts.PARTLY
    assert verdicts.transition_matches(0.2, 0.5, 0.62, 0.1) == verdicts.NOT
    assert verdicts.transition_matches(float("nan"), 0.5, 0.62, 0.1) == verdicts.NOT
    assert verdicts.grows_with_groups(0.8, 0.01, [True, True], [True, True]) == verdicts.REPRODUCED
    assert verdicts.grows_with_groups(0.8, 0.01, [True, True], [True, False]) == verdicts.PARTLY
    assert verdicts.grows_with_groups(0.3, 0.3, [True, False], [False, False]) == verdicts.PARTLY
    assert verdicts.grows_with_groups(-0.3, 0.3, [True, True], [True, True]) == verdicts.NOT
    assert verdicts.unless_control_fails(verdicts.NOT, control_ok=False) == verdicts.INCONCLUSIVE
    assert verdicts.unless_control_fails(verdicts.NOT, control_ok=True) == verdicts.NOT
    assert verdicts.unless_control_fails(verdicts.REPRODUCED, control_ok=False) == verdicts.REPRODUCED
    assert verdicts.beyond_null(0.3, 0.05, [0.1, 0.02], [1e-4, -2e-4])
    assert not verdicts.beyond_null(0.3, 1e-4, [0.1, 0.02], [1e-4, -2e-4])   # tiny slope
    assert not verdicts.beyond_null(0.08, 0.05, [0.1, 0.02], [1e-4, -2e-4])  # null-level fraction
    assert verdicts.chance_at_zero_overlap([0.4, 0.9]) == verdicts.REPRODUCED
    assert verdicts.chance_at_zero_overlap([0.4, 0.001]) == verdicts.PARTLY
    assert verdicts.overlap_enables(0.9, 1e-4, [0.95, 0.85]) == verdicts.PARTLY
    assert verdicts.overlap_enables(0.1, 0.5, [0.95, 0.95]) == verdicts.NOT


# ----------------------------------------------------------------------------- specs

def test_a2_a3_derive_their_localization_settings_from_a1():
    for profile in ("smoke", "cpu", "paper"):
        a1, a2, a3 = A1.resolve(profile), A2.resolve(profile), A3.resolve(profile)
        for name in A1.names:                               # the multi-hop section reuses A1's models
            assert a2[name] == a1[name], (profile, name)
        for name in ("kernel", "width", "steps", "lr", "batch_size", "alpha", "seeds", "n_eval",
                     "eval_batch_size", "distance_window", "distance_threshold", "probe_batches"):
            assert a3[name] == a1[name], (profile, name)
        assert a3.width in a3.group_counts                  # G = C, the InstanceNorm control
    # A3 trains sixteen models: at 'cpu' a shorter, shallower net than A1's (same optimizer
    # budget); at 'paper' its geometry is A1's, so A1's none/InstanceNorm models are reused.
    cpu, paper = A3.resolve("cpu"), A3.resolve("paper")
    assert (cpu.seq_len, cpu.depth) == (64, 4)
    assert (paper.seq_len, paper.depth) == (A1.resolve("paper").seq_len, A1.resolve("paper").depth)


@pytest.mark.parametrize("spec,overrides,match", [
    (A2, {"overlap_fracs": [0.0, 1.5]}, "parameter 'overlap_fracs'"),
    (A2, {"pack_kernel": 4}, "parameter 'pack_kernel': must be odd"),
    (A2, {"pack_head": "max"}, "parameter 'pack_head': must be one of"),
    (A2, {"hop_factor": 1.0}, "parameter 'hop_factor': must be > 1"),
    (A2, {"n_test": 3}, "parameter 'n_test'"),
    (A2, {"pack_seeds": []}, "parameter 'pack_seeds'"),
    (A2, {"transition_level": 0.3}, "parameter 'transition_level'"),
    (A3, {"group_counts": [1, 3]}, "parameter 'group_counts': every G must divide width=32"),
    (A3, {"bn_eval_batch_sizes": [8, 40000]}, "parameter 'bn_eval_batch_sizes'"),
    (A3, {"norm": "batch"}, "unknown parameter 'norm'"),
    (A3, {"seq_len": 16}, "parameter 'depth': receptive-field radius R"),
])
def test_a2_a3_bad_parameters_give_a_one_line_error(spec, overrides, match):
    with pytest.raises(ParameterError, match=match) as err:
        spec.resolve("cpu", **overrides)
    assert "\n" not in str(err.value)
