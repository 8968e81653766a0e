"""Chapter B4's stress tests: the 2 x 2 reuses chapter B1's configs, its contrasts, the threshold
sweep and silhouette analyses on a tiny model, the cache, the grading rules (each can pass,
fail, or be inconclusive) and the spec's one-line errors."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from sklearn.metrics import silhouette_score

from normbook.core import cache
from normbook.core.params import ParameterError
from normbook.core.verdicts import INCONCLUSIVE, NOT, REPRODUCED
from normbook.paper_b import analysis, classify, convnets, stress, verdicts
from normbook.paper_b import representations as rep
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


def test_bn_main_effect_and_lr_confound_can_go_either_way():
    grade, test = verdicts.bn_main_effect(-0.1 + SEEDS5, "lower", "x")
    assert grade == REPRODUCED and test.effect == pytest.approx(0.1) and test.p == 1 / 32
    assert verdicts.bn_main_effect(0.1 + SEEDS5, "lower", "x")[0] == NOT
    assert verdicts.bn_main_effect([0.1, 0.2], "higher", "x")[0] == INCONCLUSIVE
    grade, test = verdicts.lr_confound(0.5 + SEEDS5, "higher", "x")
    assert grade == REPRODUCED and "learning-rate main effect" in test.null
    assert verdicts.lr_confound(SEEDS5, "higher", "x")[0] == NOT


def test_survives_thresholds_needs_every_threshold():
    bn = np.stack([0.5 + SEEDS5, 0.4 + SEEDS5], axis=1)
    nobn = np.stack([0.3 + SEEDS5, 0.2 + SEEDS5], axis=1)
    assert verdicts.survives_thresholds(bn, nobn, "higher", "s", [0, 0.1])[0] == REPRODUCED
    nobn[:, 1] = 0.6 + SEEDS5  # the ordering flips at the second threshold
    grade, test = verdicts.survives_thresholds(bn, nobn, "higher", "s", [0, 0.1])
    assert grade == NOT and "t = 0.1" in test.null


def test_fewer_edges_than_noise():
    assert verdicts.fewer_edges_than_noise([0.1, 0.2, 0.0, 0.3, 0.1], 1.0, "k")[0] == REPRODUCED
    assert verdicts.fewer_edges_than_noise([1.0, 0.9, 1.0, 1.0, 1.0], 1.0, "k")[0] == NOT


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


def test_factorial_ledgers_grade_bn_and_the_confound_separately():
    # CIFAR-10 accuracy: BN adds 0.05 at both rates; the paper's BN rate adds nothing
    y = {(True, 0): 0.60 + SEEDS5, (True, 1): 0.60 + SEEDS5, (False, 0): 0.55 + SEEDS5,
         (False, 1): 0.55 + SEEDS5 / 2}  # fmt: skip
    e = stress.factorial_effects(y, "cifar10", (1e-3, 1e-4))
    effects = {(m.key, "cifar10"): e for m in stress.METRICS}
    bn, conf = stress.factorial_ledger(effects, ["cifar10"]), stress.confound_ledger(effects)
    assert bn["cifar10", "accuracy"].verdict == REPRODUCED
    assert bn["cifar10", "class_dbi"].verdict == NOT  # the paper expects BN lower: it is higher
    assert conf["accuracy"].verdict == NOT  # no learning-rate effect beyond seed noise
    assert all(r.paper == "B" for r in [*bn.values(), *conf.values()])
    g = stress.factorial_grades(bn, conf)
    assert g["bn_cifar10_accuracy"] == REPRODUCED and g["bn_mnist_accuracy"] == "not run"
    assert stress.grade_summary(conf).startswith("5 claims: ")


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
    va = classify.evaluate(model, *splits.tensors("val"))[1]
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
