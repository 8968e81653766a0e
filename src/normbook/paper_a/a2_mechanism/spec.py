"""Chapter A2's parameters: chapter A1's localization knobs and the PackNorm sweep's
(:mod:`normbook.paper_a.params`, which chapter A4 shares), and their cross-checks."""

from __future__ import annotations

from normbook.paper_a.params import (
    A2_PROFILES,
    LIVE_PARAMS,
    LOCALIZATION_PARAMS,
    PACK_PARAMS,
    curve_inside_budget,
    enough_samples,
    groups_divide,
    needs_interior,
    odd_kernel,
    pack_geometry,
    pack_overlaps,
    with_live,
)
from normbook.paper_a.runs import plans
from normbook.runtime.params import Spec


def _hop_factor(params) -> str | None:
    return (
        None
        if params.hop_factor > 1
        else f"parameter 'hop_factor': must be > 1, got {params.hop_factor:g}"
    )


A2 = Spec(
    chapter="a2_mechanism",
    params=LOCALIZATION_PARAMS + PACK_PARAMS + LIVE_PARAMS,
    profiles=with_live(A2_PROFILES),
    checks=[
        odd_kernel,
        needs_interior,
        groups_divide,
        enough_samples,
        curve_inside_budget,
        pack_geometry,
        pack_overlaps,
        _hop_factor,
    ],
    plan=plans.a2,
)
