"""Verdict rules for paper A's claims, their positive controls, and the checks that hold by
construction.

Every claim is one test, fixed before looking at the numbers, whose unit is an independently
trained network, against the claim's smallest effect of interest (:mod:`.sesoi`), graded by
:func:`normbook.grading.verdicts.decide`. "Localizes" always means: a per-seed slope of the mean
prediction beats *both* nulls, measured the same way, by at least the SESOI (paired t tests,
an intersection-union test: every null must be beaten). The nulls are the no-normalization
network of the same architecture and seed, and the same trained network evaluated with
circular padding (no boundary, so nothing can be localized; see
:func:`localization.circular_null`). A network is never part of its own null.

Before a family's claims are graded it must pass its positive control: it learned the task
(its mean prediction explains a quarter of the ramp's variance, as learning the ramp where
convolution alone sees the padding does; :func:`learned`), and, for claims about a share of
the side channel's slope (how much of it the second hop keeps, how much an intervention
removes), it shows the side channel in its own first hop band (:func:`side_channel`): a share
of nothing is not defined. A family that fails its control makes its claims *not shown*.

Checks (exact equivariance, controls at chance, symmetry) are properties a correct
implementation must have; a failed check is a bug report, not a verdict.
"""

from __future__ import annotations

import numpy as np

from normbook.grading.claims import inside_band, may_rise, mean_test, paired, rank_trend, within
from normbook.grading.verdicts import BY_SYMMETRY, Check, Control, Verdict, decide
from normbook.pages.fmt import join
from normbook.paper_a import paper_values as reported
from normbook.paper_a.grading.late import late_gain, reach_rising, rising, transition_rising  # noqa: F401
from normbook.paper_a.grading.nulls import (  # noqa: F401  (re-exported: the chapters and tests read them here)
    NULL_CIRCULAR,
    NULL_NONE,
    alive,
    beyond_nulls,
    kept_seeds,
    null_learned,
    null_name,
    reach_layers,
    reach_test,
    slope_beyond_nulls,
)
from normbook.paper_a.grading.sesoi import (
    BOUNDARY_GAP,
    CHANCE_MARGIN,
    FADED,
    LEARNED_R2,
    REACH,
    SLOPE,
    TREND,
)
from normbook.paper_a.measures import bands, multihop
from normbook.paper_a.measures.equivariance import SHIFT_TOLERANCE
from normbook.paper_a.runs.batchstats import boundary_fractions

CHECK_LEVEL = 1e-3  # a control at chance "fails" only when its binomial p falls below this
CYCLIC_TOLERANCE = 1e-4  # float rounding in pooled statistics under a cyclic shift


# ----------------------------------------------------------------------------- controls


def learned(run, family: str | None = None) -> Control:
    """The learning control: in every seed the mean prediction explains at least
    ``LEARNED_R2`` of the ramp's variance over the whole sequence (R² against the target),
    as a network that learned the ramp where it sees the padding does."""
    r2 = np.array([s.effect_all.r2 for s in run.per_seed], dtype=float)
    return Control(
        family or run.name,
        f"learned the task: the mean prediction's R² against the ramp ≥ {LEARNED_R2:g} in "
        "every seed",
        bool(np.all(np.nan_to_num(r2) >= LEARNED_R2)),
        f"R² {join(r2, '.2f')}",
    )


def side_channel(run, family: str | None = None) -> Control:
    """The mechanism control, for claims about how far or how the side channel carries: every
    seed's first hop band ([R, 3R)) has a slope of at least the SESOI."""
    s = bands.first_hop_slope(run)
    return Control(
        family or run.name,
        f"shows the side channel: first-hop-band slope ≥ {SLOPE.value:g} in every seed",
        bool(np.all(s >= SLOPE.value)),
        f"first-hop slope {join(s, '.3f')}",
    )


def accuracy_learned(acc, family: str) -> Control:
    """PackNorm's learning control: at full overlap (path B *is* path A) every model tells
    the two cases apart with accuracy at least 1/2 + ``CHANCE_MARGIN``."""
    acc = np.ravel(acc)
    return Control(
        family,
        f"learned the task: accuracy at full overlap ≥ {0.5 + CHANCE_MARGIN:g} in every model",
        bool(np.all(acc >= 0.5 + CHANCE_MARGIN)),
        f"accuracy at full overlap {join(acc, '.3f')}",
    )


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


