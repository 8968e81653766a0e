"""Verdict rules of chapter A4's stress tests. Each row states the claim under test (the
paper's, or the prediction its mechanism makes), one test fixed in advance over independently
trained networks, its smallest effect of interest and the null; what symmetry decides is a
check, not a claim."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from normbook.grading.claims import accuracy_within, mean_test
from normbook.grading.verdicts import Check, Verdict
from normbook.pages.fmt import join
from normbook.paper_a.cached import packnet
from normbook.paper_a.grading.late import rising
from normbook.paper_a.grading.rules import (
    CYCLIC_TOLERANCE,
    accuracy_learned,
    beats_nulls,
    flat_interior,
    learned,
    localizes_verdict,
    side_channel,
)
from normbook.paper_a.grading.sesoi import CHANCE, REMOVED
from normbook.paper_a.measures import bands
from normbook.paper_a.runs.stress import MODE_DOC

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
    (:func:`normbook.paper_a.grading.rules.flat_interior`)."""
    return flat_interior(
        f"{circ.name} trained with circular padding (no boundary to localize from)",
        circ.slope_interior,
        bands.slope_se(circ),
        key="a4_circular_flat",
    )  # fmt: skip


def symmetric_interventions(sweep) -> list[Verdict]:
    """Statistics that do not depend on the sample (the population's) or come from another,
    independent sample make every normalization layer a translation-equivariant map of the
    sample's own input, so the expected interior slope is 0: equivalence within ± the slope
    SESOI (:func:`normbook.paper_a.grading.rules.flat_interior`); one row per mode, its key
    ``a4_<mode>_flat``."""
    return [
        flat_interior(
            f"{sweep.name} with {MODE_DOC[m]} at every layer",
            sweep.slopes(m, "all"),
            sweep.se[m]["all"],
            key=f"a4_{m}_flat",
        )  # fmt: skip
        for m in SYMMETRIC_MODES
    ]


def interior_removed(sweep) -> np.ndarray:
    """Per seed, the share of the interior slope that interior-only statistics at every layer
    remove: 1 - slope after / slope before."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1 - sweep.slopes("interior", "all") / sweep.baseline_slopes


def interior_statistics(sweep, with_norm, curve=None) -> Verdict:
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
    up = None if curve is None else rising(curve, interior_removed, REMOVED)
    return Verdict.graded(
        "A",
        f"Statistics of the interior alone remove at least {REMOVED.value:.0%} of the interior "
        f"slope ({MODE_DOC['interior']}, at every layer)",
        test,
        REMOVED,
        rising=up,
        controls=(learned(with_norm), side_channel(with_norm)),
        evidence=f"slope {join(before, '.3f')} -> {join(after, '.3f')}; share removed "
        f"{join(removed, '.2f')}; "
        + (
            "the trained networks only (no kept states)"
            if curve is None
            else f"rising judged at the kept states ({join(curve.fractions, '.3g')} of the budget)"
        ),
        unit=".2f",
        paper_says="The side channel runs through the normalization statistics (the mechanism)",
        key="a4_interior_statistics",
        rule=interior_statistics,
        measure=interior_removed,
    )


def receptive_field_rows(heads: dict) -> list[Verdict]:
    """Paper A reads PackNorm's accuracy-vs-overlap transition as receptive-field overlap. With
    kernel 1 (R = 0) no receptive fields overlap, so that reading predicts accuracy at chance
    below the paper's transition (about half the path). Per head: at the largest overlap up to
    half the path, every model's accuracy lies within ``CHANCE`` of 1/2 (two one-sided exact
    binomial tests per model; refuted when some model lies beyond). Control: the kernel-1
    family learned (at full overlap, where path B *is* path A). More training can only make a
    head that beats chance beat it more, so a refutation stands without a curve
    (``rising=False``); a reproduction is a statement about this budget. One row per head,
    its key ``a4_packnorm_overlap_<head>``."""
    rows = []
    for head, acc in heads.items():
        o, full = list(acc.overlaps), acc.overlaps[-1]
        below_half = [i for i, v in enumerate(o) if 0 < v <= full / 2]
        at = below_half[-1] if below_half else 0
        test = accuracy_within(acc.correct[at], acc.n_test, CHANCE.value)
        rows.append(
            Verdict.graded(
                "A",
                f"PackNorm with kernel 1 (R = 0) and a {head} head: below the paper's "
                f"transition (at o = {o[at]} of {full}) every model's accuracy stays within "
                f"± {CHANCE.value:g} of chance",
                test,
                replace(CHANCE, unit="from chance (1/2), at most"),
                rising=False,
                controls=(accuracy_learned(acc.acc[-1], f"kernel 1, {head} head"),),
                evidence=f"accuracy at o = {o[at]}: {join(acc.acc[at], '.3f')}; at full overlap "
                f"{join(acc.acc[-1], '.3f')}",
                unit=".3f",
                paper_says="PackNorm's overlap transition measures receptive-field overlap "
                "(Fig. 3)",
                key=f"a4_packnorm_overlap_{head}",
                rule=receptive_field_rows,
                measure=packnet.correct_counts,
            )
        )
    return rows


def architecture_localizes(runs, what: str, key: str = "") -> Verdict:
    """The side channel in another architecture: the interior slope of the normalized
    networks beats both nulls (no-norm networks; the same networks with circular padding) by
    the SESOI; control: they learned the task. Whether the slope was still rising is judged on
    ``runs.curve`` (the normalized networks at the late kept state and the end; None: it
    cannot be refuted). ``key``: the claim's name for the prose."""
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
        "(one architecture, 1-D)", key=key,
    )  # fmt: skip
