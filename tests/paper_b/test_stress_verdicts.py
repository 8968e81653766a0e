"""Chapter B4's ledgers and their prose: each grading rule has a case where it must pass and one
where it must fail; the glue names every row's grade."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from normbook.grading.claims import mean_test, t_interval
from normbook.grading.verdicts import NOT_SHOWN, PARTLY, REFUTED, REPRODUCED
from normbook.paper_b.b4_stress import claims, factorial, text
from normbook.paper_b.cached import analysis, stress_analyses
from normbook.paper_b.grading.sesoi import ACCURACY
from normbook.paper_b.runs import classify

SEEDS5 = np.array([0.0, 0.01, -0.01, 0.02, -0.02])  # seed-to-seed jitter


def _fake_factorial(accuracy=0.6, datasets=("cifar10",), unlearned=(), capped=True):
    """A 2 x 2 whose every cell's 5 seeds reached ``accuracy`` (test), except the cells in
    ``unlearned`` (one seed at 0.1), at learning rates 1e-3 (index 0) and 1e-4; ``capped``:
    the epoch cap ended every network (else early stopping did)."""
    trained = {
        (ds, bn, j): [SimpleNamespace(test_acc=0.1 if (ds, bn, j) in unlearned and s == 2
                                      else accuracy, capped=capped) for s in range(5)]
        for ds in datasets for bn in (True, False) for j in (0, 1)
    }  # fmt: skip
    return SimpleNamespace(datasets=list(datasets), trained=trained,
                           lrs={ds: (1e-3, 1e-4) for ds in datasets})  # fmt: skip


def _cells(bn0, nobn0, bn1, nobn1, scale=0.1):
    """Per-seed values of the four cells (BN, lr index), seed jitter ``scale`` x SEEDS5."""
    j = scale * SEEDS5
    return {(True, 0): bn0 + j, (False, 0): nobn0 + j / 2, (True, 1): bn1 + 0.8 * j,
            (False, 1): nobn1 + 0.3 * j}  # fmt: skip


def _along(last, earlier=None):
    """Kept states at a quarter and half of the budget (``earlier``, default ``last``: flat)
    and the kept models (``last``), as :class:`.analysis.Along` holds them."""
    earlier = last if earlier is None else earlier
    return analysis.Along(np.array([0.25, 0.5, 1.0]), [earlier, earlier, last], 0)


def _effects(y, datasets=("cifar10",)):
    """The same cells for every metric (only the accuracy rows are read)."""
    return {(m.key, ds): factorial.factorial_effects(y, ds, (1e-3, 1e-4))
            for m in factorial.METRICS for ds in datasets}  # fmt: skip


def test_cell_controls_name_every_cell():
    f = _fake_factorial(unlearned={("cifar10", False, 1)})
    controls = claims.cell_controls(f, "cifar10")
    assert [c.family for c in controls] == [
        "CIFAR-10 BN at lr 1e-3", "CIFAR-10 BN at lr 1e-4", "CIFAR-10 no BN at lr 1e-3",
        "CIFAR-10 no BN at lr 1e-4"]  # fmt: skip
    assert [c.passed for c in controls] == [True, True, True, False]


def test_bn_itself_needs_both_simple_effects_not_the_main_effect():
    # BN adds 10 points at lr 1e-3 and costs 5 at 1e-4: the main effect (+2.5) clears the SESOI
    y = _cells(0.70, 0.60, 0.55, 0.60)
    effects = _effects(y)
    e = effects["accuracy", "cifar10"]
    assert mean_test(e.bn, ACCURACY.value, "main").clears()
    assert e.bn_at[0].mean() > ACCURACY.value and e.bn_at[1].mean() < -ACCURACY.value
    row = claims.factorial_ledger(effects, _fake_factorial())["cifar10", "accuracy"]
    assert row.verdict == PARTLY  # not reproduced: BN itself does not raise accuracy at 1e-4
    assert row.grade.why.startswith("at lr 1e-3: reproduced; at lr 1e-4: not shown at this budget")
    assert row.claim == ("CIFAR-10: BN itself raises the test accuracy, BN and no BN at the same "
                         "learning rate, at each of two rates, by at least 0.5 percentage "
                         "points of test accuracy")  # fmt: skip
    assert row.paper_says.startswith("not in the paper (the reviewers' question")
    assert "at lr 1e-3: reproduced; at lr 1e-4: not shown" in row.evidence
    assert "interaction +0.15" in row.evidence and row.sesoi is ACCURACY
    assert row.test.effect == pytest.approx(-0.05)  # the binding part: the larger p
    # BN adds 10 points at both rates: reproduced
    both = claims.factorial_ledger(_effects(_cells(0.70, 0.60, 0.65, 0.55)), _fake_factorial())
    assert both["cifar10", "accuracy"].verdict == REPRODUCED
    # the paper expects BN to lower the class-based DBI: higher at both rates is not shown
    assert both["cifar10", "class_dbi"].verdict == NOT_SHOWN
    # BN costs accuracy at both rates: below the SESOI, but without kept states not refuted
    worse_fx = _effects(_cells(0.55, 0.60, 0.50, 0.55))
    worse = claims.factorial_ledger(worse_fx, _fake_factorial())
    assert worse["cifar10", "accuracy"].verdict == NOT_SHOWN
    # ...refuted once the kept states show the effect had stopped moving, not while it rose
    flat = claims.factorial_ledger(worse_fx, _fake_factorial(), _along(worse_fx))
    assert flat["cifar10", "accuracy"].verdict == REFUTED
    rising = _along(worse_fx, _effects(_cells(0.40, 0.60, 0.35, 0.55)))
    late = claims.factorial_ledger(worse_fx, _fake_factorial(), rising)
    assert late["cifar10", "accuracy"].verdict == NOT_SHOWN
    # networks that early stopping ended are finished: graded with or without kept states
    done = _fake_factorial(capped=False)
    assert claims.factorial_ledger(worse_fx, done, rising)["cifar10", "accuracy"].verdict == REFUTED
    assert claims.factorial_ledger(worse_fx, done)["cifar10", "accuracy"].verdict == REFUTED
    # one network of the lr-1e-4 cells cut by the cap holds that part only
    one = _fake_factorial(capped=False)
    one.trained["cifar10", False, 1][3].capped = True
    held = claims.factorial_ledger(worse_fx, one, rising)["cifar10", "accuracy"]
    assert [(g.verdict, g.moving) for _, g in held.grade.parts] == [
        (REFUTED, False),
        (NOT_SHOWN, True),
    ]
    # a cell that did not learn: the part resting on it is not shown, the other still graded
    f = _fake_factorial(unlearned={("cifar10", False, 1)})
    row = claims.factorial_ledger(_effects(_cells(0.70, 0.60, 0.65, 0.55)), f)[
        "cifar10", "accuracy"
    ]
    assert row.verdict == PARTLY and "at lr 1e-4: not shown at this budget (positive control" in (
        row.grade.why
    )
    assert [c.passed for c in row.controls] == [True, True, True, False]
    # every dataset of the 2 x 2, every metric
    mnist = claims.factorial_ledger(_effects(y, ("mnist", "cifar10")),
                                    _fake_factorial(datasets=("mnist", "cifar10")))  # fmt: skip
    assert set(mnist) == {(ds, m.key) for ds in ("mnist", "cifar10") for m in factorial.METRICS}


def test_the_confound_is_graded_with_bn_and_without():
    # the paper's BN rate (1e-3) adds 10 points with BN and without
    both = _effects(_cells(0.70, 0.65, 0.60, 0.55))
    conf = claims.confound_ledger(both, _fake_factorial())
    assert set(conf) == {m.key for m in factorial.METRICS}
    assert conf["accuracy"].verdict == REPRODUCED
    assert conf["accuracy"].grade.why == "BN: reproduced; no BN: reproduced"
    assert conf["accuracy"].claim.startswith("Critics' confound, CIFAR-10: the paper's higher BN "
                                             "learning rate by itself raises")  # fmt: skip
    # only with BN: partly
    only_bn = claims.confound_ledger(_effects(_cells(0.70, 0.60, 0.60, 0.60)), _fake_factorial())
    assert only_bn["accuracy"].verdict == PARTLY
    assert only_bn["accuracy"].grade.why.startswith("BN: reproduced; no BN: not shown")
    # neither: not shown (no kept states, so never refuted)
    none = claims.confound_ledger(_effects(_cells(0.60, 0.60, 0.60, 0.60)), _fake_factorial())
    assert none["accuracy"].verdict == NOT_SHOWN
    # without CIFAR-10 in the 2 x 2 there is no confound to grade
    mnist = _effects(_cells(0.70, 0.65, 0.60, 0.55), ("mnist",))
    assert claims.confound_ledger(mnist, _fake_factorial(datasets=("mnist",))) == {}


def test_attribution_and_glue_of_the_factorial_rows():
    f = _fake_factorial()
    bn_only = _effects(_cells(0.70, 0.60, 0.70, 0.60))  # BN +10, lr nothing
    lr_only = _effects(_cells(0.70, 0.70, 0.60, 0.60))  # lr +10, BN nothing
    both = _effects(_cells(0.80, 0.70, 0.70, 0.60))
    out = {}
    for name, e in (("bn", bn_only), ("lr", lr_only), ("both", both)):
        out[name] = text.attribution(claims.factorial_ledger(e, f), claims.confound_ledger(e, f))
    assert out["bn"]["accuracy"].startswith("BatchNorm's at both learning rates; the learning "
                                            "rate's own effect is not shown")  # fmt: skip
    assert out["lr"]["accuracy"].startswith("the learning rate's, with BN and without; "
                                            "BatchNorm's own effect is not shown")  # fmt: skip
    assert out["both"]["accuracy"] == ("both BatchNorm's at both learning rates and the learning "
                                       "rate's, with BN and without")  # fmt: skip
    neither = _effects(_cells(0.60, 0.60, 0.60, 0.60))
    assert text.attribution(claims.factorial_ledger(neither, f),
                              claims.confound_ledger(neither, f))["accuracy"].startswith(
        "neither's by these tests")  # fmt: skip
    assert text.attribution({}, {})["accuracy"] == "not run"
    bn = claims.factorial_ledger(bn_only, f)
    conf = claims.confound_ledger(bn_only, f)
    g = text.factorial_grades(bn, conf)
    assert g["bn_cifar10_accuracy"] == REPRODUCED and g["bn_mnist_accuracy"] == "not run"
    assert g["conf_accuracy"] == NOT_SHOWN
    assert text.grade_summary(conf).startswith("5 claims: ")
    assert all(r.paper == "B" for r in [*bn.values(), *conf.values()])
    keys = [r.key for r in [*bn.values(), *conf.values()]]
    assert len(set(keys)) == len(keys) and all(k.startswith("b4_") for k in keys)
    assert bn["cifar10", "accuracy"].key == "b4_bn_itself_accuracy_cifar10"
    assert text.sign_flips(_effects(_cells(0.70, 0.60, 0.55, 0.60))) == (
        ", ".join(f"CIFAR-10 {m.label}" for m in factorial.METRICS))  # fmt: skip
    assert text.sign_flips(bn_only) == "none"
    table = text.cifar_table(bn_only, bn, conf)  # one row per metric, grades as graded
    assert table.count("\n") == len(factorial.METRICS) + 1 and REPRODUCED in table
    assert "BatchNorm's at both learning rates" in table
    # nothing run on MNIST: one sentence that says how to run it, not a table of "not run"
    assert "|" not in text.mnist_table(bn) and "not run" not in text.mnist_table(bn)
    assert "factorial_datasets both" in text.mnist_table(bn)
    assert text.cifar_table({}, {}, {}) == text.not_run("cifar10")


def _acc(learned=True):
    """Test accuracy of 5 seeds per variant (0.9; with ``learned`` False, MNIST BN's
    third seed 0.1)."""
    acc = {v: np.full(5, 0.9) for v in classify.VARIANTS}
    if not learned:
        acc["mnist", True] = np.array([0.9, 0.9, 0.1, 0.9, 0.9])
    capped = [SimpleNamespace(capped=True)] * 5  # the cap ended every network
    return SimpleNamespace(accuracy=acc, trained={v: capped for v in classify.VARIANTS})


def _per_layer(mnist, cifar, jitter=SEEDS5):
    """[5 seeds, layers] per variant from (BN, no BN) per-layer values (MNIST 4, CIFAR-10 6
    layers), no BN jittered half as much."""
    out = {}
    for ds, (bn, nobn) in (("mnist", mnist), ("cifar10", cifar)):
        for flag, v in ((True, bn), (False, nobn)):
            out[ds, flag] = (
                np.asarray(v, float)[None, :] + (jitter if flag else jitter / 2)[:, None]
            )
    return out


def test_cluster_count_ledger_grades_silhouettes_and_has_no_edge_row():
    higher = _per_layer(([0.3] * 4, [0.1] * 4), ([0.3] * 6, [0.1] * 6))
    same = _per_layer(([0.1] * 4, [0.1] * 4), ([0.1] * 6, [0.1] * 6))
    cfg = stress_analyses.SilhouetteConfig(analysis.ClusterConfig(fixed_k=10))
    sil = stress_analyses.Silhouettes(cfg, higher, same, {}, 20, 0, 1.0)
    rows = claims.cluster_count_ledger(sil, _acc())
    assert set(rows) == {
        (ds, k) for ds in ("mnist", "cifar10") for k in ("class_sil", "kmeans_sil")
    }
    assert not any("edge" in k for key in rows for k in key)  # k* at an end: description only
    assert rows["mnist", "class_sil"].verdict == REPRODUCED
    assert rows["mnist", "class_sil"].test.effect == pytest.approx(0.2)
    assert rows["mnist", "kmeans_sil"].claim == (
        "(ours) MNIST: clusters are purer with BN by the silhouette of k-means at k = 10 "
        "(higher), deeper half, by at least 0.020 silhouette score"
    )
    assert rows["mnist", "kmeans_sil"].verdict == NOT_SHOWN  # equal: below, no kept states
    assert rows["mnist", "kmeans_sil"].test.below()
    flat = claims.cluster_count_ledger(sil, _acc(), _along(sil))
    assert flat["mnist", "kmeans_sil"].verdict == REFUTED
    unlearned = claims.cluster_count_ledger(sil, _acc(learned=False))
    assert unlearned["mnist", "class_sil"].verdict == NOT_SHOWN
    assert unlearned["cifar10", "class_sil"].verdict == REPRODUCED
    assert text.grades(rows)["mnist_class_sil"] == REPRODUCED
    # the prose describes how often k* sits at an end, beside the noise null; no grade for it
    clusters = SimpleNamespace(
        config=SimpleNamespace(k_min=2, k_max=20),
        k_star={("mnist", True): np.array([[2, 10], [20, 20]]),
                ("mnist", False): np.array([[5, 10], [2, 7]]),
                ("cifar10", True): np.full((2, 2), 10), ("cifar10", False): np.full((2, 2), 20)},
    )  # fmt: skip
    glue = text.cluster_count_glue(rows, clusters, SimpleNamespace(k_star=np.array([2, 20])),
                                     1.0)  # fmt: skip
    assert glue["edge_mnist"] == "50%" and glue["edge_cifar10"] == "50%"
    assert glue["noise_share"] == "100%" and "mnist_edge" not in glue
    assert glue["summary"] == "4 claims: 2 reproduced, 2 not shown at this budget"


def _thresholds(mnist, cifar):
    """A sweep at t = 0, 0.01, 0.1: per dataset (BN, no BN) sparsity per threshold, the same
    in every layer, jittered per seed."""
    cfg = stress_analyses.ThresholdConfig(thresholds=(0.0, 0.01, 0.1))
    sparsity = {}
    for ds, layers, (bn, nobn) in (("mnist", 4, mnist), ("cifar10", 6, cifar)):
        for flag, v in ((True, bn), (False, nobn)):
            jitter = SEEDS5 if flag else SEEDS5 / 2
            sparsity[ds, flag] = (np.asarray(v, float)[None, None, :] + jitter[:, None, None]
                                  + np.zeros((5, layers, 3)))  # fmt: skip
    scale = {v: np.ones(a.shape[:2]) for v, a in sparsity.items()}
    return stress_analyses.Thresholds(cfg, sparsity, scale, {}, 20, 0, 1.0)


def test_threshold_ledger_needs_every_threshold_for_reproduced():
    thr = _thresholds(
        ([0.1, 0.2, 0.3], [0.3, 0.4, 0.5]),  # MNIST BN less sparse at every t
        ([0.5, 0.6, 0.3], [0.3, 0.4, 0.6]),
    )  # CIFAR-10 more, but not at t = 0.1
    rows = claims.threshold_ledger(thr, _acc())
    assert set(rows) == {"mnist", "cifar10"}
    assert rows["mnist"].verdict == REPRODUCED
    assert rows["mnist"].grade.why == "t = 0: reproduced; t = 0.01: reproduced; t = 0.1: reproduced"
    assert rows["mnist"].claim == (
        "MNIST: BN representations are less sparse at every threshold t × mean_abs "
        "(t = 0, 0.01, 0.1), each by at least 0.020 of activations (fraction counted as zero, "
        "|a| ≤ threshold)"
    )
    assert rows["cifar10"].verdict == PARTLY
    assert rows["cifar10"].grade.why.startswith(
        "t = 0: reproduced; t = 0.01: reproduced; t = 0.1: not shown"
    )
    assert rows["cifar10"].test.null.startswith("CIFAR-10 layer sparsity at t = 0.1")
    none = claims.threshold_ledger(
        _thresholds(([0.3] * 3, [0.1] * 3), ([0.3] * 3, [0.3] * 3)), _acc()
    )
    assert none["mnist"].verdict == NOT_SHOWN and none["cifar10"].verdict == NOT_SHOWN
    flat_thr = _thresholds(([0.3] * 3, [0.1] * 3), ([0.3] * 3, [0.3] * 3))
    flat = claims.threshold_ledger(flat_thr, _acc(), _along(flat_thr))
    assert flat["mnist"].verdict == REFUTED and flat["cifar10"].verdict == REFUTED
    assert claims.threshold_ledger(thr, _acc(learned=False))["mnist"].verdict == NOT_SHOWN


def test_direction_ledger_on_other_networks_or_images():
    sp = _per_layer(([0.1] * 4, [0.3] * 4), ([0.3] * 6, [0.3] * 6))
    dbi = _per_layer(([1, 1, 0.5, 0.5], [1] * 4), ([1] * 6, [1] * 6))
    mnist_only = {v: a for v, a in sp.items() if v[0] == "mnist"}
    sparsity = analysis.Sparsity(analysis.SparsityConfig(), mnist_only, mnist_only, {}, 10, 0, 1.0)
    clusters = SimpleNamespace(class_dbi=dbi)
    rows = claims.direction_ledger(sparsity, clusters, "test images", _acc(), key="b4_heldout")
    assert set(rows) == {("mnist", "sparsity"), ("mnist", "class_dbi")}  # what was analysed
    assert [rows["mnist", k].verdict for k in ("sparsity", "class_dbi")] == [REPRODUCED] * 2
    assert rows["mnist", "sparsity"].claim == (
        "MNIST (test images): BN representations are less sparse, by at least 0.020 of "
        "activations (fraction counted as zero, |a| ≤ threshold)"
    )
    assert rows["mnist", "class_dbi"].test.effect == pytest.approx(0.5, abs=0.02)  # relative
    assert [rows["mnist", k].key for k in ("sparsity", "class_dbi")] == [
        "b4_heldout_less_sparse_mnist", "b4_heldout_purer_classes_mnist"]  # fmt: skip
    every = analysis.Sparsity(analysis.SparsityConfig(), sp, sp, {}, 20, 0, 1.0)
    rows = claims.direction_ledger(
        every, clusters, "equal validation accuracy", _acc(), key="b4_matched"
    )
    assert rows["cifar10", "sparsity"].verdict == NOT_SHOWN  # equal: below, no kept states
    assert rows["cifar10", "class_dbi"].verdict == NOT_SHOWN
    # flat at the kept states: refuted; at a matched accuracy there is no budget to wait for
    flat = claims.direction_ledger(every, clusters, "test images", _acc(),
                                   (_along(every), _along(clusters)), key="b4_heldout")  # fmt: skip
    assert [flat["cifar10", k].verdict for k in ("sparsity", "class_dbi")] == [REFUTED] * 2
    matched = claims.direction_ledger(every, clusters, "equal validation accuracy",
                                      _acc(), matched=True, key="b4_matched")  # fmt: skip
    assert matched["cifar10", "sparsity"].verdict == REFUTED
    assert claims.direction_ledger(every, clusters, "x", _acc(learned=False), key="k")[
        "mnist", "sparsity"].verdict == NOT_SHOWN  # fmt: skip


def test_described_is_a_mean_and_its_interval():
    assert claims.described([1.0, 1.0]) == "+1 [+1, +1]"
    lo, hi = t_interval(SEEDS5)
    assert claims.described(SEEDS5) == f"+0 [{lo:+.3g}, {hi:+.3g}]"
    assert claims.described([]) == "– (no seeds)"
    assert claims.described([0.5]) == "+0.5 [–, –] (one seed: no interval)"
    assert claims.seed_mean([], ".2f") == "– (no seeds)"
