"""Whether a tested quantity of paper A may still be moving the claim's way at the end of its
training budget, from its measurements at the kept states (:func:`normbook.grading.claims.may_rise`:
the late gain's upper end against half the SESOI)."""

from __future__ import annotations

import numpy as np

from normbook.grading.claims import Rise, may_rise
from normbook.pages.fmt import join
from normbook.paper_a import paper_values
from normbook.paper_a.grading.nulls import reach_layers
from normbook.paper_a.grading.sesoi import REACH, SLOPE
from normbook.paper_a.measures import bands
from normbook.paper_a.runs import packnorm


def rising(curve, measure, sesoi=SLOPE) -> Rise:
    """Whether ``measure`` (a per-seed function of an evaluated run) may still be rising at
    the end of ``curve``'s budget (:func:`normbook.grading.claims.may_rise`, margin half the
    SESOI)."""
    return may_rise(curve.values(measure), curve.fractions, sesoi.flat_margin)


def reach_rising(probe_curve, factor: float) -> Rise | None:
    """Whether the normalized networks' probe reach beyond ``factor`` * R(d)
    (:func:`reach_layers`, in the reach SESOI's unit) may still be rising; None without a
    probe curve (:func:`localization.curve` with probes), which leaves the claim unrefutable."""
    if probe_curve is None:
        return None
    return rising(probe_curve, lambda r: reach_layers(r, factor), REACH)


def probe_states(probe_curve) -> str:
    """Which states the reach's curve probed, for the evidence column."""
    if probe_curve is None:
        return "probes of the trained networks only (no kept states)"
    return (f"rising judged on the probes at the kept states "
            f"({join(probe_curve.fractions, '.3g')} of the budget)")  # fmt: skip


def late_gain(curve, measure=bands.interior_slope):
    """The interior slope's gain over the last half of the budget (for the chapters' prose)."""
    from normbook.grading.claims import late_gain as gain

    return gain(curve.values(measure), curve.fractions, "interior slope")


def transition_rising(pack, kept) -> Rise | None:
    """Whether PackNorm's transition may still be moving into the paper's band: per seed, the
    signed depth inside the band, min(x - lo, hi - x) with x the transition as a fraction of
    l' (positive inside; it rises as the claim comes closer to holding), at ``kept`` (the sweep
    at the late kept state, :func:`.packnorm.late_accuracy`) and at the end. The margin is half
    the overlap grid's step: the transition is resolved only to the grid, so a smaller move is
    no move. None without ``kept`` (the claim cannot be refuted); a seed with no transition at
    either state has no depth, so the transition may still be moving."""
    if kept is None:
        return None
    lo, hi = paper_values.pack_transition_fraction()
    level, length = pack.setup.transition_level, pack.setup.path_len
    x = np.array([packnorm.transitions(a, level) for a in (kept, pack.pack)]) / length
    depth = np.minimum(x - lo, hi - x)
    fractions = [kept.at_step / pack.setup.train.steps, 1.0]
    return may_rise(depth, fractions, 0.5 * pack.grid_step)