def exactly_equivariant(eq, consequence: str = "") -> Check:
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
        f"reach = R (Prop. C.1){consequence}",
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


def flat_interior(what: str, slopes, se) -> Verdict:
    """(ours) Where symmetry makes every interior index equivalent, the interior slope is 0;
    graded as an equivalence claim (:func:`normbook.grading.claims.within`): the mean slope over
    seeds lies within ± the slope SESOI, so that a slope too noisy to tell from 0 is "not
    shown", never "flat". More training cannot tilt a symmetric network's expectation
    (``rising=False``). A family of its own (``BY_SYMMETRY``): its near-certain p-values would
    loosen the false-discovery adjustment of the paper's claims. ``se``: each seed's own
    standard error, shown as evidence."""
    slopes = np.asarray(slopes, float)
    z = np.abs(slopes) / np.asarray(se, float)
    test = within(slopes, SLOPE.value, null="a flat interior (slope 0, by symmetry)")
    return Verdict(
        f"A {BY_SYMMETRY}",
        f"(ours) {what}: the interior mean prediction is flat (slope within ± the SESOI of 0)",
        decide(test, rising=False),
        test,
        SLOPE,
        f"interior slope {join(slopes, '.4f')}; |slope| / its SE {join(z, '.1f')}",
        unit="+.4f",
    )


# ----------------------------------------------------------------------------- ledgers


def _t(values, spec: str = ".2f") -> str:
    return join(values, spec)


def _probe_states(probe_curve) -> str:
    """Which states the reach's curve probed, for the evidence column."""
    if probe_curve is None:
        return "probes of the trained networks only (no kept states)"
    return (f"rising judged on the probes at the kept states "
            f"({join(probe_curve.fractions, '.3g')} of the budget)")  # fmt: skip


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


def beats_nulls(who: str) -> str:
    """The tested wording of a "localizes beyond R" claim about ``who``."""
    return (f"{who}: the interior mean prediction (beyond R from both ends) rises faster than "
            f"both nulls' by at least {SLOPE.value:g} of the ramp's slope")  # fmt: skip


def localizes_verdict(
    claim: str,
    run,
    none,
    circular,
    curve=None,
    extra: str = "",
    family: str | None = None,
    paper_says: str = "",
) -> Verdict:
    """A "this family localizes beyond R" claim: the interior slope beats both nulls by the
    SESOI; controls: the family learned, and so did at least two no-norm nulls (dead ones
    leave the comparison, :func:`alive`); the interior slope's curve must have flattened for
    *refuted* (no curve: it cannot be refuted)."""
    test = slope_beyond_nulls(bands.interior_slope, run, none, circular)
    up = None if curve is None else rising(curve, bands.interior_slope)
    controls = (learned(run, family), null_learned(none))
    return Verdict(
        "A",
        claim,
        decide(test, controls, rising=up),
        test,
        SLOPE,
        f"interior slope {_t(run.slope_interior, '.3f')} vs nulls {_t(none.slope_interior, '.3f')}"
        f" / {_t(circular.slope_interior, '.3f')}{extra}",
        unit=".3f",
        controls=controls,
        paper_says=paper_says,
    )


