"""Chapter B4's stress tests: the 2 x 2 reuses chapter B1's configs, its contrasts, the threshold
sweep and silhouette analyses on a tiny model, the cache, the ledgers' grading rules (each has a
case where it must pass and one where it must fail), the weights kept through training and the
spec's one-line errors."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from sklearn.metrics import silhouette_score

from normbook.core import cache
from normbook.core.claims import mean_test, t_interval
from normbook.core.params import ParameterError
from normbook.core.verdicts import NOT_SHOWN, PARTLY, REPRODUCED
from normbook.paper_b import analysis, classify, convnets, stress, training
from normbook.paper_b import representations as rep
from normbook.paper_b.sesoi import ACCURACY
from normbook.paper_b.specs import B1, B4

SEEDS5 = np.array([0.0, 0.01, -0.01, 0.02, -0.02])  # seed-to-seed jitter


def _images(n=60, seed=0):
    """Normalized MNIST-shaped images with a class-dependent bright patch, and labels."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(10), n // 10)
    x = rng.normal(0, 0.3, (n, 1, 32, 32)).astype(np.float32)
    for i, c in enumerate(y):
        r, q = divmod(int(c), 5)
        x[i, 0, 2 + 14 * r : 12 + 14 * r, 5 * q : 8 + 5 * q] += 2.0
    return x, y


@pytest.fixture(scope="module")
def tiny():
    import torch

    model = convnets.build("standard_cnn", seed=3, width=2, batchnorm=False).eval()
    x, y = _images()
    return model, torch.as_tensor(x), y


# ----------------------------------------------------------------------------- 2 x 2


@pytest.mark.parametrize("profile", ["smoke", "cpu", "paper"])
def test_paper_cells_are_b1_configs_and_swapped_cells_differ_only_in_lr(profile):
    P = B4.resolve(profile, factorial_datasets="both")
    b1 = classify.configs(B1.resolve(profile)).configs
    cfgs = stress.factorial_configs(P)
    assert len(cfgs) == 8
    for (ds, bn, j), cfg in cfgs.items():
        if stress.is_paper_cell((ds, bn, j)):
            assert cfg == b1[ds, bn]  # same cache key: B1's cached model, never retrained
        else:
            assert cfg != b1[ds, bn] and replace(cfg, lr=b1[ds, bn].lr) == b1[ds, bn]
    assert cfgs["cifar10", True, 1].lr == P.cifar_lr_nobn
    assert cfgs["cifar10", False, 0].lr == P.cifar_lr_bn
    only = stress.factorial_configs(B4.resolve(profile, factorial_datasets="cifar10"))
    assert {c[0] for c in only} == {"cifar10"}


def test_factorial_effects_and_the_papers_contrast():
    # BN adds 3 at lr 0 and 1 at lr 1; lr 0 adds 4 with BN and 2 without
    y = {(True, 0): 13 + SEEDS5, (True, 1): 9 + SEEDS5, (False, 0): 10 + SEEDS5,
         (False, 1): 8 + SEEDS5}  # fmt: skip
    e = stress.factorial_effects(y, "cifar10", (1e-3, 1e-4))
    np.testing.assert_allclose(e.bn, 2.0)
    np.testing.assert_allclose(e.lr, 3.0)
    np.testing.assert_allclose(e.interaction, 2.0)
    np.testing.assert_allclose(e.paper, 13 - 8)  # BN at 1e-3 vs no BN at 1e-4 = 2 + 3
    assert stress.decomposition_error(e, "cifar10") < 1e-12
    m = stress.factorial_effects(y, "mnist")
    np.testing.assert_allclose(m.paper, 3.0)  # both at lr 0
    assert stress.decomposition_error(m, "mnist") < 1e-12


# ----------------------------------------------------------------------------- analyses


def test_float32_counts_against_a_float64_limit_are_exact():
    rng = np.random.default_rng(0)
    a = rng.random(10_000, dtype=np.float32)
    for limit in [*rng.random(200), *a[:200].astype(np.float64), 0.5 + 1e-12, 1e-40]:
        assert np.count_nonzero(a <= stress._at_most(limit)) == np.count_nonzero(
            a.astype(np.float64) <= limit
        )


