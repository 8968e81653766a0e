"""The book pipeline: jupytext source -> papermill (profile + overrides) -> executed .ipynb
-> Jupyter Book (execution off) rendering the executed notebooks.

    python -m normbook.publish.build book [--profile cpu] [--strict] [--force]
    python -m normbook.publish.build chapter book/a1_localization.py [--profile cpu] [-p NAME VALUE]
    python -m normbook.publish.build params [--write]   # parameters cells vs the specs

A chapter whose source, parameters and library code are unchanged is not re-executed. Its
library code is every module it imports, directly or through each other, so an
edit to one paper's code never re-executes the other paper's chapters. The steps live in
:mod:`.project` (chapters, stamps), :mod:`.execution` (papermill), :mod:`.site` (the HTML),
:mod:`.param_cells` and :mod:`.timings`; this module is the command line.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from normbook.publish import project
from normbook.publish.chapter_jobs import RESULT, default_jobs, run_side_by_side
from normbook.publish.execution import execute, is_current, parse_overrides, show_papermill_log
from normbook.publish.param_cells import (
    papermill_drift,
    parameter_drift,
    rewrite_parameters_cell,
)
from normbook.publish.project import (
    BuildError,
    build_lock,
    chapters,
    is_executed,
    selected,
    spec_for,
)
from normbook.publish.site import render
from normbook.publish.timings import cpu_seconds, record_build, record_timing, timings_table
from normbook.runtime.params import PROFILES, ParameterError


def dry_run(resolved: dict) -> None:
    """Print the planned compute of the resolved chapters ({stem: Params}); run nothing."""
    from normbook.publish.chapters import SPECS
    from normbook.runtime import flops

    plans = {name: SPECS[name].planned(params) for name, params in resolved.items()}
    print(flops.report(plans), flush=True)


def execution_order(chs: list[Path]) -> list[Path]:
    """The chapters in TOC order, pages built from every chapter's record (the claims ledger,
    Methods) last: a record written after them would leave them stale for the next build."""
    return sorted(chs, key=lambda ch: spec_for(ch).reads_ledger)


def _execute_here(ch: Path, args) -> str | None:
    """Execute one chapter in this process (its kernel and workers are its children) and keep
    its time, with the CPU seconds it and they used."""
    cpu0 = cpu_seconds()
    _, secs = execute(ch, args.profile, {}, force=args.force)
    return record_timing(args.profile, ch.stem, secs, cpu_s=cpu_seconds() - cpu0)


def cmd_book(args) -> None:
    if args.write_params:
        check_params(write=True)
    chs = selected(args.chapters)
    resolved = {ch.stem: spec_for(ch).resolve(args.profile) for ch in chs}  # before any compute
    if args.dry_run:
        return dry_run(resolved)
    jobs = args.jobs or default_jobs()
    t0 = time.perf_counter()
    with build_lock(args.profile):
        started = time.perf_counter()  # after any wait for another build
        independent = [ch for ch in chs if not spec_for(ch).reads_ledger]
        stale = [ch for ch in independent if args.force or not is_current(ch, args.profile)]
        kinds = {}  # chapter: its run's kind (cold, cached), None when up to date
        for ch in independent:
            if ch not in stale:
                print(f"[up to date] {ch.relative_to(project.ROOT)} ({args.profile})", flush=True)
                kinds[ch.stem] = record_timing(args.profile, ch.stem, None)
        if jobs > 1 and len(stale) > 1:
            for ch, secs, cpu in run_side_by_side(stale, args.profile, args.force, jobs):
                kinds[ch.stem] = record_timing(args.profile, ch.stem, secs, cpu_s=cpu)
        else:
            for ch in stale:
                kinds[ch.stem] = _execute_here(ch, args)
        for ch in execution_order(chs)[len(independent) :]:  # they read the others' records
            kinds[ch.stem] = _execute_here(ch, args)
        if not args.chapters:  # the whole book's execution, before its pages are rendered
            record_build(args.profile, time.perf_counter() - started, kinds, jobs)
        render(args.profile, strict=args.strict, partial=bool(args.chapters))
        print(timings_table(args.profile, [c.stem for c in chs]), flush=True)
        wall = time.perf_counter() - t0
        print(f"[timings] this build: {wall:.0f} s wall ({wall / 60:.1f} min), {jobs} "
              f"chapter(s) at a time on {os.cpu_count()} cores", flush=True)  # fmt: skip


def cmd_execute(args) -> None:
    """One chapter, as a child of ``book`` (:mod:`.chapter_jobs`): its seconds last."""
    path = Path(args.path).resolve()
    overrides = parse_overrides(path, args.p or [])
    _, secs = execute(path, args.profile, overrides, force=args.force)
    print(f"{RESULT} {'none' if secs is None else f'{secs:.3f}'}", flush=True)


def cmd_chapter(args) -> None:
    if args.write_params:
        check_params(write=True)
    path = Path(args.path).resolve()
    if path not in chapters():
        raise BuildError(
            f"{args.path} is not an executable chapter; chapters: "
            + ", ".join(str(c.relative_to(project.ROOT)) for c in chapters())
        )
    overrides = parse_overrides(path, args.p or [])
    profile = overrides.pop("profile", args.profile)
    params = spec_for(path).resolve(profile, **overrides)  # cross-checks too, before any compute
    if args.dry_run:
        return dry_run({path.stem: params})
    with build_lock(profile):
        nb, _ = execute(path, profile, overrides, force=True)
        print(f"[notebook] {nb}", flush=True)
        for other in chapters():  # pages built from every chapter's results (the claims ledger)
            if other != path and spec_for(other).reads_ledger and is_executed(other, profile):
                execute(other, profile, {})
        render(profile, partial=True)  # chapters never executed at this profile are left out


def cmd_params(args) -> None:
    """Check every parameters cell against its spec; ``--write`` regenerates the cells."""
    check_params(args.write)


def check_params(write: bool) -> None:
    """The parameters cells against the specs (``write``: regenerate the drifted ones), and
    what papermill reads of them. ``book`` and ``chapter`` do it first with
    ``--write-params`` (``make book``), in their own process: a second one would import the
    library again (5 of an up-to-date rebuild's 30 s, measured)."""
    drift = []
    for ch in chapters():
        problem = parameter_drift(ch)
        if problem is None:
            continue
        if write:
            rewrite_parameters_cell(ch, spec_for(ch).parameters_cell())
            print(f"[rewritten] {ch.relative_to(project.ROOT)}")
        else:
            drift.append(problem)
    if drift:
        raise BuildError(
            "\n".join(drift) + "\n(fix: python -m normbook.publish.build params --write)"
        )
    unread = [problem for ch in chapters() if (problem := papermill_drift(ch))]
    if unread:  # the spec's text itself: Spec.parameters_cell must write what papermill reads
        raise BuildError("\n".join(unread))
    print("[params] every parameters cell matches its spec, and papermill reads all of them")


def parser() -> argparse.ArgumentParser:
    """The command line (``make -n chapter ...`` shows one, :mod:`normbook.tools.doc_commands`)."""
    ap = argparse.ArgumentParser(prog="python -m normbook.publish.build")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("book", help="execute stale chapters and build the HTML")
    b.add_argument("--profile", default="cpu", choices=PROFILES)
    b.add_argument("--strict", action="store_true", help="warnings are errors (-W)")
    b.add_argument("--force", action="store_true", help="re-execute every chapter")
    b.add_argument("--chapters", help="only these chapters (comma-separated, e.g. a1_localization)")
    dry = "print each chapter's planned FLOPs and estimated GPU time; run nothing"
    b.add_argument("--dry-run", action="store_true", help=dry)
    jobs_help = "chapters executed side by side (default: 2 on a machine with 2 cores or more)"
    b.add_argument("--jobs", type=int, default=0, help=jobs_help)
    wp = "first regenerate drifted parameters cells from the specs (as `params --write`)"
    b.add_argument("--write-params", action="store_true", help=wp)
    e = sub.add_parser("execute", help="(internal) execute one chapter for `book --jobs`")
    e.add_argument("path")
    e.add_argument("--profile", default="cpu", choices=PROFILES)
    e.add_argument("--force", action="store_true")
    e.add_argument("-p", nargs=2, action="append", metavar=("NAME", "VALUE"))
    c = sub.add_parser("chapter", help="re-execute one chapter with new parameters")
    c.add_argument("path")
    c.add_argument("--profile", default="cpu", choices=PROFILES)
    c.add_argument("-p", nargs=2, action="append", metavar=("NAME", "VALUE"))
    c.add_argument("--dry-run", action="store_true", help=dry)
    c.add_argument("--write-params", action="store_true", help=wp)
    m = sub.add_parser("params", help="check the parameters cells against the specs")
    m.add_argument("--write", action="store_true", help="regenerate drifted cells from the specs")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    show_papermill_log()
    try:
        commands = {"book": cmd_book, "chapter": cmd_chapter, "params": cmd_params,
                    "execute": cmd_execute}  # fmt: skip
        commands[args.cmd](args)
    except (ParameterError, BuildError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
