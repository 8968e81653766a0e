"""The knobs several of paper A's chapter specs share: chapter A1's localization parameters
and profiles (every other chapter derives its localization knobs from them, so A1's cached
models are reused wherever the configurations coincide), chapter A2's PackNorm parameters and
profiles (chapter A4 repeats that sweep), and the cross-checks between knobs. Each chapter's
own spec is its folder's ``spec`` module.

Knobs marked ``reconstruction=True`` are choices the paper leaves open; each chapter states
them, the Methods page lists them, and a reader can change them.
"""

from __future__ import annotations

from normbook.paper_a import paper_values
from normbook.paper_a.cached.cnn import INITS
from normbook.paper_a.cached.norms import BATCH_EVAL_MODES, NORM_KINDS
from normbook.paper_a.cached.stacking import SCHEDULES
from normbook.paper_a.measures.detector import TESTS
from normbook.runtime.devices import DEVICES
from normbook.runtime.params import Param, Params, curve_fractions_error, profiles

# ----------------------------------------------------------------------------- checks


def needs_interior(params) -> str | None:
    radius = (params.kernel // 2) * params.depth
    if radius >= params.seq_len / 2 - 2:
        return (
            f"parameter 'depth': receptive-field radius R = floor(kernel/2)*depth = {radius} "
            f"must be < seq_len/2 - 2 = {params.seq_len / 2 - 2:g} so that an interior exists; "
            f"lower depth or kernel, or raise seq_len"
        )
    return None


def curve_inside_budget(params) -> str | None:
    return curve_fractions_error(params)


def odd_kernel(params) -> str | None:
    return None if params.kernel % 2 else f"parameter 'kernel': must be odd, got {params.kernel}"


def groups_divide(params) -> str | None:
    if params.norm == "group" and params.width % params.groups:
        return f"parameter 'groups': must divide width={params.width}, got {params.groups}"
    return None


def enough_samples(params) -> str | None:
    for name in ("n_eval", "curve_eval"):
        if name in params and params[name] < 2 * params.eval_batch_size:
            return (
                f"parameter '{name}': must be at least 2*eval_batch_size = "
                f"{2 * params.eval_batch_size} (two independent streams), got {params[name]}"
            )
    return None


def stress_norm(params) -> str | None:
    if params.norm not in ("instance", "group"):
        return (
            f"parameter 'norm': the interventions replace GroupNorm/InstanceNorm statistics; "
            f"choose instance or group, got {params.norm!r}"
        )
    return None


def pack_geometry(params) -> str | None:
    if params.pack_kernel % 2 == 0:
        return f"parameter 'pack_kernel': must be odd, got {params.pack_kernel}"
    return None


def pack_overlaps(params) -> str | None:
    bad = [f for f in (*params.overlap_fracs, *params.control_fracs) if not 0.0 <= f <= 1.0]
    if bad:
        return (
            f"parameter 'overlap_fracs'/'control_fracs': overlaps are fractions of the path "
            f"length in [0, 1], got {bad[0]:g}"
        )
    return None


# ----------------------------------------------------------------------------- chapter A1's


LOCALIZATION_PARAMS = [
    Param("seq_len", int, "sequence length l", min=8, max=100_000),
    Param("kernel", int, "convolution kernel size k", min=1, max=99),
    Param("depth", int, "number of conv blocks d", min=1, max=256),
    Param("width", int, "channels C per block", min=1, max=1024, reconstruction=True),
    Param("norm", str, "normalization compared against 'none'", choices=NORM_KINDS),
    Param("groups", int, "GroupNorm groups G (norm='group')", min=1, max=1024),
    Param("batch_eval", str, "BatchNorm statistics at evaluation", choices=BATCH_EVAL_MODES),
    Param(
        "steps", int, "Adam steps per model", min=1, max=10_000_000, reconstruction=True, shape=3
    ),
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
        "null_init",
        str,
        "the no-norm null's init: he (Kaiming normal) or default (PyTorch's)",
        choices=INITS,
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
        shape=2048,
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
        "processes that train stacks side by side (0: one per core; results don't change)",
        min=0,
        max=64,
    ),
    Param("seeds", list, "training seeds (one model each)", list_of=int, min=0, max=1e9),
    Param("n_eval", int, "predictions per index for the Welch tests", min=4, max=10**9, shape=2048),
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
        shape=1,
    ),
]

