"""``make commands``: every command the README and the exercises show, run at ``smoke`` against
the smoke build, each followed by the pages that read its chapter. ``make test`` ends with the
README's (``--run readme``) and checks the exercises' without compute: all of them take about
two smoke builds' time.

    python -m normbook.tools.doc_commands [--jobs 2] [--run all|readme|none]

The commands are read, never retyped: the ``make chapter`` and ``make sweep`` lines of the
README's ``bash`` blocks (:func:`readme_commands`), and each exercise's command
(:meth:`.Exercise.command`, with its values at ``smoke`` where they depend on the profile's:
"twice the steps"). Each is first checked at the profile it names (a command the README shows
must be valid there), then run as make runs it: ``make -n`` with ``PROFILE=smoke`` gives the
build's command line, so the Makefile's plumbing is checked too. A chapter's command executes
the chapter with those parameters, and then the pages that read every chapter's record (intro,
claims ledger, Methods: ``reads_ledger``) execute over the smoke build's records with that
chapter's replaced; a sweep writes its page. Nothing is rendered to HTML: the smoke build
renders every page strictly, and what a command changes is what the notebooks execute.

Everything runs under ``_build/smoke/commands/``, the smoke build's cache shared
(``NORMBOOK_CACHE``) and its book left as built for the checks after it. For time, commands of
different chapters share a round, a build folder of their own (the smoke build's records
copied in): one execution of the pages then checks all of that round's commands, and a failure
names them. Tasks run ``--jobs`` at a time, as the book's chapters do.

A command that cannot run at ``smoke`` is skipped with its reason: the exercises that need an
edit of the library, a grid file or scheduler of the reader's own, parameters invalid at
``smoke`` (a sweep's invalid points are reported and the others run), a count (steps, images)
set above :data:`MAX_COUNT` times its value at ``smoke``, and a command that at ``smoke`` is
the smoke build's own run or another command's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from normbook.publish import build, exercises, project, sweep
from normbook.publish.chapter_jobs import default_jobs, execute_command, run_child
from normbook.publish.execution import parse_overrides
from normbook.publish.timings import load_timings
from normbook.runtime import cache
from normbook.runtime.params import ParameterError

MAX_COUNT = 10.0  # a smoke check sets no count (steps, images) above this many times its own
MODULES = {"chapter": "normbook.publish.build", "sweep": "normbook.publish.sweep"}
NOT_RUN = {
    "book": "the whole book: make test builds it at smoke before this step",
    "test": "make test itself",
    "lab": "interactive (JupyterLab)",
}
BASH = re.compile(r"^```bash\n(.*?)^```", re.M | re.S)


class CommandError(RuntimeError):
    """A command the README or an exercise shows that does not work as shown."""


@dataclass(frozen=True)
class Command:
    source: str  # where it is shown: "README.md:83", "exercise a1-ex-layer"
    words: tuple[str, ...] = ()  # make, its target, its variables (as a shell splits them)
    skip: str = ""  # why it never runs here (an exercise that needs an edit of the library)
    # the command at another profile where its values depend on the profile's (an exercise's
    # "twice the steps"); None: the same variables, PROFILE set
    remake: Callable[[str], str] | None = field(default=None, compare=False)

    @property
    def target(self) -> str:
        return self.words[1] if len(self.words) > 1 else ""

    @property
    def variables(self) -> dict[str, str]:
        return dict(w.split("=", 1) for w in self.words[2:] if "=" in w)

    @property
    def profile(self) -> str:
        """The profile it names (make's default otherwise)."""
        return self.variables.get("PROFILE", "cpu")

    def at(self, profile: str) -> tuple[str, ...]:
        words = shlex.split(self.remake(profile)) if self.remake else self.words
        return (*(w for w in words if not w.startswith("PROFILE=")), f"PROFILE={profile}")

    @property
    def text(self) -> str:
        return shown(self.words)


def shown(words) -> str:
    """A command as the README writes it: ``PARAMS='-p a 1'``, not ``'PARAMS=-p a 1'``."""
    out = []
    for w in words:
        name, eq, value = w.partition("=")
        plain = eq and re.fullmatch(r"[A-Z_]+", name)
        out.append(f"{name}={shlex.quote(value)}" if plain else shlex.quote(w))
    return " ".join(out)


def readme_commands(text: str, name: str = "README.md") -> list[Command]:
    """The ``make`` lines of the text's ``bash`` blocks (comments dropped, continued lines
    joined), with the line each starts on."""
    found = []
    for block in BASH.finditer(text):
        first = text.count("\n", 0, block.start(1)) + 1
        lines = block.group(1).splitlines()
        i = 0
        while i < len(lines):
            start, line = i, lines[i]
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i]
            i += 1
            words = shlex.split(line, comments=True)
            if words[:1] == ["make"]:
                found.append(Command(f"{name}:{first + start}", tuple(words)))
    return found


