"""Verdict rules of chapter A4's stress tests. Each row states the claim under test (the
paper's, or the prediction its mechanism makes), one test fixed in advance over independently
trained networks, its smallest effect of interest and the null; what symmetry decides is a
check, not a claim."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from normbook.grading.claims import accuracy_within, mean_test
from normbook.grading.verdicts import REFUTED, REPRODUCED, Check, Control, Verdict, decide
from normbook.pages.fmt import join
from normbook.paper_a.grading.sesoi import CHANCE, REMOVED
from normbook.paper_a.measures import bands
from normbook.paper_a.runs.stress import MODE_DOC
from normbook.paper_a.verdicts import (
    CYCLIC_TOLERANCE,
    accuracy_learned,
    beats_nulls,
    flat_interior,
    learned,
    localizes_verdict,
    rising,
    side_channel,
)

SYMMETRIC_MODES = ("population", "shuffled")  # statistics independent of the sample: flat


def constant_checks(results) -> list[Check]:
    """With a constant input every index beyond R sees the same values, and every pooled
    statistic is shared by all indices: the interior output is flat and only indices within R
    of an end differ (translation symmetry; holds for every normalization)."""
    checks = []
    for c in results:
        spread = float(np.max(c.interior_spread))
        reach = c.boundary_reach
        checks.append(
            Check(
                "A",
                f"{c.name}: constant input gives one output value at every index beyond R, and "
                f"differs from it only within R of an end",
                spread <= 1e-5 * max(1.0, float(np.abs(c.out).max()))
                and bool(np.all(reach < c.radius)),
                f"largest interior spread {spread:.1e}; farthest boundary effect {join(reach)} "
                f"(R = {c.radius})",
            )
        )
    return checks


def circular_trained_checks(circ, max_change) -> list[Check]:
    """Networks trained with circular padding have no boundary: their outputs move with a
    cyclic shift of the input (up to rounding in the pooled statistics)."""
    return [
        Check(
            "A",
            f"{circ.cnn.label} trained with circular padding: outputs move with a cyclic shift "
            "of the input",
            bool(np.all(np.asarray(max_change) <= CYCLIC_TOLERANCE)),
            f"largest change {join(max_change, '.1e')} (tolerance {CYCLIC_TOLERANCE:g})",
        ),
    ]


def circular_flat(circ) -> Verdict:
    """A network trained with circular padding is exactly cyclic-equivariant, so its
    expected interior slope is 0: equivalence within ± the slope SESOI
    (:func:`.verdicts.flat_interior`)."""
    return flat_interior(
        f"{circ.name} trained with circular padding (no boundary to localize from)",
        circ.slope_interior,
        bands.slope_se(circ),
    )  # fmt: skip


def symmetric_interventions(sweep) -> list[Verdict]:
    """Statistics that do not depend on the sample (the population's) or come from another,
    independent sample make every normalization layer a translation-equivariant map of the
    sample's own input, so the expected interior slope is 0: equivalence within ± the slope
    SESOI (:func:`.verdicts.flat_interior`)."""
    return [
        flat_interior(
            f"{sweep.name} with {MODE_DOC[m]} at every layer",
            sweep.slopes(m, "all"),
            sweep.se[m]["all"],
        )  # fmt: skip
        for m in SYMMETRIC_MODES
    ]


def interior_removed(sweep) -> np.ndarray:
    """Per seed, the share of the interior slope that interior-only statistics at every layer
    remove: 1 - slope after / slope before."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1 - sweep.slopes("interior", "all") / sweep.baseline_slopes


def interior_statistics(sweep, normed, curve=None) -> Verdict:
    """The mechanism's prediction that the statistics are the channel, in its open form:
    computing every layer's statistics over the interior only (positions whose input misses
    the padding) removes at least ``REMOVED`` of the interior slope. Per seed, the share
    removed (:func:`interior_removed`); mean test against the SESOI. Controls: the networks
    learned and show the side channel (the share needs a slope to remove). ``curve``: the
    sweep at the kept states (:func:`.stress.intervention_curve`; None: it cannot be
    refuted)."""
    before, after = sweep.baseline_slopes, sweep.slopes("interior", "all")
    removed = interior_removed(sweep)
    test = mean_test(removed, REMOVED.value, null="the slope without intervention")
    controls = (learned(normed), side_channel(normed))
    up = None if curve is None else rising(curve, interior_removed, REMOVED)
    return Verdict(
        "A",
        f"Statistics of the interior alone remove at least {REMOVED.value:.0%} of the interior "
        f"slope ({MODE_DOC['interior']}, at every layer)",
        decide(test, controls, rising=up),
        test,
        REMOVED,
        f"slope {join(before, '.3f')} -> {join(after, '.3f')}; share removed "
        f"{join(removed, '.2f')}; "
        + (
            "the trained networks only (no kept states)"
            if curve is None
            else f"rising judged at the kept states ({join(curve.fractions, '.3g')} of the budget)"
        ),
        unit=".2f",
        controls=controls,
        paper_says="The side channel runs through the normalization statistics (the mechanism)",
    )


def receptive_field_rows(heads: dict) -> list[Verdict]:
    """Paper A reads PackNorm's accuracy-vs-overlap transition as receptive-field overlap. With
    kernel 1 (R = 0) no receptive fields overlap, so that reading predicts accuracy at chance
    below the paper's transition (about half the path). Per head: at the largest overlap up to
    half the path, every model's accuracy lies within ``CHANCE`` of 1/2 (two one-sided exact
    binomial tests per model; refuted when some model lies beyond). Control: the kernel-1
    family learned (at full overlap, where path B *is* path A). More training can only make a
    head that beats chance beat it more, so a refutation stands without a curve
    (``rising=False``); a reproduction is a statement about this budget."""
    rows = []
    for head, acc in heads.items():
        o, full = list(acc.overlaps), acc.overlaps[-1]
        below_half = [i for i, v in enumerate(o) if 0 < v <= full / 2]
        at = below_half[-1] if below_half else 0
        test = accuracy_within(acc.correct[at], acc.n_test, CHANCE.value)
        control = accuracy_learned(acc.acc[-1], f"kernel 1, {head} head")
        rows.append(
            Verdict(
                "A",
                f"PackNorm with kernel 1 (R = 0) and a {head} head: below the paper's "
                f"transition (at o = {o[at]} of {full}) every model's accuracy stays within "
                f"± {CHANCE.value:g} of chance",
                decide(test, [control], rising=False),
                test,
                replace(CHANCE, unit="from chance (1/2), at most"),
                f"accuracy at o = {o[at]}: {join(acc.acc[at], '.3f')}; at full overlap "
                f"{join(acc.acc[-1], '.3f')}",
                unit=".3f",
                controls=(control,),
                paper_says="PackNorm's overlap transition measures receptive-field overlap "
                "(Fig. 3)",
            )
        )
    return rows


def architecture_localizes(runs, what: str) -> Verdict:
    """The side channel in another architecture: the interior slope of the normalized
    networks beats both nulls (no-norm networks; the same networks with circular padding) by
    the SESOI; control: they learned the task. Whether the slope was still rising is judged on
    ``runs.curve`` (the normalized networks at the late kept state and the end; None: it
    cannot be refuted)."""
    c = runs.curve
    states = "the trained networks only (no kept states)"
    if c is not None:
        states = f"rising judged at {join(c.fractions[:-1], '.3g')} of the budget and the end"
    return localizes_verdict(
        beats_nulls(f"The side channel in {what}, with {runs.norm.name}"),
        runs.norm, runs.none, runs.circular, c,
        f"; interior fraction {join(runs.norm.frac_interior, '.2f')}; {states}",
        family=f"{what}, {runs.norm.name}",
        paper_says="Normalization layers enable side-channel spatial communication in CNNs "
        "(one architecture, 1-D)",
    )  # fmt: skip


def rf_reading(rows: list[Verdict]) -> str:
    """The sentence the receptive-field test supports, from its grades."""
    grades = {r.verdict for r in rows}
    if REFUTED in grades:
        return (
            "a network whose receptive field is a single position still tells overlapping from "
            "independent sequences when the normalization pools both paths, so the overlap "
            "sweep measures how much the two paths' pooled statistics share, not how far "
            "receptive fields reach"
        )
    if grades == {REPRODUCED}:
        return (
            "without receptive fields to overlap the networks stay at chance, as the paper's "
            "reading of the transition requires"
        )
    return "at this budget the test cannot tell whether the transition depends on R"


def control_line(controls: list[Control]) -> str:
    """Which positive controls passed, for prose."""
    failed = [c for c in controls if not c.passed]
    return "every positive control passed" if not failed else "failed: " + "; ".join(
        f"{c.family} ({c.check})" for c in failed)  # fmt: skip
