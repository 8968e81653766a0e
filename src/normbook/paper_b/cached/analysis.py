"""Cached representation analysis of paper B's trained models: sparsity and clusters.

For every trained model (a :class:`.models.TrainedModel`), the post-ReLU activations of every
conv layer are taken on a fixed, class-balanced set of images (model in eval mode) and
summarised per layer:

- :class:`SparsityConfig` -> layer sparsity (fraction of exactly-zero activations over all
  elements) and average channel sparsity (mean over channels of the per-channel sparsity;
  with ``channel_spatial_mean`` each channel map is first averaged over space, so a channel
  counts as zero for an image only when its whole map is zero: the per-image version, which
  differs from layer sparsity; without it the average equals layer sparsity exactly).
  Activations are streamed batch by batch, so any number of images fits in memory.
- :class:`ClusterConfig` -> class-based Davies-Bouldin index (true labels as clusters),
  k-means for k = k_min..k_max with k* = argmin DBI, DBI(k*), and DBI at a fixed k.
  k-means runs on the first ``pca_components`` principal components (0 = on the raw
  features); every DBI, class-based or k-means, is computed on the *raw* layer features,
  so PCA only approximates the clustering algorithm, never the score.

Results are cached per (trained model, analysis config); several models are analysed at
once in worker processes, each with one thread, so results do not depend on ``workers``.

    sparsity = analysis.sparsity(models, analysis.SparsityConfig.from_params(params),
    params.workers) clusters = analysis.clusters(models,
    analysis.ClusterConfig.from_params(params), params.workers)
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass, replace

import numpy as np
import sklearn
import torch
from threadpoolctl import threadpool_limits

from normbook.paper_b.cached import cache_keys, convnets, models, representations
from normbook.paper_b.cached.models import Models, TrainedModel
from normbook.paper_b.cached.training import (
    ClassifierConfig,
    Splits,
    Variant,
    model_from_state,
    split_key,
)
from normbook.paper_b.data import datasets
from normbook.runtime import cache
from normbook.runtime.workers import run_jobs, single_thread


@dataclass(frozen=True)
class SparsityConfig:
    split: str = "train"  # images from the model's training subset, or "test"
    n_images: int = 5_000  # class-balanced (paper: 5,000 training images)
    image_seed: int = 0
    channel_spatial_mean: bool = True
    eps: float = 0.0  # |a| <= eps counts as zero (paper: exact zeros)
    batch_size: int = 500

    kind = "b_sparsity"

    @classmethod
    def from_params(cls, params) -> SparsityConfig:
        """From a chapter's parameters (the B2 knobs)."""
        return cls(
            split=params.sparsity_split,
            n_images=params.sparsity_images,
            channel_spatial_mean=params.channel_spatial_mean,
            eps=params.zero_threshold,
        )


@dataclass(frozen=True)
class ClusterConfig:
    split: str = "train"
    n_images: int = 5_000
    image_seed: int = 0
    features: str = "flatten"  # or "channel_mean" (one value per channel)
    pca_components: int = 0  # k-means on this many principal components; 0 = raw
    k_min: int = 2
    k_max: int = 20
    n_init: int = 1  # k-means restarts per k
    fixed_k: int = 10  # DBI at a k chosen without looking at DBI
    batch_size: int = 500
    memory_mb: int = 1_000  # activations held at once; more layers -> several passes
    kmeans: bool = True  # False: the class-based DBI only (k-means results are NaN)

    kind = "b_clusters"

    @classmethod
    def from_params(cls, params) -> ClusterConfig:
        """From a chapter's parameters (the B3 knobs)."""
        return cls(
            split=params.cluster_split,
            n_images=params.cluster_images,
            features=params.cluster_features,
            pca_components=params.pca_components,
            k_min=params.k_min,
            k_max=params.k_max,
            n_init=params.kmeans_n_init,
            fixed_k=params.fixed_k,
        )

    @property
    def ks(self) -> np.ndarray:
        return np.arange(self.k_min, self.k_max + 1)