def exercise_commands(exs: list[exercises.Exercise] | None = None) -> list[Command]:
    """Each exercise's command as its page shows it (at its profile); an exercise that needs an
    edit of the library has none."""
    out = []
    for ex in exercises.EXERCISES if exs is None else exs:
        source = f"exercise {ex.label}"
        if not ex.runnable:
            out.append(Command(source, skip=f"it needs an edit of the library ({ex.edit})"))
            continue
        words = (*shlex.split(ex.command()), f"PROFILE={ex.profile}")
        remake = lambda profile, ex=ex: dataclasses.replace(ex, profile=profile).command()
        out.append(Command(source, words, remake=remake))
    return out


# ----------------------------------------------------------------------------- preparing


@dataclass
class Job:
    command: Command
    chapter: Path
    argv: list[str]  # the build's (or the sweep's) arguments as make gives them
    overrides: dict = field(default_factory=dict)  # a chapter's checked values
    note: str = ""  # what of it does not run (a sweep's points invalid at this profile)

    @property
    def sweep(self) -> bool:
        return self.command.target == "sweep"


def recipe(words: tuple[str, ...]) -> tuple[list[str], argparse.Namespace]:
    """The arguments ``make`` gives the build (or the sweep) for ``words`` (``make -n``), and
    the same parsed by the build's own parser."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    run = subprocess.run(["make", "-n", *words[1:]], cwd=project.ROOT, env=env,
                         capture_output=True, text=True)  # fmt: skip
    if run.returncode:
        raise CommandError(f"make -n fails: {run.stderr.strip()}")
    module = MODULES[words[1]]
    for line in run.stdout.splitlines():
        argv = shlex.split(line)
        if module not in argv or argv[argv.index(module) - 1] != "-m":
            continue
        rest = argv[argv.index(module) + 1 :]
        parser = sweep.parser() if words[1] == "sweep" else build.parser()
        if words[1] == "sweep" or rest[:1] == ["chapter"]:
            try:
                return rest, parser.parse_args(rest)
            except SystemExit:  # argparse has said why on stderr
                raise CommandError(f"make gives it arguments the build refuses: {line}") from None
    raise CommandError(f"make runs no `{module}` for it")


def chapter_params(args: argparse.Namespace):
    """(chapter, checked overrides, resolved parameters) of a ``build chapter`` line."""
    path = (project.ROOT / args.path).resolve()
    if path not in project.chapters():
        raise CommandError(f"{args.path} is not a chapter")
    overrides = parse_overrides(path, args.p or [])
    profile = overrides.pop("profile", args.profile)
    return path, overrides, project.spec_for(path).resolve(profile, **overrides)


def too_large(path: Path, params, profile: str) -> str:
    """Why a run is too large for a smoke check ("" when it is not): a count (a parameter with
    a paper-shape value: steps, images, seeds) above :data:`MAX_COUNT` times its own at
    ``profile``. Counts, not the FLOPs plan: counting FLOPs takes seconds a chapter."""
    spec = project.spec_for(path)
    own = spec.resolve(profile)
    for p in (p for p in spec.params if p.shape is not None):
        new, old = _largest(params[p.name]), _largest(own[p.name])
        if old and new > MAX_COUNT * old:
            return (f"it sets {p.name} to {new:g}, {new / old:.0f} times its value at {profile} "
                    f"(at most {MAX_COUNT:g})")  # fmt: skip
    return ""


def _largest(value) -> float:
    values = value if isinstance(value, (list, tuple)) else [value]
    return max((float(v) for v in values if isinstance(v, (int, float))), default=0.0)


def check_stated(cmd: Command) -> None:
    """The command is valid at the profile it names (no compute), else a CommandError."""
    try:
        _, args = recipe(cmd.words)
        if cmd.target == "chapter":
            chapter_params(args)
            return
        points, _ = sweep.plan(sweep.grid_from_args(args))
    except (ParameterError, project.BuildError, sweep.SweepError) as exc:
        raise CommandError(f"invalid at its profile {cmd.profile}: {exc}") from None
    bad = [p for p in points if p.status == "invalid"]
    if bad:
        raise CommandError(f"point {bad[0].values} invalid at its profile: {bad[0].error}")


def prepare(cmd: Command, profile: str, seen: dict) -> Job | str:
    """The job that runs ``cmd`` at ``profile``, or why it cannot run there; a CommandError when
    it does not work as shown. ``seen`` ({run: source}) finds a run another command makes."""
    if cmd.skip:
        return cmd.skip
    if cmd.target not in MODULES:
        return NOT_RUN.get(cmd.target, f"`make {cmd.target}` is not a chapter or a sweep")
    grid_file, scheduler = cmd.variables.get("GRID_FILE"), cmd.variables.get("SCHEDULER")
    if grid_file and not (project.ROOT / grid_file).is_file():
        return f"its grid file {grid_file} is the reader's own (none in the repository)"
    if scheduler:
        return f"it needs a Dask scheduler of the reader's own ({scheduler})"
    check_stated(cmd)
    argv, args = recipe(cmd.at(profile))
    if cmd.target == "sweep":
        return _prepare_sweep(cmd, argv, args, profile)
    try:
        path, overrides, params = chapter_params(args)
    except ParameterError as exc:
        return f"invalid at {profile}: {exc}"
    run = (path.stem, json.dumps(params, sort_keys=True, default=str))
    if params == project.spec_for(path).resolve(profile):
        return f"at {profile} it is the smoke build's own run of {path.stem}"
    if run in seen:
        return f"at {profile} it is the same run as {seen[run]}"
    seen[run] = cmd.source
    return too_large(path, params, profile) or Job(cmd, path, argv, overrides)


def _prepare_sweep(cmd: Command, argv: list[str], args, profile: str) -> Job | str:
    grid = sweep.grid_from_args(args)
    if grid.profile != profile:
        return f"its grid file names the profile {grid.profile}"
    points, todo = sweep.plan(grid)
    if not todo:
        return f"no point of its grid is valid at {profile}: {points[0].error}"
    spec = project.spec_for(grid.chapter)
    for p, overrides in todo:
        why = too_large(grid.chapter, spec.resolve(profile, **overrides), profile)
        if why:
            return f"its point {p.values}: {why}"
    invalid = [p for p in points if p.status == "invalid"]
    note = "; ".join(f"point {p.values} invalid at {profile}: {p.error}" for p in invalid)
    return Job(cmd, grid.chapter, argv, note=note)


# ----------------------------------------------------------------------------- running


@dataclass
class Task:
    name: str
    run: Callable[[], str]  # "" when it worked, else what went wrong
    after: tuple[str, ...] = ()  # the tasks it waits for
    needs_ok: bool = True  # it runs only when those worked (else once they have finished)


def run_tasks(tasks: list[Task], jobs: int, say=print) -> dict[str, str]:
    """Run the tasks ``jobs`` at a time, each after those it waits for, in the list's order
    among those ready. Returns {name: problem} for each that failed or could not run."""
    pending, running, done, failed = list(tasks), {}, set(), {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        while pending or running:
            for t in [t for t in pending if t.needs_ok and any(a in failed for a in t.after)]:
                pending.remove(t)
                failed[t.name] = "not run: " + ", ".join(a for a in t.after if a in failed)
            ready = [t for t in pending if all(a in done or a in failed for a in t.after)]
            for t in ready[: jobs - len(running)]:
                pending.remove(t)
                say(f"[commands] start {t.name}")
                running[pool.submit(t.run)] = (t, time.perf_counter())
            if not running:
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                t, t0 = running.pop(fut)
                problem, secs = fut.result(), time.perf_counter() - t0
                if problem:
                    failed[t.name] = problem
                    say(f"[commands] FAILED {t.name} ({secs:.0f} s):\n{problem}")
                else:
                    done.add(t.name)
                    say(f"[commands] ok {t.name} ({secs:.0f} s)")
    for t in pending:  # it waits for a task that is not in the list
        failed[t.name] = "not run"
    return failed


def _child(cmd: list[str], name: str, folder: Path) -> str:
    """Run one child of the build into ``folder`` (its NORMBOOK_BUILD_DIR), sharing the
    cache; "" when it worked, else its error line and last lines."""
    env = {**os.environ, "NORMBOOK_BUILD_DIR": str(folder),
           "NORMBOOK_CACHE": str(cache.cache_root().resolve())}  # fmt: skip
    errors = []  # the build's one-line error, which a long traceback pushes out of the tail
    prefix = f"[{name}] error:"
    run = run_child(cmd, name, env=env,
                    say=lambda line: line.startswith(prefix) and errors.append(line))  # fmt: skip
    if run.returncode == 0:
        return ""
    return "\n".join(f"    {ln}" for ln in [*errors[:1], *run.tail])


def sweep_task(job: Job, folder: Path) -> Task:
    """The sweep's command line as make gives it, on one Dask worker (it is one of this step's
    tasks) and its page not rendered; every valid point must finish."""
    cmd = [sys.executable, "-m", MODULES["sweep"], *job.argv, "--workers", "1", "--no-render"]
    grid = sweep.grid_from_args(sweep.parser().parse_args(job.argv))
    record = folder / grid.profile / "sweeps" / grid.name / "sweep.json"

    def run() -> str:
        problem = _child(cmd, "sweep", folder)
        if not record.exists():
            return problem or f"    no sweep record {record}"
        points = json.loads(record.read_text())["points"]
        return "\n".join(f"    point {p['values']}: {p['error']}" for p in points
                         if p["status"] == "failed")  # fmt: skip

    return Task(f"{job.command.source} (sweep of {job.chapter.stem})", run)


def rounds(jobs: list[Job], seconds: dict[str, float] | None = None) -> list[list[Job]]:
    """The chapters' jobs in rounds: a chapter's n-th command in round n, the longest first
    (``seconds``: each chapter's last measured run)."""
    out: list[list[Job]] = []
    count: dict[Path, int] = {}
    for job in (j for j in jobs if not j.sweep):
        n = count[job.chapter] = count.get(job.chapter, -1) + 1
        if n == len(out):
            out.append([])
        out[n].append(job)
    return [sorted(r, key=lambda j: -(seconds or {}).get(j.chapter.stem, 0.0)) for r in out]


def make_tasks(jobs: list[Job], base: Path, profile: str) -> tuple[list[Task], dict[str, str]]:
    """The tasks (sweeps first, the longest; then round by round the chapters and, after them,
    the pages that read their records, in the round's folder with the smoke build's records
    copied in), and {page task: the commands of its round}."""
    readers = [ch for ch in project.chapters() if project.spec_for(ch).reads_ledger]
    tasks = [sweep_task(j, base / f"sweep-{i + 1}")
             for i, j in enumerate(j for j in jobs if j.sweep)]  # fmt: skip
    measured = {ch: max(r["seconds"] for r in runs.values())
                for ch, runs in load_timings(profile).items() if runs}  # fmt: skip
    after = {}
    for i, group in enumerate(rounds(jobs, measured)):
        folder = base / f"round-{i + 1}"
        shutil.copytree(project.build_dir(profile) / "ledger", folder / profile / "ledger")
        chapters = [chapter_task(job, folder, profile) for job in group]
        tasks += chapters
        for page in readers:  # once the round's chapters have run, whether or not they worked
            cmd = execute_command(page, profile, force=True)
            name = f"{page.stem} ({folder.name})"
            after[name] = ", ".join(j.command.source for j in group)
            tasks.append(Task(name, lambda cmd=cmd, page=page, folder=folder:
                              _child(cmd, page.stem, folder),
                              after=tuple(t.name for t in chapters), needs_ok=False))  # fmt: skip
    return tasks, after


def chapter_task(job: Job, folder: Path, profile: str) -> Task:
    """The chapter executed with the command's parameters into the round's folder; when that
    fails, the smoke build's record of the chapter is put back, for the round's pages to check
    the round's other commands."""
    cmd = execute_command(job.chapter, profile, job.overrides, force=True)
    record = Path(profile) / "ledger" / f"{job.chapter.stem}.json"
    default = project.build_dir(profile).parent / record

    def run() -> str:
        problem = _child(cmd, job.chapter.stem, folder)
        if problem and default.exists():
            shutil.copy2(default, folder / record)
        elif problem:
            (folder / record).unlink(missing_ok=True)
        return problem

    return Task(f"{job.command.source} ({job.chapter.stem}, {folder.name})", run)


def collect(profile: str, say=print) -> list[Job]:
    """Every command of the README and the exercises prepared at ``profile``, the skipped ones
    said with their reason; a CommandError names those that do not work as shown."""
    readme = readme_commands((project.ROOT / "README.md").read_text())
    jobs, seen, broken = [], {}, []
    for cmd in readme + exercise_commands():
        try:
            job = prepare(cmd, profile, seen)
        except CommandError as exc:
            broken.append(f"{cmd.source}: {cmd.text}: {exc}")
            continue
        if isinstance(job, str):
            say(f"[commands] skip {cmd.source}: {cmd.text or '(no command)'}: {job}")
            continue
        note = f" ({job.note})" if job.note else ""
        say(f"[commands] found {cmd.source}: {shown(cmd.at(profile))}{note}")
        jobs.append(job)
    if broken:
        raise CommandError("commands that do not work as shown:\n" + "\n".join(broken))
    return jobs


RUNS = {
    "all": "every command that can run at smoke",
    "readme": "the README's commands; the exercises' are checked without compute",
    "none": "none; each is checked (valid at its profile and at smoke, as make gives it)",
}


def runs(job: Job, scope: str) -> bool:
    """Whether ``job`` runs in ``scope`` (:data:`RUNS`)."""
    return scope == "all" or (scope == "readme" and job.command.source.startswith("README"))


def headline(problem: str) -> str:
    """A failure's one line: the build's own error line where there is one."""
    lines = [ln.strip() for ln in problem.splitlines() if ln.strip()]
    return next((ln for ln in lines if "error:" in ln), lines[-1] if lines else "failed")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m normbook.tools.doc_commands", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--jobs", type=int, default=0, help="tasks at a time (default: as the build)")
    ap.add_argument("--run", choices=RUNS, default="all", help="; ".join(
        f"{k}: {v}" for k, v in RUNS.items()))  # fmt: skip
    args = ap.parse_args(argv)
    profile = "smoke"
    t0 = time.perf_counter()
    try:
        jobs = collect(profile)
    except CommandError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    checked = [j.command.source for j in jobs if not runs(j, args.run)]
    if checked:
        print(f"[commands] checked without compute (--run {args.run}: {RUNS[args.run]}): "
              + ", ".join(checked))  # fmt: skip
    jobs = [j for j in jobs if runs(j, args.run)]
    if not jobs:
        return 0
    built = project.build_dir(profile)
    if not (built / "ledger").is_dir():
        print(f"error: no {profile} build in {built}: run make smoke first", file=sys.stderr)
        return 2
    base = built / "commands"
    shutil.rmtree(base, ignore_errors=True)  # this step's own folders, from its last run
    tasks, after = make_tasks(jobs, base, profile)
    failed = run_tasks(tasks, args.jobs or default_jobs())
    wall = time.perf_counter() - t0
    print(f"[commands] {len(jobs)} commands, {len(tasks)} tasks at {profile}: {wall:.0f} s "
          f"wall, {len(failed)} failed", flush=True)  # fmt: skip
    for name, problem in failed.items():
        who = f" (after {after[name]})" if name in after else ""
        print(f"error: {name}{who}: {headline(problem)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
