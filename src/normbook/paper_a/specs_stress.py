"""Parameter specs of the chapters that put chapter A1's result under stress: the budget
calibration page (how A1's training budget was chosen), chapter A4's stress tests and chapter
A5's reach study. They derive their localization knobs from A1's profiles (:mod:`.specs`).
"""

from __future__ import annotations

from normbook.paper_a.cached.stacking import SCHEDULES
from normbook.paper_a.cached.unet import ACTIVATIONS, DOWNS, UPS
from normbook.paper_a.specs import (
    A1,
    A2_PROFILES,
    LOCALIZATION_PARAMS,
    PACK_PARAMS,
    PAPER_RECORD,
    RECORD_PATH,
    curve_inside_budget,
    enough_samples,
    from_a1,
    groups_divide,
    needs_interior,
    odd_kernel,
    pack_geometry,
    pack_overlaps,
)
from normbook.runtime.params import Param, Spec

# ----------------------------------------------------------------------------- budget calibration
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
    used = {s for p in A1.profiles.values() for s in p["seeds"]}
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
)

# ----------------------------------------------------------------------------- A4: stress tests
# Chapter A4 stresses chapter A1's networks (same configuration, so the same cached models) and
# repeats chapter A2's PackNorm sweep with other geometries.


def _stress_norm(params) -> str | None:
    if params.norm not in ("instance", "group"):
        return (
            f"parameter 'norm': the interventions replace GroupNorm/InstanceNorm statistics; "
            f"choose instance or group, got {params.norm!r}"
        )
    return None


STRESS_PARAMS = [
    Param("constant_values", list, "constant inputs fed to the trained networks", list_of=float,
          min=-100.0, max=100.0),
    Param("circular_steps", int, "Adam steps of the networks trained with circular padding",
          min=1, max=10_000_000, reconstruction=True),
    Param("intervention_eval", int, "predictions per index under each intervention", min=4,
          max=10**9),
    Param("intervention_ref", int, "fresh samples that estimate the population statistics",
          min=2, max=10**8, reconstruction=True),
    Param("rf_pack_kernel", int, "PackNorm kernel of the receptive-field test (1: R = 0)",
          min=1, max=99, reconstruction=True),
    Param("rf_pack_heads", list, "heads of the receptive-field test (pool, centre)",
          list_of=str, reconstruction=True),
    Param("unet_len", int, "U-Net: sequence length (a multiple of 2**unet_levels)", min=8,
          max=100_000),
    Param("unet_levels", int, "U-Net: down-sampling levels", min=1, max=10, reconstruction=True),
    Param("unet_width", int, "U-Net: channels at the top level (doubling per level)", min=1,
          max=1024, reconstruction=True),
    Param("unet_groups", int, "U-Net: GroupNorm groups per level", min=1, max=1024,
          reconstruction=True),
    Param("unet_steps", int, "U-Net: Adam steps (one-cycle schedule)", min=1, max=10_000_000,
          reconstruction=True),
    Param("unet_eval", int, "U-Net: predictions per index", min=64, max=10**9),
    Param("grid_size", int, "2-D CNN: image height and width", min=4, max=4096),
    Param("grid_depth", int, "2-D CNN: conv blocks", min=1, max=256),
    Param("grid_channels", int, "2-D CNN: channels", min=1, max=1024, reconstruction=True),
    Param("grid_steps", int, "2-D CNN: Adam steps (one-cycle schedule)", min=1,
          max=10_000_000, reconstruction=True),
    Param("grid_eval", int, "2-D CNN: predictions per index", min=64, max=10**9),
    Param("arch_seeds", list, "U-Net and 2-D CNN seeds", list_of=int, min=0, max=1e9),
    Param("unet_growth", int, "U-Net: channel multiplier per level (Janner: 2)", min=1, max=8,
          reconstruction=True),
    Param("unet_blocks", int, "U-Net: conv blocks per level and in the bottleneck", min=1,
          max=16, reconstruction=True),
    Param("unet_kernel", int, "U-Net: convolution kernel (odd)", min=1, max=99,
          reconstruction=True),
    Param("unet_activation", str, "U-Net: activation (Janner: mish)", choices=ACTIVATIONS,
          reconstruction=True),
    Param("unet_down", str, "U-Net: down-sampling, strided conv (Janner) or avgpool",
          choices=DOWNS, reconstruction=True),
    Param("unet_up", str, "U-Net: up-sampling, transposed conv (Janner) or nearest",
          choices=UPS, reconstruction=True),
    Param("grid_kernel", int, "2-D CNN: convolution kernel (odd)", min=1, max=99,
          reconstruction=True),
    Param("arch_batch_size", int, "U-Net and 2-D CNN: training batch size", min=1,
          max=1_000_000, reconstruction=True),
    Param("arch_lr", float, "U-Net and 2-D CNN: peak Adam learning rate", min=1e-8, max=10.0,
          reconstruction=True),
    Param("arch_schedule", str, "U-Net and 2-D CNN: learning-rate schedule", choices=SCHEDULES,
          reconstruction=True),
    Param("arch_eval_batch", int, "U-Net and 2-D CNN: samples per evaluation stream batch",
          min=1, max=1_000_000),
]  # fmt: skip