# The recorded paper-scale run a chapter reads (never runs): a path from the repository root.
PAPER_RECORD = Param(
    "paper_record",
    str,
    "the recorded paper-scale run the chapter reads (make paper-run writes it)",
)
RECORD_PATH = "results/paper/a1.json"

A1_PROFILES = profiles(
    # null_init: PyTorch's default conv init shrinks a ReLU network's signal about 2.4-fold a
    # layer; normalization undoes that, a network without it does not. At cpu, on seeds 100-109
    # (not the book's), 6 of 10 no-norm networks died at lr 0.01 with it (R² 0.15, the
    # constant's) and 10 of 10 learned with He init; at the paper's 32 layers the default-
    # initialised null's output does not depend on its input at all. So the null alone starts
    # from He et al.'s (2015) initialisation, fixed before any result (Methods page).
    dict(paper_record=RECORD_PATH, kernel=5, norm="instance", groups=1,
         batch_eval="minibatch", batch_size=32, null_init="he",
         schedule="constant", curve_fractions=[0.125, 0.25, 0.5],
         eval_batch_size=32, alpha=paper_values.WELCH_ALPHA, detector="span", distance_window=4,
         distance_threshold=0.5),
    smoke=dict(seq_len=48, depth=4, width=8, steps=40, lr=1e-3, seeds=[0, 1], n_eval=2048,
               curve_eval=1024, device="cpu", probe_batches=4, workers=2),
    # cpu: 25 % of the paper's steps at a 10x larger constant Adam step, the best slope per
    # minute of training on the budget calibration page (book/calibration.py). A short,
    # shallow net (l = 75, d = 4, R = 8: the paper's l/R; a third of the cost per model-step
    # of l = 150, d = 8) buys five seeds (a t test over seeds tolerates one discordant seed;
    # power on the Methods page); chapter A3 shares these models.
    cpu=dict(seq_len=75, depth=4, width=32, steps=5000, lr=1e-2, seeds=[0, 1, 2, 3, 4],
             device="cpu", n_eval=51_200, curve_eval=12_800, probe_batches=64, workers=0),
    # paper: the paper's 4 seeds plus one (the t interval over seeds 19 % narrower than with 4)
    paper=dict(seq_len=paper_values.SEQ_LEN, depth=32, width=32, steps=20_000, lr=1e-3,
               seeds=list(range(paper_values.N_SEEDS + 1)), n_eval=3_200_000,
               curve_eval=800_000, device="auto", probe_batches=256, workers=1),
)  # fmt: skip

# The live views of chapters A1, A2 and A5 (normbook.paper_a.live): how much of each network
# runs in the reader's page. A pass of A1's cpu network is 0.6 M multiply-adds in the page's
# JavaScript (6-10 ms on a Zen 3 core, measured as normbook.pages.live says) and an update
# needs 2 passes, 18 when the mean over the draws is redrawn; five seeds of two networks are
# 0.85 MB of weights in the page. At paper scale (d = 32, l = 600) a pass is 0.1 G
# multiply-adds and a seed of two networks 1.7 MB: one seed and 4 draws keep the page within its
# budget and an update near a second; A5's paper families (up to 64 layers) would not fit, and
# run at cpu only.
LIVE_PARAMS = [
    Param("live_seeds", int, "seeds of each network the live view runs in the page (0: no view)",
          min=0, max=64),
    Param("live_draws", int, "noise draws behind the live view's mean prediction", min=1,
          max=256),
]  # fmt: skip
LIVE_PROFILES = {"smoke": dict(live_seeds=2, live_draws=16),
                 "cpu": dict(live_seeds=5, live_draws=16),
                 "paper": dict(live_seeds=1, live_draws=4)}  # fmt: skip


def with_live(profiles: dict, **paper) -> dict:
    """A chapter's profiles with the live view's knobs (``paper``: the paper profile's own)."""
    return {p: {**v, **LIVE_PROFILES[p], **(paper if p == "paper" else {})}
            for p, v in profiles.items()}  # fmt: skip