def select_images(
    splits: Splits, split: str, n_images: int, seed: int
) -> tuple[torch.Tensor, np.ndarray]:
    """A class-balanced subset (``n_images // 10`` per class, the remainder to random
    classes) of the training or test subset: normalized tensors and labels."""
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    y_all = getattr(splits, f"y_{split}")
    try:
        idx = datasets.subset(y_all, n=n_images, seed=seed)
    except ValueError as exc:
        raise ValueError(
            f"cannot draw {n_images} class-balanced {split} images from {len(y_all)}: {exc}"
        ) from None
    x, _ = datasets.to_tensors(
        getattr(splits, f"x_{split}")[idx], y_all[idx], pad_to=32, normalize=splits.normalize
    )
    return x, y_all[idx]


def _layer_sizes(model, x: torch.Tensor) -> dict[str, int]:
    acts = convnets.capture_activations(model, x[:1])
    return {k: int(np.prod(v.shape[1:])) for k, v in acts.items()}


def sparsity_stats(model, x: torch.Tensor, cfg: SparsityConfig) -> dict[str, np.ndarray]:
    """Per layer: ``layer`` sparsity and ``channel`` (average channel) sparsity, shape [L];
    ``per_channel`` (all channels, layer after layer) with ``channel_offsets`` [L + 1]."""
    names = model.conv_layer_names()
    n = len(x)
    layer = np.zeros(len(names))
    per_channel: list[np.ndarray] = [None] * len(names)
    for i in range(0, n, cfg.batch_size):
        acts = convnets.capture_activations(
            model, x[i : i + cfg.batch_size], batch_size=cfg.batch_size
        )
        w = len(next(iter(acts.values()))) / n  # every sample has equally many elements
        for j, name in enumerate(names):
            a = acts[name]
            layer[j] += w * representations.layer_sparsity(a, cfg.eps)
            ch = w * representations.channel_sparsity(a, cfg.eps, cfg.channel_spatial_mean)
            per_channel[j] = ch if per_channel[j] is None else per_channel[j] + ch
    offsets = np.cumsum([0] + [len(c) for c in per_channel])
    return {
        "layer": layer,
        "channel": np.array([c.mean() for c in per_channel]),
        "per_channel": np.concatenate(per_channel),
        "channel_offsets": offsets,
    }


def _layer_groups(sizes: dict[str, int], n: int, budget_bytes: float) -> list[list[str]]:
    """Consecutive layers whose activations on ``n`` images fit ``budget_bytes`` together."""
    groups, cur, used = [], [], 0.0
    for name, d in sizes.items():
        b = 4.0 * n * d
        if cur and used + b > budget_bytes:
            groups.append(cur)
            cur, used = [], 0.0
        cur.append(name)
        used += b
    return groups + ([cur] if cur else [])


def cluster_stats(
    model, x: torch.Tensor, y: np.ndarray, cfg: ClusterConfig, seed: int = 0
) -> dict[str, np.ndarray]:
    """Per layer [L]: ``class_dbi``, ``k_star``, ``dbi_k_star``, ``dbi_fixed_k``; the DBI
    curve over k, ``dbi_curve`` [L, len(ks)]; ``ks``; the k-means partition at the fixed k,
    ``fixed_k_labels`` [L, N] (-1 without k-means). ``seed`` seeds PCA and k-means."""
    names = model.conv_layer_names()
    out = {k: np.zeros(len(names)) for k in ("class_dbi", "k_star", "dbi_k_star", "dbi_fixed_k")}
    out["dbi_curve"] = np.zeros((len(names), len(cfg.ks)))
    out["fixed_k_labels"] = np.full((len(names), len(x)), -1, dtype=np.int16)
    groups = _layer_groups(_layer_sizes(model, x), len(x), cfg.memory_mb * 1e6)
    for group in groups:
        acts = convnets.capture_activations(model, x, batch_size=cfg.batch_size, layers=group)
        for name in group:
            j = names.index(name)
            feats = representations.to_features(acts.pop(name), cfg.features).astype(np.float32)
            if not np.isfinite(feats).all():
                raise ValueError(f"layer {name}: activations are not finite")
            with sklearn.config_context(assume_finite=True):  # checked once above, not per call
                _layer_clusters(out, j, feats, y, cfg, seed)
    out["ks"] = cfg.ks
    return out


