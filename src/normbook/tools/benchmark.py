"""Training throughput of chapter A1's networks, against the machine's own kernel peak.

    python -m normbook.tools.benchmark [--profile cpu] [--norm instance] [--steps 200]

Reports, in one run and on one thread, as training runs: the fp32 kernel peak (GFLOP/s: the best
of several matmul shapes and of oneDNN's own convolution, :func:`kernel_peak`), steps/s
of the stacked path (every seed in one network), of a naive loop that trains the same models one
at a time, and the share of the peak the stacked path reaches. The three are measured the same
way, interleaved in ``--rounds`` rounds and each taken at its best round, so a slow moment of a
shared machine lowers no one of them alone. FLOPs per step are counted by
``torch.utils.flop_counter`` on one real step, forward and backward (see :func:`flops_per_step`).
It also counts the stacked step's page faults, which a heap that returns freed memory to the OS
multiplies (:func:`normbook.runtime.workers.keep_freed_memory`). With ``--record`` (as ``make
benchmark`` runs it) the numbers are also written to ``_build/<profile>/benchmark.json`` with
the CPU model and the date, for the book's *Build and compute* page
(:mod:`normbook.publish.compute_page`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

from normbook.paper_a.a1_localization.spec import A1
from normbook.paper_a.cached.cnn import CNNConfig, StackedCNN
from normbook.paper_a.cached.task import ramp
from normbook.paper_a.cached.training import TrainConfig, train_stack
from normbook.paper_a.runs import localization
from normbook.publish.project import build_dir, write_atomic
from normbook.runtime import flops
from normbook.runtime.devices import cpu_model
from normbook.runtime.workers import single_thread


def matmul_rate(n: int, reps: int | None = None) -> float:
    """fp32 FLOP/s of an n x n matmul (the BLAS PyTorch links), with the current threads
    (``reps``: about as many FLOPs as 20 products at n = 1024 by default)."""
    reps = reps or max(2, round(20 * (1024 / n) ** 3))
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    t0 = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * n**3 * reps / (time.perf_counter() - t0)


def conv_rate(channels: int = 256, size: int = 28, batch: int = 4, reps: int = 5) -> float:
    """fp32 FLOP/s of a 3 x 3 convolution's forward pass through oneDNN (the library that runs
    every network here), channels-last, with the current threads."""
    conv = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
    conv = conv.to(memory_format=torch.channels_last)
    x = torch.randn(batch, channels, size, size).to(memory_format=torch.channels_last)
    with torch.no_grad():
        conv(x)
        t0 = time.perf_counter()
        for _ in range(reps):
            conv(x)
        secs = time.perf_counter() - t0
    return 2 * 9 * channels**2 * size**2 * batch * reps / secs


def kernel_peak() -> float:
    """The best fp32 FLOP/s this machine's kernels reach: several matmul shapes and oneDNN's
    3 x 3 convolution. One matmul alone is no peak: its BLAS may take a narrower vector path
    than oneDNN does on the same CPU (on an AVX-512 Zen 5 a VGG-16 step measured 171 % of a
    1024 x 1024 matmul), and a workload that exceeds its peak says nothing about what is left."""
    return max(*(matmul_rate(n) for n in (512, 1024, 2048)), conv_rate())


def flops_per_step(cnn: CNNConfig, tc: TrainConfig, n_models: int) -> int:
    """FLOPs of one training step of the stack (forward and backward): PyTorch's count for one
    model, times the number of models (its counter overcounts the backward pass of grouped
    convolutions three-fold, so the stack itself is not counted)."""
    net = StackedCNN(cnn, [0])
    x = torch.randn(tc.batch_size, 1, tc.seq_len)
    with FlopCounterMode(display=False) as counter:
        ((net(x) - ramp(tc.seq_len)) ** 2).mean().backward()
    return counter.get_total_flops() * n_models


def steps_per_second(cnn: CNNConfig, tc: TrainConfig, seeds: list[int]) -> float:
    train_stack(cnn, replace(tc, steps=5, checkpoints=()), seeds)  # warm-up
    _, record = train_stack(cnn, replace(tc, checkpoints=()), seeds)
    return tc.steps / record.seconds


def page_faults_per_step(cnn: CNNConfig, tc: TrainConfig, seeds: list[int]) -> float:
    """Minor page faults of the stacked training, per step (about 0 on a heap that keeps freed
    memory, :func:`normbook.runtime.workers.keep_freed_memory`; thousands without it)."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    train_stack(cnn, replace(tc, checkpoints=()), seeds)
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / tc.steps


@dataclass
class Benchmark:
    peak_flops: float
    flops_per_step: int  # of the whole stack
    stacked_steps_s: float
    naive_steps_s: float  # the same models trained one after another, per step of all
    faults_per_step: float  # minor page faults of a stacked step

    @property
    def stacked_share(self) -> float:
        return self.flops_per_step * self.stacked_steps_s / self.peak_flops

    @property
    def speedup(self) -> float:
        return self.stacked_steps_s / self.naive_steps_s


