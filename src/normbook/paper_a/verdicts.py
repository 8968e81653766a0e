"""Verdict rules for paper A's claims and the checks that hold by construction.

Every claim is one test, fixed before looking at the numbers, whose unit is an independently
trained network. "Localizes" always means: a per-seed measure beats *both* nulls measured the
same way, in a paired sign-flip test over seeds at level ``ALPHA`` (an intersection-union
test: the larger p-value counts). The nulls are the no-normalization network of the same
architecture and seed, and the same trained network evaluated with circular padding (no
boundary, so nothing can be localized; see :func:`localization.circular_null`). A network is
never part of its own null. Checks (exact equivariance, controls at chance) are properties a
correct implementation must have; a failed check is a bug report, not a verdict.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..core.claims import (
    ALPHA,
    ClaimTest,
    binomial_above_chance,
    paired_signflip,
    spearman_trend,
    t_interval,
    worst_of,
)
from ..core.fmt import join
from ..core.verdicts import (  # noqa: F401  (the vocabulary, re-exported for the chapters)
    INCONCLUSIVE,
    NOT,
    PARTLY,
    REPRODUCED,
    Check,
    Verdict,
    compare_with_paper,
    grade,
    grade_test,
)
from . import multihop, reported
from .batchstats import boundary_fractions
from .detector import Localization
from .equivariance import SHIFT_TOLERANCE

LEVEL = ALPHA  # significance level of every claim's test
CHECK_LEVEL = 1e-3  # a control at chance "fails" only when its binomial p falls below this
CYCLIC_TOLERANCE = 1e-4  # float rounding in pooled statistics under a cyclic shift
FLAT_MARGIN = 0.02  # interior-slope gain over the last half of the budget a "flat" curve rules out
NULL_NONE = "no-norm network (same seeds)"
NULL_CIRCULAR = "same networks, circular padding"


def late_gain(curve) -> ClaimTest:
    """How much each seed's interior slope gained over the last half of the training budget
    (from the last kept step at or before half the budget to the end), with its t interval.
    ``p`` is NaN: this is an interval, compared with :data:`FLAT_MARGIN` by :func:`still_rising`."""
    half = [i for i, f in enumerate(curve.fractions[:-1]) if f <= 0.5]
    if not half:
        nan = float("nan")
        return ClaimTest(nan, nan, nan, nan, 0, "no state kept by half the budget", "")
    gain = curve.slope[-1] - curve.slope[half[-1]]
    frac = curve.fractions[half[-1]]
    return ClaimTest(
        float(gain.mean()),
        *t_interval(gain),
        p=float("nan"),
        n=len(gain),
        test=f"interior-slope gain from {frac:.0%} of the budget to all of it",
        null=f"flat: gain < {FLAT_MARGIN:g}",
    )


def still_rising(*curves) -> bool:
    """Whether any of these networks' effect may still be rising at the end of the budget: the
    upper end of its late gain's interval reaches :data:`FLAT_MARGIN` (or cannot be computed).
    Only a flattened curve can back *not reproduced*."""
    for c in curves:
        g = late_gain(c)
        if not g.high < FLAT_MARGIN:  # NaN (too few seeds or no kept state) counts as rising
            return True
    return False


def at_budget(verdict: str, rising: bool) -> str:
    """*Not reproduced* needs a flattened curve; one still rising is *inconclusive at this
    budget* (the chapter shows the trend)."""
    return INCONCLUSIVE if verdict == NOT and rising else verdict


def _interior_fraction(s: Localization) -> float:
    return s.frac_interior


def beyond_nulls(values, nulls: dict[str, list[float]]) -> ClaimTest:
    """Paired sign-flip test (one-sided) of a per-seed measure against every null's same
    measure, combined as an intersection-union test (the claim must beat each null)."""
    return worst_of(*(paired_signflip(values, v, null=name) for name, v in nulls.items()))


def localization_test(
    run, none, circular, measure: Callable[[Localization], float] = _interior_fraction
) -> ClaimTest:
    """:func:`beyond_nulls` for a run's per-seed ``measure`` (default: interior fraction)."""
    values = [measure(s) for s in run.per_seed]
    nulls = {
        NULL_NONE: [measure(s) for s in none.per_seed],
        NULL_CIRCULAR: [measure(s) for s in circular.per_seed],
    }
    return beyond_nulls(values, nulls)


