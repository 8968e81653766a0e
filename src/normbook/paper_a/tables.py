"""Every table of chapters A1-A4, one function each, returned as markdown."""

from __future__ import annotations

from normbook.pages.fmt import join, num, table
from normbook.paper_a.measures.equivariance import Equivariance
from normbook.paper_a.measures.multihop import HopComparison
from normbook.paper_a.runs import batchstats
from normbook.paper_a.runs.packnorm import PackResult
from normbook.paper_a.runs.which_norms import BatchNormRuns, EvalBatchSweep, GroupSweep, NullLevel

# why a table's R² shows "–" (a dead network's fit against the ramp has no R²)
NO_R2 = ("a network whose mean prediction is the same at every index (a dead network) "
         "explains no variance, so its R² is undefined")  # fmt: skip
R2_NOTES = {"R² (interior)": NO_R2, "R² (all)": NO_R2}


def equivariance(checks: list[Equivariance]) -> str:
    """Gradient reach and the largest interior change under a shift, per network and seed."""
    return table(
        [
            {
                "norm": c.name,
                "seed": seed,
                "gradient reach": int(c.reach[s]),
                "R": c.radius,
                f"max abs change, shift {c.shift}": float(c.max_change[s]),
            }
            for c in checks
            for s, seed in enumerate(c.seeds)
        ]
    )


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


def packnorm(res: PackResult) -> str:
    """Fig. 3's accuracies per overlap: per seed and pooled, with Wilson 95 % intervals."""
    p = res.pack
    (lo, hi), (plo, phi) = p.ci, p.pooled_ci
    return table(
        [
            {
                "overlap o": o,
                "o / l'": o / res.setup.path_len,
                **{
                    f"acc seed {s}": f"{p.acc[i, j]:.3f} [{lo[i, j]:.3f}, {hi[i, j]:.3f}]"
                    for j, s in enumerate(p.seeds)
                },
                "pooled": f"{p.pooled_acc[i]:.3f} [{plo[i]:.3f}, {phi[i]:.3f}]",
            }
            for i, o in enumerate(p.overlaps)
        ]
    )


def hops(cmp: HopComparison, normed, none, factor: float) -> str:
    """Per depth: R(d), the hop bounds, the probes' distances and the hops they need."""
    return table(
        [
            {
                "depth": d + 1,
                "R(d)": int(cmp.radius[d]),
                f"{factor:g}R(d)": float(cmp.single_hop[d]),
                "iterated": float(cmp.iterated[d]),
                f"distance {normed.name} (per seed)": join(cmp.measured[d]),
                "hops needed": join(cmp.hops[d]),
                "distance none": join(none.probe_distances[d]),
            }
            for d in range(len(cmp.radius))
        ]
    )


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


def budget(results) -> str:
    """The budget calibration: one row per candidate (:mod:`.budget`)."""
    from normbook.paper_a.calibration_page.budget import ONSET
    from normbook.paper_a.verdicts import late_gain

    rows = []
    for r in results:
        g = late_gain(r.curve)
        rows.append(
            {
                "candidate": r.name,
                "steps": f"{r.curve.total:,}",
                "measured minutes per model": f"{r.seconds.mean() / 60:.2f}",
                "charged (mean of its batch size)": f"{r.minutes[-1]:.2f}",
                "plateau ends (min)": num(r.onset_minutes, ".2f"),
                "final interior slope": join(r.curve.slope[-1], ".3f"),
                "slope per minute": f"{r.slope_per_minute:.3f}",
                "gain over last half": num(g.effect, ".3f"),
            }
        )
    return table(rows, missing={
        "plateau ends (min)": f"the mean slope never reached {ONSET:g} within the budget",
        "gain over last half": "no state was kept by half the budget",
    })  # fmt: skip
