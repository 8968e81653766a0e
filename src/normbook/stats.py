"""Streaming per-index statistics and the localization test of PROTOCOL A.2."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps


class RunningMoments:
    """Count, mean and sum of squared deviations per index, merged batch by batch.

    Uses Chan et al.'s pairwise update, so millions of predictions per index never
    have to be held in memory.
    """

    def __init__(self, shape: tuple[int, ...]):
        self.count = 0
        self.mean = np.zeros(shape, dtype=np.float64)
        self.m2 = np.zeros(shape, dtype=np.float64)

    def update(self, batch: np.ndarray) -> None:
        """Add samples; ``batch`` has shape (n, *shape)."""
        batch = np.asarray(batch, dtype=np.float64)
        n_b = batch.shape[0]
        if n_b == 0:
            return
        mean_b = batch.mean(axis=0)
        m2_b = ((batch - mean_b) ** 2).sum(axis=0)
        n_a, n = self.count, self.count + n_b
        delta = mean_b - self.mean
        self.mean = self.mean + delta * (n_b / n)
        self.m2 = self.m2 + m2_b + delta**2 * (n_a * n_b / n)
        self.count = n

    @property
    def var(self) -> np.ndarray:
        """Unbiased sample variance."""
        return self.m2 / max(self.count - 1, 1)

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(self.var)


def stack_moments(prefix: str, streams: list[RunningMoments]) -> dict[str, np.ndarray]:
    """``{prefix}_mean``, ``_std`` and ``_count`` arrays over independent streams (axis 0)."""
    return {f"{prefix}_mean": np.stack([m.mean for m in streams]),
            f"{prefix}_std": np.stack([m.std for m in streams]),
            f"{prefix}_count": np.array([m.count for m in streams])}


def neighbour_pvalues(mean_a, std_a, n_a, mean_b, std_b, n_b) -> tuple[np.ndarray, np.ndarray]:
    """Welch p-values of index i (stream a) against i-1 and i+1 (stream b), along the last axis.

    The two streams come from independent inputs, so the test's independence
    assumption holds. The missing neighbour at either end gets NaN.
    """
    mean_a, std_a, mean_b, std_b = map(np.asarray, (mean_a, std_a, mean_b, std_b))
    left = np.full(mean_a.shape, np.nan)
    right = np.full(mean_a.shape, np.nan)
    left[..., 1:] = sps.ttest_ind_from_stats(mean_a[..., 1:], std_a[..., 1:], n_a,
                                             mean_b[..., :-1], std_b[..., :-1], n_b,
                                             equal_var=False).pvalue
    right[..., :-1] = sps.ttest_ind_from_stats(mean_a[..., :-1], std_a[..., :-1], n_a,
                                               mean_b[..., 1:], std_b[..., 1:], n_b,
                                               equal_var=False).pvalue
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
class EffectSize:
    """How large the position signal is, not only whether it is detectable."""

    slope: float       # of mean prediction vs target (1 = the ramp itself)
    r2: float          # of mean prediction vs target
    mae: float         # mean |mean prediction - target|
    n_indices: int


def effect_size(mean_pred: np.ndarray, target: np.ndarray, where: np.ndarray | None = None) -> EffectSize:
    """Slope, R^2 and MAE of the per-index mean predictions against the ramp."""
    mean_pred, target = np.asarray(mean_pred, float), np.asarray(target, float)
    if where is not None:
        mean_pred, target = mean_pred[where], target[where]
    fit = sps.linregress(target, mean_pred)
    return EffectSize(slope=float(fit.slope), r2=float(fit.rvalue**2),
                      mae=float(np.abs(mean_pred - target).mean()), n_indices=int(target.size))