def test_threshold_sweep_starts_at_exact_zeros_and_only_adds_zeros(tiny):
    model, x, _ = tiny
    cfg = stress.ThresholdConfig(n_images=60, thresholds=(0.0, 0.1, 0.5, 2.0), batch_size=25)
    out = stress.threshold_stats(model, x, cfg)
    exact = analysis.sparsity_stats(model, x, analysis.SparsityConfig(n_images=60))["layer"]
    np.testing.assert_allclose(out["sparsity"][:, 0], exact, atol=1e-12)
    assert np.all(np.diff(out["sparsity"], axis=1) >= 0)
    acts = convnets.capture_activations(model, x)
    a = acts["conv2"].astype(np.float64)
    assert out["scale"][1] == pytest.approx(np.abs(a).mean())
    assert out["sparsity"][1, 2] == pytest.approx(np.mean(a <= 0.5 * np.abs(a).mean()))
    std = stress.threshold_stats(model, x, replace(cfg, scale="std"))
    assert std["scale"][1] == pytest.approx(a.std(), rel=1e-6)
    with pytest.raises(ValueError, match="scale"):
        stress.ThresholdConfig(scale="max")


def test_silhouettes_score_b3s_partition_as_sklearn_does(tiny):
    model, x, y = tiny
    b3 = analysis.ClusterConfig(n_images=60, pca_components=5, k_min=2, k_max=4, fixed_k=10)
    clusters = analysis.cluster_stats(model, x, y, b3, seed=0)
    part = clusters["fixed_k_labels"]
    cfg = stress.SilhouetteConfig(b3, silhouette_images=40)
    out = stress.silhouette_stats(model, x, y, part, cfg)
    sub = np.sort(np.random.default_rng(0).choice(60, 40, replace=False))
    np.testing.assert_array_equal(cfg.subset(), sub)
    feats = rep.to_features(convnets.capture_activations(model, x)["conv4"]).astype(np.float32)
    assert out["class_silhouette"][3] == pytest.approx(silhouette_score(feats[sub], y[sub]))
    assert out["kmeans_silhouette"][3] == pytest.approx(silhouette_score(feats[sub], part[3][sub]))
    # the score is of the partition it is given: another partition scores differently
    other = stress.silhouette_stats(model, x, y, np.roll(part, 7, axis=1), cfg)
    assert not np.allclose(other["kmeans_silhouette"], out["kmeans_silhouette"])


def test_silhouettes_refuse_clusters_of_other_models_or_config():
    from types import SimpleNamespace

    cfg = stress.SilhouetteConfig(analysis.ClusterConfig(n_images=60), silhouette_images=40)
    models = SimpleNamespace(trained={("mnist", True): [0, 1], ("mnist", False): [0, 1]})
    labels = np.zeros((2, 4, 60), np.int16)
    other_models = SimpleNamespace(config=cfg.clusters, fixed_k_labels={("mnist", True): labels})
    same_models = dict.fromkeys(models.trained, labels)
    other_config = SimpleNamespace(config=analysis.ClusterConfig(n_images=50),
                                   fixed_k_labels=same_models)  # fmt: skip
    for clusters in (other_models, other_config):
        with pytest.raises(ValueError, match="same models and cluster config"):
            stress.silhouettes(models, clusters, cfg)


def test_stress_analyses_are_cached(tiny_trained):
    trained, splits = tiny_trained
    cfg = stress.ThresholdConfig(n_images=40, thresholds=(0.0, 0.1))
    first = stress.analyse_all(cfg, trained, splits)
    again = stress.analyse_all(cfg, trained, splits)
    assert not any(e.hit for e in first) and all(e.hit for e in again)
    np.testing.assert_array_equal(first[0]["sparsity"], again[0]["sparsity"])
    assert cache.info()["b_threshold"][0] == 1


