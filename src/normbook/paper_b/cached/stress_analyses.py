"""Chapter B4's analyses of chapter B1's models beyond chapters B2's and B3's: their configs,
their cached computation, and the summaries read from them.

1. **Cluster count** (:class:`SilhouetteConfig`, :func:`edge_share`). Silhouette scores of
   the class labels and of the k-means partition at the fixed k (the partition chapter B3
   scores with DBI), and how often k* sits at an end of its range, against isotropic noise
   (:func:`.null_clusters.isotropic_k_star`).
2. **Sparsity threshold** (:class:`ThresholdConfig`). The fraction of activations at most
   ``t`` times their layer's scale (mean absolute activation, or standard deviation), for a
   sweep of ``t``; ``t = 0`` counts exact zeros, the paper's measure.
3. **Held-out data** (:func:`on_test_images`): chapter B2's and B3's analyses on test images
   (:mod:`.analysis` with ``split="test"``).

Analyses are cached per (trained model, config) as :mod:`.analysis` does, keyed by the code
of the analysis modules and of this module's analysis functions (``STRESS_CODE``).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch
from sklearn.metrics import silhouette_score
from threadpoolctl import threadpool_limits

from normbook.paper_b.cached import analysis, convnets, representations
from normbook.paper_b.cached.analysis import Clusters
from normbook.paper_b.cached.models import Models, TrainedModel
from normbook.paper_b.cached.training import (
    ClassifierConfig,
    Splits,
    Variant,
    model_from_state,
    split_key,
)
from normbook.runtime import cache
from normbook.runtime.workers import run_jobs, single_thread


@dataclass(frozen=True)
class ThresholdConfig:
    """Sparsity at relative thresholds: |a| <= t * scale counts as zero, scale the layer's
    mean absolute activation ("mean_abs") or standard deviation ("std") over the measured
    images; t = 0 counts exact zeros."""

    split: str = "train"
    n_images: int = 5_000
    image_seed: int = 0
    thresholds: tuple[float, ...] = (0.0, 0.01, 0.1)
    scale: str = "mean_abs"
    batch_size: int = 500

    kind = "b_threshold"

    def __post_init__(self):
        if self.scale not in ("mean_abs", "std"):
            raise ValueError(f"scale must be 'mean_abs' or 'std', got {self.scale!r}")
        if min(self.thresholds) < 0:
            raise ValueError(f"thresholds must be >= 0, got {self.thresholds}")

    @classmethod
    def from_params(cls, params) -> ThresholdConfig:
        return cls(params.sparsity_split, params.sparsity_images,
                   thresholds=tuple(sorted({0.0, *map(float, params.rel_thresholds)})),
                   scale=params.threshold_scale)  # fmt: skip


@dataclass(frozen=True)
class SilhouetteConfig:
    """Silhouette scores on raw layer features of ``silhouette_images`` of chapter B3's cluster
    images: of the class labels, and of B3's own k-means partition at its fixed k (read from
    its cached analysis, ``clusters``, not fitted again)."""

    clusters: analysis.ClusterConfig = analysis.ClusterConfig()
    silhouette_images: int = 1_000
    batch_size: int = 500

    kind = "b_silhouette"

    @property
    def split(self) -> str:
        return self.clusters.split

    @property
    def n_images(self) -> int:
        return self.clusters.n_images

    @property
    def image_seed(self) -> int:
        return self.clusters.image_seed

    @classmethod
    def from_params(cls, params) -> SilhouetteConfig:
        return cls(analysis.ClusterConfig.from_params(params), params.silhouette_images)

    def subset(self) -> np.ndarray:
        """Which of the cluster images are scored (sorted indices)."""
        m = min(self.silhouette_images, self.n_images)
        return np.sort(np.random.default_rng(self.image_seed).choice(self.n_images, m, False))


def threshold_stats(model, x: torch.Tensor, cfg: ThresholdConfig) -> dict[str, np.ndarray]:
    """Per layer: ``scale`` [L] and ``sparsity`` [L, thresholds] (two streamed passes: the
    scale, summed in float64, then the counts)."""
    names = model.conv_layer_names()
    sums = np.zeros((len(names), 3))  # sum a, sum |a|, sum a^2
    counts = np.zeros(len(names))

    def batches():
        for i in range(0, len(x), cfg.batch_size):
            acts = convnets.capture_activations(model, x[i : i + cfg.batch_size])
            yield [np.asarray(acts[n], np.float32) for n in names]

    for acts in batches():
        for j, a in enumerate(acts):
            if cfg.scale == "mean_abs":
                sums[j, 1] += np.abs(a).sum(dtype=np.float64)
            else:
                sums[j, 0] += a.sum(dtype=np.float64)
                sums[j, 2] += np.square(a, dtype=np.float64).sum()
            counts[j] += a.size
    mean, mean_abs, sq = (sums / counts[:, None]).T
    scale = mean_abs if cfg.scale == "mean_abs" else np.sqrt(np.maximum(sq - mean**2, 0.0))
    zeros = np.zeros((len(names), len(cfg.thresholds)))
    for acts in batches():
        for j, a in enumerate(acts):
            for i, t in enumerate(cfg.thresholds):  # the one rule: |a| <= t * scale is zero
                zeros[j, i] += np.count_nonzero(representations.zero_mask(a, t * scale[j]))
    return {"scale": scale, "sparsity": zeros / counts[:, None],
            "thresholds": np.asarray(cfg.thresholds)}  # fmt: skip


def silhouette_stats(
    model, x: torch.Tensor, y: np.ndarray, partition: np.ndarray, cfg: SilhouetteConfig
) -> dict:
    """Per layer [L]: ``class_silhouette`` (labels as clusters) and ``kmeans_silhouette`` (of
    ``partition`` [L, N], chapter B3's k-means labels of the N cluster images ``x``), on
    ``cfg.subset()`` of the images."""
    names, sub = model.conv_layer_names(), cfg.subset()
    out = {k: np.zeros(len(names)) for k in ("class_silhouette", "kmeans_silhouette")}
    acts = convnets.capture_activations(model, x[sub], batch_size=cfg.batch_size)
    for j, name in enumerate(names):
        feats = representations.to_features(acts.pop(name), cfg.clusters.features)
        feats = feats.astype(np.float32)
        out["class_silhouette"][j] = silhouette_score(feats, y[sub])
        labels = partition[j][sub]
        ok = len(np.unique(labels)) > 1
        out["kmeans_silhouette"][j] = silhouette_score(feats, labels) if ok else 0.0
    return out


StressConfig = ThresholdConfig | SilhouetteConfig


def _compute(
    acfg: StressConfig, cfg: ClassifierConfig, state: dict, splits: Splits, partition=None
) -> dict:
    t0 = time.perf_counter()
    with single_thread(), threadpool_limits(1):
        model = model_from_state(cfg, state).to(cfg.device)
        x, y = analysis.select_images(splits, acfg.split, acfg.n_images, acfg.image_seed)
        if isinstance(acfg, ThresholdConfig):
            arrays = threshold_stats(model, x, acfg)
        else:
            arrays = silhouette_stats(model, x, y, partition, acfg)
    arrays["seconds"] = np.array(time.perf_counter() - t0)
    return arrays


def _job(subsets: dict, acfg: StressConfig, cfg: ClassifierConfig, state: dict, key: tuple,
         partition=None):  # fmt: skip
    return _compute(acfg, cfg, state, subsets[key], partition)


# The code that determines these analyses' results keys their cache entries: the analysis
# modules and this module's analysis code (inspect.getsource of each), so editing the rest of
# this module, the 2 x 2 or chapter B4's rules and prose never recomputes an analysis.
STRESS_CODE = analysis.ANALYSIS_CODE + (
    ThresholdConfig, SilhouetteConfig, threshold_stats, silhouette_stats, _compute,
)  # fmt: skip
STRESS_STEPS = {kind: cache.step(kind, *STRESS_CODE) for kind in ("b_threshold", "b_silhouette")}


def analyse_all(
    acfg: StressConfig,
    trained: list[TrainedModel],
    splits: dict[str, Splits],
    workers: int = 1,
    partitions: list[np.ndarray] | None = None,
) -> list[cache.Entry]:
    """As :func:`.analysis.analyse_all`, for this module's analyses; the silhouettes take
    each model's k-means partition from chapter B3's analysis (``partitions``, one per
    model; ``acfg.clusters`` made them, so it is part of the key)."""
    if isinstance(acfg, SilhouetteConfig) and partitions is None:
        raise ValueError("silhouettes need each model's fixed-k partition (``partitions``)")
    keys = [{"train": t.key(splits[t.cfg.dataset].data_id), "analysis": asdict(acfg)}
            for t in trained]  # fmt: skip

    def analyse_missing(idx: list[int]):
        subsets = {split_key(trained[i].cfg): splits[trained[i].cfg.dataset].of(
            trained[i].cfg) for i in idx}  # fmt: skip
        jobs = [(acfg, trained[i].cfg, {k: v.numpy() for k, v in trained[i].state.items()},
                 split_key(trained[i].cfg), None if partitions is None else partitions[i])
                for i in idx]  # fmt: skip
        for j, arrays in run_jobs(_job, jobs, subsets, workers, desc=f"{acfg.kind[2:]} analysis"):
            yield idx[j], cache.Entry(arrays)

    return STRESS_STEPS[acfg.kind].cached_each(keys, analyse_missing)


@dataclass
class Thresholds:
    """Sparsity at every relative threshold: arrays [seeds, layers, thresholds] per variant."""

    config: ThresholdConfig
    sparsity: dict[Variant, np.ndarray]
    scale: dict[Variant, np.ndarray]  # [seeds, layers]
    layer_names: dict[str, list[str]]
    n_models: int
    cache_hits: int
    seconds: float

    @property
    def thresholds(self) -> np.ndarray:
        return np.asarray(self.config.thresholds)

    def layer_mean(self, dataset: str, bn: bool) -> np.ndarray:
        """Mean over conv layers: [seeds, thresholds]."""
        return self.sparsity[dataset, bn].mean(axis=1)


@dataclass
class Silhouettes:
    """Silhouette scores, arrays [seeds, layers] per variant."""

    config: SilhouetteConfig
    class_silhouette: dict[Variant, np.ndarray]
    kmeans_silhouette: dict[Variant, np.ndarray]
    layer_names: dict[str, list[str]]
    n_models: int
    cache_hits: int
    seconds: float


def _per_variant(acfg: StressConfig, models: Models, workers: int, partitions=None) -> dict:
    entries = iter(analyse_all(acfg, models.all, models.splits, workers, partitions))
    return {v: [next(entries) for _ in ts] for v, ts in models.trained.items()}


def thresholds(models: Models, config: ThresholdConfig, workers: int = 1) -> Thresholds:
    """The threshold sweep of every trained model (cached per model and config)."""
    e = _per_variant(config, models, workers)
    stacked = analysis.stack_per_variant
    return Thresholds(config, stacked(e, "sparsity"), stacked(e, "scale"),
                      **analysis.bookkeeping(models, e))  # fmt: skip


def silhouettes(
    models: Models, clusters: Clusters, config: SilhouetteConfig, workers: int = 1
) -> Silhouettes:
    """Silhouette scores of every trained model (cached per model and config), of the k-means
    partitions in ``clusters`` (chapter B3's analysis of the same models with
    ``config.clusters``)."""
    shape = {v: len(ts) for v, ts in models.trained.items()}
    if (
        clusters.config != config.clusters
        or {v: len(p) for v, p in clusters.fixed_k_labels.items()} != shape
    ):
        raise ValueError("silhouettes need the clusters of the same models and cluster config")
    parts = [p for v in models.trained for p in clusters.fixed_k_labels[v]]
    e = _per_variant(config, models, workers, parts)
    names = ("class_silhouette", "kmeans_silhouette")
    return Silhouettes(config, *(analysis.stack_per_variant(e, n) for n in names),
                       **analysis.bookkeeping(models, e))  # fmt: skip


def edge_share(
    k_star: dict[Variant, np.ndarray], dataset: str, ends: tuple[int, int]
) -> np.ndarray:
    """Per seed: the share of (layer, variant) whose k* is an end of the searched range."""
    return np.mean([np.isin(k_star[dataset, bn], ends).mean(axis=1) for bn in (True, False)], 0)


def noise_edge_share(noise, ends: tuple[int, int]) -> float:
    """The share of isotropic-noise draws whose k* is an end of the range."""
    return float(np.isin(noise.k_star, ends).mean())


def on_test_images(config):
    """The same analysis config on the held-out test images; for clusters, the class-based
    DBI only (the held-out claims need no k-means)."""
    if isinstance(config, analysis.ClusterConfig):
        return replace(config, split="test", kmeans=False)
    return replace(config, split="test")


# --------------------------------------------------------------------------- kept states


def thresholds_along(models: Models, config: ThresholdConfig, n_images: int,
                     workers: int = 1) -> analysis.Along:  # fmt: skip
    """The threshold sweep at the late states (:func:`.analysis.late_states`) and of the kept
    models, on ``n_images``."""
    config = replace(config, n_images=n_images)
    return analysis.along(models, lambda m: thresholds(m, config, workers), late=True)


def silhouettes_along(models: Models, config: SilhouetteConfig, n_images: int,
                      workers: int = 1) -> analysis.Along:  # fmt: skip
    """The silhouettes at the late states and of the kept models, of the k-means partitions
    chapter B3 finds there (:func:`.analysis.cluster_curves`, the same ``n_images``: cache
    hits)."""
    clusters_cfg = replace(config.clusters, n_images=n_images, kmeans=True)
    config = replace(config, clusters=clusters_cfg)
    return analysis.along(models, lambda m: silhouettes(
        m, analysis.clusters(m, clusters_cfg, workers), config, workers), late=True)  # fmt: skip


def test_images_along(models: Models, sparsity_cfg, clusters_cfg, n_images: int,
                      workers: int = 1) -> tuple[analysis.Along, analysis.Along]:  # fmt: skip
    """Sparsity and the class-based DBI on test images (:func:`on_test_images`) at the late
    states and of the kept models, on ``n_images``."""
    sp = replace(on_test_images(sparsity_cfg), n_images=n_images)
    cl = replace(on_test_images(clusters_cfg), n_images=n_images)
    return (
        analysis.along(models, lambda m: analysis.sparsity(m, sp, workers), late=True),
        analysis.along(models, lambda m: analysis.clusters(m, cl, workers), late=True),
    )
