"""``python -m normbook.tools.paperscale a1 --out DIR --deadline SECONDS``: one paper-scale run.

Exit status: 0 complete; 2 bad arguments or no such device (before any compute); 3 stopped at
its deadline (the record holds every phase it finished); 1 failed (the record says where).
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import traceback

# Each experiment is a module of this package with a ``SPEC`` (its chapter's parameters) and
# a ``Run`` (its phases); a second record (chapter A3's, say) is a second module.
EXPERIMENTS = ("a1",)


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
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    ap.add_argument("--commit", default=None, help="the commit, where the tree has no git")
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

    from normbook.runtime.devices import git_commit, resolve_device
    from normbook.runtime.params import ParameterError
    from normbook.tools.paperscale.a1 import Deadline

    experiment = importlib.import_module(f"{__package__}.{args.experiment}")

    try:
        device = resolve_device(args.device)
        params = experiment.SPEC.resolve(args.shape, **dict(args.p))
        if args.deadline <= 0:
            raise ParameterError(f"--deadline must be positive, got {args.deadline:g}")
    except (ParameterError, RuntimeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    command = "python -m normbook.tools.paperscale " + shlex.join(argv or sys.argv[1:])
    commit = args.commit or git_commit()
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
    lines.append(f"  fast / eager fp32: {r['speedup']:.2f}x; launch floor "
                 f"{r['launch_floor_ms']:.2f} ms/step; matmul peak "
                 f"{r['matmul_peak_tflops']['fp32']:.3g} (fp32) / "
                 f"{r['matmul_peak_tflops']['tf32']:.3g} (tf32) TFLOP/s")  # fmt: skip
    a = r["agreement"]
    lines.append(f"  fast vs eager fp32 losses: first step {a['first_step']:.1e} (tolerance "
                 f"{a['tolerance']:g}: {'ok' if a['ok'] else 'FAILED, ran eager'}), over the "
                 f"timed steps {a['over_steps']:.1e}")  # fmt: skip
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