@pytest.fixture
def tiny_trained():
    """One untrained tiny model wrapped as a cached ``Trained``, on synthetic splits."""
    x, y = _images(400)
    raw = ((x[:, 0, 2:30, 2:30] - x.min()) / (x.max() - x.min()) * 255).astype(np.uint8)
    full = classify.Splits("mnist", raw, y, raw[:0], y[:0], raw[:200], y[:200], "synthetic")
    cfg = classify.ClassifierConfig("mnist", False, 2, "sgd", 0.01, n_train=300, n_val=50,
                                    n_test=100)  # fmt: skip
    state = {k: v.clone() for k, v in cfg.build(0).state_dict().items()}
    return [classify.Trained(cfg, 0, cache.Entry(tensors=state))], {"mnist": full}


def test_edge_share_per_seed():
    k_star = {("mnist", True): np.array([[2, 10], [20, 20]]),
              ("mnist", False): np.array([[5, 10], [2, 7]])}  # fmt: skip
    np.testing.assert_allclose(stress.edge_share(k_star, "mnist", (2, 20)), [0.25, 0.75])


# ----------------------------------------------------------------------------- rules


def _fake_factorial(accuracy=0.6, datasets=("cifar10",), unlearned=()):
    """A 2 x 2 whose every cell's 5 seeds reached ``accuracy`` (test), except the cells in
    ``unlearned`` (one seed at 0.1), at learning rates 1e-3 (index 0) and 1e-4."""
    trained = {
        (ds, bn, j): [SimpleNamespace(test_acc=0.1 if (ds, bn, j) in unlearned and s == 2
                                      else accuracy) for s in range(5)]
        for ds in datasets for bn in (True, False) for j in (0, 1)
    }  # fmt: skip
    return SimpleNamespace(datasets=list(datasets), trained=trained,
                           lrs={ds: (1e-3, 1e-4) for ds in datasets})  # fmt: skip


def _cells(bn0, nobn0, bn1, nobn1, scale=0.1):
    """Per-seed values of the four cells (BN, lr index), seed jitter ``scale`` x SEEDS5."""
    j = scale * SEEDS5
    return {(True, 0): bn0 + j, (False, 0): nobn0 + j / 2, (True, 1): bn1 + 0.8 * j,
            (False, 1): nobn1 + 0.3 * j}  # fmt: skip


def _effects(y, datasets=("cifar10",)):
    """The same cells for every metric (only the accuracy rows are read)."""
    return {(m.key, ds): stress.factorial_effects(y, ds, (1e-3, 1e-4))
            for m in stress.METRICS for ds in datasets}  # fmt: skip


def test_cell_controls_name_every_cell():
    controls = stress.cell_controls(_fake_factorial(unlearned={("cifar10", False, 1)}), "cifar10")
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
    row = stress.factorial_ledger(effects, _fake_factorial())["cifar10", "accuracy"]
    assert row.verdict == PARTLY  # not reproduced: BN itself does not raise accuracy at 1e-4
    assert row.grade.why.startswith("at lr 1e-3: reproduced; at lr 1e-4: not shown at this budget")
    assert row.claim == ("CIFAR-10: BN itself raises the test accuracy, BN and no BN at the same "
                         "learning rate, at each of two rates")  # fmt: skip
    assert "at lr 1e-3: reproduced; at lr 1e-4: not shown" in row.evidence
    assert "interaction +0.15" in row.evidence and row.sesoi is ACCURACY
    assert row.test.effect == pytest.approx(-0.05)  # the binding part: the larger p
    # BN adds 10 points at both rates: reproduced
    both = stress.factorial_ledger(_effects(_cells(0.70, 0.60, 0.65, 0.55)), _fake_factorial())
    assert both["cifar10", "accuracy"].verdict == REPRODUCED
    # the paper expects BN to lower the class-based DBI: higher at both rates is not shown
    assert both["cifar10", "class_dbi"].verdict == NOT_SHOWN
    # BN costs accuracy at both rates: below the SESOI, but the 2 x 2 keeps no states
    worse = stress.factorial_ledger(_effects(_cells(0.55, 0.60, 0.50, 0.55)), _fake_factorial())
    assert worse["cifar10", "accuracy"].verdict == NOT_SHOWN
    # a cell that did not learn: the part resting on it is not shown, the other still graded
    f = _fake_factorial(unlearned={("cifar10", False, 1)})
    row = stress.factorial_ledger(_effects(_cells(0.70, 0.60, 0.65, 0.55)), f)[
        "cifar10", "accuracy"
    ]
    assert row.verdict == PARTLY and "at lr 1e-4: not shown at this budget (positive control" in (
        row.grade.why
    )
    assert [c.passed for c in row.controls] == [True, True, True, False]
    # every dataset of the 2 x 2, every metric
    mnist = stress.factorial_ledger(_effects(y, ("mnist", "cifar10")),
                                    _fake_factorial(datasets=("mnist", "cifar10")))  # fmt: skip
    assert set(mnist) == {(ds, m.key) for ds in ("mnist", "cifar10") for m in stress.METRICS}


