"""Representation metrics of PROTOCOL B.2 / B.3-2 / B.3-3: sparsity and cluster purity.

Activations are post-ReLU arrays [N, C, H, W] (or [N, C] / [N, D]) as returned by
:func:`normbook.convnets.capture_activations`. Cluster metrics take one feature vector per
sample; :func:`to_features` flattens (the default) or averages each channel over space.
Everything that draws random numbers takes a ``seed`` and is deterministic under it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.metrics import davies_bouldin_score, silhouette_score

__all__ = ["layer_sparsity", "sparsity_sweep", "channel_sparsity", "average_channel_sparsity",
           "to_features", "reduce_dim", "class_dbi", "KMeansSweep", "kmeans_dbi_sweep"]

_CHUNK = 1024  # samples per chunk: bounds the temporary boolean arrays on big layers


def _check_eps(eps: float) -> None:
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")


def _zero_mask(a: np.ndarray, eps: float) -> np.ndarray:
    return (a == 0) if eps == 0 else (np.abs(a) <= eps)


def layer_sparsity(acts, eps: float = 0.0) -> float:
    """Fraction of activations with ``|a| <= eps`` (``eps=0``: exactly zero)."""
    _check_eps(eps)
    a = np.asarray(acts)
    if a.size == 0:
        raise ValueError("empty activations")
    zeros = sum(int(np.count_nonzero(_zero_mask(a[i:i + _CHUNK], eps)))
                for i in range(0, len(a), _CHUNK))
    return zeros / a.size


def sparsity_sweep(acts, eps_values: Iterable[float]) -> np.ndarray:
    """:func:`layer_sparsity` at each threshold (B.3-3: near-zero, not only exact zeros)."""
    return np.array([layer_sparsity(acts, e) for e in eps_values])


def channel_sparsity(acts, eps: float = 0.0, spatial_mean: bool = False) -> np.ndarray:
    """Per-channel sparsity, shape [C], of [N, C, H, W] or [N, C] activations.

    Default: the fraction of a channel's elements (over samples and positions) with
    ``|a| <= eps``. ``spatial_mean=True`` first averages each channel map over space, so
    the value is the fraction of samples for which the whole map is (near) zero.
    """
    _check_eps(eps)
    a = np.asarray(acts)
    if a.ndim < 2:
        raise ValueError(f"need [N, C, ...] activations, got shape {a.shape}")
    spatial = tuple(range(2, a.ndim))
    counts = np.zeros(a.shape[1], dtype=np.int64)
    for i in range(0, len(a), _CHUNK):
        chunk = a[i:i + _CHUNK]
        if spatial_mean and spatial:
            chunk = chunk.mean(axis=spatial)
        counts += np.count_nonzero(_zero_mask(chunk, eps).reshape(len(chunk), a.shape[1], -1),
                                   axis=(0, 2))
    per_channel = len(a) * (1 if spatial_mean else int(np.prod(a.shape[2:], dtype=np.int64)))
    return counts / per_channel


def average_channel_sparsity(acts, eps: float = 0.0, spatial_mean: bool = False) -> float:
    """Mean of :func:`channel_sparsity` over channels.

    With ``spatial_mean=False`` every channel has the same number of elements, so this equals
    :func:`layer_sparsity` exactly; the per-channel spread is what differs.
    """
    return float(channel_sparsity(acts, eps, spatial_mean).mean())


def to_features(acts, reduce: str = "flatten") -> np.ndarray:
    """[N, C, H, W] -> [N, D]: ``"flatten"`` (D = C*H*W) or ``"channel_mean"`` (D = C)."""
    a = np.asarray(acts)
    if reduce == "flatten":
        return a.reshape(len(a), -1)
    if reduce == "channel_mean":
        return a.mean(axis=tuple(range(2, a.ndim))) if a.ndim > 2 else a
    raise ValueError(f"reduce must be 'flatten' or 'channel_mean', got {reduce!r}")


def _as_2d(features) -> np.ndarray:
    x = np.asarray(features)
    x = x.reshape(len(x), -1)
    return x if np.issubdtype(x.dtype, np.floating) else x.astype(np.float64)


def reduce_dim(features, n_components: int | None, seed: int = 0) -> np.ndarray:
    """PCA to ``n_components`` (None, or not fewer than D: unchanged).

    A reconstruction knob, not a paper fact: k-means and DBI on raw conv activations (tens of
    thousands of dimensions) are slow on a CPU, and PCA changes the geometry they measure, so
    the book reports which setting was used.
    """
    x = _as_2d(features)
    if n_components is None or n_components >= x.shape[1]:
        return x
    n_components = min(n_components, len(x))
    return PCA(n_components=n_components, random_state=seed).fit_transform(x)


def class_dbi(features, labels, *, pca_components: int | None = None, seed: int = 0) -> float:
    """Davies-Bouldin index with the true labels as clusters (lower = purer classes).

    ``features`` [N, ...] is flattened per sample; see :func:`reduce_dim` for PCA.
    """
    x = reduce_dim(features, pca_components, seed)
    return float(davies_bouldin_score(x, np.asarray(labels)))


@dataclass(frozen=True)
class KMeansSweep:
    """Result of :func:`kmeans_dbi_sweep`; arrays are aligned with ``ks``."""
    ks: np.ndarray
    dbi: np.ndarray
    silhouette: np.ndarray | None
    k_star: int                # argmin DBI (the paper's selection)
    dbi_at_k_star: float
    fixed_k: int | None
    dbi_at_fixed_k: float | None
    k_silhouette: int | None   # argmax silhouette: k chosen by a different criterion (B.3-2)
    dbi_at_k_silhouette: float | None


def kmeans_dbi_sweep(features, ks: Iterable[int] = range(2, 21), *, seed: int = 0,
                     n_init: int = 3, fixed_k: int | None = 10, silhouette: bool = False,
                     silhouette_sample_size: int | None = None,
                     pca_components: int | None = None) -> KMeansSweep:
    """k-means for each k, scored with DBI; k* = argmin DBI (ties: smallest k).

    Also reports DBI at ``fixed_k`` and, with ``silhouette=True``, the silhouette per k and
    the DBI at the silhouette-chosen k, which avoids selecting and scoring on one metric.
    ``n_init`` (restarts per k) and ``pca_components`` are reconstruction knobs.
    ``silhouette_sample_size`` subsamples the O(N^2) silhouette (seeded).
    """
    x = reduce_dim(features, pca_components, seed)
    ks = np.array(sorted(set(int(k) for k in ks)))
    if fixed_k is not None and fixed_k not in ks:
        ks_fit = np.array(sorted(set(ks) | {fixed_k}))
    else:
        ks_fit = ks
    if len(ks) == 0 or ks_fit.min() < 2 or ks_fit.max() >= len(x):
        raise ValueError(f"every k must satisfy 2 <= k < n_samples={len(x)}; got {ks_fit}")
    dbi, sil = {}, {}
    for k in ks_fit:
        labels = KMeans(n_clusters=int(k), n_init=n_init, random_state=seed).fit_predict(x)
        dbi[k] = float(davies_bouldin_score(x, labels))
        if silhouette and k in ks:
            sil[k] = float(silhouette_score(x, labels, sample_size=silhouette_sample_size,
                                            random_state=seed))
    dbi_arr = np.array([dbi[k] for k in ks])
    k_star = int(ks[np.argmin(dbi_arr)])
    sil_arr = np.array([sil[k] for k in ks]) if silhouette else None
    k_sil = int(ks[np.argmax(sil_arr)]) if silhouette else None
    return KMeansSweep(
        ks=ks, dbi=dbi_arr, silhouette=sil_arr, k_star=k_star, dbi_at_k_star=dbi[k_star],
        fixed_k=fixed_k, dbi_at_fixed_k=dbi[fixed_k] if fixed_k is not None else None,
        k_silhouette=k_sil, dbi_at_k_silhouette=dbi[k_sil] if silhouette else None)