def excess_test(run, none, circular, factor: float) -> tuple[ClaimTest, list[bool]]:
    """Per seed, how far the depth probes localize beyond factor * R(d) at their best depth
    (:func:`multihop.excess_beyond`), tested against both nulls' excess; returns the test and,
    per seed, whether the run's excess is positive and exceeds both nulls' excess of that seed."""
    net, no_norm, circ = (
        multihop.excess_beyond(r.probe_distances, r.cnn.kernel, factor).tolist()
        for r in (run, none, circular)
    )
    beyond = [e > 0 and e > a and e > b for e, a, b in zip(net, no_norm, circ)]
    return beyond_nulls(net, {NULL_NONE: no_norm, NULL_CIRCULAR: circ}), beyond


# ----------------------------------------------------------------------------- claim rules


def whole_sequence(test: ClaimTest, distances: list[int], half: int, window: int) -> str:
    """Fig. 1a. Reproduced: the interior fraction beats both nulls (p < alpha) and every seed's
    localization reaches the middle of the sequence (distance >= half - window); partly: it
    beats the nulls but does not reach the middle for every seed; not: it does not beat them;
    inconclusive: too few seeds to reach alpha."""
    return grade_test(test, strong=all(d >= half - window for d in distances))


def beyond_bound(test: ClaimTest, beyond: list[bool]) -> str:
    """Fig. 1b and the multi-hop claim. Reproduced: how far the probes localize beyond the
    bound (R(d), or hop_factor * R(d)) at their best depth beats both nulls' excess (p < alpha)
    and, for every seed, passes the bound by more than that seed's nulls do; partly: it beats
    the nulls on average only; not: it does not; inconclusive: too few seeds. The nulls matter:
    the test's reach and the distance window let even a network without normalization pass
    R(d) by a few indices."""
    return grade_test(test, strong=all(beyond))


def overlap_enables(trend: ClaimTest, beyond_chance: ClaimTest) -> str:
    """Fig. 3, graded only at partial overlaps 0 < o < l' (at o = l' path B *is* path A).
    Reproduced: accuracy rises with o (one-sided Spearman over models, p < alpha) and every
    model at the largest partial overlap beats chance (one-sided binomial, p < alpha); partly:
    only the trend; not: no significant trend."""
    return grade_test(trend, strong=beyond_chance.significant())


def transition_matches(per_seed: list[float], paper_lo: float, paper_hi: float) -> str:
    """Fig. 3 (a comparison with the paper's number, not a hypothesis test): the t interval of
    the per-seed transitions, as fractions of the path length, against the paper's band
    (:func:`compare_with_paper`): inside, reproduced; wholly outside, not; straddling an edge
    (or no interval: one seed, equal seeds), inconclusive. A seed that never reaches the
    transition level puts the transition outside any band: not reproduced."""
    if any(f != f for f in per_seed):  # NaN: a seed with no transition
        return NOT
    return compare_with_paper([t_interval(per_seed)], [(paper_lo, paper_hi)])


def grows_with_groups(trend: ClaimTest, top_beats_bottom: list[bool], control_ok: bool) -> str:
    """Fig. 4, among GroupNorms proper (G < C; G = C is InstanceNorm, the positive control, and
    a jump at G = C alone is not growth with G). Reproduced: the interior fraction rises with G
    (one-sided Spearman over every (G, seed) model with G < C, p < alpha) and the largest such
    G beats the smallest for every seed; partly: only the trend. Inconclusive when the positive
    control does not localize beyond its nulls: then nothing could grow."""
    return grade_test(trend, strong=all(top_beats_bottom), control_ok=control_ok)


