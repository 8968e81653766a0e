"""Representation metrics: sparsity and cluster purity (Davies-Bouldin index, k-means).

Activations are post-ReLU arrays [N, C, H, W] (or [N, C] / [N, D]) as returned by
:func:`.convnets.capture_activations`. Cluster metrics take one feature vector per
sample; :func:`to_features` flattens (the default) or averages each channel over space.
Everything that draws random numbers takes a ``seed`` and is deterministic under it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.metrics import davies_bouldin_score

_CHUNK = 1024  # samples per chunk: bounds the temporary boolean arrays on big layers


def _check_eps(eps: float) -> None:
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")


def at_most(limit: float) -> np.float32:
    """The largest float32 not above ``limit``: for float32 ``a``, ``a <= limit`` exactly when
    ``a <= at_most(limit)``, so the counts compare float32 arrays without a float64 copy."""
    f = np.float32(limit)
    return f if f <= limit else np.nextafter(f, np.float32(-np.inf))


def zero_mask(a: np.ndarray, limit: float) -> np.ndarray:
    """The sparsity rule every chapter counts by: an activation is zero when ``|a| <= limit``
    (``limit`` 0: exactly zero). A float32 array is compared with :func:`at_most`, so the count
    is the exact comparison's, not that of ``limit`` rounded to float32."""
    if limit == 0:
        return a == 0
    return np.abs(a) <= (at_most(limit) if a.dtype == np.float32 else limit)


def layer_sparsity(acts, eps: float = 0.0) -> float:
    """Fraction of activations with ``|a| <= eps`` (``eps=0``: exactly zero)."""
    _check_eps(eps)
    a = np.asarray(acts)
    if a.size == 0:
        raise ValueError("empty activations")
    zeros = sum(
        int(np.count_nonzero(zero_mask(a[i : i + _CHUNK], eps))) for i in range(0, len(a), _CHUNK)
    )
    return zeros / a.size


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
        chunk = a[i : i + _CHUNK]
        if spatial_mean and spatial:
            chunk = chunk.mean(axis=spatial)
        counts += np.count_nonzero(
            zero_mask(chunk, eps).reshape(len(chunk), a.shape[1], -1), axis=(0, 2)
        )
    per_channel = len(a) * (1 if spatial_mean else int(np.prod(a.shape[2:], dtype=np.int64)))
    return counts / per_channel


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
    """DBI of the k-means partition at every k of ``ks``, and the selected k."""

    ks: np.ndarray
    dbi: np.ndarray  # aligned with ks
    k_star: int  # argmin DBI over ks (the paper's selection; ties: smallest k)
    dbi_k_star: float
    dbi_fixed_k: float  # at a k chosen without looking at DBI (NaN if none)
    labels_fixed_k: np.ndarray | None = None  # that partition (None if no fixed k)


def kmeans_sweep(
    x_fit: np.ndarray,
    x_score: np.ndarray,
    ks: Iterable[int],
    *,
    n_init: int,
    seed: int,
    fixed_k: int | None = None,
) -> KMeansSweep:
    """k-means on ``x_fit`` for each k, each partition scored by DBI on ``x_score``.

    Fitting on a reduced copy (:func:`reduce_dim`) and scoring on the raw features keeps the
    score the paper's while only the search for partitions is approximated. ``fixed_k`` is
    also fitted when it is outside ``ks``. A partition with one cluster scores ``inf``.
    """
    ks = np.asarray(sorted(set(int(k) for k in ks)))
    fit = sorted(set(ks.tolist()) | ({int(fixed_k)} if fixed_k else set()))
    if fit[0] < 2 or fit[-1] >= len(x_fit):
        raise ValueError(f"every k must satisfy 2 <= k < n_samples={len(x_fit)}; got {fit}")
    dbi, fixed = {}, None
    for k in fit:
        labels = KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit_predict(x_fit)
        dbi[k] = (
            float(davies_bouldin_score(x_score, labels)) if len(np.unique(labels)) > 1 else np.inf
        )
        fixed = labels if k == fixed_k else fixed
    curve = np.array([dbi[k] for k in ks])
    k_star = int(ks[np.argmin(curve)])
    return KMeansSweep(ks, curve, k_star, dbi[k_star], dbi[fixed_k] if fixed_k else np.nan, fixed)
