"""Chapters executed side by side: ``make book`` on a machine with cores to spare runs
``jobs`` chapters at once, each in its own process (its kernel and its workers), so that one
chapter's serial phases (evaluation, analyses, figures) overlap another's training.

Results do not change: every cached experiment is computed once whichever chapter asks first
(the cache's entry locks make a second asker wait for it, :mod:`.cache`), and a chapter's
numbers do not depend on how many processes it has. Chapters of different papers alternate in
the queue, since chapters of one paper share networks and would wait on each other, and the
chapters with the most planned compute start first (:func:`queue`), so that no long chapter
starts last and runs alone on cores the others have left. The console shows each chapter's
lines prefixed with its name.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from normbook.publish import project
from normbook.publish.project import BuildError, spec_for

RESULT = "[chapter-seconds]"  # the last line a child prints: its seconds, or "none"


def default_jobs() -> int:
    """Three chapters at once wherever there are two cores or more (each uses every core for
    its workers; the first in the queue runs at full priority, the others share what it
    leaves), else one. Cold `cpu` builds on 2 Zen 3 cores (2026-12-07): with two, the chapters
    used 177 % of the cores (8,412 CPU s in 79.2 min); with three, 187 % (7,249 CPU s in 64.8
    min, with other parameters too). A chapter that waits for networks another is training
    holds its place idle, and a third keeps the cores busy meanwhile."""
    return 3 if (os.cpu_count() or 1) >= 2 else 1


def interleaved(chs: list[Path]) -> list[Path]:
    """The chapters with the papers alternating (TOC order within each paper): A1, B1, A2, ..."""
    lanes: dict[tuple, list[Path]] = {}
    for ch in chs:
        lanes.setdefault(project.papers(ch), []).append(ch)
    queues = list(lanes.values())
    out = []
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def planned_flops(ch: Path, profile: str) -> float:
    """The chapter's planned training and evaluation compute (its spec's ``plan``; 0 for a
    chapter that analyses another's networks)."""
    spec = spec_for(ch)
    return sum(i.flops for i in spec.planned(spec.resolve(profile)))


def queue(chs: list[Path], profile: str) -> list[Path]:
    """The side-by-side queue: by planned compute, largest first (a cold build's longest
    chapter must not start last: measured on the `cpu` book, the last one ran alone for
    13 of its 58 minutes), ties in :func:`interleaved` order; the second the largest of
    another paper's chapters."""
    order = interleaved(chs)
    cost = {ch: planned_flops(ch, profile) for ch in order}
    order = sorted(order, key=lambda ch: -cost[ch])
    # the second to start must share no networks with the first (another paper): B1 beside B4
    # waited 15 of its 16 minutes for the networks B4 was training (measured 2026-12-07)
    first = set(project.papers(order[0])) if order else set()
    other = [ch for ch in order[1:] if first.isdisjoint(project.papers(ch))]
    if len(order) > 2 and other and other[0] != order[1]:
        order.remove(other[0])
        order.insert(1, other[0])
    return order


def execute_command(ch: Path, profile: str, overrides: dict | None = None, force: bool = False):
    """The command line that executes one chapter in a child process (``build execute``)."""
    cmd = [sys.executable, "-m", "normbook.publish.build", "execute", str(ch), "--profile", profile]
    for k, v in (overrides or {}).items():
        cmd += ["-p", k, ",".join(map(str, v)) if isinstance(v, list) else str(v)]
    return cmd + (["--force"] if force else [])


def _child_command(ch: Path, profile: str, force: bool) -> list[str]:
    return execute_command(ch, profile, force=force)


@dataclass
class ChildRun:
    returncode: int
    seconds: float | None  # what the chapter reported (None: it was up to date)
    tail: list[str]  # its last lines, for an error message
    peak_rss_gb: float  # the largest process of its tree (wait4's maximum resident set)
    cpu_s: float = 0.0  # CPU seconds of its tree: itself, its kernel and their workers (wait4)


# The niceness of every chapter but the first in the queue (the one with the most planned
# compute, whose run is the build's critical path): the scheduler gives the first one the cores
# it asks for, and the others the rest, including every core the first leaves idle in its
# serial phases. Without it the longest chapter got about half the cores while the others ran:
# in a cold `cpu` build of 2026-12-07, B4 (beside A3, A5, A1 and A4 in turn, each with a worker
# per core) had not finished after 68 minutes, where the whole book's CPU seconds fill 2 cores
# for about 58. The numbers do not change (one thread per process).
NICE_OTHERS = 10


def run_child(
    cmd: list[str], name: str, say=print, env: dict | None = None, nice: int = 0
) -> ChildRun:
    """Run one chapter's child process (at ``nice``, which its kernel and workers inherit),
    relaying its lines prefixed ``[name]``."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            bufsize=1, cwd=project.ROOT, env=env,
                            preexec_fn=(lambda: os.nice(nice)) if nice else None)  # fmt: skip
    seconds: float | None = None
    tail: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip("\n")
        if not line.strip():  # papermill's blank separators, unreadable when interleaved
            continue
        if line.startswith(RESULT):
            value = line[len(RESULT) :].strip()
            seconds = None if value == "none" else float(value)
            continue
        tail = (tail + [line])[-40:]
        say(f"[{name}] {line}")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime  # with every descendant it waited for
    return ChildRun(proc.returncode, seconds, tail, usage.ru_maxrss / 2**20, cpu)


def _run_child(ch: Path, profile: str, force: bool, say, nice: int = 0) -> ChildRun:
    run = run_child(_child_command(ch, profile, force), ch.stem, say, nice=nice)
    if run.returncode != 0:
        raise BuildError(f"{ch.relative_to(project.ROOT)} failed:\n" + "\n".join(run.tail))
    return run


def run_side_by_side(
    chs: list[Path], profile: str, force: bool, jobs: int
) -> Iterator[tuple[Path, float | None, float]]:
    """Yield ``(chapter, seconds or None if up to date, CPU seconds of its processes)`` as
    chapters finish, ``jobs`` at a time. After a failure no new chapter starts; the running
    ones finish, then the first failure is raised."""
    lock = threading.Lock()

    def say(text: str) -> None:
        with lock:
            print(text, flush=True)

    failures: list[BuildError] = []
    stop = threading.Event()

    def job(ch: Path, nice: int) -> ChildRun | None:
        if stop.is_set():
            return None
        try:
            return _run_child(ch, profile, force, say, nice)
        except BuildError:
            stop.set()
            raise

    order = queue(chs, profile)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(job, ch, NICE_OTHERS if i else 0): ch for i, ch in enumerate(order)}
        for fut in as_completed(futures):
            try:
                run = fut.result()  # None: not started, after another chapter's failure
                yield futures[fut], run.seconds if run else None, run.cpu_s if run else 0.0
            except BuildError as exc:
                failures.append(exc)
    if failures:
        raise failures[0]