def localizes(test: ClaimTest, control_ok: bool = True) -> str:
    """A "localizes more" claim: reproduced when its test is significant, not reproduced when
    it is not; inconclusive when the positive control failed (then the budget, not the claim,
    is what failed) or there are too few seeds to reach alpha."""
    return grade_test(test, strong=True, control_ok=control_ok)


# ----------------------------------------------------------------------------- checks


def at_chance(what: str, correct: np.ndarray, n_test: int, pvalues: list[float]) -> Check:
    """A path that shares nothing with path A gives exactly binomial(n, 1/2) accuracy."""
    if not len(pvalues):
        raise ValueError(f"{what}: no model to check")
    return Check(
        "A",
        f"{what} stays at chance (by construction: no shared input)",
        all(p >= CHECK_LEVEL for p in pvalues),
        f"accuracy {join(np.ravel(correct) / n_test, '.3f')}; two-sided binomial p = "
        f"{join(pvalues, '.2g')} (fails below {CHECK_LEVEL:g})",
    )


def exactly_equivariant(eq) -> Check:
    """Prop. C.1: without a pooled statistic the interior outputs are unchanged by a shift (up
    to float64 rounding, ``equivariance.SHIFT_TOLERANCE``), and the input gradient reaches
    exactly R. A network whose output does not depend on its input at all (every ReLU dead:
    gradient reach -1) satisfies the proposition trivially; it is reported, and at least one
    live network must show reach = R."""
    live = [int(r) for r in eq.reach if int(r) >= 0]
    dead = len(eq.reach) - len(live)
    return Check(
        "A",
        f"{eq.name}: interior outputs unchanged by a shift of {eq.shift}, gradient "
        f"reach = R (Prop. C.1)",
        all(eq.exact) and bool(live) and all(r == eq.radius for r in live),
        f"largest change {join(eq.max_change, '.2g')} (tolerance {SHIFT_TOLERANCE:g}, float64); "
        f"reach {join(eq.reach)} vs R = {eq.radius}"
        + (f" ({dead} network(s) with constant output: reach -1)" if dead else ""),
    )


def cyclic_null(name: str, max_change: np.ndarray) -> Check:
    """The circular-padding null is cyclically shift-equivariant (up to rounding in the
    pooled statistics), so its expected output is the same at every index."""
    return Check(
        "A",
        f"{name}: outputs move with a cyclic shift of the input (the null has no boundary)",
        bool(np.all(np.asarray(max_change) <= CYCLIC_TOLERANCE)),
        f"largest change {join(max_change, '.1e')} (tolerance {CYCLIC_TOLERANCE:g})",
    )


# ----------------------------------------------------------------------------- ledgers


def _t(values, spec: str = ".2f") -> str:
    return join(values, spec)


def a1_ledger(none, normed, circular, eq_none, cyc, window: int, rising: bool) -> tuple[list, list]:
    """Chapter A1: Fig. 1a and Fig. 1b as claims; Prop. C.1 and the null as checks.
    ``rising``: the normalized networks' curve may still be rising (:func:`still_rising`)."""
    half = (normed.seq_len - 1) // 2
    frac = localization_test(normed, none, circular)
    spread, beyond = excess_test(normed, none, circular, factor=1.0)
    excess = [
        multihop.excess_beyond(r.probe_distances, r.cnn.kernel) for r in (normed, none, circular)
    ]
    claims = [
        Verdict(
            "A",
            f"With {normed.name} the whole sequence is localized (Fig. 1a)",
            at_budget(whole_sequence(frac, normed.distances, half, window), rising),
            frac,
            f"interior fraction {_t(normed.frac_interior)} vs nulls {_t(none.frac_interior)} / "
            f"{_t(circular.frac_interior)}; distances {normed.distances} (middle: {half})",
        ),
        Verdict(
            "A",
            "With normalization, localization spreads inward faster than R(depth) (Fig. 1b)",
            at_budget(beyond_bound(spread, beyond), rising),
            spread,
            f"reach beyond R(d) at the best depth, per seed: {_t(excess[0], '.0f')} (nulls: "
            f"{_t(excess[1], '.0f')} / {_t(excess[2], '.0f')})",
            unit=".1f",
        ),
    ]
    checks = [exactly_equivariant(eq_none), cyclic_null(circular.name, cyc)]
    return claims, checks


