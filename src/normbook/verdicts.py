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


# ----------------------------------------------------------------------------- chapters A2, A3

INCONCLUSIVE = "inconclusive at this budget"


def unless_control_fails(verdict: str, control_ok: bool) -> str:
    """A claim that a variant localizes *less* (or not at all) cannot be tested when the
    positive control (InstanceNorm trained the same way) does not localize either: a
    failure is then reported as inconclusive, not as a refutation."""
    return verdict if control_ok or verdict == REPRODUCED else INCONCLUSIVE


def chance_at_zero_overlap(pvalues: list[float], level: float = 0.05) -> str:
    """Fig. 3, o = 0: no seed's accuracy differs from 1/2 (exact binomial test at ``level``)."""
    ok = [p >= level for p in pvalues]
    return grade(all(ok), any(ok))


def overlap_enables(spearman_rho: float, spearman_p: float, acc_full: list[float],
                    level: float = 0.05, full: float = 0.9) -> str:
    """Fig. 3: accuracy rises with the overlap (Spearman rho > 0 at ``level``) and reaches
    ``full`` at complete overlap for every seed (reproduced) or some seed (partly)."""
    rising = spearman_rho > 0 and spearman_p < level
    ok = [a >= full for a in acc_full]
    if not rising:
        return NOT
    return grade(all(ok), True)


def transition_matches(fraction: float, paper_lo: float, paper_hi: float, tolerance: float) -> str:
    """Fig. 3: the transition, as a fraction of the path length, lies in the paper's interval
    (reproduced), within ``tolerance`` of it (partly), or elsewhere / nowhere (not)."""
    if fraction != fraction:  # NaN: no transition
        return NOT
    if paper_lo <= fraction <= paper_hi:
        return REPRODUCED
    return PARTLY if paper_lo - tolerance <= fraction <= paper_hi + tolerance else NOT


def stays_at_chance(pvalues: list[float], level: float = 0.05) -> str:
    """A control that cannot communicate must stay at chance for every model."""
    return chance_at_zero_overlap(pvalues, level)


def beyond_single_hop(beyond_per_seed: list[bool]) -> str:
    """Multi-hop: per seed, some depth localizes further than factor * R(depth)."""
    return grade(all(beyond_per_seed), any(beyond_per_seed))


def beyond_null(frac_interior: float, slope_interior: float, null_fracs: list[float],
                null_slopes: list[float]) -> bool:
    """Interior localization that a provably null network does not show.

    The neighbour test's false positives come in clumps (neighbouring predictions share
    inputs, so their noise is smooth along the sequence), and a clump can push the
    significance-based distance far inward even for a network that cannot localize. So a
    model counts as localizing its interior only when both its interior fraction and its
    interior slope exceed the largest values seen in networks that provably cannot localize
    the interior (no normalization; BatchNorm with population statistics), tested the same way.
    """
    return frac_interior > max(null_fracs) and slope_interior > max(abs(s) for s in null_slopes)


def grows_with_groups(rho: float, p: float, top_beats_bottom: list[bool], trend_per_seed: list[bool],
                      level: float = 0.05) -> str:
    """Fig. 4: an effect that grows with G. Reproduced: positive rank correlation at ``level``,
    the largest G beats the smallest for every seed, and every seed localizes (beyond the null)
    at two or more group counts, so that it is a trend and not one point. Partly: a positive
    correlation with the largest G ahead for some seed. Otherwise not."""
    if rho > 0 and p < level and all(top_beats_bottom) and all(trend_per_seed):
        return REPRODUCED
    return PARTLY if rho > 0 and any(top_beats_bottom) else NOT
