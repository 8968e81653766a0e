"""Parameter specs of every chapter: knobs, profile values and cross-checks.

Knobs marked ``reconstruction=True`` are choices the papers leave open (PROTOCOL.md);
each chapter states them and a reader can change them.
"""
from __future__ import annotations

from .norms import BATCH_EVAL_MODES, NORM_KINDS
from .params import Param, Spec


def _needs_interior(P) -> str | None:
    radius = (P.kernel // 2) * P.depth
    if radius >= P.seq_len / 2 - 2:
        return (f"parameter 'depth': receptive-field radius R = floor(kernel/2)*depth = {radius} "
                f"must be < seq_len/2 - 2 = {P.seq_len / 2 - 2:g} so that an interior exists; "
                f"lower depth or kernel, or raise seq_len")
    return None


def _odd_kernel(P) -> str | None:
    return None if P.kernel % 2 else f"parameter 'kernel': must be odd, got {P.kernel}"


def _groups_divide(P) -> str | None:
    if P.norm == "group" and P.width % P.groups:
        return f"parameter 'groups': must divide width={P.width}, got {P.groups}"
    return None


def _enough_samples(P) -> str | None:
    if P.n_eval < 2 * P.eval_batch_size:
        return (f"parameter 'n_eval': must be at least 2*eval_batch_size = {2 * P.eval_batch_size} "
                f"(two independent streams), got {P.n_eval}")
    return None


def _profiles(common: dict, **per_profile: dict) -> dict:
    return {name: {**common, **vals} for name, vals in per_profile.items()}


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
    Param("lr", float, "Adam learning rate", min=1e-7, max=1.0, reconstruction=True),
    Param("seeds", list, "training seeds (one model each)", list_of=int, min=0, max=1e9),
    Param("n_eval", int, "predictions per index for the Welch tests", min=4, max=10**9),
    Param("eval_batch_size", int, "evaluation batch size (matters for BatchNorm minibatch statistics)",
          min=1, max=65_536),
    Param("alpha", float, "Welch test level (paper: 0.1)", min=1e-12, max=0.5),
    Param("distance_window", int, "half-width of the window used for the localization distance",
          min=0, max=10_000, reconstruction=True),
    Param("distance_threshold", float, "fraction of the window that must be localized",
          min=0.0, max=1.0, reconstruction=True),
    Param("probe_batches", int, "batches of fresh noise to fit each depth's linear probe",
          min=1, max=100_000, reconstruction=True),
]

A1 = Spec(
    chapter="a1_localization",
    params=LOCALIZATION_PARAMS,
    profiles=_profiles(
        dict(kernel=5, norm="instance", groups=1, batch_eval="minibatch", batch_size=32, lr=1e-3,
             alpha=0.1, distance_window=4, distance_threshold=0.5),
        smoke=dict(seq_len=48, depth=4, width=8, steps=40, seeds=[0, 1], n_eval=2048,
                   eval_batch_size=32, probe_batches=4),
        cpu=dict(seq_len=150, depth=8, width=32, steps=3000, seeds=[0, 1], n_eval=51_200,
                 eval_batch_size=32, probe_batches=64),
        paper=dict(seq_len=600, depth=32, width=32, steps=20_000, seeds=[0, 1, 2, 3],
                   n_eval=3_200_000, eval_batch_size=32, probe_batches=256),
    ),
    checks=[_odd_kernel, _needs_interior, _groups_divide, _enough_samples],
)

A_SPECS = {spec.chapter: spec for spec in (A1,)}

from .specs_b import B_SPECS  # noqa: E402  (Part B chapters live in their own module)

SPECS = {**A_SPECS, **B_SPECS}
