"""Paper B representation analysis: shapes and values on tiny models, the cache, workers,
and the typed results the chapters read."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sklearn.metrics import davies_bouldin_score

from normbook.paper_b.b2_sparsity.spec import B2
from normbook.paper_b.b3_clusters.spec import B3
from normbook.paper_b.cached import analysis as ra
from normbook.paper_b.cached import convnets
from normbook.paper_b.cached import representations as rep
from normbook.paper_b.runs import classify


@pytest.fixture
def setup(synthetic_full, tiny_cfg):
    full = synthetic_full(n_train=400, n_test=120)
    cfg = tiny_cfg(n_train=300, n_val=50, n_test=100)
    sub = full.of(cfg)
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
    # the stored fixed-k partition is the one scored (chapter B4's silhouettes reuse it)
    assert out["fixed_k_labels"].shape == (L, 60) and out["fixed_k_labels"].max() == 9
    fixed = davies_bouldin_score(acts["conv3"], out["fixed_k_labels"][2])
    assert out["dbi_fixed_k"][2] == pytest.approx(fixed, rel=1e-5)
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
    assert np.stack([e["layer"] for e in s1]).shape == (2, 4)
    assert np.stack([e["k_star"] for e in c1]).shape == (2, 4)
    assert not np.array_equal(s1[0]["layer"], s1[1]["layer"])  # different seeds, different nets

    def boom(*a, **k):
        raise AssertionError("recomputed despite a cached analysis")

    monkeypatch.setattr(ra, "_compute", boom)
    s2 = ra.analyse_all(scfg, trained, {"mnist": full})
    c2 = ra.analyse_all(ccfg, trained, {"mnist": full})
    assert [e.hit for e in s2 + c2] == [True] * 4
    for new, old in zip(s2 + c2, s1 + c1):
        for k in old:
            np.testing.assert_array_equal(new[k], old[k])
    with pytest.raises(AssertionError, match="recomputed"):
        ra.analyse_all(
            dataclasses.replace(scfg, channel_spatial_mean=False), trained, {"mnist": full}
        )


def test_analysis_in_worker_processes_matches_in_process(setup, tmp_path, monkeypatch):
    full, cfg, _, _ = setup
    trained = classify.train_all([(dataclasses.replace(cfg, max_epochs=1), 0)], {"mnist": full})
    ccfg = ra.ClusterConfig(n_images=50, pca_components=5, k_max=5, fixed_k=5)
    local = ra.analyse_all(ccfg, trained, {"mnist": full})
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path / "other-cache"))
    pooled = ra.analyse_all(
        ccfg, trained * 2, {"mnist": full}, workers=2
    )  # two jobs, so the worker pool is used
    assert [e.hit for e in pooled] == [False, False]
    for e in pooled:
        for k in ("class_dbi", "k_star", "dbi_k_star", "dbi_fixed_k", "dbi_curve"):
            np.testing.assert_array_equal(e[k], local[0][k])


def test_configs_of_the_chapter_parameters():
    s = ra.SparsityConfig.from_params(
        B2.resolve("smoke", zero_threshold=0.1, sparsity_split="test")
    )
    assert (s.n_images, s.split, s.eps, s.channel_spatial_mean) == (200, "test", 0.1, True)
    c = ra.ClusterConfig.from_params(B3.resolve("smoke", k_max=9, kmeans_n_init=2))
    assert (c.n_images, c.pca_components, c.n_init, c.fixed_k) == (200, 10, 2, 10)
    assert c.ks.tolist() == list(range(2, 10))


def test_typed_results_per_variant(tiny_models):
    scfg = ra.SparsityConfig(n_images=50, batch_size=20)
    sp = ra.sparsity(tiny_models, scfg)
    assert sp.config == scfg and sp.n_models == 8 and sp.cache_hits == 0 and sp.seconds > 0
    assert sp.layer_names == {
        "mnist": [f"conv{i}" for i in range(1, 5)],
        "cifar10": [f"conv{i}" for i in range(1, 14)],
    }
    assert set(sp.layer) == set(classify.VARIANTS) == set(sp.channel)
    assert sp.layer["mnist", True].shape == (2, 4) and sp.channel["cifar10", False].shape == (2, 13)
    # the arrays are the per-model entries, seeds along axis 0
    entries = ra.analyse_all(scfg, tiny_models.trained["cifar10", True], tiny_models.splits)
    np.testing.assert_array_equal(sp.layer["cifar10", True], [e["layer"] for e in entries])
    assert ra.sparsity(tiny_models, scfg).cache_hits == 8

    ccfg = ra.ClusterConfig(n_images=50, pca_components=5, k_min=2, k_max=6, fixed_k=4)
    cl = ra.clusters(tiny_models, ccfg)
    assert cl.ks.tolist() == [2, 3, 4, 5, 6]
    for name in ("class_dbi", "k_star", "dbi_k_star", "dbi_fixed_k"):
        assert getattr(cl, name)["cifar10", True].shape == (2, 13)
    assert cl.dbi_curve["mnist", False].shape == (2, 4, 5)
    np.testing.assert_allclose(cl.dbi_k_star["mnist", True], cl.dbi_curve["mnist", True].min(-1))
    ends = cl.k_star_at_range_end("mnist")
    k_all = np.concatenate([cl.k_star["mnist", bn].ravel() for bn in (True, False)])
    assert ends.shape == (16,) and ends.tolist() == [k in (2, 6) for k in k_all]