def a1_ledger(none, normed, circular, eq_none, cyc, curve, probe_curve=None) -> tuple[list, list]:
    """Chapter A1: the side channel (beyond R), Fig. 1a (beyond one hop: the whole sequence)
    and Fig. 1b as claims; Prop. C.1 and the null as checks. ``curve``: the normalized
    networks' compute-to-effect curve; ``probe_curve``: the same with depth probes (None, as in
    a paper-scale record that kept no probes: Fig. 1b's claim cannot be refuted)."""
    half = (normed.seq_len - 1) // 2
    whole = slope_beyond_nulls(bands.beyond_hop_slope, normed, none, circular)
    hop = int(round(3 * normed.radius))  # an index beyond one hop is this far from both ends
    no_band = "" if half >= hop else (
        f" (–: no index is {hop} = 3R from both ends at l = {normed.seq_len})")  # fmt: skip
    # no side channel at all would be evidence, not a failure: the controls are learning only
    controls = (learned(normed), null_learned(none))
    spread = reach_test(normed, none, circular, factor=1.0)
    excess = [
        multihop.excess_beyond(r.probe_distances, r.cnn.kernel) for r in (normed, none, circular)
    ]
    claims = [
        localizes_verdict(
            beats_nulls(f"With {normed.name}"),
            normed,
            none,
            circular,
            curve,
            f"; interior fraction {_t(normed.frac_interior)}",
            paper_says="Normalization lets the network localize indices beyond its receptive "
            "field (the side channel)",
        ),  # fmt: skip
        Verdict(
            "A",
            f"With {normed.name}: the mean prediction beyond one hop (farther than 3R from both "
            f"ends) rises faster than both nulls' by at least {SLOPE.value:g} of the ramp's slope",
            decide(whole, controls, rising=rising(curve, bands.beyond_hop_slope)),
            whole,
            SLOPE,
            f"slope beyond 3R {_t(bands.beyond_hop_slope(normed), '.4f')} vs nulls "
            f"{_t(bands.beyond_hop_slope(none), '.4f')} / "
            f"{_t(bands.beyond_hop_slope(circular), '.4f')}{no_band}; localization distances "
            f"{normed.distances} (middle: {half})",
            unit=".4f",
            controls=controls,
            paper_says=f"With {normed.name} the whole sequence is localized (Fig. 1a)",
        ),
        Verdict(
            "A",
            "With normalization: at their best depth the depth probes localize beyond R(depth) "
            "by at least one layer of receptive-field growth more than both nulls' probes",
            decide(spread, controls, rising=reach_rising(probe_curve, 1.0)),
            spread,
            REACH,
            f"reach beyond R(d) at the best depth, in indices, per seed: {_t(excess[0], '.0f')} "
            f"(nulls: {_t(excess[1], '.0f')} / {_t(excess[2], '.0f')}); "
            + _probe_states(probe_curve),
            unit=".2f",
            controls=controls,
            paper_says="Localization spreads inward faster than the receptive field grows "
            "(Fig. 1b)",
        ),
    ]
    checks = [exactly_equivariant(eq_none), cyclic_null(circular.name, cyc)]
    return claims, checks