def test_the_confound_is_graded_with_bn_and_without():
    # the paper's BN rate (1e-3) adds 10 points with BN and without
    both = _effects(_cells(0.70, 0.65, 0.60, 0.55))
    conf = stress.confound_ledger(both, _fake_factorial())
    assert set(conf) == {m.key for m in stress.METRICS}
    assert conf["accuracy"].verdict == REPRODUCED
    assert conf["accuracy"].grade.why == "BN: reproduced; no BN: reproduced"
    assert conf["accuracy"].claim.startswith("Critics' confound, CIFAR-10: the paper's higher BN "
                                             "learning rate by itself raises")  # fmt: skip
    # only with BN: partly
    only_bn = stress.confound_ledger(_effects(_cells(0.70, 0.60, 0.60, 0.60)), _fake_factorial())
    assert only_bn["accuracy"].verdict == PARTLY
    assert only_bn["accuracy"].grade.why.startswith("BN: reproduced; no BN: not shown")
    # neither: not shown (no kept states, so never refuted)
    none = stress.confound_ledger(_effects(_cells(0.60, 0.60, 0.60, 0.60)), _fake_factorial())
    assert none["accuracy"].verdict == NOT_SHOWN
    # without CIFAR-10 in the 2 x 2 there is no confound to grade
    mnist = _effects(_cells(0.70, 0.65, 0.60, 0.55), ("mnist",))
    assert stress.confound_ledger(mnist, _fake_factorial(datasets=("mnist",))) == {}


def test_attribution_and_glue_of_the_factorial_rows():
    f = _fake_factorial()
    bn_only = _effects(_cells(0.70, 0.60, 0.70, 0.60))  # BN +10, lr nothing
    lr_only = _effects(_cells(0.70, 0.70, 0.60, 0.60))  # lr +10, BN nothing
    both = _effects(_cells(0.80, 0.70, 0.70, 0.60))
    out = {}
    for name, e in (("bn", bn_only), ("lr", lr_only), ("both", both)):
        out[name] = stress.attribution(stress.factorial_ledger(e, f), stress.confound_ledger(e, f))
    assert out["bn"]["accuracy"].startswith("BatchNorm's at both learning rates; the learning "
                                            "rate's own effect is not shown")  # fmt: skip
    assert out["lr"]["accuracy"].startswith("the learning rate's, with BN and without; "
                                            "BatchNorm's own effect is not shown")  # fmt: skip
    assert out["both"]["accuracy"] == ("both BatchNorm's at both learning rates and the learning "
                                       "rate's, with BN and without")  # fmt: skip
    neither = _effects(_cells(0.60, 0.60, 0.60, 0.60))
    assert stress.attribution(stress.factorial_ledger(neither, f),
                              stress.confound_ledger(neither, f))["accuracy"].startswith(
        "neither's by these tests")  # fmt: skip
    assert stress.attribution({}, {})["accuracy"] == "not run"
    bn, conf = stress.factorial_ledger(bn_only, f), stress.confound_ledger(bn_only, f)
    g = stress.factorial_grades(bn, conf)
    assert g["bn_cifar10_accuracy"] == REPRODUCED and g["bn_mnist_accuracy"] == "not run"
    assert g["conf_accuracy"] == NOT_SHOWN
    assert stress.grade_summary(conf).startswith("5 claims: ")
    assert all(r.paper == "B" for r in [*bn.values(), *conf.values()])
    assert stress.sign_flips(_effects(_cells(0.70, 0.60, 0.55, 0.60))) == (
        ", ".join(f"CIFAR-10 {m.label}" for m in stress.METRICS))  # fmt: skip
    assert stress.sign_flips(bn_only) == "none"


