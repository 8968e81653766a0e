"""Verdicts on paper claims, computed from executed numbers with rules stated up front."""
from __future__ import annotations

from dataclasses import dataclass

REPRODUCED, PARTLY, NOT = "reproduced", "partly reproduced", "not reproduced"


@dataclass(frozen=True)
class Verdict:
    paper: str      # "A" or "B"
    claim: str      # the paper's claim, in our words
    verdict: str    # one of REPRODUCED, PARTLY, NOT
    evidence: str   # the numbers behind it

    def row(self) -> dict:
        return {"paper": self.paper, "claim": self.claim, "verdict": f"**{self.verdict}**",
                "evidence": self.evidence}


def grade(all_ok: bool, any_ok: bool) -> str:
    """All seeds/conditions agree -> reproduced; some do -> partly; none -> not."""
    return REPRODUCED if all_ok else PARTLY if any_ok else NOT


def no_norm_confined(distances: list[int], radius: int, max_abs_shift_diff: float) -> str:
    """Prop. C.1: without normalization nothing beyond R is localized, and interior
    outputs are exactly shift-equivariant."""
    ok = [d < radius for d in distances]
    return grade(all(ok) and max_abs_shift_diff == 0.0, any(ok) and max_abs_shift_diff == 0.0)


def norm_reaches(distances: list[int], radius: int, half: int, window: int) -> str:
    """With normalization, localization reaches beyond R; 'reproduced' means it reaches the
    middle of the sequence (the whole sequence is localized) for every seed."""
    whole = [d >= half - window for d in distances]
    beyond = [d > radius for d in distances]
    if all(whole):
        return REPRODUCED
    return PARTLY if any(beyond) else NOT


def spreads_faster(probe_distance: list[list[int]], radius_per_depth: list[int]) -> str:
    """Fig. 1b: at some depth, localization reaches further than R(depth), per seed."""
    per_seed = [any(d > r for d, r in zip(dist, radius_per_depth)) for dist in probe_distance]
    return grade(all(per_seed), any(per_seed))
