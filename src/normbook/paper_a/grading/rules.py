"""The verdict rules several of paper A's chapters share: the positive controls, the checks
that hold by construction, and the "localizes beyond R" and "flat by symmetry" claims. Each
chapter's own claims are its folder's ``claims`` module.

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

from normbook.grading.claims import within
from normbook.grading.verdicts import BY_SYMMETRY, Check, Control, Verdict
from normbook.pages.fmt import join
from normbook.paper_a.grading.late import rising
from normbook.paper_a.grading.nulls import null_learned, slope_beyond_nulls
from normbook.paper_a.grading.sesoi import CHANCE_MARGIN, LEARNED_R2, SLOPE
from normbook.paper_a.measures import bands
from normbook.paper_a.measures.equivariance import SHIFT_TOLERANCE

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


# ----------------------------------------------------------------------------- claims


def flat_interior(what: str, slopes, se, key: str = "") -> Verdict:
    """(ours) Where symmetry makes every interior index equivalent, the interior slope is 0;
    graded as an equivalence claim (:func:`normbook.grading.claims.within`): the mean slope over
    seeds lies within ± the slope SESOI, so that a slope too noisy to tell from 0 is "not
    shown", never "flat". More training cannot tilt a symmetric network's expectation
    (``rising=False``). A family of its own (``BY_SYMMETRY``): its near-certain p-values would
    loosen the false-discovery adjustment of the paper's claims. ``se``: each seed's own
    standard error, shown as evidence; ``key``: the claim's name for the prose."""
    slopes = np.asarray(slopes, float)
    z = np.abs(slopes) / np.asarray(se, float)
    test = within(slopes, SLOPE.value, null="a flat interior (slope 0, by symmetry)")
    return Verdict.graded(
        f"A {BY_SYMMETRY}",
        f"(ours) {what}: the interior mean prediction is flat (slope within ± the SESOI of 0)",
        test,
        SLOPE,
        rising=False,
        evidence=f"interior slope {join(slopes, '.4f')}; |slope| / its SE {join(z, '.1f')}",
        unit="+.4f",
        key=key,
        rule=flat_interior,
        measure=bands.interior_slope,
    )


def beats_nulls(who: str) -> str:
    """The tested wording of a "localizes beyond R" claim about ``who``."""
    return (f"{who}: the interior mean prediction (beyond R from both ends) rises faster than "
            f"both nulls' by at least {SLOPE.value:g} of the ramp's slope")  # fmt: skip


def localizes_verdict(
    claim: str,
    run,
    no_norm,
    circular,
    curve=None,
    extra: str = "",
    family: str | None = None,
    paper_says: str = "",
    key: str = "",
) -> Verdict:
    """A "this family localizes beyond R" claim: the interior slope beats both nulls by the
    SESOI; controls: the family learned, and so did at least two no-norm nulls (dead ones
    leave the comparison, :func:`alive`); the interior slope's curve must have flattened for
    *refuted* (no curve: it cannot be refuted). ``key``: the claim's name for the prose."""
    test = slope_beyond_nulls(bands.interior_slope, run, no_norm, circular)
    up = None if curve is None else rising(curve, bands.interior_slope)
    return Verdict.graded(
        "A",
        claim,
        test,
        SLOPE,
        rising=up,
        controls=(learned(run, family), null_learned(no_norm)),
        evidence=f"interior slope {join(run.slope_interior, '.3f')} vs nulls "
        f"{join(no_norm.slope_interior, '.3f')} / {join(circular.slope_interior, '.3f')}{extra}",
        unit=".3f",
        paper_says=paper_says,
        key=key,
        rule=localizes_verdict,
        measure=bands.interior_slope,
    )