def _acc(learned=True):
    """Test accuracy of 5 seeds per variant (0.9; with ``learned`` False, MNIST BN's
    third seed 0.1)."""
    acc = {v: np.full(5, 0.9) for v in classify.VARIANTS}
    if not learned:
        acc["mnist", True] = np.array([0.9, 0.9, 0.1, 0.9, 0.9])
    return SimpleNamespace(accuracy=acc)


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
    cfg = stress.SilhouetteConfig(analysis.ClusterConfig(fixed_k=10))
    sil = stress.Silhouettes(cfg, higher, same, {}, 20, 0, 1.0)
    rows = stress.cluster_count_ledger(sil, _acc())
    assert set(rows) == {
        (ds, k) for ds in ("mnist", "cifar10") for k in ("class_sil", "kmeans_sil")
    }
    assert not any("edge" in k for key in rows for k in key)  # k* at an end: description only
    assert rows["mnist", "class_sil"].verdict == REPRODUCED
    assert rows["mnist", "class_sil"].test.effect == pytest.approx(0.2)
    assert rows["mnist", "kmeans_sil"].claim == (
        "(ours) MNIST: clusters are purer with BN by the silhouette of k-means at k = 10 "
        "(higher), deeper half"
    )
    assert rows["mnist", "kmeans_sil"].verdict == NOT_SHOWN  # equal: below, no kept states
    assert rows["mnist", "kmeans_sil"].test.below()
    unlearned = stress.cluster_count_ledger(sil, _acc(learned=False))
    assert unlearned["mnist", "class_sil"].verdict == NOT_SHOWN
    assert unlearned["cifar10", "class_sil"].verdict == REPRODUCED
    assert stress.grades(rows)["mnist_class_sil"] == REPRODUCED
    # the prose describes how often k* sits at an end, beside the noise null; no grade for it
    clusters = SimpleNamespace(
        config=SimpleNamespace(k_min=2, k_max=20),
        k_star={("mnist", True): np.array([[2, 10], [20, 20]]),
                ("mnist", False): np.array([[5, 10], [2, 7]]),
                ("cifar10", True): np.full((2, 2), 10), ("cifar10", False): np.full((2, 2), 20)},
    )  # fmt: skip
    glue = stress.cluster_count_glue(rows, clusters, SimpleNamespace(k_star=np.array([2, 20])),
                                     1.0)  # fmt: skip
    assert glue["edge_mnist"] == "50%" and glue["edge_cifar10"] == "50%"
    assert glue["noise_share"] == "100%" and "mnist_edge" not in glue
    assert glue["summary"] == "4 claims: 2 reproduced, 2 not shown at this budget"


def _thresholds(mnist, cifar):
    """A sweep at t = 0, 0.01, 0.1: per dataset (BN, no BN) sparsity per threshold, the same
    in every layer, jittered per seed."""
    cfg = stress.ThresholdConfig(thresholds=(0.0, 0.01, 0.1))
    sparsity = {}
    for ds, layers, (bn, nobn) in (("mnist", 4, mnist), ("cifar10", 6, cifar)):
        for flag, v in ((True, bn), (False, nobn)):
            jitter = SEEDS5 if flag else SEEDS5 / 2
            sparsity[ds, flag] = (np.asarray(v, float)[None, None, :] + jitter[:, None, None]
                                  + np.zeros((5, layers, 3)))  # fmt: skip
    scale = {v: np.ones(a.shape[:2]) for v, a in sparsity.items()}
    return stress.Thresholds(cfg, sparsity, scale, {}, 20, 0, 1.0)