def _rf_heads(params) -> str | None:
    bad = [h for h in params.rf_pack_heads if h not in ("pool", "centre")]
    return f"parameter 'rf_pack_heads': pool or centre, got {bad[0]!r}" if bad else None


def _architectures(params) -> str | None:
    """The U-Net and 2-D CNN configs check themselves (one place for their rules)."""
    from normbook.paper_a.runs.arch_runs import grid_config, unet_config

    for name, prefix, config in (("U-Net", "unet", unet_config), ("2-D CNN", "grid", grid_config)):
        try:
            config(params)
        except ValueError as exc:  # the one-line form every parameter error takes
            return f"parameters '{prefix}_*' ({name}): {exc}"
    return None


_STRESS = {
    "smoke": dict(constant_values=[0.0, 1.0], circular_steps=40, intervention_eval=1024,
                  intervention_ref=64,
                  rf_pack_kernel=1, rf_pack_heads=["pool"], unet_len=64, unet_levels=2,
                  unet_width=4, unet_groups=4, unet_steps=30, unet_eval=1024, grid_size=12,
                  grid_depth=2, grid_channels=4, grid_steps=30, grid_eval=512,
                  arch_seeds=[0, 1]),
    # cpu: the circular-trained null at a quarter of A1's steps (it has nothing to learn)
    "cpu": dict(constant_values=[0.0, -1.0, 1.0, 2.0], circular_steps=1250,
                intervention_eval=6400, intervention_ref=4096, rf_pack_kernel=1,
                rf_pack_heads=["pool", "centre"], unet_len=64, unet_levels=2, unet_width=8,
                unet_groups=8, unet_steps=1500, unet_eval=16_384, grid_size=16, grid_depth=3,
                grid_channels=16, grid_steps=1500, grid_eval=4096, arch_seeds=[0, 1, 2, 3, 4]),
    "paper": dict(constant_values=[0.0, -1.0, 1.0, 2.0], circular_steps=20_000,
                  intervention_eval=100_000, intervention_ref=65_536, rf_pack_kernel=1,
                  rf_pack_heads=["pool", "centre"],
                  unet_len=256, unet_levels=3, unet_width=32, unet_groups=8, unet_steps=20_000,
                  unet_eval=400_000, grid_size=32, grid_depth=4, grid_channels=32,
                  grid_steps=20_000, grid_eval=100_000, arch_seeds=list(range(5))),
}  # fmt: skip

# The U-Net's and 2-D CNN's choices, the same at every profile (piloted at cpu; see
# paper_a.cached.unet and grid2d): Janner's growth and activation, avgpool/nearest re-sampling,
# one-cycle Adam at peak 1e-2 (a constant rate left the U-Nets' interior prediction flat).
_ARCH = dict(unet_growth=2, unet_blocks=1, unet_kernel=3, unet_activation="mish",
             unet_down="avgpool", unet_up="nearest", grid_kernel=3, arch_batch_size=16,
             arch_lr=1e-2, arch_schedule="onecycle", arch_eval_batch=32)  # fmt: skip

A4 = Spec(
    chapter="a4_stress",
    params=LOCALIZATION_PARAMS + PACK_PARAMS + STRESS_PARAMS,
    profiles={p: {**A2_PROFILES[p], **_STRESS[p], **_ARCH} for p in ("smoke", "cpu", "paper")},
    checks=[
        odd_kernel,
        needs_interior,
        groups_divide,
        enough_samples,
        curve_inside_budget,
        pack_geometry,
        pack_overlaps,
        _stress_norm,
        _rf_heads,
        _architectures,
    ],
)

# ----------------------------------------------------------------------------- A5: the reach
# Chapter A5 measures how far the side channel carries on two axes from chapter A1's geometry
# (A1's networks are its base family): more normalization layers at the same receptive field,
# and longer sequences at the same depth.


