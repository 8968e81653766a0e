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
from dataclasses import dataclass

import numpy as np


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


def excess_beyond(probe_distances: np.ndarray, kernel: int, factor: float = 1.0) -> np.ndarray:
    """Per model, how far (in indices) the probes' localization distance reaches beyond
    factor * R(d) at its best depth; 0 when no depth passes the bound. ``probe_distances`` is
    (depth, M)."""
    d = np.asarray(probe_distances, dtype=float)
    bound = factor * radius_per_depth(kernel, d.shape[0])
    return np.clip(d - bound[:, None], 0, None).max(axis=0)


@dataclass(frozen=True)
class HopComparison:
    """Depth probes' localization distances against the hop bounds, per depth and model."""

    radius: np.ndarray  # R(d), (depth,)
    single_hop: np.ndarray  # factor * R(d), capped at the half-length
    iterated: np.ndarray  # one hop per norm layer, capped at the half-length
    measured: np.ndarray  # probe distance, (depth, M)
    hops: np.ndarray  # hops each distance needs, (depth, M)
    beyond_single: np.ndarray  # measured > factor * R(d) (uncapped), (depth, M)
    beyond_iterated: np.ndarray  # measured > iterated reach (uncapped), (depth, M)

    def _first(self, mask: np.ndarray) -> list[int | None]:
        return [int(np.flatnonzero(col)[0]) + 1 if col.any() else None for col in mask.T]

    @property
    def first_beyond_radius(self) -> list[int | None]:
        """Per model, the first depth whose distance exceeds R(d) (None: never)."""
        return self._first(self.measured > self.radius[:, None])

    @property
    def first_beyond_single(self) -> list[int | None]:
        """Per model, the first depth beyond one hop (None: never)."""
        return self._first(self.beyond_single)

    @property
    def depths_beyond_iterated(self) -> list[list[int]]:
        return [[int(d) + 1 for d in np.flatnonzero(col)] for col in self.beyond_iterated.T]

    @property
    def max_hops(self) -> list[int]:
        return [int(h) for h in self.hops.max(axis=0)]


def capped_bounds(kernel: int, depth: int, seq_len: int, factor: float = 3.0):
    """R(d), the single-hop and the iterated reach per depth, each capped at the half-length
    (the largest boundary distance there is)."""
    half = (seq_len - 1) // 2
    return tuple(np.minimum(b, half).astype(float) for b in (
        radius_per_depth(kernel, depth), single_hop_reach(kernel, depth, factor),
        iterated_reach(kernel, depth, factor)))  # fmt: skip


def compare(distances: np.ndarray, kernel: int, seq_len: int, factor: float = 3.0) -> HopComparison:
    """R(d), the capped single-hop and iterated bounds, the measured distance per model, and the
    hops it needs, for distances (depth, M)."""
    depth = distances.shape[0]
    r = radius_per_depth(kernel, depth)
    single = single_hop_reach(kernel, depth, factor)
    iterated = iterated_reach(kernel, depth, factor)
    _, single_capped, iterated_capped = capped_bounds(kernel, depth, seq_len, factor)
    measured = np.asarray(distances, dtype=int)
    hops = np.array([[hops_needed(x, r[d], factor) for x in measured[d]] for d in range(depth)])
    return HopComparison(
        radius=r,
        single_hop=single_capped,
        iterated=iterated_capped,
        measured=measured,
        hops=hops,
        beyond_single=measured > single[:, None],
        beyond_iterated=measured > iterated[:, None],
    )
