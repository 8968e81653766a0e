"""Slopes of the mean prediction by distance from the nearer end of the sequence.

Every effect on localization is a slope of the per-index mean prediction against the ramp, in
units of the ramp's slope (1: the ramp itself; 0: flat). This module measures it over bands of
distance from the nearer end, from any evaluated run's moments (pure numpy, never cached):

- band 0, distances [0, R): where every CNN sees the padding (a description; the learning
  control is the mean prediction's R² over the whole sequence, :func:`.verdicts.learned`);
- hop band h >= 1, distances [R + 2R(h-1), R + 2Rh): what the side channel must carry (paper
  A's hop is 2R);
- beyond a distance: everything farther from both ends than it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from normbook.paper_a.cached.task import ramp
from normbook.paper_a.measures.detector import boundary_distance


def _mean(run) -> np.ndarray:
    """The pooled mean prediction per seed and index, (M, L)."""
    return run.out.pooled_mean


def _slope(mean: np.ndarray, target: np.ndarray, where: np.ndarray) -> np.ndarray:
    """Per model, the least-squares slope of ``mean`` against ``target`` over ``where``."""
    t = target[where]
    if t.size < 2:
        return np.full(mean.shape[0], np.nan)
    return np.array([sps.linregress(t, m[where]).slope for m in mean])


def end_slope(mean: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Per model (``mean`` is (M, L)): the slope over distances [lo, hi) from each end, fitted
    separately at the two ends and averaged (a slope *within* each end's band, not the jump
    between the two ends)."""
    L = mean.shape[-1]
    dist, target = boundary_distance(L), ramp(L).numpy()
    band = (dist >= lo) & (dist < hi)
    left, right = band & (np.arange(L) < L / 2), band & (np.arange(L) >= L / 2)
    return (_slope(mean, target, left) + _slope(mean, target, right)) / 2


def beyond_slope(mean: np.ndarray, distance: int) -> np.ndarray:
    """Per model: the slope over every index at least ``distance`` from both ends (both halves
    in one fit, as the interior slope)."""
    L = mean.shape[-1]
    return _slope(mean, ramp(L).numpy(), boundary_distance(L) >= distance)


def boundary_slope(run) -> np.ndarray:
    """Band 0, per seed: the slope within R of each end. A 2-D run averages its two axes."""
    if hasattr(run, "rows"):
        return (boundary_slope(run.rows) + boundary_slope(run.cols)) / 2
    return end_slope(_mean(run), 0, max(run.radius, 2))


def first_hop_slope(run) -> np.ndarray:
    """Hop band 1, per seed: the slope over distances [R, 3R) (the side channel's first hop)."""
    if hasattr(run, "rows"):
        return (first_hop_slope(run.rows) + first_hop_slope(run.cols)) / 2
    return end_slope(_mean(run), run.radius, 3 * run.radius)


def interior_slope(run) -> np.ndarray:
    """Per seed: the slope over the interior beyond R (what convolution alone cannot reach)."""
    return np.asarray(run.slope_interior, dtype=float)


def beyond_hop_slope(run, hops: float = 1.0) -> np.ndarray:
    """Per seed: the slope over every index beyond one hop, at least (1 + 2 hops) R from both
    ends (NaN when the sequence is too short to have one)."""
    return beyond_slope(_mean(run), int(round((1 + 2 * hops) * run.radius)))


def slope_se(run) -> np.ndarray:
    """Per seed: the standard error of the interior slope from the per-index sampling error of
    the mean prediction (the two streams pooled; neighbouring indices are treated as
    independent, which understates it when their noise is correlated)."""
    mom, L, R = run.out, run.seq_len, run.radius
    n = mom.count.sum()
    var = (mom.std**2 * mom.count[:, None, None]).sum(axis=0) / n  # (M, L)
    inner = boundary_distance(L) >= R
    t = ramp(L).numpy()[inner]
    dev = t - t.mean()
    return np.sqrt((dev**2 * var[:, inner] / n).sum(axis=1)) / (dev**2).sum()


@dataclass(frozen=True)
class HopBands:
    """The mean slope of the mean prediction over each hop band beyond the receptive field:
    band h covers distances [R + 2R(h-1), R + 2Rh) from the nearer end (the paper's hop is
    2R(d)), in units of the ramp's slope, both halves averaged; arrays (M, H)."""

    name: str
    seq_len: int
    radius: int
    edges: np.ndarray  # (H + 1,) band edges in distance from the end
    slope: np.ndarray  # (M, H)
    se: np.ndarray  # (M, H)
    boundary: np.ndarray  # (M,) band 0's slope (within R of each end)


def band_slope(run, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """Per seed, the mean slope of the pooled mean prediction over distances [lo, hi) from the
    nearer end (both ends averaged), and its standard error: the mean of the local slopes over
    a band telescopes to its end points, so only they carry error. ``lo``, ``hi`` may be arrays
    of band edges (then (M, H) arrays)."""
    mom, L = run.out, run.seq_len
    n = mom.count.sum()
    mean = mom.pooled_mean
    var = (mom.std**2 * mom.count[:, None, None]).sum(axis=0) / n
    a, b = np.asarray(lo), np.asarray(hi)
    width = (b - a) / (L - 1)
    left = (mean[:, b] - mean[:, a]) / width
    right = (mean[:, L - 1 - a] - mean[:, L - 1 - b]) / width
    var_end = (var[:, a] + var[:, b] + var[:, L - 1 - a] + var[:, L - 1 - b]) / n
    return (left + right) / 2, np.sqrt(var_end) / width / 2


def hop_bands(run) -> HopBands:
    """Band slopes (:func:`band_slope`) over every hop band; a band is kept when at least half
    of it lies inside the half-sequence (the last one is clipped at the middle)."""
    L, R = run.seq_len, run.radius
    half = (L - 1) // 2
    edges = [R]
    while edges[-1] + R <= half:  # at least half of the next band (2R wide) fits
        edges.append(min(edges[-1] + 2 * R, half))
    edges = np.array(edges)
    slope, se = band_slope(run, edges[:-1], edges[1:])
    return HopBands(
        name=f"{run.name}, l = {L}, R = {R}",
        seq_len=L,
        radius=R,
        edges=edges,
        slope=slope,
        se=se,
        boundary=boundary_slope(run),
    )
