"""The nulls of paper A's claims, and the tests against them: a claim about a normalized
network must beat, seed by seed, the no-norm network (which sees the padding only within R)
and the same networks with circular padding (no boundary at all), by the claim's SESOI.

A no-norm null that failed its own learning control is no null: the rule for it
(:func:`alive`), fixed before any result, lives here with the tests that apply it.
"""

from __future__ import annotations

import numpy as np

from normbook.grading.claims import ClaimTest, all_of, paired
from normbook.grading.verdicts import Control
from normbook.pages.fmt import join
from normbook.paper_a.grading.sesoi import LEARNED_R2, REACH, SLOPE
from normbook.paper_a.measures import multihop

NULL_NONE = "no-norm network (same seeds)"
NULL_CIRCULAR = "same networks, circular padding"


def beyond_nulls(values, nulls: dict[str, list[float]], sesoi: float) -> ClaimTest:
    """Paired t tests of a per-seed measure against every null's same measure, by at least
    ``sesoi``, combined as an intersection-union test (the claim must beat each null)."""
    return all_of(*(paired(values, v, sesoi, null=name) for name, v in nulls.items()))


def alive(no_norm) -> np.ndarray:
    """Per seed, whether the no-norm null network learned (its own learning control,
    :func:`learned`: R² against the ramp ≥ ``LEARNED_R2``). The rule, fixed before any
    result: a null network that died (every ReLU dead, or it learned nothing) is no null for
    a network that learned; its seed leaves every paired comparison with that null, for the
    compared network and the circular null too (they are paired by seed)."""
    r2 = np.array([s.effect_all.r2 for s in no_norm.per_seed], dtype=float)
    return np.nan_to_num(r2) >= LEARNED_R2


def kept_seeds(no_norm) -> np.ndarray:
    """:func:`alive`; every seed when fewer than two null networks learned: then the null's
    own control fails (:func:`null_learned`) and the claim grades nothing, and its numbers are
    shown over every seed."""
    keep = alive(no_norm)
    return keep if keep.sum() >= 2 else np.ones_like(keep)


def null_learned(no_norm) -> Control:
    """The no-norm null's own control, under the dead-null rule (:func:`alive`): at least two
    of its networks learned, so that a paired comparison with it has an interval."""
    r2 = np.array([s.effect_all.r2 for s in no_norm.per_seed], dtype=float)
    return Control(
        "no normalization (the null)",
        f"at least two null networks learned (R² ≥ {LEARNED_R2:g}); the others are left out "
        "with their seeds",
        int(alive(no_norm).sum()) >= 2,
        f"R² {join(r2, '.2f')}",
    )


def null_name(no_norm) -> str:
    keep = alive(no_norm)
    dead = int((~keep).sum())
    if keep.sum() < 2:
        return f"{NULL_NONE}; {dead} of {keep.size} died (R² < {LEARNED_R2:g}): no null"
    return NULL_NONE if not dead else (
        f"{NULL_NONE}; {dead} of {keep.size} died (R² < {LEARNED_R2:g}) and are left out with "
        "their seeds"
    )  # fmt: skip


def slope_beyond_nulls(measure, run, no_norm, circular, sesoi=SLOPE) -> ClaimTest:
    """:func:`beyond_nulls` of ``measure`` (per seed, a slope) of a run and its two nulls, on
    the seeds whose no-norm null learned (:func:`alive`)."""
    keep = kept_seeds(no_norm)
    values = [np.asarray(measure(r), float)[keep] for r in (run, no_norm, circular)]
    return beyond_nulls(values[0], {null_name(no_norm): values[1], NULL_CIRCULAR: values[2]},
                        sesoi.value)  # fmt: skip


def reach_layers(run, factor: float) -> np.ndarray:
    """Per seed, how far ``run``'s depth probes localize beyond ``factor`` * R(d) at their best
    depth (:func:`multihop.excess_beyond`), in layers of receptive-field growth (⌊k/2⌋
    indices)."""
    layer = max(run.cnn.kernel // 2, 1)
    return np.asarray(multihop.excess_beyond(run.probe_distances, run.cnn.kernel, factor)) / layer


def reach_test(run, no_norm, circular, factor: float) -> ClaimTest:
    """:func:`reach_layers` of a run against both nulls' reach, on the seeds whose no-norm
    null learned (:func:`alive`)."""
    keep = kept_seeds(no_norm)
    reach = [reach_layers(r, factor)[keep] for r in (run, no_norm, circular)]
    return beyond_nulls(reach[0], {null_name(no_norm): reach[1], NULL_CIRCULAR: reach[2]},
                        REACH.value)  # fmt: skip
