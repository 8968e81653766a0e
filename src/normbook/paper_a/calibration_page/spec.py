"""The budget calibration page's parameters (how chapter A1's training budget was chosen):
chapter A1's geometry and sample budget (:mod:`normbook.paper_a.params`), seeds no chapter
uses, one candidate per (cal_schedules[i], cal_lrs[i], cal_batch_sizes[i])."""

from __future__ import annotations

from normbook.paper_a.cached.stacking import SCHEDULES
from normbook.paper_a.params import (
    A1_PROFILES,
    LOCALIZATION_PARAMS,
    curve_inside_budget,
    enough_samples,
    from_a1,
    needs_interior,
    odd_kernel,
)
from normbook.paper_a.runs import plans
from normbook.runtime.params import Param, Spec

# The page that chose chapter A1's schedule, learning rate and batch size: A1's geometry and
# sample budget, seeds no chapter uses, one candidate per (cal_schedules[i], cal_lrs[i],
# cal_batch_sizes[i]).


def _cal_candidates(params) -> str | None:
    n = {len(params.cal_schedules), len(params.cal_lrs), len(params.cal_batch_sizes)}
    if len(n) != 1:
        return (
            "parameters 'cal_schedules', 'cal_lrs', 'cal_batch_sizes': one entry per candidate, "
            f"got {len(params.cal_schedules)}, {len(params.cal_lrs)} and "
            f"{len(params.cal_batch_sizes)}"
        )
    bad = [s for s in params.cal_schedules if s not in SCHEDULES]
    if bad:
        return f"parameter 'cal_schedules': each one of {SCHEDULES}, got {bad[0]!r}"
    used = {s for p in A1_PROFILES.values() for s in p["seeds"]}
    if used & set(params.seeds):
        return (
            f"parameter 'seeds': the calibration must not use the chapters' seeds "
            f"{sorted(used & set(params.seeds))}; choose others (e.g. 100, 101)"
        )
    return None


_BUDGET_DROP = (
    "workers",  # candidates train one after another, so their timings are comparable
    "norm",
    "groups",
    "batch_eval",
    "lr",
    "schedule",
    "probe_batches",
    "n_eval",
)  # unused
_CAL_PAPER = dict(  # paper: four candidates, two seeds each, at A1's geometry
    seeds=[100, 101],
    curve_fractions=[0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875],
    cal_schedules=["constant", "constant", "onecycle", "constant"],
    cal_lrs=[3e-3, 1e-2, 1e-2, 1e-2],
    cal_batch_sizes=[32, 32, 32, 16],
)
# cpu: the three batch-32 candidates, one seed each (the whole book must fit 50 minutes on two
# cores); the batch-16 candidate and the second seed run at the paper profile
_CAL_CPU = _CAL_PAPER | dict(
    seeds=[100],
    cal_schedules=["constant", "constant", "onecycle"],
    cal_lrs=[3e-3, 1e-2, 1e-2],
    cal_batch_sizes=[32, 32, 32],
)

BUDGET = Spec(
    chapter="calibration",
    params=[p for p in LOCALIZATION_PARAMS if p.name not in _BUDGET_DROP]
    + [
        Param("cal_schedules", list, "candidate i's lr schedule", list_of=str),
        Param(
            "cal_lrs", list, "candidate i's (peak) learning rate", list_of=float, min=1e-7, max=1.0
        ),
        Param(
            "cal_batch_sizes",
            list,
            "candidate i's batch size (same samples: steps scale)",
            list_of=int,
            min=1,
            max=4096,
        ),
    ],
    profiles={
        "smoke": from_a1(
            "smoke",
            _BUDGET_DROP,
            seeds=[100],
            curve_eval=1024,
            curve_fractions=[0.25, 0.5, 0.75],
            cal_schedules=["constant", "onecycle"],
            cal_lrs=[3e-3, 1e-2],
            cal_batch_sizes=[16, 16],
        ),
        "cpu": from_a1("cpu", _BUDGET_DROP, curve_eval=8192, **_CAL_CPU),
        "paper": from_a1("paper", _BUDGET_DROP, curve_eval=102_400, **_CAL_PAPER),
    },
    checks=[odd_kernel, needs_interior, enough_samples, curve_inside_budget, _cal_candidates],
    plan=plans.calibration,
)
