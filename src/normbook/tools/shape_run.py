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
from dataclasses import dataclass
from pathlib import Path

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


def report(runs: list[ChapterRun], rates: dict[str, Rate]) -> str:
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
