"""Verdict rules for the Part B claims, fixed before looking at the numbers.

Inputs are per-seed arrays, shape [seeds] or [seeds, layers]; comparisons use the mean over
seeds. Grades follow :mod:`normbook.verdicts`: REPRODUCED / PARTLY / NOT.
"""
from __future__ import annotations

import numpy as np

from .verdicts import NOT, PARTLY, REPRODUCED

__all__ = ["layer_direction", "direction_grade", "accuracy_gain", "settling_layer",
           "settles_earlier", "opposite_directions", "matches_paper", "majority_direction",
           "no_consistent_signature"]


def layer_direction(bn: np.ndarray, nobn: np.ndarray, expect: str) -> np.ndarray:
    """Per layer: does the mean over seeds of BN differ from no BN in the expected direction
    (``expect`` = "lower" or "higher")? Arrays [seeds, layers] -> bool [layers]."""
    d = np.mean(bn, axis=0) - np.mean(nobn, axis=0)
    if expect == "lower":
        return d < 0
    if expect == "higher":
        return d > 0
    raise ValueError(f"expect must be 'lower' or 'higher', got {expect!r}")


def direction_grade(ok: np.ndarray) -> str:
    """All layers in the expected direction -> reproduced; a strict majority -> partly;
    otherwise not."""
    ok = np.asarray(ok, bool)
    if ok.all():
        return REPRODUCED
    return PARTLY if ok.sum() * 2 > ok.size else NOT


def accuracy_gain(bn: np.ndarray, nobn: np.ndarray) -> str:
    """BN generalizes better: every BN seed beats every no-BN seed -> reproduced; the mean
    is higher but the seeds overlap -> partly; otherwise not."""
    bn, nobn = np.asarray(bn, float), np.asarray(nobn, float)
    if bn.min() > nobn.max():
        return REPRODUCED
    return PARTLY if bn.mean() > nobn.mean() else NOT


def opposite_directions(diff_a: float, diff_b: float) -> bool:
    """Do two BN - no BN differences (e.g. mean sparsity over layers) have opposite signs?"""
    return bool(np.sign(diff_a) * np.sign(diff_b) < 0)


def settling_layer(k_star: np.ndarray, target: int, tol: int) -> int:
    """First layer index (1-based) from which k* stays within ``tol`` of ``target`` up to the
    last layer; ``len(k_star) + 1`` if the last layer is off target. k_star: [layers]."""
    ok = np.abs(np.asarray(k_star) - target) <= tol
    n = len(ok)
    first = n + 1
    for i in range(n - 1, -1, -1):
        if not ok[i]:
            break
        first = i + 1
    return first


def settles_earlier(bn_k: np.ndarray, nobn_k: np.ndarray, target: int, tol: int
                    ) -> tuple[bool, float, float]:
    """Mean settling layer over seeds, BN vs no BN ([seeds, layers] each). Returns
    (BN settles strictly earlier, BN mean, no-BN mean)."""
    b = float(np.mean([settling_layer(k, target, tol) for k in bn_k]))
    n = float(np.mean([settling_layer(k, target, tol) for k in nobn_k]))
    return b < n, b, n


def matches_paper(ours_bn: float, ours_nobn: float, paper_bn: float, paper_nobn: float,
                  tol: float = 0.02) -> str:
    """Table 1: both mean accuracies within ``tol`` (absolute, 0.02 = 2 percentage points)
    of the paper's -> reproduced; otherwise the BN - no BN gap has the paper's sign and is
    within a factor of two of the paper's gap -> partly; otherwise not."""
    if abs(ours_bn - paper_bn) <= tol and abs(ours_nobn - paper_nobn) <= tol:
        return REPRODUCED
    gap, paper_gap = ours_bn - ours_nobn, paper_bn - paper_nobn
    if np.sign(gap) == np.sign(paper_gap) and 0.5 <= gap / paper_gap <= 2.0:
        return PARTLY
    return NOT


def majority_direction(bn: np.ndarray, nobn: np.ndarray) -> str:
    """"lower" / "higher" when BN's mean over seeds is below / above no BN's in a strict
    majority of layers, else "mixed". Arrays [seeds, layers]."""
    low = layer_direction(bn, nobn, "lower")
    high = layer_direction(bn, nobn, "higher")
    if low.sum() * 2 > low.size:
        return "lower"
    if high.sum() * 2 > high.size:
        return "higher"
    return "mixed"


def no_consistent_signature(dir_a: str, dir_b: str, bn_better_on_both: bool) -> str:
    """The paper's negative sparsity claim. Reproduced: the two datasets have clear, opposite
    majority directions and BN is more accurate on both (the paper's evidence pattern);
    partly: the directions differ but not both clearly (one is "mixed"), or the accuracy
    condition fails; not: the same clear direction on both datasets (a consistent
    signature, which contradicts the claim)."""
    if dir_a == dir_b and dir_a != "mixed":
        return NOT
    if {dir_a, dir_b} == {"lower", "higher"} and bn_better_on_both:
        return REPRODUCED
    return PARTLY