def _reach_lengths(params) -> str | None:
    if len(params.reach_lens) != len(params.reach_len_steps):
        return (
            "parameters 'reach_lens', 'reach_len_steps': one budget per length, got "
            f"{len(params.reach_lens)} and {len(params.reach_len_steps)}"
        )
    radius = (params.kernel // 2) * params.depth
    for n in (params.seq_len, *params.reach_lens):
        if (n - 1) // 2 < 4 * radius:  # the second hop band must fit: hop_bands
            return (
                f"parameters 'reach_lens'/'seq_len': l = {n} has no second hop band at R = "
                f"{radius} (needs l >= {8 * radius + 1})"
            )
    return None


def _reach_axes(params) -> str | None:
    if len(set(params.reach_mix)) < 2 and len(set(params.reach_lens)) < 2:
        return "parameters 'reach_mix'/'reach_lens': at least one axis needs two values"
    base_len = (params.seq_len, params.steps) in zip(params.reach_lens, params.reach_len_steps)
    if 0 not in params.reach_mix and not base_len:
        return (
            "parameters 'reach_mix'/'reach_lens': the study needs its base family (chapter A1's "
            f"network): put 0 in reach_mix, or l = {params.seq_len} with {params.steps} steps in "
            "reach_lens/reach_len_steps"
        )
    return None


REACH_PARAMS = [
    Param("reach_mix", list, "kernel-1 conv-norm-ReLU blocks after each block (one family each)",
          list_of=int, min=0, max=64, reconstruction=True),
    Param("reach_lens", list, "sequence lengths of the length axis (at the base depth)",
          list_of=int, min=8, max=100_000),
    Param("reach_len_steps", list, "Adam steps per model at each of reach_lens",
          list_of=int, min=1, max=10_000_000, reconstruction=True),
    Param("reach_matched_mix", int, "matched control: kernel-1 blocks per block, normed and "
          "plain (0: none)", min=0, max=64, reconstruction=True),
    Param("reach_seeds", list, "seeds of the study's networks beyond the base family",
          list_of=int, min=0, max=1e9),
    Param("reach_eval", int, "predictions per index for the study's networks", min=4,
          max=10**9),
]  # fmt: skip

_REACH = {
    # smoke: R = 4 so that l = 48 has a second hop band
    "smoke": dict(depth=2, reach_mix=[0, 1], reach_lens=[48, 96], reach_len_steps=[40, 40],
                  reach_matched_mix=1, reach_seeds=[0, 1], reach_eval=2048),
    # cpu: 4, 8 and 16 norm layers; l = 150 needs more than A1's 5,000 steps to learn the side
    # channel at all (of three networks at 5,000 steps one had a first-hop slope of 0.004; on
    # seeds 100-102 every first-hop slope passed 0.05 between 4,000 and 8,000 steps), so it gets
    # 12,000; at batch 16 (half the cost per step) seed 101 still had 0.015 at 12,000. Three
    # seeds beyond the base family: a three-model stack's step costs 0.56 of a five-model
    # stack's (l = 150, measured), which brings the chapter's cold time from 21 to about 12 min.
    # The length axis is left to the paper profile (three lengths): l = 150 at 12,000 steps was
    # an eighth of the whole cpu book's compute (16.8 of 131 TFLOP planned) and with two
    # lengths decided nothing (the rank trend over two values cannot clear its SESOI, the law
    # had one degree of freedom), and a third length would cost as much again. The matched
    # control (plain kernel-1 blocks) at one block per block, the cheapest family of the layer
    # axis.
    "cpu": dict(reach_mix=[0, 1, 3], reach_lens=[75], reach_len_steps=[5000],
                reach_matched_mix=1, reach_seeds=[0, 1, 2], reach_eval=25_600, curve_eval=6400),
    # paper: budgets grow with l as at cpu (a longer sequence needs more steps to learn)
    "paper": dict(reach_mix=[0, 1], reach_lens=[600, 900, 1200],
                  reach_len_steps=[20_000, 30_000, 40_000], reach_matched_mix=1,
                  reach_seeds=list(range(5)), reach_eval=800_000),
}  # fmt: skip

A5 = Spec(
    chapter="a5_reach",
    params=[*LOCALIZATION_PARAMS, *REACH_PARAMS, PAPER_RECORD],
    profiles={
        p: from_a1(p, **_REACH[p], paper_record=RECORD_PATH) for p in ("smoke", "cpu", "paper")
    },
    checks=[
        odd_kernel,
        needs_interior,
        groups_divide,
        enough_samples,
        curve_inside_budget,
        _stress_norm,
        _reach_lengths,
        _reach_axes,
    ],
    records=("paper_record",),
)

STRESS_SPECS = {spec.chapter: spec for spec in (BUDGET, A4, A5)}
