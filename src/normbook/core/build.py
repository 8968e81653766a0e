"""The book pipeline: jupytext source -> papermill (profile + overrides) -> executed .ipynb
-> Jupyter Book (execution off) rendering the executed notebooks.

    python -m normbook.core.build book [--profile cpu] [--strict] [--force]
    python -m normbook.core.build chapter book/a1_localization.py [--profile cpu] [-p NAME VALUE]
    python -m normbook.core.build params [--write]   # parameters cells vs the specs

A chapter whose source, parameters and library code are unchanged is not re-executed. Its
library code is ``normbook.core`` plus the packages its spec names (its own paper's), so an
edit to one paper's code never re-executes the other paper's chapters. The steps live in
:mod:`.project` (chapters, stamps), :mod:`.execution` (papermill), :mod:`.site` (the HTML),
:mod:`.param_cells` and :mod:`.timings`; this module is the command line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import project
from .execution import execute, parse_overrides, show_papermill_log
from .param_cells import parameter_drift, rewrite_parameters_cell
from .params import PROFILES, ParameterError
from .project import BuildError, build_lock, chapters, is_executed, selected, spec_for
from .site import render
from .timings import record_timing, timings_table


def dry_run(resolved: dict) -> None:
    """Print the planned compute of the resolved chapters ({stem: Params}); run nothing."""
    from .. import plan

    print(plan.report(resolved), flush=True)


def execution_order(chs: list[Path]) -> list[Path]:
    """The chapters in TOC order, pages built from every chapter's record (the claims ledger,
    Methods) last: a record written after them would leave them stale for the next build."""
    return sorted(chs, key=lambda ch: spec_for(ch).reads_ledger)


def cmd_book(args) -> None:
    chs = selected(args.chapters)
    resolved = {ch.stem: spec_for(ch).resolve(args.profile) for ch in chs}  # before any compute
    if args.dry_run:
        return dry_run(resolved)
    with build_lock(args.profile):
        for ch in execution_order(chs):
            _, secs = execute(ch, args.profile, {}, force=args.force)
            record_timing(args.profile, ch.stem, secs)
        render(args.profile, strict=args.strict, partial=bool(args.chapters))
        print(timings_table(args.profile, [c.stem for c in chs]), flush=True)


def cmd_chapter(args) -> None:
    path = Path(args.path).resolve()
    if path not in chapters():
        raise BuildError(
            f"{args.path} is not an executable chapter; chapters: "
            + ", ".join(str(c.relative_to(project.ROOT)) for c in chapters())
        )
    overrides = parse_overrides(path, args.p or [])
    profile = overrides.pop("profile", args.profile)
    P = spec_for(path).resolve(profile, **overrides)  # cross-checks too, before any compute
    if args.dry_run:
        return dry_run({path.stem: P})
    with build_lock(profile):
        nb, _ = execute(path, profile, overrides, force=True)
        print(f"[notebook] {nb}", flush=True)
        for other in chapters():  # pages built from every chapter's results (the claims ledger)
            if other != path and spec_for(other).reads_ledger and is_executed(other, profile):
                execute(other, profile, {})
        render(profile, partial=True)  # chapters never executed at this profile are left out


def cmd_params(args) -> None:
    """Check every parameters cell against its spec; ``--write`` regenerates the cells."""
    drift = []
    for ch in chapters():
        problem = parameter_drift(ch)
        if problem is None:
            continue
        if args.write:
            rewrite_parameters_cell(ch, spec_for(ch).parameters_cell())
            print(f"[rewritten] {ch.relative_to(project.ROOT)}")
        else:
            drift.append(problem)
    if drift:
        raise BuildError("\n".join(drift) + "\n(fix: python -m normbook.core.build params --write)")
    print("[params] every parameters cell matches its spec")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m normbook.core.build")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("book", help="execute stale chapters and build the HTML")
    b.add_argument("--profile", default="cpu", choices=PROFILES)
    b.add_argument("--strict", action="store_true", help="warnings are errors (-W)")
    b.add_argument("--force", action="store_true", help="re-execute every chapter")
    b.add_argument("--chapters", help="only these chapters (comma-separated, e.g. a1_localization)")
    dry = "print each chapter's planned FLOPs and estimated GPU time; run nothing"
    b.add_argument("--dry-run", action="store_true", help=dry)
    c = sub.add_parser("chapter", help="re-execute one chapter with new parameters")
    c.add_argument("path")
    c.add_argument("--profile", default="cpu", choices=PROFILES)
    c.add_argument("-p", nargs=2, action="append", metavar=("NAME", "VALUE"))
    c.add_argument("--dry-run", action="store_true", help=dry)
    m = sub.add_parser("params", help="check the parameters cells against the specs")
    m.add_argument("--write", action="store_true", help="regenerate drifted cells from the specs")
    args = ap.parse_args(argv)
    show_papermill_log()
    try:
        {"book": cmd_book, "chapter": cmd_chapter, "params": cmd_params}[args.cmd](args)
    except (ParameterError, BuildError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