def test_threshold_ledger_needs_every_threshold_for_reproduced():
    thr = _thresholds(
        ([0.1, 0.2, 0.3], [0.3, 0.4, 0.5]),  # MNIST BN less sparse at every t
        ([0.5, 0.6, 0.3], [0.3, 0.4, 0.6]),
    )  # CIFAR-10 more, but not at t = 0.1
    rows = stress.threshold_ledger(thr, _acc())
    assert set(rows) == {"mnist", "cifar10"}
    assert rows["mnist"].verdict == REPRODUCED
    assert rows["mnist"].grade.why == "t = 0: reproduced; t = 0.01: reproduced; t = 0.1: reproduced"
    assert rows["mnist"].claim == ("MNIST: BN representations are less sparse at every threshold "
                                   "t × mean_abs (t = 0, 0.01, 0.1)")  # fmt: skip
    assert rows["cifar10"].verdict == PARTLY
    assert rows["cifar10"].grade.why.startswith(
        "t = 0: reproduced; t = 0.01: reproduced; t = 0.1: not shown"
    )
    assert rows["cifar10"].test.null.startswith("CIFAR-10 layer sparsity at t = 0.1")
    none = stress.threshold_ledger(_thresholds(([0.3] * 3, [0.1] * 3), ([0.3] * 3, [0.3] * 3)),
                                   _acc())  # fmt: skip
    assert none["mnist"].verdict == NOT_SHOWN and none["cifar10"].verdict == NOT_SHOWN
    assert stress.threshold_ledger(thr, _acc(learned=False))["mnist"].verdict == NOT_SHOWN


def test_direction_ledger_on_other_networks_or_images():
    sp = _per_layer(([0.1] * 4, [0.3] * 4), ([0.3] * 6, [0.3] * 6))
    dbi = _per_layer(([1, 1, 0.5, 0.5], [1] * 4), ([1] * 6, [1] * 6))
    mnist_only = {v: a for v, a in sp.items() if v[0] == "mnist"}
    sparsity = analysis.Sparsity(analysis.SparsityConfig(), mnist_only, mnist_only, {}, 10, 0, 1.0)
    clusters = SimpleNamespace(class_dbi=dbi)
    rows = stress.direction_ledger(sparsity, clusters, "test images", _acc())
    assert set(rows) == {("mnist", "sparsity"), ("mnist", "class_dbi")}  # what was analysed
    assert [rows["mnist", k].verdict for k in ("sparsity", "class_dbi")] == [REPRODUCED] * 2
    assert rows["mnist", "sparsity"].claim == (
        "MNIST (test images): BN representations are less sparse"
    )
    assert rows["mnist", "class_dbi"].test.effect == pytest.approx(0.5, abs=0.02)  # relative
    every = analysis.Sparsity(analysis.SparsityConfig(), sp, sp, {}, 20, 0, 1.0)
    rows = stress.direction_ledger(every, clusters, "equal validation accuracy", _acc())
    assert rows["cifar10", "sparsity"].verdict == NOT_SHOWN  # equal: below, no kept states
    assert rows["cifar10", "class_dbi"].verdict == NOT_SHOWN
    assert stress.direction_ledger(every, clusters, "x", _acc(learned=False))[
        "mnist", "sparsity"].verdict == NOT_SHOWN  # fmt: skip


def test_described_is_a_mean_and_its_interval():
    assert stress.described([1.0, 1.0]) == "+1 [+1, +1]"
    lo, hi = t_interval(SEEDS5)
    assert stress.described(SEEDS5) == f"+0 [{lo:+.3g}, {hi:+.3g}]"
    assert stress.described([]) == "n/a"


# ----------------------------------------------------------------------------- spec


def test_b4_shares_b1s_training_and_b3s_cluster_knobs():
    for prof in ("smoke", "cpu", "paper"):
        p1, p4 = B1.resolve(prof), B4.resolve(prof)
        assert {k: p4[k] for k in B1.names} == {k: p1[k] for k in B1.names}
        assert len(p4.seeds) < 5 or 2.0 ** -len(p4.seeds) < 0.05  # one-sided tests can pass


@pytest.mark.parametrize(
    "overrides, match",
    [
        ({"mnist_lr_alt": 0.01, "factorial_datasets": "both"}, "'mnist_lr_alt': must differ"),
        ({"cifar_lr_nobn": 1e-3}, "parameter 'cifar_lr_nobn'"),
        ({"silhouette_images": 5_000}, "parameter 'silhouette_images'"),
        ({"rel_thresholds": "0.1,-1"}, "parameter 'rel_thresholds'"),
        ({"factorial_datasets": "svhn"}, "parameter 'factorial_datasets'"),
        ({"n_test": 3_000}, "parameter 'n_test'"),
    ],
)
def test_b4_spec_errors_are_one_line(overrides, match):
    with pytest.raises(ParameterError, match=match) as err:
        B4.resolve("cpu", **overrides)
    assert "\n" not in str(err.value)


