"""Part B representation analysis: shapes and values on tiny models, the cache, verdict rules."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import davies_bouldin_score

from normbook import classify, convnets, repr_analysis as ra, representations as rep
from normbook import verdicts_b
from normbook.verdicts import NOT, PARTLY, REPRODUCED

from test_classify import synthetic_full, tiny_cfg


@pytest.fixture(scope="module")
def setup():
    full = synthetic_full(n_train=400, n_test=120)
    cfg = tiny_cfg(n_train=300, n_val=50, n_test=100)
    sub = full.subset(cfg.n_train, cfg.n_val, cfg.n_test, cfg.split_seed)
    model = convnets.build("standard_cnn", seed=1, width=2, batchnorm=True).eval()
    return full, cfg, sub, model


def test_select_images_class_balanced_and_errors(setup):
    _, _, sub, _ = setup
    x, y = ra.select_images(sub, "train", 100, seed=0)
    assert x.shape == (100, 1, 32, 32) and x.dtype.is_floating_point
    assert np.bincount(y, minlength=10).tolist() == [10] * 10
    x2, y2 = ra.select_images(sub, "train", 100, seed=0)
    assert np.array_equal(y, y2) and bool((x == x2).all())
    xt, _ = ra.select_images(sub, "test", 50, seed=0)
    assert len(xt) == 50
    with pytest.raises(ValueError, match="class-balanced"):
        ra.select_images(sub, "train", 290, seed=0)
    with pytest.raises(ValueError, match="split"):
        ra.select_images(sub, "val", 10, seed=0)


def test_sparsity_streaming_matches_direct(setup):
    _, _, sub, model = setup
    x, _ = ra.select_images(sub, "train", 60, seed=0)
    acts = convnets.capture_activations(model, x)
    cfg = ra.SparsityConfig(n_images=60, batch_size=25)  # 3 uneven batches
    out = ra.sparsity_stats(model, x, cfg)
    names = model.conv_layer_names()
    want_layer = [rep.layer_sparsity(acts[n]) for n in names]
    want_ch = [rep.channel_sparsity(acts[n], spatial_mean=True) for n in names]
    np.testing.assert_allclose(out["layer"], want_layer, atol=1e-12)
    np.testing.assert_allclose(out["channel"], [c.mean() for c in want_ch], atol=1e-12)
    np.testing.assert_allclose(out["per_channel"], np.concatenate(want_ch), atol=1e-12)
    assert out["channel_offsets"].tolist() == [0, 2, 6, 14, 30]
    assert np.all((out["layer"] > 0) & (out["layer"] < 1))
    # element-wise channel sparsity averages to layer sparsity exactly
    flat = ra.sparsity_stats(model, x, dataclasses.replace(cfg, channel_spatial_mean=False))
    np.testing.assert_allclose(flat["channel"], flat["layer"], atol=1e-12)
    # a threshold can only add zeros
    loose = ra.sparsity_stats(model, x, dataclasses.replace(cfg, eps=0.1))
    assert np.all(loose["layer"] >= out["layer"])


def test_kmeans_sweep_finds_blobs_and_scores_on_raw_features():
    x, y = make_blobs(n_samples=300, centers=6, n_features=20, cluster_std=0.6,
                      center_box=(-10, 10), random_state=2)
    z = rep.reduce_dim(x, 5)
    sw = ra.kmeans_sweep(z, x, range(2, 11), n_init=2, seed=0, fixed_k=4)
    assert sw["k_star"] == 6
    assert sw["dbi_k_star"] == pytest.approx(sw["dbi"].min())
    assert sw["dbi_k_star"] == pytest.approx(davies_bouldin_score(x, y), rel=0.05)
    assert sw["ks"].tolist() == list(range(2, 11)) and np.isfinite(sw["dbi_fixed_k"])
    with pytest.raises(ValueError):
        ra.kmeans_sweep(z[:5], x[:5], range(2, 8), n_init=1, seed=0)


def test_cluster_stats_shapes_values_and_layer_groups(setup):
    _, _, sub, model = setup
    x, y = ra.select_images(sub, "train", 60, seed=0)
    cfg = ra.ClusterConfig(n_images=60, pca_components=8, k_min=2, k_max=6, fixed_k=10)
    out = ra.cluster_stats(model, x, y, cfg, seed=0)
    L = 4
    assert out["class_dbi"].shape == out["k_star"].shape == out["dbi_k_star"].shape == (L,)
    assert out["dbi_curve"].shape == (L, 5) and out["ks"].tolist() == [2, 3, 4, 5, 6]
    assert np.all((out["k_star"] >= 2) & (out["k_star"] <= 6))
    np.testing.assert_allclose(out["dbi_k_star"], out["dbi_curve"].min(axis=1))
    assert np.all(np.isfinite(out["dbi_fixed_k"])) and np.all(out["class_dbi"] > 0)
    acts = convnets.capture_activations(model, x, layers=["conv3"], flatten=True)
    assert out["class_dbi"][2] == pytest.approx(davies_bouldin_score(acts["conv3"], y), rel=1e-5)
    # a tiny memory budget forces one pass per layer: same numbers
    split = ra.cluster_stats(model, x, y, dataclasses.replace(cfg, memory_mb=0), seed=0)
    for k in ("class_dbi", "k_star", "dbi_k_star", "dbi_fixed_k"):
        np.testing.assert_allclose(split[k], out[k], rtol=1e-5)
    groups = ra._layer_groups({"a": 10, "b": 10, "c": 10}, 1000, 4.0 * 1000 * 20)
    assert groups == [["a", "b"], ["c"]]


def test_analyse_all_is_cached_per_model_and_config(setup, monkeypatch):
    full, cfg, _, _ = setup
    cfg = dataclasses.replace(cfg, max_epochs=1)
    trained = classify.train_all([(cfg, 0), (cfg, 1)], {"mnist": full})
    scfg = ra.SparsityConfig(n_images=50)
    ccfg = ra.ClusterConfig(n_images=50, pca_components=5, k_max=5, fixed_k=5)
    s1 = ra.analyse_all(scfg, trained, {"mnist": full})
    c1 = ra.analyse_all(ccfg, trained, {"mnist": full})
    assert [e.hit for e in s1 + c1] == [False] * 4
    assert ra.stack(s1, "layer").shape == (2, 4) and ra.stack(c1, "k_star").shape == (2, 4)
    assert not np.array_equal(s1[0]["layer"], s1[1]["layer"])  # different seeds, different nets

    def boom(*a, **k):
        raise AssertionError("recomputed despite a cached analysis")

    monkeypatch.setattr(ra, "_compute", boom)
    s2 = ra.analyse_all(scfg, trained, {"mnist": full})
    c2 = ra.analyse_all(ccfg, trained, {"mnist": full})
    assert [e.hit for e in s2 + c2] == [True] * 4
    np.testing.assert_array_equal(ra.stack(s2, "layer"), ra.stack(s1, "layer"))
    np.testing.assert_array_equal(ra.stack(c2, "dbi_curve"), ra.stack(c1, "dbi_curve"))
    with pytest.raises(AssertionError, match="recomputed"):
        ra.analyse_all(dataclasses.replace(scfg, channel_spatial_mean=False), trained,
                       {"mnist": full})


def test_analysis_in_worker_processes_matches_in_process(setup, tmp_path, monkeypatch):
    full, cfg, _, _ = setup
    trained = classify.train_all([(dataclasses.replace(cfg, max_epochs=1), 0)], {"mnist": full})
    ccfg = ra.ClusterConfig(n_images=50, pca_components=5, k_max=5, fixed_k=5)
    local = ra.analyse_variants(ccfg, {("mnist", True): trained}, {"mnist": full})
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path / "other-cache"))
    pooled = ra.analyse_variants(ccfg, {("mnist", True): trained * 2}, {"mnist": full},
                                 workers=2)  # two jobs, so the worker pool is used
    assert [e.hit for e in pooled["mnist", True]] == [False, False]
    for e in pooled["mnist", True]:
        for k in ("class_dbi", "k_star", "dbi_k_star", "dbi_fixed_k", "dbi_curve"):
            np.testing.assert_array_equal(e[k], local["mnist", True][0][k])


def test_verdict_rules():
    bn = np.array([[0.1, 0.2, 0.3], [0.1, 0.2, 0.5]])
    no = np.array([[0.2, 0.1, 0.4], [0.2, 0.1, 0.4]])
    assert verdicts_b.layer_direction(bn, no, "lower").tolist() == [True, False, False]
    assert verdicts_b.layer_direction(bn, no, "higher").tolist() == [False, True, False]
    assert verdicts_b.direction_grade(np.array([True, True])) == REPRODUCED
    assert verdicts_b.direction_grade(np.array([True, True, False])) == PARTLY
    assert verdicts_b.direction_grade(np.array([True, False])) == NOT
    assert verdicts_b.accuracy_gain([0.9, 0.91], [0.8, 0.85]) == REPRODUCED
    assert verdicts_b.accuracy_gain([0.9, 0.8], [0.85, 0.84]) == PARTLY
    assert verdicts_b.accuracy_gain([0.8], [0.85]) == NOT
    assert verdicts_b.settling_layer(np.array([3, 12, 9, 10, 11]), 10, 1) == 3
    assert verdicts_b.settling_layer(np.array([10, 10, 3]), 10, 1) == 4
    assert verdicts_b.settling_layer(np.array([10, 10, 10]), 10, 0) == 1
    ok, b, n = verdicts_b.settles_earlier(np.array([[10, 10], [2, 10]]),
                                          np.array([[2, 10], [2, 2]]), 10, 1)
    assert ok and (b, n) == (1.5, 2.5)
    assert verdicts_b.opposite_directions(0.1, -0.2)
    assert not verdicts_b.opposite_directions(0.1, 0.2)
    with pytest.raises(ValueError):
        verdicts_b.layer_direction(bn, no, "sideways")
    assert verdicts_b.majority_direction(bn, no) == "mixed"  # 1 lower, 1 higher, 1 equal
    assert verdicts_b.majority_direction(no, no + 1) == "lower"
    assert verdicts_b.majority_direction(no + 1, no) == "higher"
    assert verdicts_b.no_consistent_signature("lower", "higher", True) == REPRODUCED
    assert verdicts_b.no_consistent_signature("higher", "lower", False) == PARTLY
    assert verdicts_b.no_consistent_signature("mixed", "lower", True) == PARTLY
    assert verdicts_b.no_consistent_signature("lower", "lower", True) == NOT
    assert verdicts_b.matches_paper(0.85, 0.80, 0.8599, 0.79435) == REPRODUCED
    assert verdicts_b.matches_paper(0.55, 0.48, 0.8599, 0.79435) == PARTLY   # gap 7 vs 6.6
    assert verdicts_b.matches_paper(0.55, 0.30, 0.8599, 0.79435) == NOT      # gap 25 points
    assert verdicts_b.matches_paper(0.50, 0.52, 0.8599, 0.79435) == NOT      # reversed
