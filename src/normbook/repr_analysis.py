"""Cached representation analysis of trained Part B models (PROTOCOL B.2).

For every trained model (a :class:`normbook.classify.Trained`), the post-ReLU activations
of every conv layer are taken on a fixed, class-balanced set of images (model in eval mode)
and summarised per layer:

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
"""
from __future__ import annotations

import sys
import time
from concurrent.futures import as_completed
from dataclasses import asdict, dataclass

import numpy as np
import torch
from sklearn.cluster import KMeans
from sklearn.metrics import davies_bouldin_score
from threadpoolctl import threadpool_limits

from . import cache, classify, convnets, data, representations
from .classify import ClassifierConfig, Splits, Trained
from .progress import progress

__all__ = ["SparsityConfig", "ClusterConfig", "select_images", "sparsity_stats", "cluster_stats",
           "kmeans_sweep", "analyse_all", "analyse_variants", "stack"]


@dataclass(frozen=True)
class SparsityConfig:
    split: str = "train"            # images from the model's training subset, or "test"
    n_images: int = 5_000           # class-balanced (paper: 5,000 training images)
    image_seed: int = 0
    channel_spatial_mean: bool = True
    eps: float = 0.0                # |a| <= eps counts as zero (paper: exact zeros)
    batch_size: int = 500

    kind = "b_sparsity"


@dataclass(frozen=True)
class ClusterConfig:
    split: str = "train"
    n_images: int = 5_000
    image_seed: int = 0
    features: str = "flatten"       # or "channel_mean" (one value per channel)
    pca_components: int = 0         # k-means on this many principal components; 0 = raw
    k_min: int = 2
    k_max: int = 20
    n_init: int = 1                 # k-means restarts per k
    fixed_k: int = 10               # DBI at a k chosen without looking at DBI
    batch_size: int = 500
    memory_mb: int = 1_000          # activations held at once; more layers -> several passes

    kind = "b_clusters"

    @property
    def ks(self) -> np.ndarray:
        return np.arange(self.k_min, self.k_max + 1)


def select_images(splits: Splits, split: str, n_images: int, seed: int
                  ) -> tuple[torch.Tensor, np.ndarray]:
    """A class-balanced subset (``n_images // 10`` per class, the remainder to random
    classes) of the training or test subset: normalized tensors and labels."""
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    y_all = getattr(splits, f"y_{split}")
    try:
        idx = data.subset(y_all, n=n_images, seed=seed)
    except ValueError as exc:
        raise ValueError(f"cannot draw {n_images} class-balanced {split} images from "
                         f"{len(y_all)}: {exc}") from None
    x = getattr(splits, f"x_{split}")[idx]
    return data.to_tensors(x, y_all[idx], pad_to=32, normalize=splits.normalize)[0], y_all[idx]


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
        acts = convnets.capture_activations(model, x[i:i + cfg.batch_size],
                                            batch_size=cfg.batch_size)
        w = len(next(iter(acts.values()))) / n  # every sample has equally many elements
        for j, name in enumerate(names):
            a = acts[name]
            layer[j] += w * representations.layer_sparsity(a, cfg.eps)
            ch = w * representations.channel_sparsity(a, cfg.eps, cfg.channel_spatial_mean)
            per_channel[j] = ch if per_channel[j] is None else per_channel[j] + ch
    offsets = np.cumsum([0] + [len(c) for c in per_channel])
    return {"layer": layer, "channel": np.array([c.mean() for c in per_channel]),
            "per_channel": np.concatenate(per_channel), "channel_offsets": offsets}


def kmeans_sweep(x_fit: np.ndarray, x_score: np.ndarray, ks, *, n_init: int, seed: int,
                 fixed_k: int | None = None) -> dict:
    """k-means on ``x_fit`` for each k, each partition scored by DBI on ``x_score``.

    k* = argmin DBI over ``ks`` (ties: smallest k). ``fixed_k`` is also fitted if outside ks.
    """
    ks = np.asarray(sorted(set(int(k) for k in ks)))
    fit = sorted(set(ks.tolist()) | ({int(fixed_k)} if fixed_k else set()))
    if fit[0] < 2 or fit[-1] >= len(x_fit):
        raise ValueError(f"every k must satisfy 2 <= k < n_samples={len(x_fit)}; got {fit}")
    dbi = {}
    for k in fit:
        labels = KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit_predict(x_fit)
        dbi[k] = (float(davies_bouldin_score(x_score, labels))
                  if len(np.unique(labels)) > 1 else np.inf)
    curve = np.array([dbi[k] for k in ks])
    k_star = int(ks[np.argmin(curve)])
    return {"ks": ks, "dbi": curve, "k_star": k_star, "dbi_k_star": dbi[k_star],
            "dbi_fixed_k": dbi[fixed_k] if fixed_k else np.nan}


def _layer_groups(sizes: dict[str, int], n: int, budget_bytes: float) -> list[list[str]]:
    groups, cur, used = [], [], 0.0
    for name, d in sizes.items():
        b = 4.0 * n * d
        if cur and used + b > budget_bytes:
            groups.append(cur)
            cur, used = [], 0.0
        cur.append(name)
        used += b
    return groups + ([cur] if cur else [])


