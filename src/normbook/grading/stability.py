"""How firmly a verdict holds: the distance from a ledger row's final verdict to the nearest line
that a small change in its numbers could cross, in standard errors.

Two builds of the same code with the same seeds differ on different processors: oneDNN and
ATen pick other kernels (AVX2 on one CPU, AVX-512 on another), the last bit of a sum differs,
and thousands of optimizer steps turn that bit into another network. A verdict far from its
line survives that; one near it can come out otherwise. The lines a row can cross:

- **its adjusted p against the level** (every tested claim): a final verdict is decisive when
  its Benjamini-Hochberg adjusted p (:func:`normbook.book_pages.ledger.final`) is below
  ``ALPHA``. Its distance is ``|z(p_adjusted) - z(ALPHA)|``, with ``z`` the standard normal
  quantile of ``1 - p``: a p-value's distance from the level on the scale of the test
  statistic, in standard errors, for a t test, a rank test or an adjusted p alike;
- **its late gain against its margin** (where *refuted* and *not shown: may still be rising*
  are decided by whether the tested quantity was still moving): ``|margin - high| / se``, the
  upper end of the late gain's interval against the margin, in the gain's standard errors.

A row whose distance is under :data:`NEAR_LINE` is *near its line*. A failed positive
control has no distance (its evidence is per-seed values against a threshold, not a test);
a claim the profile cannot test, or one the rules keep undecided by construction (no kept
states, no interval), has no line a rounding difference could cross.
"""

from __future__ import annotations

import math

from scipy import stats as sps

from normbook.grading.claims import ALPHA
from normbook.grading.verdicts import MOOT, NOT_TESTABLE, REFUTED

# Rows closer than this to their line (in standard errors) are flagged "near its line": a
# last-bit difference between processors may flip them. Chosen by measurement (the Methods
# page shows it, from results/cpu/isa/5ef7493/): the same commit built with oneDNN held to
# AVX instead of AVX2 moved the deciding p of 48 tested claims by a median of 0.25 standard
# errors and at most 1.10, and the 3 verdicts that differed sat within 0.80 of their line;
# 1.25 covers the largest move. tests/core/test_reference.py fails when a committed build
# moves a verdict the flag misses.
NEAR_LINE = 1.25

P_LINE = "adjusted p against the level"
RISE_LINE = "late gain against its margin"


def z(p: float) -> float:
    """The standard normal quantile of ``1 - p`` (p 0.05: 1.64; p 1: minus infinity)."""
    return float(sps.norm.isf(p))


def p_distance(p_adjusted: float | None, alpha: float = ALPHA) -> float:
    """How far an adjusted p sits from ``alpha``, in standard errors (NaN: no p)."""
    if p_adjusted is None or p_adjusted != p_adjusted:
        return math.nan
    return abs(z(min(max(p_adjusted, 0.0), 1.0)) - z(alpha))


def rise_distance(late_gain: dict | None, alpha: float = ALPHA) -> float:
    """How far a late gain's upper end sits from its margin, in the gain's standard errors (its
    interval is two-sided at 1 - 2 ``alpha``, so a half-width is t(1 - alpha) of them); NaN
    where there is no interval, or where no network was cut by its cap (finished networks: the
    late gain is on record but decides nothing, :func:`normbook.grading.claims.finished`)."""
    if not late_gain or late_gain.get("capped") == 0:
        return math.nan
    low, high, n, margin = (late_gain.get(k) for k in ("low", "high", "n", "margin"))
    if low is None or high is None or margin is None or not n or n < 2:
        return math.nan
    se = (high - low) / (2 * sps.t.ppf(1 - alpha, n - 1))
    if se <= 0:
        return math.inf if high != margin else 0.0
    return abs(margin - high) / se


def held(c: dict, flag: str) -> bool:
    """Whether a ledger row's grade, or one of its parts', was held at *not shown* for ``flag``
    (:data:`normbook.grading.verdicts.HELD`: ``moving``, ``no_kept_states``, ``no_interval``),
    as its record says: its fields, never the words of its ``why``."""
    return bool(c.get(flag)) or any(bool(p.get(flag)) for p in c.get("parts", []))


def distance(c: dict, alpha: float = ALPHA) -> tuple[float, str]:
    """(distance in standard errors, the line it is measured to) for a ledger row with its final
    verdict (``graded`` and ``p_adjusted`` set: :func:`normbook.book_pages.ledger.final`); NaN
    for a failed control or a refuted premise, infinity where no line can be crossed."""
    graded = c.get("graded", c["verdict"])
    if graded == NOT_TESTABLE:
        return math.inf, "none: not testable at this profile"
    if graded == MOOT:
        return math.nan, "its premise's verdict (the claim it rests on)"
    if any(not k["passed"] for k in c.get("controls", [])):
        return math.nan, "a positive control (per-seed values against a threshold)"
    if held(c, "no_kept_states"):  # blocked from refuted by construction, whatever its p
        return math.inf, "none: undecided by construction"
    d_p = p_distance(c.get("p_adjusted"), alpha)
    gains = [c.get("late_gain"), *(p.get("late_gain") for p in c.get("parts", []))]
    d_r = min((d for d in map(rise_distance, gains) if d == d), default=math.nan)
    moving = held(c, "moving")
    if graded == REFUTED and d_r == d_r:  # either line flips it back to not shown
        return (d_p, P_LINE) if d_p <= d_r else (d_r, RISE_LINE)
    if moving and d_r == d_r:
        p_ok = c.get("p_adjusted") is not None and c["p_adjusted"] < alpha
        # to become refuted it must stop moving and, unless it already is, pass the adjustment
        return (d_r, RISE_LINE) if p_ok or not d_p >= d_r else (d_p, P_LINE)
    if d_p != d_p:  # no p: kept undecided by construction (no kept states, no interval)
        return math.inf, "none: undecided by construction"
    return d_p, P_LINE


def distance_text(d: float | None, spec: str = ".1f") -> str:
    """A distance in words, the same on every page: ``2.3 SE``, ``no line`` (infinity: nothing a
    rounding difference could cross), ``–`` (None or NaN: no distance, a failed control or a
    refuted premise)."""
    if d is None or d != d:
        return "–"
    return "no line" if d == math.inf else f"{d:{spec}} SE"


def near_line(d: float) -> bool | None:
    """Whether a row at distance ``d`` is near its line (None: no distance: a failed control,
    a refuted premise)."""
    return None if d != d else bool(d < NEAR_LINE)
