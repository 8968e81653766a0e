"""What the device does, measured in the run itself, before any result: the matmul peak and
copy bandwidth (its ceilings), ms per training step and µs per evaluated sample on the book's
path against the plain fp32 eager path, and the launch floor (a step at batch 1, all fixed
cost and no work).

Every rate is a difference of two timed runs of the same code (``long`` minus ``short``), so
fixed costs (cuDNN's algorithm search, capturing a CUDA graph, the first call) cancel. Throwaway
networks at seeds no chapter uses are timed, so no result of the run is seen.

Precision: fp32 storage everywhere. The *fast* path is PyTorch's CUDA default for
convolutions (TF32 tensor cores: 10 mantissa bits in the operands, fp32 accumulation),
cuDNN's algorithm search (``benchmark``) and each training step a replayed CUDA graph; matmuls
(the depth probes) stay full fp32. The *eager fp32* path turns TF32 and the search off and
launches every kernel. No bf16 anywhere: it rounds in steps of 0.4 %, larger than one index's
share of the ramp at l = 600 (0.17 %). TF32 rounds each operand, not a position, so the nulls
(no normalization, circular padding), evaluated in the same precision, keep their calibration.

Two judgements, recorded: the fast path must agree with eager fp32 at the first step
(:func:`agreement`; where it does not, the run uses eager fp32), and it should reach
:data:`SPEEDUP_TARGET` times eager fp32's speed at the same step (:func:`speed_check`; a run that
misses it says so, and still runs).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import torch

from normbook.paper_a.cached import evaluation, stacking
from normbook.paper_a.cached.cnn import CNNConfig, StackedCNN
from normbook.paper_a.cached.training import TrainConfig, train_stack
from normbook.paper_a.runs.plans import localization_flops

TIMING_SEEDS = (90_001, 90_002, 90_003, 90_004, 90_005)  # never a chapter's seeds
FAST, EAGER = "fast", "eager fp32"  # the two paths, as the rates' keys name them
# What the fast path (TF32 convolutions, cuDNN's search, graphed steps) is for: at least this
# many times eager fp32's speed at the same step; a run that misses it says so.
SPEEDUP_TARGET = 3.0


def precision_flags(device: str, fast: bool = True) -> dict:
    """The flags of the ``fast`` or eager fp32 path on ``device``, as recorded (on the CPU there
    is no TF32, graph or cuDNN, and the moments are the CPU path's)."""
    cuda = device == "cuda"
    return {
        "storage": "float32",
        "conv_tf32": cuda and fast,
        "matmul_tf32": False,
        "matmul_precision": "highest",
        "cudnn_benchmark": cuda and fast,
        "cuda_graphs": cuda and fast,
        "moments": "float64 on the device" if cuda else "float64 (numpy, per batch)",
    }


@contextmanager
def precision(fast: bool):
    """Set the flags of the fast path (TF32 convolutions, cuDNN's algorithm search) or of eager
    fp32 (neither), matmuls at the "highest" precision on both; restore them afterwards."""
    b, m = torch.backends.cudnn, torch.backends.cuda.matmul
    saved = (b.allow_tf32, m.allow_tf32, b.benchmark, torch.get_float32_matmul_precision())
    b.allow_tf32, m.allow_tf32, b.benchmark = fast, False, fast
    torch.set_float32_matmul_precision("highest")  # the probes' matmuls: full fp32 on both paths
    try:
        yield
    finally:
        b.allow_tf32, m.allow_tf32, b.benchmark = saved[:3]
        torch.set_float32_matmul_precision(saved[3])


def _timed(fn, device: str) -> float:
    stacking.synchronize(torch.device(device))
    t0 = time.perf_counter()
    fn()
    stacking.synchronize(torch.device(device))
    return time.perf_counter() - t0


def matmul_tflops(device: str, tf32: bool, n: int, reps: int = 10) -> float:
    """TFLOP/s of an n x n fp32 matmul (TF32 when ``tf32``), random operands."""
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    with precision(False):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a @ b  # warm-up
        seconds = _timed(lambda: [a @ b for _ in range(reps)], device)
    return 2 * n**3 * reps / seconds / 1e12


def copy_gbps(device: str, n_bytes: int, reps: int = 10) -> float:
    """GB/s of a device-to-device copy, counting bytes read and written."""
    src = torch.empty(n_bytes // 4, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)
    return 2 * n_bytes * reps / _timed(lambda: [dst.copy_(src) for _ in range(reps)], device) / 1e9


def step_ms(cnn: CNNConfig, tc: TrainConfig, n_models: int, fast: bool, short: int, long: int):
    """Milliseconds per training step of a stack of ``n_models``: (long - short) steps' time
    difference, each run from a fresh network. Also which path the steps ran on, and the long
    run's losses (steps, M)."""
    seeds = list(TIMING_SEEDS[:n_models])
    runs = {}
    with precision(fast):
        for n in (short, long):
            _, rec = train_stack(cnn, replace(tc, steps=n, checkpoints=(), graphs=fast), seeds,
                                 desc="time steps")  # fmt: skip
            runs[n] = rec
    ms = _per_unit(runs[short].seconds, runs[long].seconds, short, long) * 1e3
    return ms, runs[long].path, runs[long].losses


def sample_us(cnn: CNNConfig, seq_len: int, ev, n_models: int, fast: bool, probes: bool,
              short: int, long: int) -> float:  # fmt: skip
    """Microseconds per evaluated sample (all models, with depth probes or without): (long -
    short) samples' time difference, on an untrained network with random probe weights."""
    net = StackedCNN(cnn, list(TIMING_SEEDS[:n_models])).to(ev.device).eval()
    w = torch.randn(cnn.n_layers, n_models, cnn.width + 1) if probes else None
    times = {}
    with precision(fast):
        for n in (short, long):
            e = replace(ev, n_samples=n)
            times[n] = _timed(lambda e=e: evaluation.evaluate(net, seq_len, e, w), ev.device)
    return _per_unit(times[short], times[long], short, long) * 1e6


def _per_unit(t_short: float, t_long: float, short: int, long: int) -> float:
    """Seconds per unit from two timed runs; where timer noise swamps the difference (tiny CPU
    tests), the long run's average."""
    diff = (t_long - t_short) / (long - short)
    return diff if diff > 0 else t_long / long


def flops(cnn: CNNConfig, seq_len: int, batch: int, n_models: int) -> tuple[float, float]:
    """(FLOPs of one training step of the stack, FLOPs of one evaluated sample of it), from
    PyTorch's counter on one model (:func:`normbook.paper_a.runs.plans.localization_flops`)."""
    train, forward = localization_flops(seq_len, cnn.depth, cnn.width, cnn.kernel)
    return float(train * batch * n_models), float(forward * n_models)


def measure(setup, n_models: int, device: str, small: bool) -> dict:
    """Every rate the ladder and the record need, at ``setup``'s geometry on ``device``.
    ``small``: a CPU test's sizes (seconds, not minutes)."""
    s_short, s_long = (1, 2) if small else (10, 60)
    e_short, e_long = (1, 2) if small else (2, 6)  # passes of samples
    e_short *= evaluation.DEVICE_PASS_SAMPLES if device != "cpu" else evaluation.EVAL_PASS_SAMPLES
    e_long *= evaluation.DEVICE_PASS_SAMPLES if device != "cpu" else evaluation.EVAL_PASS_SAMPLES
    mm = 128 if small else 8192
    ev = replace(setup.eval, device=device)
    train_flops, sample_flops = flops(setup.chapter_cnn, setup.seq_len, setup.train.batch_size,
                                      n_models)  # fmt: skip
    peak = {"fp32": matmul_tflops(device, False, mm), "tf32": matmul_tflops(device, True, mm)}
    out = {"matmul_peak_tflops": peak, "copy_gbps": copy_gbps(device, (1 if small else 512) << 20),
           "flops_per_step": train_flops, "flops_per_sample": sample_flops, "train": {},
           "sample_us": {}}  # fmt: skip
    # both networks on both paths: a run whose fast path disagrees is costed at eager fp32's
    losses = {FAST: [], EAGER: []}
    for norm in ("none", setup.chapter_cnn.norm):
        for fast in (False, True):
            path = FAST if fast else EAGER
            ms, ran, loss = step_ms(setup.cnn(norm), setup.train, n_models, fast, s_short, s_long)
            out["train"][f"{norm}, {path}"] = _rate(ms, train_flops, peak, ran)
            losses[path].append(loss)
    out["agreement"] = agreement(np.hstack(losses[EAGER]), np.hstack(losses[FAST]))
    one = replace(setup.train, batch_size=1)
    out["launch_floor_ms"] = step_ms(setup.chapter_cnn, one, n_models, True, s_short, s_long)[0]
    for fast in (False, True):
        for probes in (True, False):
            key = f"{FAST if fast else EAGER}, {'probes' if probes else 'outputs'}"
            us = sample_us(setup.chapter_cnn, setup.seq_len, ev, n_models, fast, probes,
                           e_short, e_long)  # fmt: skip
            out["sample_us"][key] = us
    ms = {p: out["train"][f"{setup.chapter_cnn.norm}, {p}"]["ms_per_step"] for p in (FAST, EAGER)}
    return {**out, **speed_check(ms[EAGER] / ms[FAST])}


def speed_check(speedup: float) -> dict:
    """The fast path's speed against eager fp32 at the same step (the chapter's network), judged
    against :data:`SPEEDUP_TARGET`."""
    return {"speedup": speedup, "speedup_target": SPEEDUP_TARGET,
            "speedup_ok": bool(speedup >= SPEEDUP_TARGET)}  # fmt: skip


FIRST_STEP_TOLERANCE = 1e-2  # TF32 against fp32 on one forward pass: about 1e-3 (relative)


def agreement(eager: np.ndarray, fast: np.ndarray) -> dict:
    """The fast path against eager fp32 on the same networks and batches (losses: steps x
    models, both networks side by side): the first step's loss (same weights, same batch: only
    TF32 rounding differs, so a larger gap means the fast path computes something else, and the
    run uses eager fp32 throughout) and the largest relative gap over the timed steps (Adam lets
    rounding grow; reported, not judged)."""
    rel = np.abs(fast - eager) / np.maximum(np.abs(eager), 1e-12)
    first = float(rel[0].max())
    return {"first_step": first, "over_steps": float(rel.max()),
            "ok": first <= FIRST_STEP_TOLERANCE, "tolerance": FIRST_STEP_TOLERANCE}  # fmt: skip


def _rate(ms: float, step_flops: float, peak: dict, path: str) -> dict:
    tflops = step_flops / (ms / 1e3) / 1e12 if ms > 0 else float("nan")
    return {"ms_per_step": ms, "tflops": tflops, "path": path,
            **{f"share_of_{k}_peak": tflops / v for k, v in peak.items()}}  # fmt: skip
