"""Parameter specs of chapters A1-A4: knobs, profile values and cross-checks.

Knobs marked ``reconstruction=True`` are choices the paper leaves open; each chapter states
them, the Methods page lists them, and a reader can change them.
"""

from __future__ import annotations

from ..core.devices import DEVICES
from ..core.params import Param, Spec, curve_fractions_error, profiles
from . import reported
from .detector import TESTS
from .norms import BATCH_EVAL_MODES, NORM_KINDS
from .stacking import SCHEDULES
from .unet import ACTIVATIONS, DOWNS, UPS

PACKAGES = ("paper_a",)


def _needs_interior(P) -> str | None:
    radius = (P.kernel // 2) * P.depth
    if radius >= P.seq_len / 2 - 2:
        return (
            f"parameter 'depth': receptive-field radius R = floor(kernel/2)*depth = {radius} "
            f"must be < seq_len/2 - 2 = {P.seq_len / 2 - 2:g} so that an interior exists; "
            f"lower depth or kernel, or raise seq_len"
        )
    return None


def _curve_inside_budget(P) -> str | None:
    return curve_fractions_error(P)


def _odd_kernel(P) -> str | None:
    return None if P.kernel % 2 else f"parameter 'kernel': must be odd, got {P.kernel}"


def _groups_divide(P) -> str | None:
    if P.norm == "group" and P.width % P.groups:
        return f"parameter 'groups': must divide width={P.width}, got {P.groups}"
    return None


def _compares_a_norm(P) -> str | None:
    if P.norm == "none":
        return (
            "parameter 'norm': must name a normalization (instance, group, batch or layer); "
            "the chapter compares it against 'none'"
        )
    return None


def _enough_samples(P) -> str | None:
    for name in ("n_eval", "curve_eval"):
        if name in P and P[name] < 2 * P.eval_batch_size:
            return (
                f"parameter '{name}': must be at least 2*eval_batch_size = "
                f"{2 * P.eval_batch_size} (two independent streams), got {P[name]}"
            )
    return None


LOCALIZATION_PARAMS = [
    Param("seq_len", int, "sequence length l", min=8, max=100_000),
    Param("kernel", int, "convolution kernel size k", min=1, max=99),
    Param("depth", int, "number of conv blocks d", min=1, max=256),
    Param("width", int, "channels C per block", min=1, max=1024, reconstruction=True),
    Param("norm", str, "normalization compared against 'none'", choices=NORM_KINDS),
    Param("groups", int, "GroupNorm groups G (norm='group')", min=1, max=1024),
    Param("batch_eval", str, "BatchNorm statistics at evaluation", choices=BATCH_EVAL_MODES),
    Param("steps", int, "Adam steps per model", min=1, max=10_000_000, reconstruction=True),
    Param("batch_size", int, "training batch size", min=1, max=4096, reconstruction=True),
    Param(
        "lr",
        float,
        "Adam learning rate (the peak, under a schedule)",
        min=1e-7,
        max=1.0,
        reconstruction=True,
    ),
    Param(
        "schedule",
        str,
        "learning-rate schedule: constant, onecycle or cosine (warm-up)",
        choices=SCHEDULES,
        reconstruction=True,
    ),
    Param(
        "curve_fractions",
        list,
        "budget fractions evaluated for compute-to-effect curves",
        list_of=float,
        min=0.0,
        max=1.0,
    ),
    Param(
        "curve_eval",
        int,
        "predictions per index at each compute-to-effect curve point",
        min=4,
        max=10**9,
    ),
    Param(
        "device",
        str,
        "where networks train and run: 'auto' is cuda when available",
        choices=DEVICES,
    ),
    Param(
        "workers",
        int,
        "stacks of networks trained side by side (processes; results do not depend on it)",
        min=1,
        max=64,
    ),
    Param("seeds", list, "training seeds (one model each)", list_of=int, min=0, max=1e9),
    Param("n_eval", int, "predictions per index for the Welch tests", min=4, max=10**9),
    Param(
        "eval_batch_size",
        int,
        "evaluation batch size (matters for BatchNorm minibatch statistics)",
        min=1,
        max=65_536,
    ),
    Param("alpha", float, "Welch test level (paper: 0.1)", min=1e-12, max=0.5),
    Param(
        "detector",
        str,
        "localization test: span (calibrated), neighbour (before) or definition (paper's)",
        choices=TESTS,
        reconstruction=True,
    ),
    Param(
        "distance_window",
        int,
        "half-width of the window used for the localization distance",
        min=0,
        max=10_000,
        reconstruction=True,
    ),
    Param(
        "distance_threshold",
        float,
        "fraction of the window that must be localized",
        min=0.0,
        max=1.0,
        reconstruction=True,
    ),
    Param(
        "probe_batches",
        int,
        "batches of fresh noise to fit each depth's linear probe",
        min=1,
        max=100_000,
        reconstruction=True,
    ),
]

A1_PROFILES = profiles(
    dict(kernel=5, norm="instance", groups=1, batch_eval="minibatch", batch_size=32,
         schedule="constant", curve_fractions=[0.125, 0.25, 0.5],
         eval_batch_size=32, alpha=reported.WELCH_ALPHA, detector="span", distance_window=4,
         distance_threshold=0.5),
    smoke=dict(seq_len=48, depth=4, width=8, steps=40, lr=1e-3, seeds=[0, 1], n_eval=2048,
               curve_eval=1024, device="cpu", probe_batches=4, workers=2),
    # cpu: 25 % of the paper's steps at a 10x larger constant Adam step, the best slope per
    # minute of training on the budget calibration page (book/calibration.py). A short,
    # shallow net (l = 75, d = 4, R = 8: the paper's l/R; a third of the cost per model-step
    # of l = 150, d = 8) buys five seeds (a t test over seeds tolerates one discordant seed;
    # power on the Methods page); chapter A3 shares these models.
    cpu=dict(seq_len=75, depth=4, width=32, steps=5000, lr=1e-2, seeds=[0, 1, 2, 3, 4],
             device="cpu", n_eval=51_200, curve_eval=12_800, probe_batches=64, workers=2),
    # paper: the paper's 4 seeds plus one (the t interval over seeds 19 % narrower than with 4)
    paper=dict(seq_len=reported.SEQ_LEN, depth=32, width=32, steps=20_000, lr=1e-3,
               seeds=list(range(reported.N_SEEDS + 1)), n_eval=3_200_000,
               curve_eval=800_000, device="auto", probe_batches=256, workers=1),
)  # fmt: skip

A1 = Spec(
    chapter="a1_localization",
    params=LOCALIZATION_PARAMS,
    profiles=A1_PROFILES,
    checks=[
        _odd_kernel,
        _needs_interior,
        _groups_divide,
        _enough_samples,
        _compares_a_norm,
        _curve_inside_budget,
    ],
    packages=PACKAGES,
)

# ----------------------------------------------------------------------------- A2 and A3
# Both chapters build on chapter A1's configuration: their localization knobs are derived from
# A1's profiles (never copied), so A1's cached models are reused wherever the configs coincide.


def _from_a1(profile: str, drop: tuple[str, ...] = (), **changes) -> dict:
    base = {k: v for k, v in A1.profiles[profile].items() if k not in drop}
    return {**base, **changes}


def _pack_geometry(P) -> str | None:
    if P.pack_kernel % 2 == 0:
        return f"parameter 'pack_kernel': must be odd, got {P.pack_kernel}"
    return None


def _pack_overlaps(P) -> str | None:
    bad = [f for f in (*P.overlap_fracs, *P.control_fracs) if not 0.0 <= f <= 1.0]
    if bad:
        return (
            f"parameter 'overlap_fracs'/'control_fracs': overlaps are fractions of the path "
            f"length in [0, 1], got {bad[0]:g}"
        )
    return None


def _hop_factor(P) -> str | None:
    return (
        None if P.hop_factor > 1 else f"parameter 'hop_factor': must be > 1, got {P.hop_factor:g}"
    )


PACK_PARAMS = [
    Param(
        "hop_factor",
        float,
        "single-hop reach in units of R(d) (paper: 3, i.e. R + 2R)",
        min=1.0,
        max=100.0,
    ),
    Param("pack_kernel", int, "PackNorm net: kernel size", min=1, max=99, reconstruction=True),
    Param("pack_depth", int, "PackNorm net: conv blocks", min=1, max=256, reconstruction=True),
    Param("pack_width", int, "PackNorm net: channels", min=1, max=1024, reconstruction=True),
    Param(
        "pack_len",
        int,
        "path length l' (0 = 2R+1, our choice)",
        min=0,
        max=100_000,
        reconstruction=True,
    ),
    Param(
        "pack_head",
        str,
        "head on path A: mean over positions (pool) or centre index",
        choices=("pool", "centre"),
        reconstruction=True,
    ),
    Param(
        "overlap_fracs",
        list,
        "overlaps swept, as fractions of l' (rounded to integers)",
        list_of=float,
        min=0.0,
        max=1.0,
        reconstruction=True,
    ),
    Param(
        "control_fracs",
        list,
        "overlaps at which per-path InstanceNorm (no channel) is trained",
        list_of=float,
        min=0.0,
        max=1.0,
        reconstruction=True,
    ),
    Param(
        "pack_steps",
        int,
        "PackNorm: Adam steps per model",
        min=1,
        max=10_000_000,
        reconstruction=True,
    ),
    Param(
        "pack_batch_size",
        int,
        "PackNorm: training batch size",
        min=1,
        max=65_536,
        reconstruction=True,
    ),
    Param("pack_lr", float, "PackNorm: Adam learning rate", min=1e-7, max=1.0, reconstruction=True),
    Param(
        "pack_seeds",
        list,
        "PackNorm: seeds (one model per seed and overlap)",
        list_of=int,
        min=0,
        max=1e9,
    ),
    Param("n_test", int, "PackNorm: fresh test pairs per model", min=16, max=10**8),
    Param(
        "transition_level",
        float,
        "accuracy that defines the transition overlap",
        min=0.5,
        max=1.0,
        reconstruction=True,
    ),
]

_PACK_COMMON = dict(
    hop_factor=reported.HOP_FACTOR,
    pack_len=0,
    pack_head="pool",
    pack_lr=1e-3,
    transition_level=0.75,
)
_OVERLAPS = [0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0]
A2_PROFILES = {
    "smoke": _from_a1("smoke", **_PACK_COMMON, pack_kernel=3, pack_depth=2, pack_width=4,
                      overlap_fracs=[0.0, 0.5, 1.0], control_fracs=[1.0], pack_steps=30,
                      pack_batch_size=16, pack_seeds=[0], n_test=512),
    "cpu": _from_a1("cpu", **_PACK_COMMON, pack_kernel=3, pack_depth=8, pack_width=16,
                    overlap_fracs=_OVERLAPS, control_fracs=[1.0], pack_steps=1500,
                    pack_batch_size=32, pack_seeds=[0, 1], n_test=8192),
    "paper": _from_a1("paper", **_PACK_COMMON, pack_kernel=5, pack_depth=32, pack_width=32,
                      overlap_fracs=_OVERLAPS, control_fracs=[0.5, 1.0], pack_steps=10_000,
                      pack_batch_size=32, pack_seeds=list(range(reported.N_SEEDS)),
                      n_test=100_000),
}  # fmt: skip

A2 = Spec(
    chapter="a2_mechanism",
    params=LOCALIZATION_PARAMS + PACK_PARAMS,
    profiles=A2_PROFILES,
    checks=[
        _odd_kernel,
        _needs_interior,
        _groups_divide,
        _enough_samples,
        _curve_inside_budget,
        _pack_geometry,
        _pack_overlaps,
        _hop_factor,
    ],
    packages=PACKAGES,
)


def _group_counts_divide(P) -> str | None:
    bad = [g for g in P.group_counts if P.width % g]
    if bad:
        return f"parameter 'group_counts': every G must divide width={P.width}, got {bad[0]}"
    return None


def _bn_batches(P) -> str | None:
    biggest = max(P.bn_eval_batch_sizes)
    if P.n_eval < 4 * biggest:
        return (
            f"parameter 'bn_eval_batch_sizes': n_eval={P.n_eval} must be at least 4 batches of "
            f"the largest size {biggest} (two streams, two batches each)"
        )
    return None


_A3_DROP = ("norm", "groups", "batch_eval")  # A3 sweeps these itself

A3 = Spec(
    chapter="a3_which_norms",
    params=[p for p in LOCALIZATION_PARAMS if p.name not in _A3_DROP]
    + [
        Param(
            "group_counts",
            list,
            "GroupNorm group counts G compared (G = width is InstanceNorm)",
            list_of=int,
            min=1,
            max=1024,
        ),
        Param(
            "group_seeds",
            list,
            "seeds of the GroupNorm sweep (one model per seed and G)",
            list_of=int,
            min=0,
            max=1e9,
        ),
        Param(
            "bn_eval_batch_sizes",
            list,
            "evaluation batch sizes for BatchNorm with minibatch statistics",
            list_of=int,
            min=1,
            max=65_536,
        ),
    ],
    profiles={
        "smoke": _from_a1(
            "smoke",
            _A3_DROP,
            group_counts=[1, 2, 8],
            group_seeds=[0, 1],
            bn_eval_batch_sizes=[8, 64],
        ),
        # cpu: chapter A1's configuration, so the no-norm and InstanceNorm networks are A1's.
        # The GroupNorm trend is a rank test over every (G, seed) model, valid with two seeds
        # per G; the BatchNorm claims are paired tests over all five seeds. All six of
        # Fig. 4's group counts (G = 32 = C is InstanceNorm, A1's networks).
        "cpu": _from_a1(
            "cpu",
            _A3_DROP,
            group_counts=list(reported.GROUP_COUNTS),
            group_seeds=[0, 1],
            bn_eval_batch_sizes=[8, 32, 128],
        ),
        "paper": _from_a1(
            "paper",
            _A3_DROP,
            group_counts=list(reported.GROUP_COUNTS),
            group_seeds=list(range(reported.N_SEEDS)),
            bn_eval_batch_sizes=[8, 32, 128, 512],
        ),
    },
    checks=[
        _odd_kernel,
        _needs_interior,
        _enough_samples,
        _group_counts_divide,
        _bn_batches,
        _curve_inside_budget,
    ],
    packages=PACKAGES,
)

A_SPECS = {spec.chapter: spec for spec in (A1, A2, A3)}

# The knobs that determine a trained localization network (besides its normalization).
TRAINING_KNOBS = (
    "seq_len", "kernel", "depth", "width", "steps", "batch_size", "lr", "schedule",
    "curve_fractions",
)  # fmt: skip


def shares_a1_models(P) -> bool:
    """Whether a chapter's networks are chapter A1's at the same profile (same cache entries)."""
    a1 = A1.resolve(P.profile)
    return all(a1[k] == P[k] for k in TRAINING_KNOBS)


def a1_reuse_note(P) -> str:
    """One sentence for the chapter: are the no-norm and InstanceNorm networks chapter A1's?"""
    if shares_a1_models(P):
        return (
            "this is chapter A1's training configuration, so the no-norm and InstanceNorm "
            "networks are chapter A1's (loaded from the cache when A1 has run with these "
            "seeds)"
        )
    a1 = A1.resolve(P.profile)
    return (
        f"chapter A1 uses ℓ = {a1.seq_len}, d = {a1.depth}, {a1.steps:,} steps at learning "
        f"rate {a1.lr:g} at this profile; the configurations differ, so this chapter trains "
        f"its own no-norm and InstanceNorm networks"
    )


# ----------------------------------------------------------------------------- budget calibration
# The page that chose chapter A1's schedule, learning rate and batch size: A1's geometry and
# sample budget, seeds no chapter uses, one candidate per (cal_schedules[i], cal_lrs[i],
# cal_batch_sizes[i]).


def _cal_candidates(P) -> str | None:
    n = {len(P.cal_schedules), len(P.cal_lrs), len(P.cal_batch_sizes)}
    if len(n) != 1:
        return (
            "parameters 'cal_schedules', 'cal_lrs', 'cal_batch_sizes': one entry per candidate, "
            f"got {len(P.cal_schedules)}, {len(P.cal_lrs)} and {len(P.cal_batch_sizes)}"
        )
    bad = [s for s in P.cal_schedules if s not in SCHEDULES]
    if bad:
        return f"parameter 'cal_schedules': each one of {SCHEDULES}, got {bad[0]!r}"
    used = {s for p in A1.profiles.values() for s in p["seeds"]}
    if used & set(P.seeds):
        return (
            f"parameter 'seeds': the calibration must not use the chapters' seeds "
            f"{sorted(used & set(P.seeds))}; choose others (e.g. 100, 101)"
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
# cpu: the three batch-32 candidates, one seed each (the whole book must fit 40 minutes on two
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
        "smoke": _from_a1(
            "smoke",
            _BUDGET_DROP,
            seeds=[100],
            curve_eval=1024,
            curve_fractions=[0.25, 0.5, 0.75],
            cal_schedules=["constant", "onecycle"],
            cal_lrs=[3e-3, 1e-2],
            cal_batch_sizes=[16, 16],
        ),
        "cpu": _from_a1("cpu", _BUDGET_DROP, curve_eval=8192, **_CAL_CPU),
        "paper": _from_a1("paper", _BUDGET_DROP, curve_eval=102_400, **_CAL_PAPER),
    },
    checks=[_odd_kernel, _needs_interior, _enough_samples, _curve_inside_budget, _cal_candidates],
    packages=PACKAGES,
)
A_SPECS[BUDGET.chapter] = BUDGET