def a2_ledger(
    pack, normed, none, circular, hop_factor: float, probe_curve=None, pack_kept=None
) -> tuple[list, list]:
    """Chapter A2: Fig. 3's transition and the multi-hop reach as claims; o = 0, the per-path
    control and the rise of accuracy with the overlap (which pooled statistics give at any
    receptive field, chapter A4) as the PackNorm family's checks and control.
    ``probe_curve``: the normalized networks' curve with depth probes (as :func:`a1_ledger`);
    ``pack_kept``: PackNorm's sweep at the late kept state (:func:`transition_rising`)."""
    o = list(pack.pack.overlaps)
    full = o.index(pack.setup.path_len) if pack.setup.path_len in o else None
    pack_ok = accuracy_learned(pack.pack.acc[full] if full is not None else [np.nan], "PackNorm")
    lo, hi = reported.pack_transition_fraction()
    per_seed = np.asarray(pack.transition_per_seed) / pack.setup.path_len
    band = inside_band(per_seed, lo, hi, null=f"paper: {lo:.2f}–{hi:.2f} l'")
    states = "the trained models only (no kept states)"
    if pack_kept is not None:
        half = pack_kept.at_step / pack.setup.train.steps
        states = f"rising judged at {half:.3g} of the budget and the end"
    hop = reach_test(normed, none, circular, factor=hop_factor)
    excess = multihop.excess_beyond(normed.probe_distances, normed.cnn.kernel, hop_factor)
    claims = [
        Verdict(
            "A",
            f"PackNorm's transition, as a fraction of the path length, lies inside the paper's "
            f"band ({lo:.2f}–{hi:.2f})",
            decide(band, [pack_ok], rising=transition_rising(pack, pack_kept)),
            band,
            None,
            (
                f"ours: o ≈ {pack.transition:.1f} of {pack.setup.path_len}"
                if pack.transition == pack.transition
                else "ours: accuracy never reaches the transition level"
            )
            + f" (per seed, as fractions of l': {_t(per_seed)}); grid step "
            f"{pack.grid_step:.2f} l'; {states}",
            unit=".2f",
            controls=(pack_ok,),
            paper_says="The transition lies at about half the path length "
            f"(o ≈ {reported.PACK_TRANSITION[0]}–{reported.PACK_TRANSITION[1]} of "
            f"{reported.PACK_PATH_LEN}, Fig. 3)",
        ),
        Verdict(
            "A",
            f"At their best depth the probes localize beyond one hop ({hop_factor:g}R(d)) by at "
            "least one layer of receptive-field growth more than both nulls' probes",
            decide(
                hop,
                [learned(normed), null_learned(none)],
                rising=reach_rising(probe_curve, hop_factor),
            ),
            hop,
            REACH,
            f"reach beyond {hop_factor:g}R(d) at the best depth, in indices, per seed: "
            f"{_t(excess, '.0f')}; " + _probe_states(probe_curve),
            unit=".2f",
            controls=(learned(normed), null_learned(none)),
            paper_says="Position travels several hops, one per normalization layer (the "
            "multi-hop reading)",
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
    slopes = np.array([r.slope_interior for r in runs])  # (G < C, seeds)
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
    mb, none, circ = bn.minibatch, bn.none, bn.circular
    bn_claim = localizes_verdict(
        beats_nulls("BatchNorm with minibatch statistics at inference"),
        mb, none, circ, bn_curve, family="BatchNorm, minibatch statistics",
        paper_says="BatchNorm with minibatch statistics at inference localizes (Fig. 5)",
    )  # fmt: skip
    mb_ok = Control("BatchNorm, minibatch statistics", "localizes beyond R (the claim above is "
                    "reproduced)", bn_claim.verdict == "reproduced", bn_claim.verdict)  # fmt: skip
    bnd_none = boundary_fractions(none, "batch_mean")  # App. D's measure
    bnd_mb = boundary_fractions(mb, "batch_mean")
    keep = kept_seeds(none)  # the dead-null rule (alive), as for every null comparison
    bnd = paired(np.asarray(bnd_none)[keep], np.asarray(bnd_mb)[keep], BOUNDARY_GAP.value,
                 null="no-norm network's boundary fraction"
                 + null_name(none).removeprefix(NULL_NONE))  # fmt: skip
    bnd_controls = (learned(mb, "BatchNorm, minibatch statistics"), null_learned(none))
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
        Verdict(
            "A",
            f"GroupNorm with G < C: the interior slope rises with the number of groups G "
            f"(Spearman's ρ over every model at least {TREND.value:g})",
            decide(trend, g_controls, rising=g_rising),
            trend,
            TREND,
            f"trend of the interior slope over G < C = {groups.width}; mean per G: "
            + join(f"{g}: {slopes[i].mean():.3f}" for i, g in enumerate(gs)),
            unit=".2f",
            controls=g_controls,
            paper_says="Localization grows with the number of groups G (Fig. 4)",
        ),
        bn_claim,
        Verdict(
            "A",
            f"BatchNorm (minibatch): the batch-mean test localizes a share of the indices within "
            f"R at least {BOUNDARY_GAP.value:g} smaller than the no-norm network's",
            decide(bnd, bnd_controls, rising=bnd_up),
            bnd,
            BOUNDARY_GAP,
            f"batch-mean test, fraction localized within R: none {_t(bnd_none)}, minibatch "
            f"{_t(bnd_mb)}" + _kept_states(bm_curves),
            unit=".2f",
            controls=bnd_controls,
            paper_says="BatchNorm misses some indices near the boundary (App. D)",
        ),
        Verdict(
            "A",
            f"(ours) At evaluation batch {sizes.largest} minibatch statistics keep at most half of "
            f"the interior slope they give at {sizes.reference}",
            decide(fade, [mb_ok], rising=fade_up),
            fade,
            FADED,
            f"interior slope at b = {sizes.reference}: {_t(ref.slope_interior, '.3f')}, at "
            f"b = {sizes.largest}: {_t(big.slope_interior, '.3f')}" + _kept_states(bm_curves),
            controls=(mb_ok,),
        ),
    ]
    checks = [
        exactly_equivariant(eq_pop, ": population statistics cannot localize (Fig. 6)"),
        cyclic_null(circ.name, cyc),
    ]
    return claims, checks
