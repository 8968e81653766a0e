"""Chapter A1's tables, one function each, returned as markdown (the equivariance table it
shares with chapter A3 is in :mod:`normbook.paper_a.run_tables`)."""

from __future__ import annotations

from normbook.pages.fmt import join, table
from normbook.paper_a.run_tables import R2_NOTES


def localization(runs) -> str:
    """The detector's result and the effect sizes, per network and seed."""
    return table(
        [
            {
                "norm": r.name,
                "seed": seed,
                "localized (interior)": s.frac_interior,
                "localized (all)": s.frac_all,
                "distance": s.distance,
                "slope (interior)": s.effect_interior.slope,
                "R² (interior)": s.effect_interior.r2,
                "MAE (interior)": s.effect_interior.mae,
                "slope (all)": s.effect_all.slope,
                "R² (all)": s.effect_all.r2,
            }
            for r in runs
            for seed, s in zip(r.seeds, r.per_seed)
        ],
        missing=R2_NOTES,
    )


def probe_distances(runs) -> str:
    """Localization distance of the depth probes, per depth, network and seed."""
    radius = runs[0].radius_per_depth
    return table(
        [
            {
                "depth": d + 1,
                "R(depth)": int(radius[d]),
                **{f"distance {r.name} (per seed)": join(r.probe_distances[d]) for r in runs},
            }
            for d in range(len(radius))
        ]
    )