def a2_ledger(pack, normed, none, circular, hop_factor: float, rising: bool) -> tuple[list, list]:
    """Chapter A2: Fig. 3 and the multi-hop reach as claims; o = 0 and the per-path control
    as checks. ``rising``: the normalized networks' curve may still be rising."""
    o = pack.pack.overlaps
    partial = [i for i, v in enumerate(o) if 0 < v < pack.setup.path_len]
    acc = pack.pack.acc
    trend = spearman_trend(
        np.repeat([o[i] for i in partial], acc.shape[1]), acc[partial].ravel(), "no rise with o"
    )
    top = partial[-1] if partial else len(o) - 1
    chance = binomial_above_chance(pack.pack.correct[top], pack.pack.n_test)
    lo, hi = reported.pack_transition_fraction()
    per_seed = np.asarray(pack.transition_per_seed) / pack.setup.path_len
    hop, beyond = excess_test(normed, none, circular, factor=hop_factor)
    excess = multihop.excess_beyond(normed.probe_distances, normed.cnn.kernel, hop_factor)
    claims = [
        Verdict(
            "A",
            "Overlap lets PackNorm tell the sequences apart; accuracy rises with o (Fig. 3)",
            overlap_enables(trend, chance),
            trend,
            f"graded at 0 < o < {pack.setup.path_len}; every model beats chance at o = {o[top]}: "
            f"smallest accuracy {chance.effect:.3f}, binomial p = {max(chance.p, 1e-300):.2g}",
            unit=".2f",
        ),
        Verdict(
            "A",
            "The transition lies at about half the path length "
            f"(o ≈ {reported.PACK_TRANSITION[0]}–{reported.PACK_TRANSITION[1]} of "
            f"{reported.PACK_PATH_LEN})",
            transition_matches(per_seed.tolist(), lo, hi),
            ClaimTest(
                pack.transition_fraction,
                *t_interval(per_seed),
                p=float("nan"),
                n=len(per_seed),
                test="comparison with the paper's band (t interval of the per-seed transitions)",
                null=f"paper: {lo:.2f}–{hi:.2f} l'",
            ),
            (
                f"ours: o ≈ {pack.transition:.1f} of {pack.setup.path_len}"
                if pack.transition == pack.transition
                else "ours: accuracy never reaches the transition level"
            )
            + f"; grid step {pack.grid_step:.2f} l'",
            unit=".2f",
        ),
        Verdict(
            "A",
            f"Localization reaches beyond one hop ({hop_factor:g}R(d)) at some depth, "
            "which only multiple hops explain",
            at_budget(beyond_bound(hop, beyond), rising),
            hop,
            f"reach beyond {hop_factor:g}R(d) at the best depth, per seed: {_t(excess, '.0f')}",
            unit=".1f",
        ),
    ]
    checks = []
    if pack.p_zero:  # only when the overlap grid has o = 0
        checks.append(
            at_chance("PackNorm at o = 0", pack.pack.correct[0], pack.pack.n_test, pack.p_zero)
        )
    if pack.control.overlaps:
        checks.append(
            at_chance(
                "Per-path InstanceNorm (control)",
                pack.control.correct,
                pack.control.n_test,
                pack.control.chance_pvalues(),
            )
        )
    return claims, checks


