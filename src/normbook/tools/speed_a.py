"""Where paper A's training time goes, and what each candidate speed-up buys, on one thread (as
the book trains) of this machine: one stack of chapter A5's networks (its family with kernel-1
blocks, the seeds trained as one network with grouped convolutions).

    python -m normbook.tools.speed_a [--profile cpu] [--steps 300] [--rounds 3]
        [--out results/cpu/speed_a.json]

1. **Profile** (``torch.profiler``): ``--steps`` Adam steps of the stack as
   :func:`normbook.paper_a.cached.stacking.train` takes them, each phase labelled: data (the
   noise drawn per model), forward, backward, optimizer; then one evaluation with depth probes
   as the chapter's are computed (:func:`.evaluation.evaluation_arrays`), on 2,048 samples.
2. **Ratios**, each against today's step in the same run (interleaved rounds, best of each),
   milliseconds per step: the 1x1 head as a batched matmul instead of oneDNN's grouped
   convolution with one output per group, the first layer (one input channel per model) as
   unfold + einsum, and Adam's fused kernel. None is the book's: each changes the last bits
   of every paper-A network, so adopting one retrains them all.

Writes every number with the CPU model, versions and commit (the *Build and compute* page reads
the committed record, labelled as recorded).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from normbook.paper_a.a5_reach.spec import A5
from normbook.paper_a.cached import evaluation
from normbook.paper_a.cached.cnn import StackedCNN
from normbook.paper_a.cached.task import ramp, sample_inputs
from normbook.paper_a.runs import localization, reach
from normbook.publish.project import write_atomic
from normbook.runtime import devices
from normbook.runtime.seeding import generators
from normbook.runtime.workers import single_thread
from normbook.tools.speed import PHASES, Timed

EVAL_SAMPLES = 2048
VARIANTS = ("today", "head as a matmul", "first layer as unfold + einsum", "fused Adam")


def family(profile: str) -> reach.Family:
    """Chapter A5's first family with kernel-1 blocks at ``profile``."""
    params = A5.resolve(profile)
    fams = reach.families(localization.Setup.from_params(params), params)
    return next(f for f in fams if f.cnn.mix >= 1)