def _layer_clusters(out: dict, j: int, feats: np.ndarray, y, cfg: ClusterConfig, seed: int):
    """Layer ``j``'s entries of :func:`cluster_stats` (scikit-learn's finiteness checks, 20 %
    of the DBI's time, are skipped: the caller checked the features once)."""
    out["class_dbi"][j] = representations.class_dbi(feats, y)
    if not cfg.kmeans:
        for k in ("k_star", "dbi_k_star", "dbi_fixed_k", "dbi_curve"):
            out[k][j] = np.nan
        return
    fit = representations.reduce_dim(feats, cfg.pca_components or None, seed)
    sw = representations.kmeans_sweep(
        fit, feats, cfg.ks, n_init=cfg.n_init, seed=seed, fixed_k=cfg.fixed_k
    )
    out["k_star"][j], out["dbi_k_star"][j] = sw.k_star, sw.dbi_k_star
    out["dbi_fixed_k"][j], out["dbi_curve"][j] = sw.dbi_fixed_k, sw.dbi
    if sw.labels_fixed_k is not None:
        out["fixed_k_labels"][j] = sw.labels_fixed_k


# --------------------------------------------------------------------------- cache + workers

# Every analysis of a trained model is keyed by the model's key, the analysis config and the
# code of training (a model's weights) and of the analyses.
ANALYSIS_CODE = cache_keys.TRAIN.code + (models, representations, sys.modules[__name__])
STEPS = {kind: cache.step(kind, *ANALYSIS_CODE) for kind in ("b_sparsity", "b_clusters")}

AnalysisConfig = SparsityConfig | ClusterConfig


def _compute(acfg: AnalysisConfig, cfg: ClassifierConfig, state: dict, splits: Splits) -> dict:
    t0 = time.perf_counter()
    with single_thread(), threadpool_limits(1):
        model = model_from_state(cfg, state).to(cfg.device)
        x, y = select_images(splits, acfg.split, acfg.n_images, acfg.image_seed)
        if isinstance(acfg, SparsityConfig):
            arrays = sparsity_stats(model, x, acfg)
        else:
            arrays = cluster_stats(model, x, y, acfg, seed=acfg.image_seed)
    arrays["seconds"] = np.array(time.perf_counter() - t0)
    return arrays


def _job(subsets: dict, acfg: AnalysisConfig, cfg: ClassifierConfig, state: dict, key: tuple):
    return _compute(acfg, cfg, state, subsets[key])


def analyse_all(
    acfg: AnalysisConfig, trained: list[TrainedModel], splits: dict[str, Splits], workers: int = 1
) -> list[cache.Entry]:
    """The analysis of every trained model, from the cache or computed ``workers`` at a time.
    ``splits`` maps dataset -> full :class:`.classify.Splits` (as for
    :func:`.classify.train_all`)."""
    keys = [{"train": t.key(splits[t.cfg.dataset].data_id), "analysis": asdict(acfg)}
            for t in trained]  # fmt: skip

    def analyse_missing(idx: list[int]):
        cfgs = {i: trained[i].cfg for i in idx}
        subsets = {split_key(c): splits[c.dataset].of(c) for c in cfgs.values()}
        jobs = [(acfg, cfgs[i], {k: v.numpy() for k, v in trained[i].state.items()},
                 split_key(cfgs[i])) for i in idx]  # fmt: skip
        for j, arrays in run_jobs(_job, jobs, subsets, workers, desc=f"{acfg.kind[2:]} analysis"):
            t = trained[idx[j]]
            print(f"analysed {t.cfg.dataset} {t.cfg.label} seed {t.seed} ({acfg.kind[2:]}): "
                  f"{float(arrays['seconds']):.1f} s", file=sys.stderr, flush=True)  # fmt: skip
            yield idx[j], cache.Entry(arrays)

    return STEPS[acfg.kind].cached_each(keys, analyse_missing)


def _per_variant(
    acfg: AnalysisConfig, models: Models, workers: int
) -> dict[Variant, list[cache.Entry]]:
    """:func:`analyse_all` over every model of ``models``, in one pool."""
    entries = iter(analyse_all(acfg, models.all, models.splits, workers))
    return {v: [next(entries) for _ in ts] for v, ts in models.trained.items()}


