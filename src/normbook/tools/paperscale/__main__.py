"""``python -m normbook.tools.paperscale a1 --out DIR --deadline SECONDS --device cuda``: one
paper-scale run, its record written to DIR (``a1.json``, ``a1.npz``).

``--device`` has no default: a run meant for a GPU that silently trained on a CPU would spend
its whole deadline on a record nobody wants. ``cuda`` without CUDA stops at once (exit 2);
``auto`` takes the GPU where there is one and, where not, says on stderr that it runs on the
CPU (the record names its device too).

The commit the record names is ``--commit`` (empty: not given), else this checkout's (git),
else the one in ``results/paper/COMMIT`` (``make paper-commit`` writes it before the tree is
copied to a machine without git history), else ``unknown``, with a warning on stderr.

Exit status: 0 complete; 2 bad arguments or no such device (before any compute); 3 stopped at
its deadline (the record holds every phase it finished); 1 failed (the record says where).
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import traceback
from pathlib import Path

# Each experiment is a module of this package with a ``SPEC`` (its chapter's parameters) and
# a ``Run`` (its phases); a second record (chapter A3's, say) is a second module.
EXPERIMENTS = ("a1",)
COMMIT_FILE = Path(__file__).resolve().parents[4] / "results" / "paper" / "COMMIT"


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m normbook.tools.paperscale", description=__doc__)
    ap.add_argument("experiment", choices=EXPERIMENTS, help="which chapter's experiment")
    ap.add_argument("--out", required=True, help="folder for <experiment>.json and .npz")
    ap.add_argument(
        "--deadline",
        type=float,
        required=True,
        help="seconds the whole run may take (the ladder fits the budget to it)",
    )
    ap.add_argument(
        "--shape",
        default="paper",
        choices=("smoke", "cpu", "paper"),
        help="the profile whose geometry and budget the ladder starts from",
    )
    ap.add_argument(
        "--device",
        required=True,
        choices=("cuda", "cpu", "auto"),
        help="cuda: fail at once without CUDA; auto: the CPU where there is none, said on stderr",
    )
    ap.add_argument(
        "--commit",
        default="",
        help="the commit the tree is (default: git's, else results/paper/COMMIT)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="time a handful of steps only (a dry run or a test, not rates to report)",
    )
    ap.add_argument(
        "-p",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="override a chapter parameter (as make chapter's -p)",
    )
    return ap  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    import importlib

    from normbook.runtime.params import ParameterError
    from normbook.tools.paperscale.a1 import Deadline

    experiment = importlib.import_module(f"{__package__}.{args.experiment}")

    try:
        device = resolve(args.device)
        params = experiment.SPEC.resolve(args.shape, **dict(args.p))
        if args.deadline <= 0:
            raise ParameterError(f"--deadline must be positive, got {args.deadline:g}")
    except (ParameterError, RuntimeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    command = "python -m normbook.tools.paperscale " + shlex.join(argv or sys.argv[1:])
    commit = commit_of(args.commit)
    run = experiment.Run(
        params,
        device,
        args.out,
        args.deadline,
        command,
        commit,
        small=args.quick or args.shape == "smoke",
    )
    signal.signal(signal.SIGTERM, _stopped)  # `timeout` stops a run so: recorded as a deadline
    try:
        run.run()
    except Deadline as exc:
        run.record.data["status"] = f"stopped at its deadline (before or during {exc})"
        run.record.write()
        print(f"[paperscale] stopped at the deadline: {exc}", file=sys.stderr)
        return 3
    except Exception as exc:  # noqa: BLE001 - recorded, then re-raised as the exit status
        run.record.data["status"] = f"failed: {type(exc).__name__}: {exc}"
        run.record.write()
        traceback.print_exc()
        return 1
    print(summary(run.record.data), flush=True)
    return 0


def resolve(choice: str) -> str:
    """The device ``--device`` names (:func:`normbook.runtime.devices.resolve_device`: ``cuda``
    without CUDA is an error); ``auto`` falling back to the CPU says so on stderr."""
    from normbook.runtime.devices import resolve_device

    device = resolve_device(choice)
    if choice == "auto" and device == "cpu":
        print("[paperscale] WARNING: --device auto found no CUDA: this run trains on the CPU "
              "(--device cuda stops instead)", file=sys.stderr, flush=True)  # fmt: skip
    return device


def commit_of(given: str) -> str:
    """The commit the record names: ``given``, else git's, else :data:`COMMIT_FILE`'s, else
    ``unknown`` (with a warning on stderr)."""
    from normbook.runtime.devices import git_commit

    commit = given.strip() or git_commit()
    if commit == "unknown" and COMMIT_FILE.exists():
        commit = COMMIT_FILE.read_text().strip() or "unknown"
    if commit == "unknown":
        print("[paperscale] WARNING: the record's commit is 'unknown': no --commit, no git "
              "history and no results/paper/COMMIT (make paper-commit writes it before the "
              "tree is copied)", file=sys.stderr, flush=True)  # fmt: skip
    return commit


def _stopped(signum, frame):
    from normbook.tools.paperscale.a1 import Deadline

    raise Deadline(f"signal {signal.Signals(signum).name}")


def summary(data: dict) -> str:
    """The run in a few lines: rates (eager fp32 against the book's path), the ladder's choice,
    per-seed effects."""
    r = data["rates"]
    lines = [f"[paperscale] {data['experiment']} {data['status']} on "
             f"{data['provenance']['device']['name']}"]  # fmt: skip
    for key, v in r["train"].items():
        lines.append(f"  train {key:<22} {v['ms_per_step']:8.2f} ms/step "
                     f"{v['tflops']:9.3g} TFLOP/s  ({v['path']})")  # fmt: skip
    reached = "reached" if r["speedup_ok"] else "NOT reached"
    lines.append(f"  fast / eager fp32: {r['speedup']:.2f}x (target {r['speedup_target']:g}x: "
                 f"{reached}); launch floor "
                 f"{r['launch_floor_ms']:.2f} ms/step; matmul peak "
                 f"{r['matmul_peak_tflops']['fp32']:.3g} (fp32) / "
                 f"{r['matmul_peak_tflops']['tf32']:.3g} (tf32) TFLOP/s")  # fmt: skip
    a = r["agreement"]
    lines.append(f"  fast vs eager fp32 losses: first step {a['first_step']:.1e} (tolerance "
                 f"{a['tolerance']:g}: {'ok' if a['ok'] else 'FAILED, ran eager fp32'}), over "
                 f"the timed steps {a['over_steps']:.1e}")  # fmt: skip
    prec = data["provenance"]["precision"]
    lines.append(f"  path: {prec['path']}: {prec['path_why']}")
    lines.append(f"  ladder: {data['ladder']['reason']}")
    for which, eff in data["effects"].items():
        lines.append(
            f"  {which:<8} interior slope "
            + " ".join(f"{x:.3f}" for x in eff["interior_slope"])
            + "; beyond 3R "
            + " ".join(f"{x:.4f}" for x in eff["beyond_hop_slope"])
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
