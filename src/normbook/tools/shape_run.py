"""The ``paper`` profile at full shape on this CPU: every chapter executed with the papers'
geometry (sequence length, depth, width, batch size, seeds, full-width VGG-16) and only its
counts cut to a handful (optimizer steps, epochs, evaluated samples, images analysed), so that
every code path runs at the shape a GPU run will meet: networks built, a few optimizer steps,
the streamed evaluation, the probes, the analyses, the figures and the ledger.

    python -m normbook.tools.shape_run [--chapters a1_localization,b1_setup_accuracy]

It reports each chapter's wall time and peak memory, whether the paper profile's no-norm null
learns within a few hundred steps (:func:`null_check`: a null that cannot learn would make every
claim of a GPU run "not shown"), the seconds per training step at each
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
from pathlib import Path

import numpy as np

from normbook.publish import project
from normbook.publish.chapter_jobs import execute_command, run_child
from normbook.runtime import flops
from normbook.runtime.cache import build_root
from normbook.runtime.devices import cpu_model
from normbook.tools.benchmark import Rate, paper_rates

# A shape run keeps every `paper` value but the counts each spec marks (``Param.shape``):
# evaluations keep two eval batches (two independent streams); n_eval and curve_eval four of
# A3's largest BatchNorm evaluation batch (512: the kept states are evaluated with batch means
# too). Paper B's k-means sweep keeps its full-width features but only k = 2..4 with one
# restart: at 19 k's and three restarts it is most of B3's and B4's shape run (about 70 s per
# network) and runs the same code for every k. It runs on the CPU, one worker.
RUN = dict(device="cpu", workers=1)


def shape_overrides(chapter: Path) -> dict:
    """``chapter``'s shape-run ``-p`` overrides: its spec's counts and the run settings."""
    spec = project.spec_for(chapter)
    return {**spec.shape_counts, **{k: v for k, v in RUN.items() if k in spec.names}}


# ----------------------------------------------------------------------------- the null

NULL_SEED = 100  # a seed no profile trains
NULL_STEPS = 300
# The null has learned something about position once its loss is below the best constant
# prediction's (the ramp's variance) by this share: R² of at least 0.05. A network that ignores
# its input can reach the constant, never below it.
NULL_R2 = 0.05


@dataclass
class NullCheck:
    network: str
    steps: int
    first: float  # mean loss of the first 10 steps
    last: float  # mean loss of the last 50
    constant: float  # the best constant prediction's loss (the ramp's variance)

    @property
    def r2(self) -> float:
        return 1 - self.last / self.constant

    @property
    def learned(self) -> bool:
        return self.r2 >= NULL_R2


def null_check(steps: int = NULL_STEPS, init: str | None = None) -> NullCheck:
    """Train the ``paper`` profile's no-norm null (chapter A1: l = 600, d = 32, its learning
    rate and initialisation; ``init`` overrides the latter) for ``steps`` Adam steps on one
    seed, on the CPU, and compare its loss at the end with its loss at the start."""
    from normbook.paper_a.a1_localization.spec import A1
    from normbook.paper_a.cached.task import ramp
    from normbook.paper_a.cached.training import train_stack
    from normbook.paper_a.runs import localization

    setup = localization.Setup.from_params(A1.resolve("paper", device="cpu"))
    cnn = setup.cnn("none") if init is None else replace(setup.cnn("none"), init=init)
    tc = replace(setup.train, steps=steps, checkpoints=(), device="cpu")
    _, record = train_stack(cnn, tc, [NULL_SEED], desc="null")
    loss, constant = record.losses[:, 0], ramp(tc.seq_len).var(unbiased=False)
    return NullCheck(f"{cnn.label}, {cnn.init} init", steps, float(np.mean(loss[:10])),
                     float(np.mean(loss[-50:])), float(constant))  # fmt: skip


# ----------------------------------------------------------------------------- executing


@dataclass
class ChapterRun:
    chapter: str
    seconds: float
    peak_rss_gb: float  # the chapter's process tree, largest process (its kernel or a worker)
    error: str | None = None  # its last lines, when it failed
    returncode: int = 0  # the child's exit status (negative: killed by that signal)


def run_chapter(ch: Path, env: dict, cut: dict | None = None) -> ChapterRun:
    """Execute ``ch`` at paper shape in a child process (its lines relayed); its wall time and
    peak memory. ``cut`` lowers counts further (``make test``'s shape run)."""
    t0 = time.perf_counter()
    overrides = {**shape_overrides(ch), **(cut or {})}
    cmd = execute_command(ch, "paper", overrides, force=True)
    run = run_child(cmd, ch.stem, env=env)
    error = ("\n".join(run.tail[-25:]) or "(no output)") if run.returncode else None
    return ChapterRun(ch.stem, time.perf_counter() - t0, run.peak_rss_gb, error,
                      run.returncode)  # fmt: skip


def _rate_for(item: flops.Item, chapter: str, rates: dict[str, Rate]) -> Rate:
    if chapter.startswith("b"):
        return rates["cifar10"] if "cifar" in item.what.lower() else rates["mnist"]
    return rates["paper_a"]


def estimates(chapter: str, rates: dict[str, Rate]) -> tuple[float, float]:
    """(hours on one core of this CPU, hours on plan's stated GPU) for the full ``paper`` run
    of ``chapter``'s training and evaluation passes (plan's FLOPs; analyses not counted)."""
    from normbook.publish.chapters import SPECS

    items = SPECS[chapter].planned(SPECS[chapter].resolve("paper"))
    cpu = sum(i.flops / _rate_for(i, chapter, rates).flops_per_second for i in items)
    return cpu / 3600, sum(i.seconds() for i in items) / 3600


# ----------------------------------------------------------------------------- report


def report(runs: list[ChapterRun], rates: dict[str, Rate], nulls: list[NullCheck] = ()) -> str:
    from normbook.publish.chapters import SPECS

    counts = {k: v for spec in SPECS.values() for k, v in spec.shape_counts.items()}
    lines = [f"paper profile at full shape on {cpu_model()}, {os.cpu_count()} cores "
             f"(counts cut: {', '.join(f'{k}={v}' for k, v in counts.items())})", "",
             "| geometry | s per training step (one thread) | GFLOP/s |",
             "|---|---|---|"]  # fmt: skip
    for r in rates.values():
        lines.append(f"| {r.geometry} | {r.seconds_per_step:.3f} | "
                     f"{r.flops_per_second / 1e9:.1f} |")  # fmt: skip
    lines += ["", f"| chapter | shape run | peak RSS | full `paper`, one core of this CPU "
              f"| full `paper`, {flops.DEVICE} at {flops.UTILIZATION:.0%} of peak |",
              "|---|---|---|---|---|"]  # fmt: skip
    for run in runs:
        cpu_h, gpu_h = estimates(run.chapter, rates)
        state = f"{run.seconds:.0f} s" if run.error is None else "**failed**"
        lines.append(f"| {run.chapter} | {state} | {run.peak_rss_gb:.2f} GB | {cpu_h:,.1f} h "
                     f"| {gpu_h * 60:,.1f} min |")  # fmt: skip
    if nulls:
        lines += ["", f"The paper profile's no-norm null, {nulls[0].steps} steps on seed "
                  f"{NULL_SEED}: it must leave its initial loss and beat the best constant "
                  f"prediction (loss {nulls[0].constant:.4f}) by R² ≥ {NULL_R2:g} over its last "
                  "50 steps:", "",
                  "| null | loss, first 10 steps | loss, last 50 | R² | learned |",
                  "|---|---|---|---|---|"]  # fmt: skip
        lines += [f"| {n.network} | {n.first:.4f} | {n.last:.4f} | {n.r2:.3f} | "
                  f"{'yes' if n.learned else '**no**'} |" for n in nulls]  # fmt: skip
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
    print(f"[paper-shape] the no-norm null, {NULL_STEPS} steps ...", flush=True)
    nulls = [null_check(), null_check(init="default")]  # the book's, and PyTorch's for contrast
    text = report(runs, paper_rates(), nulls)
    (folder / "report.md").write_text(text + "\n")
    print(text, flush=True)
    return 1 if any(r.error for r in runs) or not nulls[0].learned else 0


if __name__ == "__main__":
    raise SystemExit(main())