def _forward(net: StackedCNN, x: torch.Tensor, variant: str) -> torch.Tensor:
    """The stack's forward pass: the book's own for "today", else with the head or the first
    layer computed another way."""
    if variant == VARIANTS[0]:
        return net(x)
    m, h = net.n_models, x
    for d, (conv, norm) in enumerate(zip(net.convs, net.norms)):
        if d == 0 and variant == VARIANTS[2]:
            k = conv.kernel_size[0]
            patches = F.pad(h, (k // 2, k // 2)).unfold(2, k, 1)  # (B, M, L, k)
            z = torch.einsum("bmlk,mck->bmcl", patches, conv.weight.view(m, -1, k))
            z = z.reshape(h.shape[0], -1, h.shape[2]) + conv.bias.view(1, -1, 1)
        else:
            z = conv(h)
        h = F.relu(norm(z), inplace=True)
    if variant != VARIANTS[1]:
        return net.head(h)
    b, mc, length = h.shape
    w = net.head.weight.view(1, m, 1, mc // m)
    return torch.matmul(w, h.view(b, m, mc // m, length)).view(b, m, length) + net.head.bias.view(
        1, m, 1
    )


def _stepper(fam: reach.Family, variant: str = "today", wall: dict | None = None):
    """One Adam step of the family's stack as the book takes it (summed per-model MSE on fresh
    noise), each phase timed into ``wall`` when given."""
    tc, seeds = fam.setup.train, list(fam.setup.seeds)
    net = StackedCNN(fam.cnn, seeds)
    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=tc.lr, fused=variant == VARIANTS[3] or None)
    gens, target = generators(seeds, "train", "cpu"), ramp(tc.seq_len)
    wall = {} if wall is None else wall

    def step():
        with Timed("data", wall):
            x = sample_inputs(tc.batch_size, len(seeds), tc.seq_len, gens, tc.input_kind)
        with Timed("forward", wall):
            loss = ((_forward(net, x, variant) - target) ** 2).mean(dim=(0, 2)).sum()
        with Timed("backward", wall):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with Timed("optimizer", wall):
            opt.step()

    return net, step


def steps_profile(fam: reach.Family, steps: int) -> dict:
    """Seconds per phase of ``steps`` training steps and of one evaluation with depth probes,
    and the profiler's top operators of each by self time."""
    wall: dict = {}
    net, step = _stepper(fam, wall=wall)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    ev = replace(fam.setup.eval, n_samples=EVAL_SAMPLES, device="cpu")
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU]) as eprof:
        evaluation.evaluation_arrays(net.eval(), fam.setup.seq_len, ev, with_probes=True)
    evaluated = {
        "samples": EVAL_SAMPLES,
        "probe_batches": ev.probe_batches,
        "wall_s": round(time.perf_counter() - t0, 2),
        "top_ops": _top(eprof, ()),
    }
    return {"steps": steps, "phases_wall_s": {k: round(v, 3) for k, v in wall.items()},
            "top_ops": _top(prof, PHASES), "evaluation": evaluated}  # fmt: skip


def _top(prof, skip, n: int = 8) -> list[dict]:
    ops = sorted((e for e in prof.key_averages() if e.key not in skip),
                 key=lambda e: -e.self_cpu_time_total)  # fmt: skip
    return [{"op": e.key, "self_s": round(e.self_cpu_time_total / 1e6, 3), "calls": e.count}
            for e in ops[:n]]  # fmt: skip


def ratios(fam: reach.Family, steps: int, rounds: int) -> dict:
    """Milliseconds per step of each variant, best of ``rounds`` interleaved rounds."""
    best = {v: float("inf") for v in VARIANTS}
    steppers = {v: _stepper(fam, v)[1] for v in VARIANTS}
    for _ in range(rounds):
        for v, step in steppers.items():
            for _ in range(5):  # warm-up: oneDNN's kernels chosen, Adam's state made
                step()
            t0 = time.perf_counter()
            for _ in range(steps):
                step()
            best[v] = min(best[v], (time.perf_counter() - t0) / steps * 1e3)
    return {v: {"ms_per_step": round(ms, 3), "speed_vs_today": round(best["today"] / ms, 3)}
            for v, ms in best.items()}  # fmt: skip


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="cpu", choices=("smoke", "cpu"))
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    fam = family(args.profile)  # bad parameters stop here, before any compute
    started = datetime.now(UTC).isoformat(timespec="seconds")
    commit = devices.git_commit()  # read before the run: the code it ran
    with single_thread():
        torch.manual_seed(0)
        prof = steps_profile(fam, args.steps)
        rat = ratios(fam, max(1, args.steps // 3), args.rounds)
    c = fam.cnn
    rec = {"format": 1, "profile": args.profile, "started": started,
           "commit": commit, "machine": devices.provenance(),
           "network": (f"chapter A5's family with {c.mix} kernel-1 block(s) after each block: "
                       f"{len(fam.setup.seeds)} models stacked, depth {c.depth}, width {c.width}, "
                       f"kernel {c.kernel}, {c.norm}, l = {fam.setup.seq_len}, batch "
                       f"{fam.setup.train.batch_size}, Adam"),
           **prof, "ratios": rat}  # fmt: skip
    out = args.out or Path("results") / args.profile / "speed_a.json"
    write_atomic(out, json.dumps(rec, indent=1) + "\n")
    said = (f"{v} {r['ms_per_step']:.1f} ms ({r['speed_vs_today']:.2f}x)" for v, r in rat.items())
    print(f"[speed_a] {out}: " + ", ".join(said))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
