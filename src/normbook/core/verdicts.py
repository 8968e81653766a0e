"""The verdict vocabulary: a claim, its grade and the evidence behind it.

The rules that grade each paper's claims live in that paper's package
(:mod:`normbook.paper_a.verdicts`, :mod:`normbook.paper_b.verdicts`); each is a function of
measured values, and its docstring states the rule.
"""

from __future__ import annotations

from dataclasses import dataclass

REPRODUCED, PARTLY, NOT = "reproduced", "partly reproduced", "not reproduced"


@dataclass(frozen=True)
class Verdict:
    paper: str  # "A" or "B"
    claim: str  # the paper's claim, in our words
    verdict: str  # one of REPRODUCED, PARTLY, NOT
    evidence: str  # the numbers behind it

    def row(self) -> dict:
        return {
            "paper": self.paper,
            "claim": self.claim,
            "verdict": f"**{self.verdict}**",
            "evidence": self.evidence,
        }


def grade(all_ok: bool, any_ok: bool) -> str:
    """All seeds/conditions agree -> reproduced; some do -> partly; none -> not."""
    return REPRODUCED if all_ok else PARTLY if any_ok else NOT


INCONCLUSIVE = "inconclusive at this budget"  # the positive control failed too
