"""Chapter A3's claims: Fig. 4 (GroupNorm's trend over G), Fig. 5 (BatchNorm with minibatch
statistics), App. D (its boundary) and the evaluation batch size; population statistics (exactly
equivariant, Prop. C.1) and the circular null as checks. The rules they share with the other
chapters are in :mod:`normbook.paper_a.grading`."""

from __future__ import annotations

import numpy as np

from normbook.grading.claims import may_rise, mean_test, paired, rank_trend
from normbook.grading.verdicts import Control, Verdict
from normbook.pages.fmt import join
from normbook.paper_a.grading.late import rising
from normbook.paper_a.grading.nulls import NULL_NONE, kept_seeds, null_learned, null_name
from normbook.paper_a.grading.rules import (
    beats_nulls,
    cyclic_null,
    exactly_equivariant,
    learned,
    localizes_verdict,
    side_channel,
)
from normbook.paper_a.grading.sesoi import BOUNDARY_GAP, FADED, SLOPE, TREND
from normbook.paper_a.measures import bands
from normbook.paper_a.runs.batchstats import boundary_fractions


def _kept_states(curves) -> str:
    """The batch-mean curves' kept states, for the evidence column."""
    if curves is None:
        return "; the trained networks only (no kept states)"
    kept = join(curves.none.fractions, ".3g")
    return f"; rising judged at the kept states ({kept} of the budget)"


def _batch_mean_boundary(run) -> list[float]:
    return boundary_fractions(run, "batch_mean")


def _slope(run) -> list[float]:
    return run.slope_interior