def measure(cnn: CNNConfig, tc: TrainConfig, seeds: list[int], rounds: int = 3) -> Benchmark:
    """Training runs on one thread (:func:`.training.train_stack`; two stacks train side by
    side on two cores), so the peak it is compared with is one thread's too. Peak and stacked
    speed and the naive loop alternate for ``rounds`` rounds and each keeps its best (one
    estimator for the numerator and the denominator of the share, and for both sides of the
    speed-up)."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    peaks, stacked, naive = [], [], []
    with single_thread():
        for _ in range(rounds):
            peaks.append(kernel_peak())
            stacked.append(steps_per_second(cnn, tc, seeds))
            naive.append(1 / sum(1 / steps_per_second(cnn, tc, [s]) for s in seeds))
        faults = page_faults_per_step(cnn, tc, seeds)
    flops = flops_per_step(cnn, tc, len(seeds))
    return Benchmark(max(peaks), flops, max(stacked), max(naive), faults)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="cpu", choices=("smoke", "cpu", "paper"))
    ap.add_argument("--norm", default="instance")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; best of each")
    ap.add_argument("--no-paper", action="store_true", help="skip the paper geometries")
    ap.add_argument("--record", action="store_true",
                    help="also write _build/<profile>/benchmark.json")  # fmt: skip
    a = ap.parse_args(argv)
    setup = localization.Setup.from_params(A1.resolve(a.profile))
    cnn = setup.cnn(a.norm)
    tc = replace(setup.train, steps=a.steps)
    b = measure(cnn, tc, list(setup.seeds), a.rounds)
    what = (f"A1 at {a.profile}: {len(setup.seeds)} models, l={tc.seq_len}, d={cnn.depth}, "
            f"C={cnn.width}, batch {tc.batch_size}, {cnn.label}")  # fmt: skip
    print(
        f"{what}, one thread (as training runs), best of {a.rounds} interleaved rounds\n"
        f"  kernel peak          {b.peak_flops / 1e9:7.1f} GFLOP/s (one thread; best of "
        f"matmul and oneDNN's convolution)\n"
        f"  FLOPs per step       {b.flops_per_step / 1e6:7.1f} MFLOP (all models)\n"
        f"  stacked              {b.stacked_steps_s:7.1f} steps/s "
        f"({b.stacked_share:.0%} of the kernel peak)\n"
        f"  one model at a time  {b.naive_steps_s:7.1f} steps/s of all models "
        f"(stacked is x{b.speedup:.2f})\n"
        f"  page faults          {b.faults_per_step:7.1f} per stacked step"
    )
    vgg = book_vgg_rate(a.profile, a.rounds)
    print(f"  {vgg.geometry}: {vgg.seconds_per_step * 1e3:.1f} ms/step, "
          f"{vgg.flops_per_second / 1e9:.1f} GFLOP/s "
          f"({vgg.flops_per_second / b.peak_flops:.0%} of the kernel peak)")  # fmt: skip
    rates = [] if a.no_paper else list(paper_rates_measured())
    if rates:
        print(paper_geometries(b.peak_flops, rates))
    if a.record:
        path = record(a.profile, what, a.rounds, b, rates, vgg)
        print(f"[benchmark] recorded in {path}", flush=True)


def record(
    profile: str, what: str, rounds: int, b: Benchmark, rates: list, vgg: Rate | None = None
) -> Path:
    """Write the run to ``_build/<profile>/benchmark.json`` (the *Build and compute* page reads
    it): the numbers above, the CPU model, its cores and the date."""
    data = {
        "format": 1,
        "profile": profile,
        "setup": what,
        "rounds": rounds,
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "measured": time.strftime("%Y-%m-%d %H:%M:%S"),
        "peak_gflops": round(b.peak_flops / 1e9, 2),
        "peak": "best of fp32 matmul (n = 512, 1024, 2048) and oneDNN's 3 x 3 convolution",
        "mflop_per_step": round(b.flops_per_step / 1e6, 3),
        "stacked_steps_s": round(b.stacked_steps_s, 2),
        "stacked_share": round(b.stacked_share, 4),
        "naive_steps_s": round(b.naive_steps_s, 2),
        "speedup": round(b.speedup, 3),
        "faults_per_step": round(b.faults_per_step, 1),
        "book_vgg": None
        if vgg is None
        else {
            "geometry": vgg.geometry,
            "seconds_per_step": round(vgg.seconds_per_step, 5),
            "gflops": round(vgg.flops_per_second / 1e9, 2),
            "share": round(vgg.flops_per_second / b.peak_flops, 4),
        },
        "paper": [
            {
                "geometry": r.geometry,
                "seconds_per_step": round(r.seconds_per_step, 4),
                "gflops": round(r.flops_per_second / 1e9, 2),
                "share": round(r.flops_per_second / b.peak_flops, 4),
            }
            for r in rates
        ],  # fmt: skip
    }
    path = build_dir(profile) / "benchmark.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(data, indent=1))
    return path


# ----------------------------------------------------------------------------- rates


def _seconds_per_step(model: torch.nn.Module, x: torch.Tensor, loss, reps: int = 2) -> float:
    """Best of ``reps`` Adam steps (after a warm-up) of a classifier; paper A's networks are
    timed by :func:`steps_per_second` instead."""
    opt = torch.optim.Adam(model.parameters())
    best = float("inf")
    for _ in range(reps + 1):  # the first is a warm-up
        t0 = time.perf_counter()
        opt.zero_grad()
        loss(model(x)).backward()
        opt.step()
        best = min(best, time.perf_counter() - t0)
    return best


@dataclass(frozen=True)
class Rate:
    geometry: str
    seconds_per_step: float
    flops_per_step: float

    @property
    def flops_per_second(self) -> float:
        return self.flops_per_step / self.seconds_per_step


def paper_rates() -> dict[str, Rate]:
    """Seconds per training step at each paper geometry, on one thread (as training runs):
    paper A's network (l = 600, d = 32, C = 32, batch 32, one model), paper B's MNIST CNN and
    full-width VGG-16 (batch 128)."""
    from normbook.paper_b.runs import classify
    from normbook.publish.chapters import SPECS

    rates = {}
    with single_thread():
        setup = localization.Setup.from_params(SPECS["a1_localization"].resolve("paper"))
        cnn, tc = setup.cnn("instance"), replace(setup.train, steps=3)
        secs = 1 / steps_per_second(cnn, tc, [0])
        rates["paper_a"] = Rate(f"paper A: l={tc.seq_len}, d={cnn.depth}, C={cnn.width}, "
                                f"batch {tc.batch_size}", secs,
                                flops_per_step(cnn, tc, 1))  # fmt: skip
        params = SPECS["b1_setup_accuracy"].resolve("paper")
        for (ds, bn), cfg in classify.Setup.from_params(params).configs.items():
            if not bn:
                continue
            model = cfg.build(0)
            x = torch.randn(params.batch_size, cfg.in_channels, 32, 32)
            labels = torch.randint(0, 10, (params.batch_size,))
            step_flops = flops.train_step_flops(model, x[:1]) * params.batch_size
            loss = partial(torch.nn.functional.cross_entropy, target=labels)
            secs = _seconds_per_step(model, x, loss)
            rates[ds] = Rate(
                f"paper B: {ds} {cfg.label}, batch {params.batch_size}", secs, step_flops
            )
    return rates


def book_vgg_rate(profile: str, rounds: int) -> Rate:
    """One training step of the book's own VGG-16 (chapter B1's CIFAR-10 network with BN, at
    ``profile``'s width and batch, channels-last as it trains), best of ``rounds``."""
    from normbook.paper_b.runs import classify
    from normbook.publish.chapters import SPECS

    params = SPECS["b1_setup_accuracy"].resolve(profile)
    cfg = classify.Setup.from_params(params).configs["cifar10", True]
    with single_thread():
        model = cfg.build(0).to(memory_format=torch.channels_last)
        x = torch.randn(cfg.batch_size, 3, 32, 32).contiguous(memory_format=torch.channels_last)
        labels = torch.randint(0, 10, (cfg.batch_size,))
        step_flops = flops.train_step_flops(cfg.build(0), x[:1]) * cfg.batch_size
        loss = partial(torch.nn.functional.cross_entropy, target=labels)
        secs = min(_seconds_per_step(model, x, loss, reps=5) for _ in range(rounds))
    return Rate(f"the book's VGG-16 at {profile}: width {cfg.width:g}, batch {cfg.batch_size}, BN",
                secs, step_flops)  # fmt: skip


def paper_rates_measured() -> list:
    """Each paper geometry's measured rate (:func:`paper_rates`)."""
    return list(paper_rates().values())


def paper_geometries(peak_flops: float, rates: list | None = None) -> str:
    """The `paper` profile's geometries, one training step each on one thread (the best of
    two after a warm-up), against the same kernel peak (``rates``: measured now if None)."""
    lines = ["paper geometries (one model, one thread):"]
    for r in paper_rates_measured() if rates is None else rates:
        lines.append(f"  {r.geometry:45s} {r.seconds_per_step:6.2f} s/step, "
                     f"{r.flops_per_second / 1e9:5.1f} GFLOP/s "
                     f"({r.flops_per_second / peak_flops:.0%} of the kernel peak)")  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    main()
