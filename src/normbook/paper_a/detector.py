"""The localization test of paper A (Definition 2.3, as operationalized on the Methods page).

Index i is *localized* when its mean prediction differs significantly (Welch's t-test at level
alpha) from both neighbours i - 1 and i + 1, with i's moments from one stream of predictions
and the neighbours' from an independent second stream. The localization distance is how far
inward from the ends localization reaches without a break.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from ..core.stats import EffectSize, effect_size
from .task import ramp


def neighbour_pvalues(mean_a, std_a, n_a, mean_b, std_b, n_b) -> tuple[np.ndarray, np.ndarray]:
    """Welch p-values of index i (stream a) against i-1 and i+1 (stream b), along the last axis.

    The two streams come from independent inputs, so the test's independence
    assumption holds. The missing neighbour at either end gets NaN.
    """
    mean_a, std_a, mean_b, std_b = map(np.asarray, (mean_a, std_a, mean_b, std_b))
    left = np.full(mean_a.shape, np.nan)
    right = np.full(mean_a.shape, np.nan)
    left[..., 1:] = sps.ttest_ind_from_stats(
        mean_a[..., 1:],
        std_a[..., 1:],
        n_a,
        mean_b[..., :-1],
        std_b[..., :-1],
        n_b,
        equal_var=False,
    ).pvalue
    right[..., :-1] = sps.ttest_ind_from_stats(
        mean_a[..., :-1],
        std_a[..., :-1],
        n_a,
        mean_b[..., 1:],
        std_b[..., 1:],
        n_b,
        equal_var=False,
    ).pvalue
    return left, right


def localized_mask(p_left: np.ndarray, p_right: np.ndarray, alpha: float) -> np.ndarray:
    """Index localized when it differs significantly from every neighbour it has.

    A NaN p-value (constant predictions on both sides) means no detectable difference.
    """
    with np.errstate(invalid="ignore"):
        ok_l = np.where(np.isnan(p_left), True, p_left < alpha)
        ok_r = np.where(np.isnan(p_right), True, p_right < alpha)
        # an index with no valid test at all is not localized
        both_missing = np.isnan(p_left) & np.isnan(p_right)
    return ok_l & ok_r & ~both_missing


def boundary_distance(seq_len: int) -> np.ndarray:
    """Distance of every index to the nearest end of the sequence."""
    i = np.arange(seq_len)
    return np.minimum(i, seq_len - 1 - i)


def interior_mask(seq_len: int, radius: int) -> np.ndarray:
    """Indices whose receptive field never touches the padding: [R, l-1-R]."""
    return boundary_distance(seq_len) >= radius


def localization_distance(mask: np.ndarray, window: int = 4, threshold: float = 0.5) -> int:
    """How far inward from the boundary localization reaches without a break.

    Walking inward from r = 0, the reach is the last boundary distance r at which at least
    ``threshold`` of the indices with boundary distance in [r-window, r+window] are
    localized; -1 when r = 0 already fails. Requiring contiguity with the boundary matters:
    neighbouring indices share inputs, so the test's false positives come in runs, and a
    run in the middle of the sequence must not count as reach.
    """
    mask = np.asarray(mask, dtype=bool)
    dist = boundary_distance(mask.shape[-1])
    reach = -1
    for r in range(int(dist.max()) + 1):
        sel = (dist >= r - window) & (dist <= r + window)
        if mask[sel].mean() < threshold:
            break
        reach = r
    return reach


@dataclass(frozen=True)
class DetectorConfig:
    """The test's level and the definition of the localization distance."""

    alpha: float = 0.1  # Welch test level (paper: 0.1)
    window: int = 4  # half-width of the distance window
    threshold: float = 0.5  # fraction of the window that must be localized


@dataclass(frozen=True)
class Moments:
    """Per-index moments of predictions in two independent streams: arrays (2, ..., L)."""

    mean: np.ndarray
    std: np.ndarray
    count: np.ndarray  # (2,)

    @classmethod
    def from_arrays(cls, arrays, prefix: str) -> Moments:
        """Read ``{prefix}_mean``, ``_std``, ``_count`` (as written by ``stats.stack_moments``)."""
        return cls(arrays[f"{prefix}_mean"], arrays[f"{prefix}_std"], arrays[f"{prefix}_count"])

    def pvalues(self) -> tuple[np.ndarray, np.ndarray]:
        return neighbour_pvalues(
            self.mean[0], self.std[0], self.count[0], self.mean[1], self.std[1], self.count[1]
        )

    @property
    def pooled_mean(self) -> np.ndarray:
        """Mean over both streams, weighted by their counts."""
        m, c = self.mean, self.count
        return (m[0] * c[0] + m[1] * c[1]) / (c[0] + c[1])


@dataclass(frozen=True)
class Localization:
    """One model's localized indices and effect sizes."""

    localized: np.ndarray  # (L,) bool
    distance: int  # localization distance (boundary -> inward)
    frac_interior: float  # fraction of [R, l-1-R] localized
    frac_all: float
    effect_all: EffectSize
    effect_interior: EffectSize


def summarize(moments: Moments, radius: int, detector: DetectorConfig) -> list[Localization]:
    """The test and effect sizes per model, from output moments of shape (2, M, L)."""
    seq_len = moments.mean.shape[-1]
    p_l, p_r = moments.pvalues()
    target = ramp(seq_len).numpy()
    interior = interior_mask(seq_len, radius)
    pooled = moments.pooled_mean
    out = []
    for m in range(moments.mean.shape[1]):
        loc = localized_mask(p_l[m], p_r[m], detector.alpha)
        out.append(
            Localization(
                localized=loc,
                distance=localization_distance(loc, detector.window, detector.threshold),
                frac_interior=float(loc[interior].mean()) if interior.any() else float("nan"),
                frac_all=float(loc.mean()),
                effect_all=effect_size(pooled[m], target),
                effect_interior=effect_size(pooled[m], target, interior),
            )
        )
    return out


def depth_maps(probe: Moments, alpha: float) -> np.ndarray:
    """Localized mask per depth (depth, M, L) from the depth probes' moments."""
    p_l, p_r = probe.pvalues()
    return localized_mask(p_l, p_r, alpha)


def distances(maps: np.ndarray, detector: DetectorConfig) -> np.ndarray:
    """Localization distance per depth and model, (depth, M), from masks (depth, M, L)."""
    return np.array(
        [
            [
                localization_distance(maps[d, m], detector.window, detector.threshold)
                for m in range(maps.shape[1])
            ]
            for d in range(maps.shape[0])
        ]
    )
