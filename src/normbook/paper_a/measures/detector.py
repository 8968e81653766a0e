"""The localization test of paper A (Definition 2.3, as operationalized on the Methods page).

Every test compares per-index moments from two streams of predictions on independent inputs
(Welch's t-test at level alpha). The primary test (``span``) calls index i localized when the
outputs at i - 1 and i + 1 differ; its false-positive rate and power are measured on simulated
streams in :mod:`normbook.paper_a.measures.detector_calibration`. Paper A's Definition 2.3
(``definition``) and the neighbour test used before (``neighbour``) are kept for comparison. The
localization distance is how far inward from the ends localization reaches without a break.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from normbook.grading.stats import EffectSize, effect_size
from normbook.paper_a.cached.task import ramp

TESTS = ("span", "neighbour", "definition")


def _welch(mean_a, std_a, n_a, mean_b, std_b, n_b) -> np.ndarray:
    return sps.ttest_ind_from_stats(mean_a, std_a, n_a, mean_b, std_b, n_b, equal_var=False).pvalue


def span_pvalues(mean_a, std_a, n_a, mean_b, std_b, n_b) -> np.ndarray:
    """The primary test: Welch p-value of stream a at i + 1 against stream b at i - 1.

    Index i is resolved when the mean outputs on its two sides differ: the network tells
    position i - 1 from position i + 1. The two streams come from independent inputs, so
    under identically distributed outputs the p-value is uniform whatever the noise
    correlation along the sequence (false-positive rate alpha per index), and its power
    grows with the step between the sides. At the ends the missing side is i itself.
    """
    mean_a, std_a, mean_b, std_b = map(np.asarray, (mean_a, std_a, mean_b, std_b))
    i = np.arange(mean_a.shape[-1])
    after, before = np.minimum(i + 1, i[-1]), np.maximum(i - 1, 0)
    return _welch(
        mean_a[..., after], std_a[..., after], n_a, mean_b[..., before], std_b[..., before], n_b
    )


def neighbour_pvalues(mean_a, std_a, n_a, mean_b, std_b, n_b) -> np.ndarray:
    """The neighbour test (this book's test before it was calibrated; kept for comparison):
    index i (stream a) must differ from both i - 1 and i + 1 (stream b), so its p-value is
    the larger of the two; at the ends the one neighbour there is decides.

    Not monotone in the effect: under a ramp the two differences have opposite signs and
    share i's noise, so a small step makes passing both *harder* than no step at all.
    """
    mean_a, std_a, mean_b, std_b = map(np.asarray, (mean_a, std_a, mean_b, std_b))
    left = np.full(mean_a.shape, np.nan)
    right = np.full(mean_a.shape, np.nan)
    left[..., 1:] = _welch(
        mean_a[..., 1:], std_a[..., 1:], n_a, mean_b[..., :-1], std_b[..., :-1], n_b
    )
    right[..., :-1] = _welch(
        mean_a[..., :-1], std_a[..., :-1], n_a, mean_b[..., 1:], std_b[..., 1:], n_b
    )
    # only the missing neighbour at an end is skipped; a NaN elsewhere is "no difference"
    left[..., 0], right[..., -1] = right[..., 0], left[..., -1]
    return np.maximum(left, right)


def definition_pvalues(mean_a, std_a, n_a, mean_b, std_b, n_b) -> np.ndarray:
    """Paper A's Definition 2.3: index i is localized when its mean differs from every other
    index's. As an intersection-union test its p-value is the largest Welch p-value of i
    (stream a) against any j != i (stream b). Memory grows as L^2 per model."""
    mean_a, std_a, mean_b, std_b = map(np.asarray, (mean_a, std_a, mean_b, std_b))
    a = (mean_a[..., :, None], std_a[..., :, None], n_a)
    p = _welch(*a, mean_b[..., None, :], std_b[..., None, :], n_b)
    diag = np.eye(mean_a.shape[-1], dtype=bool)
    return np.where(diag, 0.0, p).max(axis=-1)


PVALUES = {"span": span_pvalues, "neighbour": neighbour_pvalues, "definition": definition_pvalues}
# How far from i each test looks at other outputs: an index counts as interior only when every
# output its test uses has a receptive field that misses the padding.
TEST_REACH = {"span": 1, "neighbour": 1, "definition": 0}


def localized_mask(pvalues: np.ndarray, alpha: float) -> np.ndarray:
    """Localized where p < alpha; a NaN p-value (no variation to test) is not localized."""
    return np.nan_to_num(np.asarray(pvalues, dtype=float), nan=1.0) < alpha


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
    test: str = "span"  # which test of :data:`TESTS` decides "localized"
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

    def pvalues(self, test: str = "span") -> np.ndarray:
        """One p-value per index (shape ``mean.shape[1:]``) from the test named ``test``."""
        if test not in PVALUES:
            raise ValueError(f"unknown localization test {test!r}; choose one of {TESTS}")
        return PVALUES[test](
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
    frac_interior: float  # fraction localized of the interior the test can tell apart:
    # indices whose test uses only outputs that miss the padding ([R+1, l-2-R] for span)
    frac_all: float
    effect_all: EffectSize
    effect_interior: EffectSize


def summarize(moments: Moments, radius: int, detector: DetectorConfig) -> list[Localization]:
    """The test and effect sizes per model, from output moments of shape (2, M, L)."""
    seq_len = moments.mean.shape[-1]
    localized = localized_mask(moments.pvalues(detector.test), detector.alpha)
    tested = interior_mask(seq_len, radius + TEST_REACH[detector.test])  # and the test's reach
    return per_model(localized, moments.pooled_mean, radius, tested, detector)


def per_model(
    localized: np.ndarray,
    pooled_mean: np.ndarray,
    radius: int,
    tested: np.ndarray,
    detector: DetectorConfig,
) -> list[Localization]:
    """Each model's :class:`Localization` from its localized mask (M, L), its mean output
    (M, L), the receptive radius (effect sizes on the interior beyond it) and the indices whose
    test misses the padding (``tested``, the interior fraction's denominator)."""
    seq_len = localized.shape[-1]
    target = ramp(seq_len).numpy()
    interior = interior_mask(seq_len, radius)  # beyond the receptive field
    return [
        Localization(
            localized=loc,
            distance=localization_distance(loc, detector.window, detector.threshold),
            frac_interior=float(loc[tested].mean()) if tested.any() else float("nan"),
            frac_all=float(loc.mean()),
            effect_all=effect_size(mean, target),
            effect_interior=effect_size(mean, target, interior),
        )
        for loc, mean in zip(localized, pooled_mean)
    ]


def depth_maps(probe: Moments, detector: DetectorConfig) -> np.ndarray:
    """Localized mask per depth (depth, M, L) from the depth probes' moments."""
    return localized_mask(probe.pvalues(detector.test), detector.alpha)


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
