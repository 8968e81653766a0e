"""The iterated multi-hop argument of paper A (Section 3.2), made quantitative.

The paper's hop: two indices whose receptive fields at depth d overlap (|i - j| <= 2R(d))
share a patch of input noise, and the normalization statistics let one modulate the other.
An index within R(d) of an end "knows" where it is from the padding alone, so one hop carries
position at most R(d) + 2R(d) = 3R(d) from the end (the paper's single-hop bound, with
``factor = 3``). Each normalization layer is one more chance to hop, so the reach that
hopping can explain grows as

    reach(1) = factor * R(1),    reach(d) = max(reach(d-1), R(d)) + (factor - 1) * R(d),

which is quadratic in depth when R(d) = floor(k/2) * d. This module compares both bounds
with the localization distance of the depth probes (chapter A1's Fig. 1b).
"""
from __future__ import annotations

import math

import numpy as np

from . import stats


def radius_per_depth(kernel: int, depth: int) -> np.ndarray:
    """R(d) = floor(k/2) * d for d = 1..depth."""
    return (kernel // 2) * np.arange(1, depth + 1)


def single_hop_reach(kernel: int, depth: int, factor: float = 3.0) -> np.ndarray:
    """factor * R(d): how far one hop at depth d can carry position from an end."""
    return factor * radius_per_depth(kernel, depth)


def iterated_reach(kernel: int, depth: int, factor: float = 3.0) -> np.ndarray:
    """Reach when every normalization layer up to depth d contributes one hop of (factor-1)R(d)."""
    r = radius_per_depth(kernel, depth).astype(float)
    out = np.empty_like(r)
    prev = 0.0
    for d, rd in enumerate(r):
        prev = max(prev, rd) + (factor - 1.0) * rd
        out[d] = prev
    return out


def hops_needed(distance: float, radius: float, factor: float = 3.0) -> int:
    """Hops of length (factor-1)R needed to carry position ``distance`` from an end.

    0: the receptive field alone reaches (distance <= R); 1: one hop suffices
    (distance <= factor*R); >= 2: the single-hop account at this depth cannot explain it.
    A negative distance (nothing localized) needs no hop.
    """
    if distance <= radius:
        return 0
    return int(math.ceil((distance - radius) / ((factor - 1.0) * radius)))


def probe_distances(maps: np.ndarray, window: int, threshold: float) -> np.ndarray:
    """Localization distance per depth and model from localized masks (depth, M, L)."""
    return np.array([[stats.localization_distance(maps[d, m], window, threshold)
                      for m in range(maps.shape[1])] for d in range(maps.shape[0])])


def compare(distances: np.ndarray, kernel: int, seq_len: int, factor: float = 3.0) -> list[dict]:
    """One row per depth: R(d), the single-hop and iterated bounds (capped at the half-length,
    the largest distance there is), the measured distance per model, and the hops it needs."""
    depth = distances.shape[0]
    half = (seq_len - 1) // 2
    r = radius_per_depth(kernel, depth)
    single = single_hop_reach(kernel, depth, factor)
    iterated = iterated_reach(kernel, depth, factor)
    rows = []
    for d in range(depth):
        meas = [int(x) for x in distances[d]]
        rows.append({
            "depth": d + 1, "R": int(r[d]),
            "single_hop": float(min(single[d], half)), "iterated": float(min(iterated[d], half)),
            "measured": meas,
            "hops": [hops_needed(x, r[d], factor) for x in meas],
            "beyond_single": [x > single[d] for x in meas],
            "beyond_iterated": [x > iterated[d] for x in meas],
        })
    return rows