def a3_ledger(
    groups, control: ClaimTest, bn, eq_pop, cyc, sizes, groups_rising: bool, bn_rising: bool
) -> tuple[list, list]:
    """Chapter A3: Fig. 4, Figs. 5-6, App. D and the evaluation batch size as claims; exact
    equivariance of population statistics and the circular null as checks. ``bn`` holds the
    batch-mean-test runs at the reference evaluation batch size (minibatch, population,
    none, circular) and ``control`` the InstanceNorm positive control's test; ``*_rising``:
    whether the GroupNorm (G < C) or BatchNorm curves may still be rising."""
    proper = [i for i, g in enumerate(groups.group_counts) if g < groups.width]  # not G = C
    fracs = groups.values(_interior_fraction)[proper]  # (G < C, seeds)
    gs = [groups.group_counts[i] for i in proper]
    trend = spearman_trend(np.repeat(gs, fracs.shape[1]), fracs.ravel())
    top_beats_bottom = [bool(fracs[-1, j] > fracs[0, j]) for j in range(fracs.shape[1])]
    mb, pop, none, circ = bn.minibatch, bn.population, bn.none, bn.circular
    m = [s.frac_interior for s in mb.batch_mean]
    mb_test = beyond_nulls(
        m,
        {
            NULL_NONE: [s.frac_interior for s in none.batch_mean],
            NULL_CIRCULAR: [s.frac_interior for s in circ.batch_mean],
        },
    )
    pop_test = paired_signflip(
        m, [s.frac_interior for s in pop.batch_mean], null="population statistics (same nets)"
    )
    bnd_none, bnd_mb = boundary_fractions(none, "batch_mean"), boundary_fractions(mb, "batch_mean")
    bnd_test = paired_signflip(bnd_none, bnd_mb, null="no-norm network's boundary fraction")
    ref, big = sizes.runs[sizes.reference].batch_mean, sizes.runs[sizes.largest].batch_mean
    frac_ref, frac_big = [s.frac_interior for s in ref], [s.frac_interior for s in big]
    fade_test = paired_signflip(frac_ref, frac_big, null=f"batch {sizes.largest}")
    mb_ok = mb_test.significant()
    claims = [
        Verdict(
            "A",
            "GroupNorm: localization grows with the number of groups G (Fig. 4)",
            at_budget(
                grows_with_groups(trend, top_beats_bottom, control.significant()), groups_rising
            ),
            trend,
            f"trend over G < C = {groups.width}; mean interior fraction per G: "
            + join(f"{g}: {fracs[i].mean():.2f}" for i, g in enumerate(gs))
            + f"; largest G beats smallest per seed: {top_beats_bottom}; control "
            f"(InstanceNorm beyond its nulls) p = {control.p:.2g}",
            unit=".2f",
        ),
        Verdict(
            "A",
            "BatchNorm with minibatch statistics at inference localizes (Fig. 5)",
            at_budget(localizes(mb_test, control.significant()), bn_rising),
            mb_test,
            f"batch-mean test, interior fraction {_t(m)}",
        ),
        Verdict(
            "A",
            "Population statistics destroy the localization minibatch statistics give (Fig. 6)",
            at_budget(localizes(pop_test, mb_ok), bn_rising),
            pop_test,
            f"batch-mean test, interior fraction minibatch {_t(m)} vs population "
            f"{_t([s.frac_interior for s in pop.batch_mean])}",
        ),
        Verdict(
            "A",
            "BatchNorm (minibatch) misses some indices near the boundary (App. D)",
            at_budget(localizes(bnd_test, mb_ok), bn_rising),
            bnd_test,
            f"batch-mean test, fraction localized within R: none {_t(bnd_none)}, minibatch "
            f"{_t(bnd_mb)}",
        ),
        Verdict(
            "A",
            f"(ours) Minibatch localization fades as the evaluation batch grows to {sizes.largest}",
            at_budget(localizes(fade_test, mb_ok), bn_rising),
            fade_test,
            f"batch-mean test, interior fraction at b = {sizes.reference}: {_t(frac_ref)}, at "
            f"b = {sizes.largest}: {_t(frac_big)}",
        ),
    ]
    checks = [exactly_equivariant(eq_pop), cyclic_null(circ.name, cyc)]
    return claims, checks
