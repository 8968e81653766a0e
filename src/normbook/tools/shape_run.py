"""The ``paper`` profile at full shape on this CPU: every chapter executed with the papers'
geometry (sequence length, depth, width, batch size, seeds, full-width VGG-16) and only its
counts cut to a handful (optimizer steps, epochs, evaluated samples, images analysed), so that
every code path runs at the shape a GPU run will meet: networks built, a few optimizer steps,
the streamed evaluation, the probes, the analyses, the figures and the ledger.

    python -m normbook.tools.shape_run [--chapters a1_localization,b1_setup_accuracy]

It reports each chapter's wall time and peak memory, the seconds per training step at each
paper geometry (one thread, as training runs), and, from the FLOPs that ``make plan`` counts,
the estimated full ``paper`` time on this CPU and on the GPU that plan states. Its executed
notebooks and cache live in ``_build/paper-shape`` (emptied first), apart from every profile's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import torch

from normbook.publish import plan, project
from normbook.publish.chapter_jobs import execute_command, run_child
from normbook.runtime.cache import build_root
from normbook.runtime.devices import cpu_model
from normbook.runtime.workers import single_thread

# The counts a shape run cuts (every chapter takes the ones its spec has); everything else
# keeps its `paper` value. Evaluations keep two eval batches (two independent streams); n_eval
# and curve_eval four of A3's largest BatchNorm evaluation batch (512: the kept states are
# evaluated with batch means too). Paper B's k-means sweep keeps its
# full-width features but only k = 2..4 with one restart: at 19 k's and three restarts it is
# most of B3's and B4's shape run (about 70 s per network) and runs the same code for every k.
COUNTS = dict(
    steps=3, curve_eval=2048, n_eval=2048, probe_batches=1, pack_steps=3, n_test=256,
    circular_steps=3, intervention_eval=64, intervention_ref=64, unet_steps=3, unet_eval=64,
    grid_steps=3, grid_eval=64, reach_len_steps=[3, 6, 9], reach_eval=64,
    mnist_epochs=1, cifar_epochs=1, mnist_train=512, cifar_train=512, n_val=256,
    curve_images=128, sparsity_images=128, cluster_images=128, silhouette_images=128,
    view_images=64, k_max=4, kmeans_n_init=1,
    null_draws=1, oc_models=20, power_draws=20, device="cpu", workers=1,
)  # fmt: skip


def shape_overrides(chapter: Path) -> dict:
    """The counts of COUNTS that ``chapter``'s spec has (its shape run's ``-p`` overrides)."""
    names = set(project.spec_for(chapter).names)
    return {k: v for k, v in COUNTS.items() if k in names}


# ----------------------------------------------------------------------------- executing


@dataclass
class ChapterRun:
    chapter: str
    seconds: float
    peak_rss_gb: float  # the chapter's process tree, largest process (its kernel or a worker)
    error: str | None = None


def run_chapter(ch: Path, env: dict, cut: dict | None = None) -> ChapterRun:
    """Execute ``ch`` at paper shape in a child process (its lines relayed); its wall time and
    peak memory. ``cut`` lowers counts further (``make test``'s shape run)."""
    t0 = time.perf_counter()
    overrides = {**shape_overrides(ch), **(cut or {})}
    cmd = execute_command(ch, "paper", overrides, force=True)
    run = run_child(cmd, ch.stem, env=env)
    error = "\n".join(run.tail[-25:]) if run.returncode else None
    return ChapterRun(ch.stem, time.perf_counter() - t0, run.peak_rss_gb, error)


# ----------------------------------------------------------------------------- rates


def _seconds_per_step(model: torch.nn.Module, x: torch.Tensor, loss, reps: int = 2) -> float:
    """Best of ``reps`` Adam steps (after a warm-up) of a classifier; paper A's networks are
    timed by :func:`.benchmark.steps_per_second` instead."""
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
    from normbook.paper_a.runs import localization
    from normbook.paper_b.runs import classify
    from normbook.publish.chapters import SPECS
    from normbook.tools import benchmark

    rates = {}
    with single_thread():
        setup = localization.Setup.from_params(SPECS["a1_localization"].resolve("paper"))
        cnn, tc = setup.cnn("instance"), replace(setup.train, steps=3)
        secs = 1 / benchmark.steps_per_second(cnn, tc, [0])
        rates["paper_a"] = Rate(f"paper A: l={tc.seq_len}, d={cnn.depth}, C={cnn.width}, "
                                f"batch {tc.batch_size}", secs,
                                benchmark.flops_per_step(cnn, tc, 1))  # fmt: skip
        params = SPECS["b1_setup_accuracy"].resolve("paper")
        for (ds, bn), cfg in classify.Setup.from_params(params).configs.items():
            if not bn:
                continue
            model = cfg.build(0)
            x = torch.randn(params.batch_size, cfg.in_channels, 32, 32)
            labels = torch.randint(0, 10, (params.batch_size,))
            flops = plan.train_step_flops(model, x[:1]) * params.batch_size
            loss = partial(torch.nn.functional.cross_entropy, target=labels)
            secs = _seconds_per_step(model, x, loss)
            rates[ds] = Rate(f"paper B: {ds} {cfg.label}, batch {params.batch_size}", secs, flops)
    return rates


def _rate_for(item: plan.Item, chapter: str, rates: dict[str, Rate]) -> Rate:
    if chapter.startswith("b"):
        return rates["cifar10"] if "cifar" in item.what.lower() else rates["mnist"]
    return rates["paper_a"]


def estimates(chapter: str, rates: dict[str, Rate]) -> tuple[float, float]:
    """(hours on one core of this CPU, hours on plan's stated GPU) for the full ``paper`` run
    of ``chapter``'s training and evaluation passes (plan's FLOPs; analyses not counted)."""
    from normbook.publish.chapters import SPECS

    items = plan.chapter_plan(chapter, SPECS[chapter].resolve("paper"))
    cpu = sum(i.flops / _rate_for(i, chapter, rates).flops_per_second for i in items)
    return cpu / 3600, sum(i.seconds() for i in items) / 3600


# ----------------------------------------------------------------------------- report


def report(runs: list[ChapterRun], rates: dict[str, Rate]) -> str:
    lines = [f"paper profile at full shape on {cpu_model()}, {os.cpu_count()} cores "
             f"(counts cut: {', '.join(f'{k}={v}' for k, v in COUNTS.items())})", "",
             "| geometry | s per training step (one thread) | GFLOP/s |",
             "|---|---|---|"]  # fmt: skip
    for r in rates.values():
        lines.append(f"| {r.geometry} | {r.seconds_per_step:.3f} | "
                     f"{r.flops_per_second / 1e9:.1f} |")  # fmt: skip
    lines += ["", f"| chapter | shape run | peak RSS | full `paper`, one core of this CPU "
              f"| full `paper`, {plan.DEVICE} at {plan.UTILIZATION:.0%} of peak |",
              "|---|---|---|---|---|"]  # fmt: skip
    for run in runs:
        cpu_h, gpu_h = estimates(run.chapter, rates)
        state = f"{run.seconds:.0f} s" if run.error is None else "**failed**"
        lines.append(f"| {run.chapter} | {state} | {run.peak_rss_gb:.2f} GB | {cpu_h:,.1f} h "
                     f"| {gpu_h * 60:,.1f} min |")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m normbook.tools.shape_run")
    ap.add_argument("--chapters", help="only these (comma-separated stems)")
    args = ap.parse_args(argv)
    chs = project.selected(args.chapters)
    folder = build_root() / "paper-shape"
    shutil.rmtree(folder, ignore_errors=True)
    env = {**os.environ, "NORMBOOK_BUILD_DIR": str(folder), "NORMBOOK_CACHE": str(folder / "cache")}
    runs = []
    for ch in chs:  # one at a time: each one's memory is its own
        print(f"[paper-shape] {ch.stem} ...", flush=True)
        runs.append(run_chapter(ch, env))
        r = runs[-1]
        print(f"[paper-shape] {ch.stem}: {r.seconds:.0f} s, peak {r.peak_rss_gb:.2f} GB"
              + (f"\n{r.error}" if r.error else ""), flush=True)  # fmt: skip
    text = report(runs, paper_rates())
    (folder / "report.md").write_text(text + "\n")
    print(text, flush=True)
    return 1 if any(r.error for r in runs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
