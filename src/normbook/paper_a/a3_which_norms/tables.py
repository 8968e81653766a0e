"""Chapter A3's tables, one function each, returned as markdown: Fig. 4's numbers, the
boundary and interior per network, and the evaluation batch size."""

from __future__ import annotations

from normbook.pages.fmt import table
from normbook.paper_a.run_tables import R2_NOTES
from normbook.paper_a.runs import batchstats
from normbook.paper_a.runs.which_norms import BatchNormRuns, EvalBatchSweep, GroupSweep, NullLevel


def groups(sweep: GroupSweep, null: NullLevel) -> str:
    """Fig. 4's numbers per group count and seed, and whether each clears the null level."""
    rows = []
    for g in sweep.group_counts:
        run = sweep.runs[g]
        for seed, s in zip(run.seeds, run.per_seed):
            rows.append(
                {
                    "G": g,
                    "seed": seed,
                    "distance": s.distance,
                    "interior localized": s.frac_interior,
                    "slope (interior)": s.effect_interior.slope,
                    "R² (interior)": s.effect_interior.r2,
                    "MAE (interior)": s.effect_interior.mae,
                    "beyond null": "yes" if null.beaten_by(s) else "no",
                }
            )
    return table(rows, missing=R2_NOTES)


def boundary(bn: BatchNormRuns, instance=None) -> str:
    """Near the boundary (within R of an end) and in the interior, per network and seed: no
    normalization, InstanceNorm (if run), BatchNorm with minibatch and population statistics."""
    runs = [
        bn.none,
        *([instance] if instance else []),
        bn.minibatch,
        bn.population,
    ]
    return table(
        [
            {
                "network": r.name + (" (InstanceNorm)" if r is instance else ""),
                "seed": seed,
                "near boundary (< R)": b,
                "interior localized": s.frac_interior,
                "distance": s.distance,
                "slope (interior)": s.effect_interior.slope,
                "slope (all)": s.effect_all.slope,
            }
            for r in runs
            for seed, s, b in zip(r.seeds, r.per_seed, batchstats.boundary_fractions(r))
        ]
    )


def eval_batch(sweep: EvalBatchSweep, seeds: list[int]) -> str:
    """Per evaluation batch size and seed: design effect, both tests, slope; population last."""
    cases = [(b, sweep.runs[b]) for b in sweep.sizes]
    cases.append((f"population ({sweep.population.batch_size})", sweep.population))
    return table(
        [
            {
                "eval batch": b,
                "seed": seed,
                "design effect": float(r.design_effect[j]),
                "interior localized (per-sample)": r.per_seed[j].frac_interior,
                "interior localized (batch means)": r.batch_mean[j].frac_interior,
                "distance (per-sample)": r.per_seed[j].distance,
                "distance (batch means)": r.batch_mean[j].distance,
                "slope (interior)": r.per_seed[j].effect_interior.slope,
            }
            for b, r in cases
            for j, seed in enumerate(seeds)
        ]
    )
