"""Paper B verdict rules and each chapter's ledger built from typed results: every rule has a
case where it must pass (reproduced), one where it must fail (not reproduced), and the
inconclusive case with 2 seeds (the smallest one-sided p, 1/4, cannot reach alpha)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from normbook.core.claims import ALPHA
from normbook.core.verdicts import INCONCLUSIVE, NOT, PARTLY, REPRODUCED
from normbook.paper_b import classify, reported, verdicts
from normbook.paper_b.analysis import ClusterConfig, Clusters, Sparsity, SparsityConfig

# seed-to-seed spread of 5 seeds, BN and no BN (paired differences vary by at most 0.015)
JITTER = {
    True: np.array([0.0, 0.01, -0.01, 0.02, -0.02]),
    False: np.array([0.005, -0.005, 0.0, 0.01, -0.01]),
}


def _per_seed(value: float, n: int = 5, bn: bool = True) -> np.ndarray:
    return value + JITTER[bn][:n]


# ----------------------------------------------------------------------------- contrasts


def test_contrasts_per_seed():
    v = np.array([[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 2.0, 2.0]])
    assert verdicts.layer_mean(v).tolist() == [2.5, 1.0]
    assert verdicts.deeper_half(v).tolist() == [3.5, 2.0]  # conv3-conv4 of 4
    thirteen = np.arange(13.0)[None, :]
    assert verdicts.deeper_half(thirteen).tolist() == [np.arange(6, 13).mean()]  # conv7-13
    assert verdicts.settling_layer(np.array([3, 12, 9, 10, 11]), 10, 1) == 3
    assert verdicts.settling_layer(np.array([10, 10, 3]), 10, 1) == 4  # last layer off
    assert verdicts.settling_layer(np.array([10, 10, 10]), 10, 0) == 1
    k = reported.N_CLASSES + reported.K_STAR_TOLERANCE
    assert verdicts.settling_layers(np.array([[k, k], [k + 1, k]])).tolist() == [1.0, 2.0]


def test_paired_direction_is_signed_the_claims_way():
    bn, nobn = _per_seed(1.0), _per_seed(2.0, bn=False)
    lower = verdicts.paired_direction(bn, nobn, "lower", "x")
    assert lower.effect == pytest.approx(1.0) and lower.p == pytest.approx(1 / 32)
    assert lower.null == "x: no BN − BN = 0" and lower.n == 5
    assert lower.low < 1.0 < lower.high  # the t interval over seeds
    higher = verdicts.paired_direction(bn, nobn, "higher", "x")
    assert higher.effect == pytest.approx(-1.0) and higher.p == 1.0
    assert higher.null == "x: BN − no BN = 0"
    with pytest.raises(ValueError, match="expect"):
        verdicts.paired_direction(bn, nobn, "sideways", "x")
    with pytest.raises(ValueError, match="one value per seed"):
        verdicts.paired_direction(bn, nobn[:4], "lower", "x")


# ----------------------------------------------------------------------------- rules


def test_accuracy_gain():
    verdict, test = verdicts.accuracy_gain(_per_seed(0.9), _per_seed(0.8, bn=False))
    assert verdict == REPRODUCED and test.p < ALPHA and test.effect == pytest.approx(0.1)
    # 4 of 5 seeds better: p = 2/32 > alpha
    assert verdicts.accuracy_gain([0.9, 0.9, 0.9, 0.9, 0.7], [0.8] * 5)[0] == NOT
    assert verdicts.accuracy_gain(_per_seed(0.8), _per_seed(0.9, bn=False))[0] == NOT
    verdict, test = verdicts.accuracy_gain(_per_seed(0.9, 2), _per_seed(0.8, 2, False))
    assert verdict == INCONCLUSIVE and test.min_p == 0.25


def test_all_of_needs_every_part():
    good = verdicts.paired_direction(_per_seed(1.0), _per_seed(2.0, bn=False), "lower", "a")
    bad = verdicts.paired_direction(_per_seed(2.0), _per_seed(1.0, bn=False), "lower", "b")
    verdict, test = verdicts.all_of([good, good])
    assert verdict == REPRODUCED and test.null == "a: no BN − BN = 0 and a: no BN − BN = 0"
    assert test.test == "all of 2 tests (largest p): paired sign-flip, one-sided, 5 seeds"
    verdict, test = verdicts.all_of([good, bad])
    assert verdict == NOT and test.p == 1.0 and test.effect == pytest.approx(-1.0)
    two = verdicts.paired_direction(_per_seed(1.0, 2), _per_seed(2.0, 2, False), "lower", "a")
    assert verdicts.all_of([two, two])[0] == INCONCLUSIVE


def test_matches_paper_compares_seed_intervals_with_the_tolerance():
    paper_bn, paper_nobn = (reported.TABLE1_ACCURACY["cifar10", bn] for bn in (True, False))
    near = dict(paper_bn=paper_bn, paper_nobn=paper_nobn)
    tight = np.array([0.0, 0.001, -0.001, 0.002, -0.002])
    verdict, test = verdicts.matches_paper(paper_bn + tight, paper_nobn + tight, **near)
    assert verdict == REPRODUCED
    assert np.isnan(test.p) and test.test.startswith("comparison with the paper's value")
    assert test.null == "paper: 85.99 % (BN), 79.435 % (no BN)"
    verdict, test = verdicts.matches_paper(0.55 + tight, 0.45 + tight, **near)
    assert verdict == NOT and test.effect == pytest.approx(0.45 - paper_nobn)
    assert verdicts.matches_paper(paper_bn + tight, 0.45 + tight, **near)[0] == PARTLY
    # 2 seeds near the paper: the t interval (t = 12.7) is wider than the band
    verdict, _ = verdicts.matches_paper([0.855, 0.865], [0.79, 0.80], **near)
    assert verdict == INCONCLUSIVE
    assert verdicts.band_position([0.5], 0.5, 0.02) == "straddles"  # one seed: no interval
    # below the paper's scale the absolute numbers cannot be tested
    verdict, _ = verdicts.matches_paper(paper_bn + tight, paper_nobn + tight, **near, profile="cpu")
    assert verdict == INCONCLUSIVE


def _sparsity_tests(n: int, mnist_way: float, cifar_way: float, acc_way: float):
    """The four parts of the signature claim, each with its claim-way effect sign."""
    mnist = verdicts.paired_direction(
        _per_seed(0.3, n), _per_seed(0.3 + mnist_way, n, False), "lower", "m"
    )
    cifar = verdicts.paired_direction(
        _per_seed(0.5 + cifar_way, n), _per_seed(0.5, n, False), "higher", "c"
    )
    acc = [verdicts.accuracy_gain(_per_seed(0.8 + acc_way, n), _per_seed(0.8, n, False))[1]] * 2
    return mnist, cifar, acc


def test_no_consistent_signature():
    verdict, test = verdicts.no_consistent_signature(*_sparsity_tests(5, 0.1, 0.1, 0.05))
    assert verdict == REPRODUCED and test.p == pytest.approx(1 / 32)
    assert test.null.count(" and ") == 1 and test.test.startswith("all of 2 tests")
    verdict, test = verdicts.no_consistent_signature(*_sparsity_tests(5, 0.1, 0.1, -0.05))
    assert verdict == PARTLY and test.p == pytest.approx(1 / 32)  # directions hold, gains not
    # the same direction on both datasets (a consistent signature)
    assert verdicts.no_consistent_signature(*_sparsity_tests(5, 0.1, -0.1, 0.05))[0] == NOT
    assert verdicts.no_consistent_signature(*_sparsity_tests(2, 0.1, 0.1, 0.05))[0] == INCONCLUSIVE


def test_settles_earlier_over_both_datasets():
    early, late = np.tile([3, 10, 10, 10], (5, 1)), np.tile([3, 3, 10, 10], (5, 1))
    test = verdicts.settles_earlier(early, late, "mnist")
    assert test.effect == 1.0 and test.p == pytest.approx(1 / 32)
    assert verdicts.all_of([test, test])[0] == REPRODUCED
    same = verdicts.settles_earlier(late, late, "cifar10")
    assert same.p == 1.0 and verdicts.all_of([test, same])[0] == NOT
    two = verdicts.settles_earlier(early[:2], late[:2], "mnist")
    assert verdicts.all_of([two, two])[0] == INCONCLUSIVE


def test_better_only_at_last():
    no = np.ones((5, 4)) + JITTER[False][:, None]
    worse_then_better = 1 + JITTER[True][:, None] + np.array([0.5, 0.5, 0.5, -0.5])
    verdict, test = verdicts.better_only_at_last(worse_then_better, no)
    assert verdict == REPRODUCED and test.effect == pytest.approx(0.5)
    assert "DBI(k*), mean over conv1–conv3: BN − no BN = 0" in test.null
    assert "DBI(k*), conv4: no BN − BN = 0" in test.null
    assert verdicts.better_only_at_last(worse_then_better - 1, no)[0] == NOT  # better mostly
    assert verdicts.better_only_at_last(worse_then_better[:2], no[:2])[0] == INCONCLUSIVE


# ----------------------------------------------------------------------------- checks


def _fake_models(cfgs: dict, seeds_bn=(0, 1), seeds_nobn=(0, 1)):
    return SimpleNamespace(
        trained={
            v: [SimpleNamespace(cfg=c, seed=s) for s in (seeds_bn if v.batchnorm else seeds_nobn)]
            for v, c in cfgs.items()
        }
    )


def test_seed_pairing_holds_for_the_chapters_configs_and_fails_when_pairing_breaks():
    from normbook.paper_b.specs import B1

    cfgs = classify.configs(B1.resolve("smoke")).configs
    checks = verdicts.seed_pairing(_fake_models(cfgs))
    assert len(checks) == 4 and all(c.holds for c in checks)
    assert "largest absolute BN − no BN difference 0 over the 10 initial" in checks[0].evidence
    broken = {**cfgs, ("mnist", False): dataclasses.replace(cfgs["mnist", False], init="pytorch")}
    assert [c.holds for c in verdicts.seed_pairing(_fake_models(broken))] == [
        False,
        True,
        True,
        True,
    ]
    other = {**cfgs, ("cifar10", False): dataclasses.replace(cfgs["cifar10", False], batch_size=16)}
    assert [c.holds for c in verdicts.seed_pairing(_fake_models(other))] == [
        True,
        True,
        True,
        False,
    ]
    swapped = verdicts.seed_pairing(_fake_models(cfgs, seeds_nobn=(1, 0)))
    assert not any(c.holds for c in swapped)


# ----------------------------------------------------------------------------- ledgers


def _accuracy(n: int, mnist_gain: float, cifar: tuple[float, float]) -> dict:
    return {
        ("mnist", True): _per_seed(0.98 + mnist_gain, n),
        ("mnist", False): _per_seed(0.98, n, False),
        ("cifar10", True): _per_seed(cifar[0], n),
        ("cifar10", False): _per_seed(cifar[1], n, False),
    }


def test_b1_ledger():
    tight = np.array([0.0, 0.001, -0.001, 0.002, -0.002])
    acc = _accuracy(5, 0.05, (0.8599, 0.79435))
    acc["cifar10", True], acc["cifar10", False] = 0.8599 + tight, 0.79435 + tight
    ledger = verdicts.b1_ledger(SimpleNamespace(accuracy=acc), "paper")
    assert [v.verdict for v in ledger] == [REPRODUCED] * 3
    assert ledger[2].claim == "Table 1: CIFAR-10 test accuracy 85.99 % (BN) and 79.435 % (no BN)"
    assert ledger[0].evidence == (
        "BN 85.99% ± 0.16%, no BN 79.43% ± 0.16% (mean ± sd over seeds); BN higher in 5 of 5 seeds"
    )
    assert ledger[2].evidence.startswith("ours, mean [90% CI] vs the paper's ± 2 points: BN 85.99%")
    assert ledger[2].evidence.endswith("inside; profile `paper`")
    row = ledger[0].row()
    assert row["test"] == "paired sign-flip, one-sided, 5 seeds; p = 0.0312"
    assert row["effect [90% CI]"].startswith("+6.55% [")
    ledger = verdicts.b1_ledger(SimpleNamespace(accuracy=_accuracy(5, -0.01, (0.4, 0.5))), "paper")
    assert [v.verdict for v in ledger] == [NOT] * 3
    ledger = verdicts.b1_ledger(SimpleNamespace(accuracy=_accuracy(5, -0.01, (0.4, 0.5))), "cpu")
    assert [v.verdict for v in ledger] == [NOT, NOT, INCONCLUSIVE]  # Table 1 needs `paper`
    ledger = verdicts.b1_ledger(SimpleNamespace(accuracy=_accuracy(2, 0.01, (0.86, 0.79))), "smoke")
    assert [v.verdict for v in ledger] == [INCONCLUSIVE] * 3


def _sparsity(n: int, mnist: tuple, cifar: tuple) -> Sparsity:
    """``n`` seeds; MNIST 4 layers, CIFAR-10 6; per dataset (BN, no BN) per-layer values."""
    arrays = {}
    for ds, (bn, nobn) in (("mnist", mnist), ("cifar10", cifar)):
        for flag, v in ((True, bn), (False, nobn)):
            arrays[ds, flag] = np.asarray(v, float)[None, :] + JITTER[flag][:n, None]
    names = {
        ds: [f"conv{i + 1}" for i in range(arrays[ds, True].shape[1])]
        for ds in ("mnist", "cifar10")
    }
    return Sparsity(SparsityConfig(), arrays, arrays, names, 4 * n, 0, 1.0)


def test_b2_ledger():
    paper_like = _sparsity(5, ([0.1] * 4, [0.3] * 4), ([0.6] * 6, [0.5] * 6))
    ledger = verdicts.b2_ledger(paper_like, _accuracy(5, 0.05, (0.6, 0.5)))
    assert [v.verdict for v in ledger] == [REPRODUCED] * 3
    assert ledger[0].test.null == "MNIST layer sparsity, mean over all conv layers: no BN − BN = 0"
    assert ledger[0].test.effect == pytest.approx(0.2)
    assert ledger[1].test.effect == pytest.approx(0.1)
    assert ledger[0].evidence == (
        "BN 0.100 ± 0.016, no BN 0.300 ± 0.008 (mean ± sd over seeds); BN lower in 5 of 5 seeds"
    )
    assert ledger[2].evidence == (
        "MNIST less sparse with BN: p = 0.0312; CIFAR-10 more sparse: p = 0.0312; "
        "BN more accurate: MNIST p = 0.0312, CIFAR-10 p = 0.0312"
    )
    assert verdicts.b2_ledger(paper_like, _accuracy(5, -0.05, (0.6, 0.5)))[2].verdict == PARTLY
    consistent = _sparsity(5, ([0.1] * 4, [0.3] * 4), ([0.2] * 6, [0.5] * 6))
    ledger = verdicts.b2_ledger(consistent, _accuracy(5, 0.05, (0.6, 0.5)))
    assert [v.verdict for v in ledger] == [REPRODUCED, NOT, NOT]
    two = _sparsity(2, ([0.1] * 4, [0.3] * 4), ([0.6] * 6, [0.5] * 6))
    assert [v.verdict for v in verdicts.b2_ledger(two, _accuracy(2, 0.05, (0.6, 0.5)))] == [
        INCONCLUSIVE
    ] * 3


def _clusters(n: int = 5, **override) -> Clusters:
    """``n`` seeds; MNIST 4 layers, CIFAR-10 6; BN equal to no BN and k* = 10 everywhere unless
    ``override`` gives ``{metric}_{dataset}`` as (BN, no BN) per-layer values (DBIs jittered
    per seed)."""
    layers = {"mnist": 4, "cifar10": 6}
    metrics = {m: {} for m in ("class_dbi", "k_star", "dbi_k_star", "dbi_fixed_k")}
    for m, per_variant in metrics.items():
        for ds, nl in layers.items():
            base = np.full(nl, 10.0 if m == "k_star" else 1.0)
            bn, no = override.get(f"{m}_{ds}", (base, base))
            for flag, v in ((True, bn), (False, no)):
                jitter = 0 if m == "k_star" else JITTER[flag][:n, None]
                per_variant[ds, flag] = np.asarray(v, float)[None, :] + jitter + np.zeros((n, 1))
    curve = {v: np.zeros((*a.shape, 5)) for v, a in metrics["k_star"].items()}
    names = {ds: [f"conv{i + 1}" for i in range(nl)] for ds, nl in layers.items()}
    return Clusters(
        ClusterConfig(k_min=2, k_max=20, fixed_k=10),
        *metrics.values(),
        curve,
        {},
        names,
        4 * n,
        0,
        1.0,
    )


LO, HI = 0.5, 2.0
PAPER_LIKE = dict(
    class_dbi_mnist=([HI, HI, LO, LO], [1] * 4),  # lower over the deeper half
    class_dbi_cifar10=([HI, HI, HI, LO, LO, LO], [1] * 6),
    k_star_mnist=([3, 10, 10, 10], [3, 3, 10, 10]),  # settles at layer 2 vs 3
    k_star_cifar10=([10] * 6, [3, 3, 3, 3, 3, 12]),  # settles at layer 1 vs 6
    dbi_k_star_cifar10=([1, 1, 1, LO, LO, LO], [1] * 6),
    dbi_k_star_mnist=([HI, HI, HI, LO], [1] * 4),  # worse except at the last layer
    dbi_fixed_k_mnist=([1, 1, LO, LO], [1] * 4),
    dbi_fixed_k_cifar10=([1, 1, 1, LO, LO, LO], [1] * 6),
)


def test_b3_ledger():
    ledger = verdicts.b3_ledger(_clusters(**PAPER_LIKE))
    assert [v.verdict for v in ledger] == [REPRODUCED] * 6
    assert ledger[0].test.null == "MNIST class-based DBI, mean over conv3–conv4: no BN − BN = 0"
    assert ledger[1].test.null.startswith("CIFAR-10 class-based DBI, mean over conv4–conv6")
    assert ledger[0].test.effect == pytest.approx(0.5)
    assert ledger[0].evidence == (
        "BN 0.50 ± 0.02, no BN 1.00 ± 0.01 (mean ± sd over seeds); BN lower in 5 of 5 seeds"
    )
    assert ledger[2].evidence == (
        "MNIST settling layer: BN 2.0 ± 0.0, no BN 3.0 ± 0.0 (mean ± sd over seeds); BN earlier "
        "in 5 of 5 seeds, p = 0.0312; CIFAR-10 settling layer: BN 1.0 ± 0.0, no BN 6.0 ± 0.0 "
        "(mean ± sd over seeds); BN earlier in 5 of 5 seeds, p = 0.0312"
    )
    assert ledger[4].evidence == (
        "BN higher over the other layers in 5 of 5 seeds, lower at the last layer in 5 of 5"
    )
    assert ledger[5].claim.startswith("At fixed k = 10,") and ledger[5].paper == "B (our check)"
    # nothing differs between BN and no BN: every claim fails
    assert [v.verdict for v in verdicts.b3_ledger(_clusters())] == [NOT] * 6
    # only one part of each two-part claim holds
    partial = {
        **PAPER_LIKE,
        "k_star_cifar10": ([10] * 6, [10] * 6),  # settles alike on CIFAR-10
        "dbi_k_star_mnist": ([LO] * 4, [1] * 4),  # better everywhere, not only at the last
        "dbi_fixed_k_cifar10": ([1] * 6, [1] * 6),
    }
    ledger = verdicts.b3_ledger(_clusters(**partial))
    assert [v.verdict for v in ledger] == [REPRODUCED, REPRODUCED, NOT, REPRODUCED, NOT, NOT]
    assert [v.verdict for v in verdicts.b3_ledger(_clusters(2, **PAPER_LIKE))] == [INCONCLUSIVE] * 6
