"""One prepared GPU check: chapter A1 at the ``paper`` profile on one GPU, within about ten
minutes, and its agreement with the CPU on the same seeds at small scale.

    python -m normbook.gpu_check [--steps 10000 --n-eval 800000 --curve-eval 200000]

1. A1 at ``smoke`` (paper A's code paths, seeds 0 and 1) on the CPU and on the GPU: every
   glued number and every verdict compared (floating-point order differs between devices,
   so numbers are shown with their differences, verdicts must agree).
2. A1 at ``paper`` geometry (l = 600, d = 32, five seeds) on the GPU, its budget cut to fit:
   by default half the paper's steps and a quarter of its predictions per index (``make plan``
   estimates the full chapter at about 22 GPU-minutes; this at about 7). It prints its time
   and its verdicts.

Exits 2, before any compute, where no CUDA device is visible. Everything it writes lives in
``_build/gpu-check`` (emptied first).
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .core import ledger, project
from .core.cache import build_root
from .core.chapter_jobs import execute_command

A1 = project.ROOT / "book" / "a1_localization.py"


def _execute(folder: Path, profile: str, overrides: dict) -> float:
    env = {**os.environ, "NORMBOOK_BUILD_DIR": str(folder), "NORMBOOK_CACHE": str(folder / "cache")}
    t0 = time.perf_counter()
    cmd = execute_command(A1, profile, overrides, force=True)
    subprocess.run(cmd, cwd=project.ROOT, env=env, check=True)
    return time.perf_counter() - t0


def _record(folder: Path, profile: str) -> dict:
    os.environ["NORMBOOK_BUILD_DIR"] = str(folder)  # where ledger.read looks
    (rec,) = ledger.read(profile, ["a1_localization"])
    return rec


def compare(cpu: dict, gpu: dict) -> tuple[list[str], list[tuple[float, str]]]:
    """Two records of one chapter: the verdicts that differ (they must not), and every glued
    number's relative difference (largest first; below 1 in size, the absolute one):
    floating-point order differs between devices, and forty steps of Adam amplify it."""
    verdicts = [
        f"verdict of '{a['claim']}': cpu {a['verdict']}, gpu {b['verdict']}"
        for a, b in zip(cpu["claims"], gpu["claims"], strict=True)
        if a["verdict"] != b["verdict"]
    ]
    diffs = []
    for name, x in cpu["numbers"].items():
        y = gpu["numbers"].get(name)
        d = math.inf if y is None else abs(x - y) / max(1.0, abs(x))
        diffs.append((d, f"{name}: cpu {x:.6g}, gpu {y}"))
    return verdicts, sorted(diffs, reverse=True)


def _verdicts(rec: dict) -> str:
    return "\n".join(f"  {c['verdict']:<12} {c['claim']}" for c in rec["claims"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m normbook.gpu_check")
    ap.add_argument("--steps", type=int, default=10_000, help="Adam steps (paper: 20,000)")
    ap.add_argument("--n-eval", type=int, default=800_000, help="paper: 3,200,000")
    ap.add_argument("--curve-eval", type=int, default=200_000, help="paper: 800,000")
    args = ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("error: no CUDA device is visible; this check needs one GPU", file=sys.stderr)
        return 2
    print(f"[gpu-check] {torch.cuda.get_device_name(0)}", flush=True)
    root = build_root() / "gpu-check"
    shutil.rmtree(root, ignore_errors=True)
    small = {}
    for device in ("cpu", "cuda"):
        secs = _execute(root / device, "smoke", {"device": device})
        small[device] = _record(root / device, "smoke")
        print(f"[gpu-check] A1 at smoke on {device}: {secs:.0f} s", flush=True)
    differences, numbers = compare(small["cpu"], small["cuda"])
    print(f"[gpu-check] smoke, cpu vs gpu: verdicts {'DIFFER' if differences else 'agree'}; "
          f"{len(numbers)} glued numbers, largest relative differences:")  # fmt: skip
    print("\n".join(f"  {d}" for d in differences))
    print("\n".join(f"  {d:.2e}  {what}" for d, what in numbers[:5]), flush=True)
    overrides = {"device": "cuda", "steps": args.steps, "n_eval": args.n_eval,
                 "curve_eval": args.curve_eval}  # fmt: skip
    secs = _execute(root / "paper", "paper", overrides)
    rec = _record(root / "paper", "paper")
    print(f"[gpu-check] A1 at paper shape on the GPU ({overrides}): {secs / 60:.1f} min")
    print(_verdicts(rec), flush=True)
    return 1 if differences else 0


if __name__ == "__main__":
    raise SystemExit(main())
