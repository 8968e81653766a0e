"""Paper B verdict rules, and each chapter's ledger built from typed results: every grade
of every claim comes out for some input."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from normbook.core.verdicts import NOT, PARTLY, REPRODUCED
from normbook.paper_b import reported, verdicts
from normbook.paper_b.analysis import ClusterConfig, Clusters, Sparsity, SparsityConfig


def test_verdict_rules():
    bn = np.array([[0.1, 0.2, 0.3], [0.1, 0.2, 0.5]])
    no = np.array([[0.2, 0.1, 0.4], [0.2, 0.1, 0.4]])
    assert verdicts.layer_direction(bn, no, "lower").tolist() == [True, False, False]
    assert verdicts.layer_direction(bn, no, "higher").tolist() == [False, True, False]
    assert verdicts.direction_grade(np.array([True, True])) == REPRODUCED
    assert verdicts.direction_grade(np.array([True, True, False])) == PARTLY
    assert verdicts.direction_grade(np.array([True, False])) == NOT
    assert verdicts.accuracy_gain([0.9, 0.91], [0.8, 0.85]) == REPRODUCED
    assert verdicts.accuracy_gain([0.9, 0.8], [0.85, 0.84]) == PARTLY
    assert verdicts.accuracy_gain([0.8], [0.85]) == NOT
    assert verdicts.settling_layer(np.array([3, 12, 9, 10, 11]), 10, 1) == 3
    assert verdicts.settling_layer(np.array([10, 10, 3]), 10, 1) == 4
    assert verdicts.settling_layer(np.array([10, 10, 10]), 10, 0) == 1
    ok, b, n = verdicts.settles_earlier(
        np.array([[10, 10], [2, 10]]), np.array([[2, 10], [2, 2]]), 10, 1
    )
    assert ok and (b, n) == (1.5, 2.5)
    with pytest.raises(ValueError):
        verdicts.layer_direction(bn, no, "sideways")
    assert verdicts.majority_direction(bn, no) == "mixed"  # 1 lower, 1 higher, 1 equal
    assert verdicts.majority_direction(no, no + 1) == "lower"
    assert verdicts.majority_direction(no + 1, no) == "higher"
    assert verdicts.no_consistent_signature("lower", "higher", True) == REPRODUCED
    assert verdicts.no_consistent_signature("higher", "lower", False) == PARTLY
    assert verdicts.no_consistent_signature("mixed", "lower", True) == PARTLY
    assert verdicts.no_consistent_signature("lower", "lower", True) == NOT
    assert verdicts.matches_paper(0.85, 0.80, 0.8599, 0.79435) == REPRODUCED
    assert verdicts.matches_paper(0.55, 0.48, 0.8599, 0.79435) == PARTLY  # gap 7 vs 6.6
    assert verdicts.matches_paper(0.55, 0.30, 0.8599, 0.79435) == NOT  # gap 25 points
    assert verdicts.matches_paper(0.50, 0.52, 0.8599, 0.79435) == NOT  # reversed


def test_deeper_half_and_contrast():
    assert verdicts.deeper_half(np.arange(4)).tolist() == [2, 3]
    assert verdicts.deeper_half(np.arange(13)).tolist() == list(range(6, 13))
    c = verdicts.Contrast.of(
        {
            ("x", True): [[1.0, 5.0, 2.0], [3.0, 5.0, 4.0]],
            ("x", False): [[2.0, 4.0, 9.0], [2.0, 4.0, 9.0]],
        },
        "x",
    )
    assert c.lower.tolist() == [False, False, True] and c.higher.tolist() == [False, True, False]
    assert c.deeper_lower.tolist() == [False, True]
    assert c.mean_bn == pytest.approx(10 / 3) and c.diff == pytest.approx(10 / 3 - 5)
    assert c.last == (3.0, 9.0) and c.direction == "mixed"
    k = verdicts.Contrast.per_dataset(
        {
            (ds, bn): [[3, 10, 10]] if bn else [[3, 3, 10]]
            for ds in ("mnist", "cifar10")
            for bn in (True, False)
        }
    )
    assert list(k) == ["mnist", "cifar10"] and k["cifar10"].settling == (True, 2.0, 3.0)


def test_better_only_at_last_and_deeper_lower_everywhere():
    assert verdicts.better_only_at_last(np.array([False, False, True])) == REPRODUCED
    assert verdicts.better_only_at_last(np.array([True, False, True])) == PARTLY
    assert verdicts.better_only_at_last(np.array([False, False, False])) == NOT
    every, most, few = np.array([True, True]), np.array([True, True, False]), np.array([False])
    assert verdicts.deeper_lower_everywhere([every, every]) == REPRODUCED
    assert verdicts.deeper_lower_everywhere([every, most]) == PARTLY
    assert verdicts.deeper_lower_everywhere([few, np.array([True, False])]) == NOT


# ----------------------------------------------------------------------------- ledgers


def test_b1_ledger_grades_and_evidence():
    def models(m_bn, m_no, c_bn, c_no):
        return SimpleNamespace(
            accuracy={
                ("mnist", True): np.array(m_bn),
                ("mnist", False): np.array(m_no),
                ("cifar10", True): np.array(c_bn),
                ("cifar10", False): np.array(c_no),
            }
        )

    ledger = verdicts.b1_ledger(
        models([0.99, 0.98], [0.97, 0.96], [0.86, 0.87], [0.79, 0.80]), "paper"
    )
    assert [v.verdict for v in ledger] == [REPRODUCED] * 3
    assert ledger[2].claim == "Table 1: CIFAR-10 test accuracy 85.99 % (BN) and 79.435 % (no BN)"
    assert ledger[0].evidence == "BN 86.50% ± 0.71%, no BN 79.50% ± 0.71%"
    assert ledger[2].evidence == "ours 86.50% / 79.50%, profile `paper`"
    # overlapping seeds; a gap of the paper's sign and size, far from its values
    ledger = verdicts.b1_ledger(models([0.5, 0.9], [0.6, 0.7], [0.55, 0.55], [0.48, 0.48]), "cpu")
    assert [v.verdict for v in ledger] == [REPRODUCED, PARTLY, PARTLY]
    ledger = verdicts.b1_ledger(models([0.5, 0.6], [0.6, 0.7], [0.4, 0.4], [0.5, 0.5]), "cpu")
    assert [v.verdict for v in ledger] == [NOT, NOT, NOT]


def _sparsity(mnist_bn, mnist_no, cifar_bn, cifar_no) -> Sparsity:
    arrays = {
        ("mnist", True): mnist_bn,
        ("mnist", False): mnist_no,
        ("cifar10", True): cifar_bn,
        ("cifar10", False): cifar_no,
    }
    arrays = {v: np.array(a, float) for v, a in arrays.items()}
    names = {
        ds: [f"conv{i + 1}" for i in range(arrays[ds, True].shape[1])]
        for ds in ("mnist", "cifar10")
    }
    return Sparsity(SparsityConfig(), arrays, arrays, names, 8, 0, 1.0)


def test_b2_ledger_grades_and_evidence():
    better = {
        (ds, bn): np.array([0.9 if bn else 0.8])
        for ds in ("mnist", "cifar10")
        for bn in (True, False)
    }
    paper_like = _sparsity([[0.1, 0.2]], [[0.3, 0.4]], [[0.6, 0.6, 0.2]], [[0.5, 0.5, 0.5]])
    ledger = verdicts.b2_ledger(paper_like, better)
    assert [v.verdict for v in ledger] == [REPRODUCED, PARTLY, REPRODUCED]
    assert ledger[0].evidence == ("BN lower in 2/2 layers; mean difference -0.200 (channel -0.200)")
    assert ledger[2].evidence == (
        "BN sparsity vs no BN, majority of layers: MNIST lower, "
        "CIFAR-10 higher; BN more accurate on both: yes"
    )
    worse = {**better, ("mnist", True): np.array([0.1])}
    assert verdicts.b2_ledger(paper_like, worse)[2].verdict == PARTLY
    consistent = _sparsity([[0.1, 0.1]], [[0.5, 0.5]], [[0.2, 0.2, 0.2]], [[0.5, 0.5, 0.5]])
    assert [v.verdict for v in verdicts.b2_ledger(consistent, better)] == [REPRODUCED, NOT, NOT]


def _clusters(**override) -> Clusters:
    """Two seeds; MNIST 4 layers, CIFAR-10 6; BN equal to no BN and k* = 10 everywhere unless
    ``override`` gives ``{metric}_{dataset}`` as (BN, no BN) per-layer means."""
    layers = {"mnist": 4, "cifar10": 6}
    metrics = {m: {} for m in ("class_dbi", "k_star", "dbi_k_star", "dbi_fixed_k")}
    for m, per_variant in metrics.items():
        for ds, n in layers.items():
            base = np.full(n, 10.0 if m == "k_star" else 1.0)
            bn, no = override.get(f"{m}_{ds}", (base, base))
            per_variant[ds, True] = np.tile(np.asarray(bn, float), (2, 1))
            per_variant[ds, False] = np.tile(np.asarray(no, float), (2, 1))
    curve = {v: np.zeros((*a.shape, 5)) for v, a in metrics["k_star"].items()}
    names = {ds: [f"conv{i + 1}" for i in range(n)] for ds, n in layers.items()}
    return Clusters(
        ClusterConfig(k_min=2, k_max=20, fixed_k=10), *metrics.values(), curve, names, 8, 0, 1.0
    )


def test_b3_ledger_grades_every_claim():
    assert [v.verdict for v in verdicts.b3_ledger(_clusters())] == [NOT] * 6
    lo, hi = 0.5, 2.0
    ledger = verdicts.b3_ledger(
        _clusters(
            class_dbi_mnist=([hi, hi, lo, lo], [1] * 4),  # lower in both deeper layers
            class_dbi_cifar10=([1, 1, 1, lo, lo, hi], [1] * 6),  # lower in 2 of 3 deeper
            k_star_mnist=([3, 10, 10, 10], [3, 3, 10, 10]),  # settles at 2 vs 3
            dbi_k_star_cifar10=([1, 1, 1, lo, lo, lo], [1] * 6),
            dbi_k_star_mnist=([hi, hi, hi, lo], [1] * 4),  # worse except the last layer
            dbi_fixed_k_mnist=([1, 1, lo, lo], [1] * 4),
            dbi_fixed_k_cifar10=([1, 1, 1, lo, lo, lo], [1] * 6),
        )
    )
    assert [v.verdict for v in ledger] == [
        REPRODUCED,
        PARTLY,
        PARTLY,
        REPRODUCED,
        REPRODUCED,
        REPRODUCED,
    ]
    assert ledger[0].evidence == "BN lower in 2/2 deeper layers, 2/4 overall"
    assert ledger[2].evidence == (
        "mnist: settles at layer 2.0 (BN) vs 3.0 (no BN); cifar10: "
        "settles at layer 1.0 (BN) vs 1.0 (no BN)"
    )
    assert ledger[4].evidence == "BN lower at the last layer: yes; BN higher in 3/3 other layers"
    assert ledger[5].claim.startswith("At fixed k = 10,")
    ledger = verdicts.b3_ledger(
        _clusters(
            k_star_mnist=([3, 10, 10, 10], [3, 3, 10, 10]),
            k_star_cifar10=([10] * 6, [3, 3, 3, 3, 3, 12]),  # within +-2 from layer 1 vs 6
            dbi_k_star_cifar10=([1, 1, 1, lo, lo, hi], [1] * 6),
            dbi_k_star_mnist=([lo, lo, hi, lo], [1] * 4),  # only the last-layer part
            dbi_fixed_k_cifar10=([1, 1, 1, lo, lo, hi], [1] * 6),
        )
    )
    assert [v.verdict for v in ledger][2:] == [REPRODUCED, PARTLY, PARTLY, PARTLY]


def test_settling_uses_the_reported_tolerance_around_the_classes():
    k = reported.N_CLASSES + reported.K_STAR_TOLERANCE
    assert verdicts.settles_earlier(np.array([[k, k]]), np.array([[k + 1, k]])) == (True, 1, 2)