# ----------------------------------------------------------------------------- derived from A1
# The other chapters build on chapter A1's configuration: their localization knobs are derived
# from A1's profiles (never copied), so A1's cached models are reused wherever the configs
# coincide.


def from_a1(profile: str, drop: tuple[str, ...] = (), **changes) -> dict:
    base = {k: v for k, v in A1_PROFILES[profile].items() if k not in (*drop, "paper_record")}
    return {**base, **changes}


# ----------------------------------------------------------------------------- chapter A2's
# PackNorm's sweep, which chapter A4 repeats with other geometries.

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
        shape=3,
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
    Param("n_test", int, "PackNorm: fresh test pairs per model", min=16, max=10**8, shape=256),
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
    hop_factor=paper_values.HOP_FACTOR,
    pack_len=0,
    pack_head="pool",
    pack_lr=1e-3,
    transition_level=0.75,
)
_OVERLAPS = [0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0]
A2_PROFILES = {
    "smoke": from_a1("smoke", **_PACK_COMMON, pack_kernel=3, pack_depth=2, pack_width=4,
                      overlap_fracs=[0.0, 0.5, 1.0], control_fracs=[1.0], pack_steps=30,
                      pack_batch_size=16, pack_seeds=[0], n_test=512),
    # cpu: five PackNorm seeds. With two (before 2026-12-07) the transition's late gain had one
    # degree of freedom, so its interval could not rule out "still moving" and the row waited
    # for "a longer budget", and A4's centre head was graded on n = 2. Measured (AMD EPYC Zen 3,
    # `make chapter` with `-p pack_seeds 0,1,2,3,4`): at 1,500 steps the transition sits at
    # 0.43 [0.42, 0.45] of the path and its late gain is negative, so the row is decided; at
    # 3,000 steps, 0.30 [0.26, 0.34], further still from the paper's band, for twice the steps.
    # The 45 stacked PackNorm networks train in 3.2 min on one core (18: 1.3 min).
    "cpu": from_a1("cpu", **_PACK_COMMON, pack_kernel=3, pack_depth=8, pack_width=16,
                    overlap_fracs=_OVERLAPS, control_fracs=[1.0], pack_steps=1500,
                    pack_batch_size=32, pack_seeds=[0, 1, 2, 3, 4], n_test=8192),
    "paper": from_a1("paper", **_PACK_COMMON, pack_kernel=5, pack_depth=32, pack_width=32,
                      overlap_fracs=_OVERLAPS, control_fracs=[0.5, 1.0], pack_steps=10_000,
                      pack_batch_size=32, pack_seeds=list(range(paper_values.N_SEEDS)),
                      n_test=100_000),
}  # fmt: skip

# ----------------------------------------------------------------------------- A1's networks
# The knobs that determine a trained localization network (besides its normalization).
TRAINING_KNOBS = (
    "seq_len", "kernel", "depth", "width", "steps", "batch_size", "lr", "schedule",
    "null_init", "curve_fractions",
)  # fmt: skip


def a1_training(profile: str) -> Params:
    """Chapter A1's training knobs (:data:`TRAINING_KNOBS`) at ``profile``, checked as its spec
    checks them."""
    values = A1_PROFILES[profile]
    return Params({p.name: p.check(values[p.name]) for p in LOCALIZATION_PARAMS
                   if p.name in TRAINING_KNOBS})  # fmt: skip


def shares_a1_models(params) -> bool:
    """Whether a chapter's networks are chapter A1's at the same profile (same cache entries)."""
    a1 = a1_training(params.profile)
    return all(a1[k] == params[k] for k in TRAINING_KNOBS)


def a1_reuse_note(params) -> str:
    """One sentence for the chapter: are the no-norm and InstanceNorm networks chapter A1's?"""
    if shares_a1_models(params):
        return (
            "this is chapter A1's training configuration, so the no-norm and InstanceNorm "
            "networks are chapter A1's (loaded from the cache when A1 has run with these "
            "seeds)"
        )
    a1 = a1_training(params.profile)
    return (
        f"chapter A1 uses ℓ = {a1.seq_len}, d = {a1.depth}, {a1.steps:,} steps at learning "
        f"rate {a1.lr:g} at this profile; the configurations differ, so this chapter trains "
        f"its own no-norm and InstanceNorm networks"
    )
