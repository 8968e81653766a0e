"""The verdict vocabulary: claims (graded by a test that could come out either way) and checks
(properties that hold by construction, so a failure is a bug report, not a verdict).

The rules that grade each paper's claims live in that paper's package
(:mod:`normbook.paper_a.verdicts`, :mod:`normbook.paper_b.verdicts`); each is a function of
measured values, and its docstring states the rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .claims import ALPHA, CLAIM_CONFIDENCE, ClaimTest

REPRODUCED, PARTLY, NOT = "reproduced", "partly reproduced", "not reproduced"
INCONCLUSIVE = "inconclusive"  # the positive control failed, or the design cannot reach alpha
GRADES = (REPRODUCED, PARTLY, NOT, INCONCLUSIVE)


def _num(v: float, spec: str) -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


@dataclass(frozen=True)
class Verdict:
    paper: str  # "A" or "B"
    claim: str  # the paper's claim, in our words
    verdict: str  # one of GRADES
    test: ClaimTest  # the effect, its interval, the test, its p-value and the null
    evidence: str = ""  # further numbers the rule used
    unit: str = ".3f"  # format of the effect and its interval

    def row(self) -> dict:
        t, f = self.test, self.unit
        return {
            "claim": self.claim,
            "verdict": f"**{self.verdict}**",
            f"effect [{CLAIM_CONFIDENCE:.0%} CI]": (
                f"{_num(t.effect, f)} [{_num(t.low, f)}, {_num(t.high, f)}]"
            ),
            "test": f"{t.test}; p {'< 1e-300' if t.p == 0 else '= ' + _num(t.p, '.3g')}",
            "null": t.null,
            "evidence": self.evidence,
        }


def grade_test(
    test: ClaimTest, strong: bool = True, control_ok: bool = True, alpha: float = ALPHA
) -> str:
    """The grade of a claim from its test.

    Significant at ``alpha``: *reproduced* when the claim's full extent (``strong``) holds too,
    else *partly reproduced*. Not significant: *not reproduced*, unless the positive control
    failed or the design cannot reach ``alpha`` (too few seeds): then *inconclusive*.
    """
    if not control_ok:
        return INCONCLUSIVE
    if test.significant(alpha):
        return REPRODUCED if strong else PARTLY
    return NOT if test.powered(alpha) else INCONCLUSIVE


def compare_with_paper(
    intervals: list[tuple[float, float]], bands: list[tuple[float, float]]
) -> str:
    """A comparison with values the paper reports (not a hypothesis test): each of our
    intervals against the paper's band. Reproduced: every interval inside its band; partly:
    some inside, the rest wholly outside; not: every interval wholly outside; inconclusive: an
    interval straddles its band's edge, or there is no interval (too few seeds to tell)."""
    pos = []
    for (lo, hi), (b_lo, b_hi) in zip(intervals, bands):
        if math.isnan(lo) or math.isnan(hi):
            return INCONCLUSIVE
        pos.append("in" if b_lo <= lo and hi <= b_hi else "out" if hi < b_lo or lo > b_hi else "")
    if "" in pos:
        return INCONCLUSIVE
    return grade(all(p == "in" for p in pos), any(p == "in" for p in pos))


def grade(all_ok: bool, any_ok: bool) -> str:
    """All conditions agree -> reproduced; some do -> partly; none -> not (for comparisons
    with the paper's reported values, which are not hypothesis tests)."""
    return REPRODUCED if all_ok else PARTLY if any_ok else NOT


@dataclass(frozen=True)
class Check:
    """A property that holds by construction (exact equivariance, a control at chance)."""

    paper: str
    check: str
    holds: bool
    evidence: str

    def row(self) -> dict:
        return {
            "check": self.check,
            "result": "holds" if self.holds else "**FAILED: a bug, not a verdict**",
            "evidence": self.evidence,
        }
