"""Chapter B4's cached analyses: the threshold sweep and the silhouettes on a tiny model, the
cache, the k*-at-an-end share and the held-out configs."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.metrics import silhouette_score

from normbook.paper_b.cached import analysis, convnets, stress_analyses
from normbook.paper_b.cached import representations as rep
from normbook.paper_b.runs import classify
from normbook.runtime import cache


@pytest.fixture(scope="module")
def tiny(patch_images):
    import torch

    model = convnets.build("standard_cnn", seed=3, width=2, batchnorm=False).eval()
    x, y = patch_images()
    return model, torch.as_tensor(x), y


def test_float32_counts_against_a_float64_limit_are_exact():
    rng = np.random.default_rng(0)
    a = rng.random(10_000, dtype=np.float32)
    for limit in [*rng.random(200), *a[:200].astype(np.float64), 0.5 + 1e-12, 1e-40]:
        assert np.count_nonzero(a <= rep.at_most(limit)) == np.count_nonzero(
            a.astype(np.float64) <= limit
        )
        # the one sparsity rule, as B2 and B4 both count by it
        assert np.count_nonzero(rep.zero_mask(a, limit)) == np.count_nonzero(
            np.abs(a.astype(np.float64)) <= limit
        )


def test_b2_and_b4_count_zeros_by_one_rule(tiny):
    """B4's threshold sweep at an absolute limit counts what B2's layer sparsity counts."""
    model, x, _ = tiny
    cfg = stress_analyses.ThresholdConfig(n_images=60, thresholds=(0.0, 0.3), batch_size=25)
    out = stress_analyses.threshold_stats(model, x, cfg)
    acts = convnets.capture_activations(model, x[:60])
    for j, name in enumerate(model.conv_layer_names()):
        a = np.asarray(acts[name], np.float32)
        assert out["sparsity"][j, 1] == rep.layer_sparsity(a, 0.3 * out["scale"][j])


def test_threshold_sweep_starts_at_exact_zeros_and_only_adds_zeros(tiny):
    model, x, _ = tiny
    cfg = stress_analyses.ThresholdConfig(
        n_images=60, thresholds=(0.0, 0.1, 0.5, 2.0), batch_size=25
    )
    out = stress_analyses.threshold_stats(model, x, cfg)
    exact = analysis.sparsity_stats(model, x, analysis.SparsityConfig(n_images=60))["layer"]
    np.testing.assert_allclose(out["sparsity"][:, 0], exact, atol=1e-12)
    assert np.all(np.diff(out["sparsity"], axis=1) >= 0)
    acts = convnets.capture_activations(model, x)
    a = acts["conv2"].astype(np.float64)
    assert out["scale"][1] == pytest.approx(np.abs(a).mean())
    assert out["sparsity"][1, 2] == pytest.approx(np.mean(a <= 0.5 * np.abs(a).mean()))
    std = stress_analyses.threshold_stats(model, x, replace(cfg, scale="std"))
    assert std["scale"][1] == pytest.approx(a.std(), rel=1e-6)
    with pytest.raises(ValueError, match="scale"):
        stress_analyses.ThresholdConfig(scale="max")


def test_silhouettes_score_b3s_partition_as_sklearn_does(tiny):
    model, x, y = tiny
    b3 = analysis.ClusterConfig(n_images=60, pca_components=5, k_min=2, k_max=4, fixed_k=10)
    clusters = analysis.cluster_stats(model, x, y, b3, seed=0)
    part = clusters["fixed_k_labels"]
    cfg = stress_analyses.SilhouetteConfig(b3, silhouette_images=40)
    out = stress_analyses.silhouette_stats(model, x, y, part, cfg)
    sub = np.sort(np.random.default_rng(0).choice(60, 40, replace=False))
    np.testing.assert_array_equal(cfg.subset(), sub)
    feats = rep.to_features(convnets.capture_activations(model, x)["conv4"]).astype(np.float32)
    assert out["class_silhouette"][3] == pytest.approx(silhouette_score(feats[sub], y[sub]))
    assert out["kmeans_silhouette"][3] == pytest.approx(silhouette_score(feats[sub], part[3][sub]))
    # the score is of the partition it is given: another partition scores differently
    other = stress_analyses.silhouette_stats(model, x, y, np.roll(part, 7, axis=1), cfg)
    assert not np.allclose(other["kmeans_silhouette"], out["kmeans_silhouette"])


def test_silhouettes_refuse_clusters_of_other_models_or_config():
    cfg = stress_analyses.SilhouetteConfig(
        analysis.ClusterConfig(n_images=60), silhouette_images=40
    )
    models = SimpleNamespace(trained={("mnist", True): [0, 1], ("mnist", False): [0, 1]})
    labels = np.zeros((2, 4, 60), np.int16)
    other_models = SimpleNamespace(config=cfg.clusters, fixed_k_labels={("mnist", True): labels})
    same_models = dict.fromkeys(models.trained, labels)
    other_config = SimpleNamespace(config=analysis.ClusterConfig(n_images=50),
                                   fixed_k_labels=same_models)  # fmt: skip
    for clusters in (other_models, other_config):
        with pytest.raises(ValueError, match="same models and cluster config"):
            stress_analyses.silhouettes(models, clusters, cfg)


def test_stress_analyses_are_cached(tiny_trained):
    trained, splits = tiny_trained
    cfg = stress_analyses.ThresholdConfig(n_images=40, thresholds=(0.0, 0.1))
    first = stress_analyses.analyse_all(cfg, trained, splits)
    again = stress_analyses.analyse_all(cfg, trained, splits)
    assert not any(e.hit for e in first) and all(e.hit for e in again)
    np.testing.assert_array_equal(first[0]["sparsity"], again[0]["sparsity"])
    assert cache.info()["b_threshold"][0] == 1


@pytest.fixture
def tiny_trained(patch_images, tiny_cfg):
    """One untrained tiny model wrapped as a cached ``TrainedModel``, on synthetic splits."""
    x, y = patch_images(400)
    raw = ((x[:, 0, 2:30, 2:30] - x.min()) / (x.max() - x.min()) * 255).astype(np.uint8)
    full = classify.Splits("mnist", raw, y, raw[:0], y[:0], raw[:200], y[:200], "synthetic")
    cfg = tiny_cfg(batchnorm=False, optimizer="sgd", lr=0.01, n_train=300, n_val=50)
    state = {k: v.clone() for k, v in cfg.build(0).state_dict().items()}
    return [classify.TrainedModel(cfg, 0, cache.Entry(tensors=state))], {"mnist": full}


def test_edge_share_per_seed():
    k_star = {("mnist", True): np.array([[2, 10], [20, 20]]),
              ("mnist", False): np.array([[5, 10], [2, 7]])}  # fmt: skip
    np.testing.assert_allclose(stress_analyses.edge_share(k_star, "mnist", (2, 20)), [0.25, 0.75])


def test_held_out_clusters_keep_the_class_dbi_and_skip_kmeans(tiny):
    model, x, y = tiny
    full = analysis.ClusterConfig(n_images=60, pca_components=5, k_min=2, k_max=4, fixed_k=10)
    held = stress_analyses.on_test_images(full)
    assert held.split == "test" and not held.kmeans
    a = analysis.cluster_stats(model, x, y, full)
    b = analysis.cluster_stats(model, x, y, held)
    np.testing.assert_array_equal(a["class_dbi"], b["class_dbi"])
    assert np.isnan(b["dbi_curve"]).all() and np.isfinite(a["dbi_curve"]).all()
