"""Chapter A1's parameters: chapter A1's knobs and profiles (:mod:`normbook.paper_a.params`,
which the other chapters derive theirs from), its cross-checks and the recorded paper-scale
run it reads."""

from __future__ import annotations

from normbook.paper_a.params import (
    A1_PROFILES,
    LIVE_PARAMS,
    LOCALIZATION_PARAMS,
    PAPER_RECORD,
    curve_inside_budget,
    enough_samples,
    groups_divide,
    needs_interior,
    odd_kernel,
    with_live,
)
from normbook.paper_a.runs import plans
from normbook.runtime.params import Spec


def _compares_a_norm(params) -> str | None:
    if params.norm == "none":
        return (
            "parameter 'norm': must name a normalization (instance, group, batch or layer); "
            "the chapter compares it against 'none'"
        )
    return None


A1 = Spec(
    chapter="a1_localization",
    params=[*LOCALIZATION_PARAMS, PAPER_RECORD, *LIVE_PARAMS],
    profiles=with_live(A1_PROFILES),
    checks=[
        odd_kernel,
        needs_interior,
        groups_divide,
        enough_samples,
        _compares_a_norm,
        curve_inside_budget,
    ],
    records=("paper_record",),
    plan=plans.a1,
)