# ----------------------------------------------------------------------------- A4: stress tests
# Chapter A4 stresses chapter A1's networks (same configuration, so the same cached models) and
# repeats chapter A2's PackNorm sweep with other geometries.


def _stress_norm(P) -> str | None:
    if P.norm not in ("instance", "group"):
        return (
            f"parameter 'norm': the interventions replace GroupNorm/InstanceNorm statistics; "
            f"choose instance or group, got {P.norm!r}"
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


def _rf_heads(P) -> str | None:
    bad = [h for h in P.rf_pack_heads if h not in ("pool", "centre")]
    return f"parameter 'rf_pack_heads': pool or centre, got {bad[0]!r}" if bad else None


def _architectures(P) -> str | None:
    """The U-Net and 2-D CNN configs check themselves (one place for their rules)."""
    from .grid2d import Grid2dConfig
    from .unet import UNetConfig

    for name, cls in (("U-Net", UNetConfig), ("2-D CNN", Grid2dConfig)):
        try:
            cls.from_params(P)
        except ValueError as exc:
            return f"{name}: {exc}"
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
# paper_a.unet and grid2d): Janner's growth and activation, avgpool/nearest re-sampling, one-cycle
# Adam at peak 1e-2 (a constant rate left the U-Nets' interior prediction flat).
_ARCH = dict(unet_growth=2, unet_blocks=1, unet_kernel=3, unet_activation="mish",
             unet_down="avgpool", unet_up="nearest", grid_kernel=3, arch_batch_size=16,
             arch_lr=1e-2, arch_schedule="onecycle", arch_eval_batch=32)  # fmt: skip

A4 = Spec(
    chapter="a4_stress",
    params=LOCALIZATION_PARAMS + PACK_PARAMS + STRESS_PARAMS,
    profiles={p: {**A2_PROFILES[p], **_STRESS[p], **_ARCH} for p in ("smoke", "cpu", "paper")},
    checks=[
        _odd_kernel,
        _needs_interior,
        _groups_divide,
        _enough_samples,
        _curve_inside_budget,
        _pack_geometry,
        _pack_overlaps,
        _stress_norm,
        _rf_heads,
        _architectures,
    ],
    packages=PACKAGES,
)
A_SPECS[A4.chapter] = A4

# ----------------------------------------------------------------------------- A5: the reach
# Chapter A5 measures how far the side channel carries on two axes from chapter A1's geometry
# (A1's networks are its base family): more normalization layers at the same receptive field,
# and longer sequences at the same depth.


def _reach_lengths(P) -> str | None:
    if len(P.reach_lens) != len(P.reach_len_steps):
        return (
            "parameters 'reach_lens', 'reach_len_steps': one budget per length, got "
            f"{len(P.reach_lens)} and {len(P.reach_len_steps)}"
        )
    radius = (P.kernel // 2) * P.depth
    for n in (P.seq_len, *P.reach_lens):
        if (n - 1) // 2 < 4 * radius:  # the second hop band must fit: hop_bands
            return (
                f"parameters 'reach_lens'/'seq_len': l = {n} has no second hop band at R = "
                f"{radius} (needs l >= {8 * radius + 1})"
            )
    return None


def _reach_axes(P) -> str | None:
    if len(set(P.reach_mix)) < 2 and len(set(P.reach_lens)) < 2:
        return "parameters 'reach_mix'/'reach_lens': at least one axis needs two values"
    base_len = (P.seq_len, P.steps) in zip(P.reach_lens, P.reach_len_steps)
    if 0 not in P.reach_mix and not base_len:
        return (
            "parameters 'reach_mix'/'reach_lens': the study needs its base family (chapter A1's "
            f"network): put 0 in reach_mix, or l = {P.seq_len} with {P.steps} steps in "
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
    Param("reach_seeds", list, "seeds of the study's networks beyond the base family",
          list_of=int, min=0, max=1e9),
    Param("reach_eval", int, "predictions per index for the study's networks", min=4,
          max=10**9),
]  # fmt: skip

_REACH = {
    # smoke: R = 4 so that l = 48 has a second hop band
    "smoke": dict(depth=2, reach_mix=[0, 1], reach_lens=[48, 96], reach_len_steps=[40, 40],
                  reach_seeds=[0, 1], reach_eval=2048),
    # cpu: 4, 8 and 16 norm layers; l = 150 needs more than A1's 5,000 steps to learn the side
    # channel at all (of three networks at 5,000 steps one had a first-hop slope of 0.004; on
    # seeds 100-102 every first-hop slope passed 0.05 between 4,000 and 8,000 steps), so it gets
    # 12,000; at batch 16 (half the cost per step) seed 101 still had 0.015 at 12,000. Three
    # seeds beyond the base family: a three-model stack's step costs 0.56 of a five-model
    # stack's (l = 150, measured), which brings the chapter's cold time from 21 to about 12 min.
    "cpu": dict(reach_mix=[0, 1, 3], reach_lens=[75, 150], reach_len_steps=[5000, 12_000],
                reach_seeds=[0, 1, 2], reach_eval=25_600, curve_eval=6400),
    "paper": dict(reach_mix=[0, 1], reach_lens=[600, 1200], reach_len_steps=[20_000, 40_000],
                  reach_seeds=list(range(5)), reach_eval=800_000),
}  # fmt: skip

A5 = Spec(
    chapter="a5_reach",
    params=LOCALIZATION_PARAMS + REACH_PARAMS,
    profiles={p: _from_a1(p, **_REACH[p]) for p in ("smoke", "cpu", "paper")},
    checks=[
        _odd_kernel,
        _needs_interior,
        _groups_divide,
        _enough_samples,
        _curve_inside_budget,
        _stress_norm,
        _reach_lengths,
        _reach_axes,
    ],
    packages=PACKAGES,
)
A_SPECS[A5.chapter] = A5