# ----------------------------------------------------------------------------- equal accuracy


@pytest.fixture(scope="module")
def tiny_run():
    """A tiny MNIST-shaped run on synthetic images: config, splits and its full result."""
    x, y = _images(500, seed=1)
    raw = ((x[:, 0, 2:30, 2:30] - x.min()) / (x.max() - x.min()) * 255).astype(np.uint8)
    full = classify.Splits("mnist", raw[:400], y[:400], raw[:0], y[:0], raw[400:], y[400:],
                           "synthetic")  # fmt: skip
    cfg = classify.ClassifierConfig("mnist", True, 2, "sgd", 0.05, momentum=0.9, batch_size=16,
                                    max_epochs=3, patience=6, evals_per_epoch=2, n_train=300,
                                    n_val=100, n_test=100)  # fmt: skip
    splits = full.of(cfg)
    return cfg, splits, classify.train_one(cfg, 0, splits, show_progress=False)


def test_training_to_a_target_accuracy_replays_the_run_and_keeps_the_closest_check(tiny_run):
    cfg, splits, res = tiny_run
    target = float(np.sort(res.curves["val_acc"])[len(res.curves["val_acc"]) // 2])
    full = classify.Trained(cfg, 0, cache.Entry({f"curve_{k}": v for k, v in res.curves.items()}))
    lo, hi = window = stress.match_window(full, target)
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
    assert stress.match_window(fake, 0.6) == (1.0, 2.0)
    assert stress.match_window(fake, 0.4) == (0.0, 1.0)
    with pytest.raises(ValueError, match="never reaches"):
        stress.match_window(fake, 0.95)


def _fake(ds, bn, seed, val_accs, best, stage=None):
    """A ``Trained`` whose curves say its kept weights (at epoch ``best``) have accuracy
    ``val_accs[best - 1]``; with a ``stage``, stopped at its last evaluation."""
    cfg = replace(B1_CFGS[ds, bn])
    n = len(val_accs)
    curves = {"curve_epoch": np.arange(1.0, n + 1), "curve_val_acc": np.asarray(val_accs, float),
              "curve_val_loss": -np.asarray(val_accs, float),
              "curve_train_loss": 2 - 0.1 * np.arange(n)}  # fmt: skip
    meta = {"best_epoch": float(best), "test_acc": 0.0}
    if stage:
        meta |= {"reached_epoch": float(n), "reached_val_acc": float(val_accs[-1])}
    return classify.Trained(cfg, seed, cache.Entry(curves, meta=meta), stage or {})


B1_CFGS = classify.configs(B1.resolve("smoke")).configs


def test_match_plan_stops_the_more_accurate_network_at_the_lower_accuracy():
    models = classify.Models({
        ("mnist", True): [_fake("mnist", True, 0, [0.5, 0.9], 2),
                          _fake("mnist", True, 1, [0.4, 0.5], 2)],
        ("mnist", False): [_fake("mnist", False, 0, [0.6, 0.5], 1),
                           _fake("mnist", False, 1, [0.5, 0.7], 2)],
    }, {})  # fmt: skip
    target, todo = stress.match_plan(models, ["mnist"])
    np.testing.assert_array_equal(target["mnist"], [0.6, 0.5])
    assert todo == [(("mnist", True), 0), (("mnist", False), 1)]


def test_matched_checks_fail_for_another_run_or_an_unmatched_pair():
    def matched(stopped, other):
        kept = _fake("mnist", True, 0, [0.5, 0.7, 0.9], 3)
        m = classify.Models({("mnist", True): [stopped], ("mnist", False): [other]}, {})
        k = classify.Models({("mnist", True): [kept], ("mnist", False): [other]}, {})
        return stress.Matched(m, k, {"mnist": np.array([0.7])}, None, None)

    stage = {"until_val_acc": 0.7, "check_every": 1}
    other = _fake("mnist", False, 0, [0.6, 0.7], 2)
    good = stress.matched_checks(matched(_fake("mnist", True, 0, [0.5, 0.7], 2, stage), other),
                                 0.01)  # fmt: skip
    assert [c.holds for c in good] == [True, True]
    rerun = _fake("mnist", True, 0, [0.5, 0.7], 2, stage)
    rerun.entry["curve_train_loss"] = rerun.entry["curve_train_loss"] + 1e-12  # not the run
    assert [c.holds for c in stress.matched_checks(matched(rerun, other), 0.01)] == [False, True]
    overshoot = _fake("mnist", True, 0, [0.5, 0.7], 2, stage)  # its curve is the full run's,
    overshoot.entry.meta["reached_val_acc"] = 0.75  # but it stopped at a check above 0.7
    assert [c.holds for c in stress.matched_checks(matched(overshoot, other), 0.01)] == [
        True, False]  # fmt: skip


def test_matched_checks_hold_when_no_pair_needed_a_replay():
    """Equal kept accuracies: nothing is replayed, so nothing can fail to retrace (it is no
    bug), and the pair is matched."""
    m = classify.Models({("mnist", bn): [_fake("mnist", bn, 0, [0.5, 0.7], 2)]
                         for bn in (True, False)}, {})  # fmt: skip
    checks = stress.matched_checks(stress.Matched(m, m, {"mnist": np.array([0.7])}, None, None),
                                   0.01)  # fmt: skip
    assert [c.holds for c in checks] == [True, True]
    assert "no network needed a replay" in checks[0].evidence


def test_held_out_clusters_keep_the_class_dbi_and_skip_kmeans(tiny):
    model, x, y = tiny
    full = analysis.ClusterConfig(n_images=60, pca_components=5, k_min=2, k_max=4, fixed_k=10)
    held = stress.on_test_images(full)
    assert held.split == "test" and not held.kmeans
    a = analysis.cluster_stats(model, x, y, full)
    b = analysis.cluster_stats(model, x, y, held)
    np.testing.assert_array_equal(a["class_dbi"], b["class_dbi"])
    assert np.isnan(b["dbi_curve"]).all() and np.isfinite(a["dbi_curve"]).all()


# ----------------------------------------------------------------------------- kept states


def test_training_keeps_the_weights_at_the_checkpoints_apart_from_the_kept_ones(
    synthetic_full, tiny_cfg
):
    full = synthetic_full()
    cfg = tiny_cfg(max_epochs=2, patience=100, checkpoints=(0.25, 0.5))
    (t,) = classify.train_all([(cfg, 0)], {"mnist": full})
    names = set(cfg.build(0).state_dict())
    assert set(t.state) == names  # the kept weights only, no checkpoint among them
    assert not any(k.startswith("checkpoint") for k in t.state)
    first, half = t.checkpoint(0), t.checkpoint(1)
    assert set(first) == names and set(half) == names and t.checkpoint(2) is None
    w = "features.conv1.conv.weight"
    assert not torch.equal(first[w], half[w]) and not torch.equal(half[w], t.state[w])
    # the weights at half the 2-epoch budget are the weights after the first epoch: those a
    # 1-epoch run of the same seed keeps (its only evaluation is at the end of that epoch)
    one = classify.train_one(replace(cfg, max_epochs=1, evals_per_epoch=1, checkpoints=()), 0,
                             full.of(cfg), show_progress=False)  # fmt: skip
    assert one.best_epoch == 1.0
    for k in names:
        np.testing.assert_array_equal(half[k].numpy(), one.state[k])
    # the cache gives them back; the analyses read them as states of the run
    (again,) = classify.train_all([(cfg, 0)], {"mnist": full})
    assert again.hit and torch.equal(again.checkpoint(1)[w], half[w])
    models = classify.Models({("mnist", True): [again]}, {"mnist": full})
    states = analysis.states(models)
    assert [s.stage for s in states] == [{"checkpoint": 0.25}, {"checkpoint": 0.5}, {}]
    assert torch.equal(states[1].state[w], half[w]) and states[2] is again