def a3_ledger(
    groups, bn, eq_pop, cyc, sizes, group_curves, bn_curve, bm_curves=None
) -> tuple[list, list]:
    """Chapter A3: Fig. 4, Fig. 5, App. D and the evaluation batch size as claims; population
    statistics (exactly equivariant, Prop. C.1) and the circular null as checks. ``bn`` holds
    the batch-mean-test runs at the reference evaluation batch size (minibatch, population,
    none, circular); ``group_curves``: the curves of the GroupNorm networks with G < C;
    ``bm_curves``: :class:`.which_norms.BatchMeanCurves` (None: the boundary and batch-size
    claims cannot be refuted)."""
    proper = [i for i, g in enumerate(groups.group_counts) if g < groups.width]  # not G = C
    runs = [groups.runs[groups.group_counts[i]] for i in proper]
    # (G < C, seeds); a run with no G < C (a sweep point G = C) has no trend to test: its
    # row reads "no interval"
    slopes = np.array([r.slope_interior for r in runs]) if runs else np.empty((0, 0))
    gs = [groups.group_counts[i] for i in proper]
    null = f"rank correlation of the interior slope with G, ρ = {TREND.value:g}"
    trend = rank_trend(np.repeat(gs, slopes.shape[1]), slopes.ravel(), TREND.value, null=null)
    # a trend over families none of which shows the side channel is a trend in noise
    g_side = Control(
        "GroupNorm, G < C",
        f"shows the side channel: some family's first-hop-band slope ≥ {SLOPE.value:g} in "
        "every seed",
        any(side_channel(r).passed for r in runs),
        "; ".join(f"G = {g}: {join(bands.first_hop_slope(r), '.3f')}" for g, r in zip(gs, runs)),
    )
    g_controls = (*(learned(r, f"GroupNorm G = {g}") for g, r in zip(gs, runs)), g_side)
    g_rising = any(rising(c, bands.interior_slope) for c in group_curves)
    mb, no_norm, circ = bn.minibatch, bn.none, bn.circular
    bn_claim = localizes_verdict(
        beats_nulls("BatchNorm with minibatch statistics at inference"),
        mb, no_norm, circ, bn_curve, family="BatchNorm, minibatch statistics",
        paper_says="BatchNorm with minibatch statistics at inference localizes (Fig. 5)",
        key="a3_batchnorm_localizes",
    )  # fmt: skip
    # the fade's premise: a slope that does not exist at the reference batch cannot fade
    mb_ok = Control.of_claim("BatchNorm, minibatch statistics", "localizes beyond R",
                             bn_claim.verdict, bn_claim.key)  # fmt: skip
    bnd_none = boundary_fractions(no_norm, "batch_mean")  # App. D's measure
    bnd_mb = boundary_fractions(mb, "batch_mean")
    keep = kept_seeds(no_norm)  # the dead-null rule (alive), as for every null comparison
    bnd = paired(np.asarray(bnd_none)[keep], np.asarray(bnd_mb)[keep], BOUNDARY_GAP.value,
                 null="no-norm network's boundary fraction"
                 + null_name(no_norm).removeprefix(NULL_NONE))  # fmt: skip
    ref, big = sizes.runs[sizes.reference], sizes.runs[sizes.largest]
    with np.errstate(divide="ignore", invalid="ignore"):
        lost = 1 - np.asarray(big.slope_interior) / np.asarray(ref.slope_interior)
    fade = mean_test(lost, FADED.value, null=f"the slope at evaluation batch {sizes.reference}")
    bnd_up = fade_up = None
    if bm_curves is not None:
        # signed the claim's way: the boundary gap none - minibatch, and the share of the
        # slope lost at the largest batch, grow as "smaller" and "at most half" come to hold
        c = bm_curves
        gap = c.none.values(_batch_mean_boundary) - c.minibatch.values(_batch_mean_boundary)
        bnd_up = may_rise(gap[:, keep], c.none.fractions, BOUNDARY_GAP.flat_margin)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = 1 - c.largest.values(_slope) / c.minibatch.values(_slope)
        fade_up = may_rise(share, c.largest.fractions, FADED.flat_margin)
    claims = [
        Verdict.graded(
            "A",
            f"GroupNorm with G < C: the interior slope rises with the number of groups G "
            f"(Spearman's ρ over every model at least {TREND.value:g})",
            trend,
            TREND,
            rising=g_rising,
            controls=g_controls,
            evidence=f"trend of the interior slope over G < C = {groups.width}; mean per G: "
            + join(f"{g}: {slopes[i].mean():.3f}" for i, g in enumerate(gs)),
            unit=".2f",
            paper_says="Localization grows with the number of groups G (Fig. 4)",
            key="a3_group_trend",
            rule=a3_ledger,
            measure=bands.interior_slope,
        ),
        bn_claim,
        Verdict.graded(
            "A",
            f"BatchNorm (minibatch): the batch-mean test localizes a share of the indices within "
            f"R at least {BOUNDARY_GAP.value:g} smaller than the no-norm network's",
            bnd,
            BOUNDARY_GAP,
            rising=bnd_up,
            controls=(learned(mb, "BatchNorm, minibatch statistics"), null_learned(no_norm)),
            evidence=f"batch-mean test, fraction localized within R: none "
            f"{join(bnd_none, '.2f')}, minibatch {join(bnd_mb, '.2f')}" + _kept_states(bm_curves),
            unit=".2f",
            paper_says="BatchNorm misses some indices near the boundary (App. D)",
            key="a3_batchnorm_boundary",
            rule=a3_ledger,
            measure=boundary_fractions,
        ),
        Verdict.graded(
            "A",
            f"(ours) At evaluation batch {sizes.largest} minibatch statistics keep at most half of "
            f"the interior slope they give at {sizes.reference}",
            fade,
            FADED,
            rising=fade_up,
            controls=(mb_ok,),
            evidence=f"interior slope at b = {sizes.reference}: "
            f"{join(ref.slope_interior, '.3f')}, at b = {sizes.largest}: "
            f"{join(big.slope_interior, '.3f')}" + _kept_states(bm_curves),
            key="a3_batch_size_fades",
            rule=a3_ledger,
            measure=bands.interior_slope,
        ),
    ]
    checks = [
        exactly_equivariant(eq_pop, ": population statistics cannot localize (Fig. 6)"),
        cyclic_null(circ.name, cyc),
    ]
    return claims, checks


def trend_check_text(trend: Verdict, instance) -> str:
    """What holds the group trend, for prose: its failed family check with the row's own test
    (:meth:`.Verdict.blocked_text`), and whether InstanceNorm (G = C), trained at the same
    geometry and budget, passes the same check (the geometry can carry the side channel)."""
    blocked = trend.blocked_text()
    if not blocked:
        return "Every family check of the trend passed"
    inst = side_channel(instance, "InstanceNorm (G = C)")
    reading = (
        "so this geometry and budget can carry the side channel, and it is the group counts "
        "below C that fall short of their checks. Whether more steps or more normalization "
        "layers would carry one of them past its check is not measured at this profile (the "
        "`paper` profile trains the paper's depth for the paper's number of steps)"
        if inst.passed
        else "so at this budget not even InstanceNorm shows the side channel in every seed"
    )
    state = "passes" if inst.passed else "fails"
    return (
        f"{blocked}. InstanceNorm (G = C), trained alike, {state} the same check "
        f"({inst.evidence}): {reading}"
    )
