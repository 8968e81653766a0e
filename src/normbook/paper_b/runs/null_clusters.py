"""What k* looks like on data without clusters: k-means with k* = argmin DBI (the paper's
selection, :func:`.representations.kmeans_sweep`) on isotropic Gaussian noise, the reference
chapter B3 reads a k* at the end of the searched range against.

Kept apart from :mod:`.representations` and :mod:`.analysis` on purpose: their source keys the
cached analyses of the trained models, which this reference does not change.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from normbook.paper_b.cached.representations import kmeans_sweep


@dataclass(frozen=True)
class NoiseSweep:
    """k* and the DBI curve over k of every draw of isotropic Gaussian noise."""

    ks: np.ndarray
    k_star: np.ndarray  # [draws]
    dbi: np.ndarray  # [draws, len(ks)]
    n: int  # points per draw
    dim: int  # dimensions

    @property
    def at_top(self) -> int:
        """Draws whose k* is the largest k searched."""
        return int((self.k_star == self.ks.max()).sum())


def isotropic_k_star(
    n: int, dim: int, ks, draws: int = 5, n_init: int = 1, seed: int = 0
) -> NoiseSweep:
    """k-means DBI over ``ks`` and k* on ``draws`` samples of ``n`` points from a standard
    normal in ``dim`` dimensions (draw ``i`` from seed ``seed + i``): data with no clusters at
    all. One thread, as the cached analyses (much faster than k-means' thread pool on a
    busy machine)."""
    ks = np.asarray(sorted(set(int(k) for k in ks)))
    k_star, dbi = [], []
    with threadpool_limits(1):
        for i in range(draws):
            x = np.random.default_rng(seed + i).standard_normal((n, dim)).astype(np.float32)
            sweep = kmeans_sweep(x, x, ks, n_init=n_init, seed=seed + i)
            k_star.append(sweep.k_star)
            dbi.append(sweep.dbi)
    return NoiseSweep(ks, np.array(k_star), np.array(dbi), n, dim)