def stack_per_variant(
    entries: dict[Variant, list[cache.Entry]], name: str
) -> dict[Variant, np.ndarray]:
    """One array per variant, seeds along axis 0."""
    return {v: np.stack([np.asarray(e[name]) for e in es]) for v, es in entries.items()}


def bookkeeping(models: Models, entries: dict[Variant, list[cache.Entry]]) -> dict:
    """The fields every analysis result shares: layer names, models, cache hits, compute."""
    names: dict[str, list[str]] = {}
    for v, ts in models.trained.items():
        if v[0] not in names:
            names[v[0]] = ts[0].model().conv_layer_names()
    flat = [e for es in entries.values() for e in es]
    return dict(
        layer_names=names,
        n_models=len(flat),
        cache_hits=sum(e.hit for e in flat),
        seconds=sum(float(e["seconds"]) for e in flat),
    )


@dataclass
class Sparsity:
    """Layer and average channel sparsity per variant, arrays [seeds, layers]."""

    config: SparsityConfig
    layer: dict[Variant, np.ndarray]
    channel: dict[Variant, np.ndarray]
    layer_names: dict[str, list[str]]  # dataset -> conv layer names, in forward order
    n_models: int
    cache_hits: int  # models whose analysis came from the cache
    seconds: float  # single-thread compute of every model, when computed


@dataclass
class Clusters:
    """Cluster purity per variant: arrays [seeds, layers], DBI over k [seeds, layers, k]."""

    config: ClusterConfig
    class_dbi: dict[Variant, np.ndarray]  # true labels as clusters
    k_star: dict[Variant, np.ndarray]  # argmin over k of the k-means DBI
    dbi_k_star: dict[Variant, np.ndarray]
    dbi_fixed_k: dict[Variant, np.ndarray]  # at config.fixed_k
    dbi_curve: dict[Variant, np.ndarray]  # [seeds, layers, len(ks)]
    fixed_k_labels: dict[Variant, np.ndarray]  # the partition at fixed_k [seeds, layers, N]
    layer_names: dict[str, list[str]]
    n_models: int
    cache_hits: int
    seconds: float

    @property
    def ks(self) -> np.ndarray:
        return self.config.ks

    def k_star_at_range_end(self, dataset: str) -> np.ndarray:
        """Per variant, seed and layer of ``dataset`` (flat): is k* at an end of the searched
        range? The DBI curve then has no minimum inside the range."""
        ends = (self.config.k_min, self.config.k_max)
        return np.concatenate(
            [np.isin(self.k_star[dataset, bn].ravel(), ends) for bn in (True, False)]
        )


def sparsity(models: Models, config: SparsityConfig, workers: int = 1) -> Sparsity:
    """Sparsity of every trained model (cached per model and config)."""
    entries = _per_variant(config, models, workers)
    return Sparsity(
        config,
        stack_per_variant(entries, "layer"),
        stack_per_variant(entries, "channel"),
        **bookkeeping(models, entries),
    )


def clusters(models: Models, config: ClusterConfig, workers: int = 1) -> Clusters:
    """Cluster purity of every trained model (cached per model and config)."""
    entries = _per_variant(config, models, workers)
    metrics = ("class_dbi", "k_star", "dbi_k_star", "dbi_fixed_k", "dbi_curve", "fixed_k_labels")
    return Clusters(
        config, *(stack_per_variant(entries, m) for m in metrics), **bookkeeping(models, entries)
    )


# --------------------------------------------------------------------------- compute to effect


@dataclass
class TrainingCurves:
    """One metric of every model at every kept state: arrays [states, seeds, layers] per
    variant; the last state is the kept model, all measured alike."""

    metric: str  # "sparsity" (layer sparsity), or a :class:`Clusters` array ("class_dbi", ...)
    fractions: np.ndarray  # (K,) fractions of the epoch budget; the kept model counts as 1
    values: dict[Variant, np.ndarray]
    missing: int  # kept states a run stopped before (its kept weights stand in for them)