def cluster_stats(model, x: torch.Tensor, y: np.ndarray, cfg: ClusterConfig, seed: int = 0
                  ) -> dict[str, np.ndarray]:
    """Per layer [L]: ``class_dbi``, ``k_star``, ``dbi_k_star``, ``dbi_fixed_k``; the DBI
    curve over k, ``dbi_curve`` [L, len(ks)]; ``ks``. ``seed`` seeds PCA and k-means."""
    names = model.conv_layer_names()
    out = {k: np.zeros(len(names)) for k in ("class_dbi", "k_star", "dbi_k_star", "dbi_fixed_k")}
    out["dbi_curve"] = np.zeros((len(names), len(cfg.ks)))
    groups = _layer_groups(_layer_sizes(model, x), len(x), cfg.memory_mb * 1e6)
    for group in groups:
        acts = convnets.capture_activations(model, x, batch_size=cfg.batch_size, layers=group)
        for name in group:
            j = names.index(name)
            feats = representations.to_features(acts.pop(name), cfg.features).astype(np.float32)
            out["class_dbi"][j] = davies_bouldin_score(feats, y)
            fit = (representations.reduce_dim(feats, cfg.pca_components, seed)
                   if cfg.pca_components else feats)
            sw = kmeans_sweep(fit, feats, cfg.ks, n_init=cfg.n_init, seed=seed,
                              fixed_k=cfg.fixed_k)
            out["k_star"][j], out["dbi_k_star"][j] = sw["k_star"], sw["dbi_k_star"]
            out["dbi_fixed_k"][j], out["dbi_curve"][j] = sw["dbi_fixed_k"], sw["dbi"]
    out["ks"] = cfg.ks
    return out


# --------------------------------------------------------------------------- cache + pool

ANALYSIS_CODE = classify.TRAIN_CODE + (representations, sys.modules[__name__])


def _compute(acfg, cfg: ClassifierConfig, seed: int, state: dict, splits: Splits) -> dict:
    t0 = time.perf_counter()
    with classify.single_thread(), threadpool_limits(1):
        model = classify.model_from_state(cfg, state).to(cfg.device)
        x, y = select_images(splits, acfg.split, acfg.n_images, acfg.image_seed)
        if isinstance(acfg, SparsityConfig):
            arrays = sparsity_stats(model, x, acfg)
        else:
            arrays = cluster_stats(model, x, y, acfg, seed=acfg.image_seed)
    arrays["seconds"] = np.array(time.perf_counter() - t0)
    return arrays


_WORKER_SPLITS: dict = {}


def _init_worker(splits_by_key: dict) -> None:
    _WORKER_SPLITS.update(splits_by_key)


def _job(acfg, cfg, seed, state, split_key):
    return _compute(acfg, cfg, seed, state, _WORKER_SPLITS[split_key])


def analyse_all(acfg: SparsityConfig | ClusterConfig, trained: list[Trained],
                splits: dict[str, Splits], workers: int = 1) -> list[cache.Entry]:
    """The analysis of every trained model, from the cache or computed ``workers`` at a time.
    ``splits`` maps dataset -> full :class:`Splits` (as for :func:`classify.train_all`)."""
    keys = [{"train": classify._key(t.cfg, t.seed, splits[t.cfg.dataset].data_id),
             "analysis": asdict(acfg)} for t in trained]
    missing = [i for i, k in enumerate(keys) if not cache.is_cached(acfg.kind, k, ANALYSIS_CODE)]
    subsets, results = {}, {}
    for i in missing:
        c = trained[i].cfg
        sk = classify._split_key(c)
        if sk not in subsets:
            subsets[sk] = splits[c.dataset].subset(c.n_train, c.n_val, c.n_test, c.split_seed)

    def store(i, arrays):
        results[i] = cache.cached(acfg.kind, keys[i], lambda: cache.Entry(arrays), ANALYSIS_CODE)
        results[i].hit = False

    desc = f"{acfg.kind[2:]} analysis"
    if len(missing) > 1 and workers > 1:
        with classify.make_pool(min(workers, len(missing)), (subsets,), _init_worker) as pool:
            futs = {pool.submit(_job, acfg, trained[i].cfg, trained[i].seed,
                                {k: v.numpy() for k, v in trained[i].state.items()},
                                classify._split_key(trained[i].cfg)): i for i in missing}
            for fut in progress(as_completed(futs), total=len(futs), desc=desc):
                store(futs[fut], fut.result())
    else:
        for i in progress(missing, desc=desc):
            t = trained[i]
            store(i, _compute(acfg, t.cfg, t.seed, t.state, subsets[classify._split_key(t.cfg)]))
    return [results[i] if i in results
            else cache.cached(acfg.kind, k, classify._never, ANALYSIS_CODE)
            for i, k in enumerate(keys)]


def analyse_variants(acfg: SparsityConfig | ClusterConfig, models: dict[tuple, list[Trained]],
                     splits: dict[str, Splits], workers: int = 1) -> dict[tuple, list[cache.Entry]]:
    """:func:`analyse_all` over every model of ``{variant: [Trained per seed]}`` in one pool."""
    flat = [(v, t) for v, ts in models.items() for t in ts]
    entries = analyse_all(acfg, [t for _, t in flat], splits, workers)
    out: dict[tuple, list[cache.Entry]] = {v: [] for v in models}
    for (v, _), e in zip(flat, entries):
        out[v].append(e)
    return out


def stack(entries: list[cache.Entry], name: str) -> np.ndarray:
    """One array from several entries, seeds along axis 0."""
    return np.stack([np.asarray(e[name]) for e in entries])
