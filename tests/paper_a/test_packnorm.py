import math
from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from scipy import stats as sps

from normbook.grading import stats
from normbook.paper_a.cached import packnet
from normbook.paper_a.cached.packnet import PackConfig, PackNorm, PackTrainConfig, StackedPackNet
from normbook.paper_a.runs import localization, packnorm


def _affine(norm: PackNorm, n: int) -> None:
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(0.5, 2.0, n))
        norm.bias.copy_(torch.linspace(-1.0, 1.0, n))


def test_packnorm_is_instance_norm_of_the_two_paths_concatenated():
    torch.manual_seed(0)
    a, b = torch.randn(3, 2 * 4, 9), torch.randn(3, 2 * 4, 9) * 3 + 1
    pn = PackNorm(2, 4)
    _affine(pn, 8)
    ya, yb = pn(a, b)
    ref = F.instance_norm(torch.cat([a, b], dim=-1), weight=pn.weight, bias=pn.bias, eps=1e-5)
    torch.testing.assert_close(ya, ref[..., :9], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(yb, ref[..., 9:], rtol=1e-5, atol=1e-5)


def test_packnorm_with_the_same_input_on_both_paths_is_plain_instance_norm():
    torch.manual_seed(1)
    x = torch.randn(4, 6, 11) * 2 - 0.5
    pn = PackNorm(1, 6)
    _affine(pn, 6)
    ya, yb = pn(x, x)
    ref = F.instance_norm(x, weight=pn.weight, bias=pn.bias, eps=1e-5)
    torch.testing.assert_close(ya, ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(yb, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("coupled", [True, False])
def test_statistics_are_joint_only_when_coupled(coupled):
    torch.manual_seed(2)
    a, b = torch.randn(2, 4, 10), torch.randn(2, 4, 10)
    pn = PackNorm(1, 4, coupled=coupled)
    b2 = b.clone()
    b2[:, :, 3] += 4.0
    change_a = (pn(a, b2)[0] - pn(a, b)[0]).abs().max().item()
    if coupled:
        assert change_a > 1e-2  # path B moved the joint statistics, hence path A's output
    else:
        assert change_a == 0.0  # per-path InstanceNorm: path A cannot see path B


@pytest.mark.parametrize("coupling", ["pack", "separate"])
def test_in_the_network_only_packnorm_couples_the_paths(coupling):
    net = StackedPackNet(PackConfig(depth=3, width=4, kernel=3, coupling=coupling), [0])
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(5, 1, 7, generator=g), torch.randn(5, 1, 7, generator=g)
    with torch.no_grad():
        changed = (net(a, b) - net(a, torch.randn(5, 1, 7, generator=g))).abs().max().item()
    assert (changed > 1e-4) if coupling == "pack" else (changed == 0.0)


def test_stacked_models_equal_models_built_alone():
    cfg = PackConfig(depth=2, width=4, kernel=3)
    stacked = StackedPackNet(cfg, [3, 8])
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(6, 2, 7, generator=g), torch.randn(6, 2, 7, generator=g)
    with torch.no_grad():
        out = stacked(a, b)
        for i, seed in enumerate([3, 8]):
            alone = StackedPackNet(cfg, [seed])
            torch.testing.assert_close(
                alone(a[:, i : i + 1], b[:, i : i + 1]), out[:, i : i + 1], rtol=1e-5, atol=1e-5
            )


def test_overlapping_pairs_share_exactly_o_samples():
    L, o = 9, 4
    a, b, y = packnet.sample_pair(400, L, o, torch.Generator().manual_seed(0))
    pos, neg = y > 0, y == 0
    assert 100 < pos.sum() < 300
    assert torch.equal(b[pos, :o], a[pos, L - o :])  # b starts where a's last o samples are
    assert not torch.equal(
        b[pos, o : o + 1], a[pos, L - 1 : L]
    )  # ...and continues with fresh noise
    assert (b[neg, :o] - a[neg, L - o :]).abs().min() > 0  # independent: nothing shared
    full = packnet.sample_pair(50, L, L, torch.Generator().manual_seed(1))
    assert torch.equal(full[1][full[2] > 0], full[0][full[2] > 0])  # o = l': b is a


def _shared_tail_statistic(a, b, lag):
    """Mean product of a's last ``lag`` samples with b's first ``lag``: 1 on average when B
    overlaps A by ``lag``, 0 when they are independent."""
    return (a[:, -lag:] * b[:, :lag]).mean(dim=1).numpy()


@pytest.mark.parametrize("overlap,identical", [(0, True), (4, False)])
def test_classes_are_identically_distributed_only_without_overlap(overlap, identical):
    """At o = 0 no statistic of (a, b) separates the classes; with overlap one does."""
    L = 9
    a, b, y = packnet.sample_pair(6000, L, overlap, torch.Generator().manual_seed(2))
    pos, neg = (y > 0).numpy(), (y == 0).numpy()
    for lag in range(1, L + 1):
        s = _shared_tail_statistic(a, b, lag)
        p = sps.ks_2samp(s[pos], s[neg]).pvalue
        if identical:
            assert p > 1e-3, (lag, p)
        elif lag == overlap:
            assert p < 1e-6, (lag, p)
    # path A's own marginal is the same in both classes whatever the overlap
    assert sps.ks_2samp(a[pos].numpy().ravel(), a[neg].numpy().ravel()).pvalue > 1e-3


def test_overlap_out_of_range_is_rejected():
    with pytest.raises(ValueError, match="overlap must be in"):
        packnet.sample_pair(2, 5, 6, torch.Generator())


def test_training_is_seeded_and_learns_full_overlap_but_not_zero_overlap():
    cfg = PackConfig(depth=2, width=8, kernel=3)
    short = PackTrainConfig(path_len=5, steps=10, batch_size=64, lr=1e-2)
    losses = packnet.train_pack(cfg, short, [0, 5], [0, 0])[1].losses
    again = packnet.train_pack(cfg, short, [0, 5], [0, 0])[1].losses
    np.testing.assert_array_equal(losses, again)
    other = packnet.train_pack(cfg, short, [0, 5], [1, 1])[1].losses
    assert not np.array_equal(losses, other)
    tc = PackTrainConfig(path_len=5, steps=150, batch_size=64, lr=1e-2)
    net, _ = packnet.train_pack(cfg, tc, [0, 5], [0, 0])
    n = 4000
    correct = packnet.correct_counts(net, 5, [0, 5], n)
    assert stats.chance_pvalue(correct[0], n) > 1e-3  # o = 0: a coin
    assert correct[1] / n > 0.75  # o = l': easy


def test_accuracy_caches_each_model_and_reuses_it():
    cfg = PackConfig(depth=2, width=4, kernel=3)
    tc = PackTrainConfig(path_len=5, steps=5, batch_size=8, lr=1e-3)
    first = packnorm.accuracy(cfg, tc, [0, 3], [0], n_test=64)
    assert not any(first.train_cache_hits) and first.train_seconds > 0
    second = packnorm.accuracy(cfg, tc, [0, 3], [0, 1], n_test=64)  # seed 0 reused, 1 new
    assert second.train_cache_hits == [True, False, True, False]
    np.testing.assert_array_equal(second.correct[:, 0], first.correct[:, 0])
    third = packnorm.accuracy(cfg, tc, [0, 3], [0, 1], n_test=64)
    assert all(third.train_cache_hits) and third.train_seconds == 0.0
    np.testing.assert_array_equal(third.correct, second.correct)
    assert third.correct.shape == (2, 2) and third.loss.shape == (5, 2, 2)


def test_the_late_state_is_kept_and_tested_like_the_trained_models():
    """The state kept by half the budget is the one a stack trained only that far ends in, and
    it is tested on the same pairs as the trained models."""
    cfg = PackConfig(depth=2, width=4, kernel=3)
    tc = PackTrainConfig(path_len=5, steps=8, batch_size=8, lr=1e-2, checkpoints=(0.25, 0.5))
    assert tc.checkpoint_steps == [2, 4] and localization.late_step(tc) == 4
    end = packnorm.accuracy(cfg, tc, [0, 5], [0, 1], n_test=64)
    half = packnorm.accuracy(cfg, tc, [0, 5], [0, 1], n_test=64, at_step=4)
    assert half.at_step == 4 and all(half.train_cache_hits) and half.correct.shape == (2, 2)
    short = replace(tc, steps=4, checkpoints=())
    net, _ = packnet.train_pack(cfg, short, [0, 0, 5, 5], [0, 1, 0, 1])
    kept, *_ = packnorm.trained(cfg, tc, [0, 5], [0, 1], at_step=4)
    for k, v in net.state_dict().items():
        torch.testing.assert_close(kept.state_dict()[k], v, rtol=1e-5, atol=1e-6)
    counts = packnet.correct_counts(net, 5, [0, 0, 5, 5], 64)  # the same test pairs
    np.testing.assert_array_equal(half.correct.ravel(), counts)
    assert end.at_step is None and end.correct.shape == half.correct.shape
    with pytest.raises(ValueError, match="no state kept"):
        packnorm.trained(cfg, tc, [0, 5], [0, 1], at_step=3)


def test_wilson_interval_matches_the_formula():
    k, n, z = 37, 50, sps.norm.ppf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    lo, hi = stats.wilson(np.array([k]), n)
    assert lo[0] == pytest.approx(centre - half, rel=1e-6) and hi[0] == pytest.approx(
        centre + half, rel=1e-6
    )


def test_transition_overlap_interpolates_and_reports_none():
    assert packnorm.transition_overlap([0, 4, 8], [0.5, 0.7, 0.9], 0.75) == pytest.approx(5.0)
    assert math.isnan(packnorm.transition_overlap([0, 4, 8], [0.5, 0.6, 0.7], 0.75))
    assert packnorm.transition_overlap([2, 4], [0.8, 0.9], 0.75) == 2.0
    assert packnorm.overlap_grid(17, [0.0, 0.5, 1.0, 1.0]) == [0, 8, 17]


def test_bad_network_choices_are_rejected():
    with pytest.raises(ValueError, match="coupling"):
        StackedPackNet(PackConfig(2, 4, 3, coupling="both"), [0])
    with pytest.raises(ValueError, match="head"):
        StackedPackNet(PackConfig(2, 4, 3, head="max"), [0])


def test_correct_counts_do_not_depend_on_the_pass_size(monkeypatch):
    """The CPU slices a draw of test pairs into passes of CPU_PASS_ROWS rows: the same counts,
    to the bit, as one pass per draw (and a slice that does not divide the draw)."""
    cfg = PackConfig(depth=2, width=4, kernel=3)
    tc = PackTrainConfig(path_len=5, steps=20, batch_size=16, lr=1e-2)
    net, _ = packnet.train_pack(cfg, tc, [0, 3, 5], [0, 1, 2])
    counts = {}
    for rows in (10**9, 3 * 7, 3):  # one pass per draw; 7 pairs (not dividing 1,024); one pair
        monkeypatch.setattr(packnet, "CPU_PASS_ROWS", rows)
        counts[rows] = packnet.correct_counts(net, 5, [0, 3, 5], 3000)
    np.testing.assert_array_equal(counts[21], counts[10**9])
    np.testing.assert_array_equal(counts[3], counts[10**9])