def at_state(t: TrainedModel, i: int) -> TrainedModel:
    """``t``'s weights kept at ``t.cfg.checkpoints[i]`` of its epoch budget; ``t`` itself when
    the run stopped before that state (training had ended by its rule)."""
    state = t.checkpoint(i)
    if state is None:
        return t
    stage = {"checkpoint": t.cfg.checkpoints[i]}
    return TrainedModel(t.cfg, t.seed, cache.Entry(tensors=state), stage)


def states(models: Models) -> list[TrainedModel]:
    """Every model's kept states, then the model itself, state-major: [state][variant][seed]."""
    return [t for m in at_states(models) for t in m.all]


def late_states(fractions) -> list[int]:
    """Of kept states at ``fractions`` of the budget, the last one at or before half of it:
    with the end of the budget, all that a late gain (:func:`.core.claims.late_gain`)
    reads."""
    return [i for i, f in enumerate(fractions) if f <= 0.5][-1:]


def at_states(models: Models, late: bool = False) -> list[Models]:
    """The models at each kept state (``late``: at :func:`late_states` only), then the models
    themselves (the same variants, seeds and splits; test metrics belong to the kept models
    only)."""
    fracs = next(iter(models.configs.values())).checkpoints
    kept = late_states(fracs) if late else range(len(fracs))
    return [Models({v: [at_state(t, i) for t in ts] for v, ts in models.trained.items()},
                   models.splits) for i in kept] + [models]  # fmt: skip


@dataclass
class Along:
    """One analysis at every kept state and of the kept models (the last result), with the
    fractions of the epoch budget they stand at (the kept model counts as 1)."""

    fractions: np.ndarray
    results: list
    missing: int  # kept states a run stopped before (its kept weights stand in for them)

    def curve(self, attr: str, metric: str = "") -> TrainingCurves:
        """The result attribute ``attr`` (a dict variant -> [seeds, layers]) as a curve named
        ``metric`` (default: ``attr``)."""
        first = getattr(self.results[0], attr)
        values = {v: np.stack([np.asarray(getattr(r, attr)[v], float) for r in self.results])
                  for v in first}  # fmt: skip
        return TrainingCurves(metric or attr, self.fractions, values, self.missing)


def along(models: Models, analyse, late: bool = False) -> Along:
    """``analyse`` (a function of a :class:`Models`) at every kept state (``late``: at
    :func:`late_states` only, for results no figure draws) and of the kept models, each state
    analysed like the trained models (cached per state)."""
    ms = at_states(models, late)
    fracs = next(iter(models.configs.values())).checkpoints
    kept = late_states(fracs) if late else range(len(fracs))
    missing = sum(t.stage == {} for m in ms[:-1] for t in m.all)
    return Along(np.array([*(fracs[i] for i in kept), 1.0]), [analyse(m) for m in ms], missing)


KMEANS_CURVES = ("class_dbi", "k_star", "dbi_k_star", "dbi_fixed_k")


def through_training(models: Models, config: AnalysisConfig, n_images: int,
                     workers: int = 1) -> TrainingCurves:  # fmt: skip
    """The compute-to-effect curve of one analysis (chapter B2's sparsity, or chapter B3's
    class-based DBI without k-means) on ``n_images`` images: every kept state analysed like
    the trained models, cached per state."""
    if isinstance(config, SparsityConfig):
        config = replace(config, n_images=n_images)
        return along(models, lambda m: sparsity(m, config, workers)).curve("layer", "sparsity")
    config = replace(config, n_images=n_images, kmeans=False)
    return along(models, lambda m: clusters(m, config, workers)).curve("class_dbi")


def cluster_curves(models: Models, config: ClusterConfig, n_images: int,
                   workers: int = 1) -> dict[str, TrainingCurves]:  # fmt: skip
    """Every cluster metric of chapter B3 (``KMEANS_CURVES``: class-based DBI, k*, DBI(k*),
    DBI at the fixed k), k-means included, at the late states (:func:`late_states`) and of the
    kept models, on ``n_images`` images (the same k range, PCA and restarts as the trained
    models' analysis), cached, so that each k-means row knows whether its effect was still
    moving."""
    config = replace(config, n_images=n_images, kmeans=True)
    runs = along(models, lambda m: clusters(m, config, workers), late=True)
    return {m: runs.curve(m) for m in KMEANS_CURVES}
