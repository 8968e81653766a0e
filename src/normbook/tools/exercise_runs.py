"""``make exercises``: run the book's exercises (:mod:`normbook.publish.exercises`) and record
what each cost and graded, which its solution then shows.

    python -m normbook.tools.exercise_runs [--only a1-ex-layer,b2-ex-threshold] [--no-training]

Each exercise executes its chapter with its parameters at the profile its text names, as a
sweep executes a grid point (:mod:`normbook.publish.sweep`): in a child process (``build
execute``), into its own build folder ``_build/<profile>/exercises/<label>/`` (its executed
notebook, stamp and ledger record; the book's own pages are untouched), sharing the experiment
cache. Its record, ``outcome.json`` beside them, holds the measured seconds, the machine, the
cache entries the run loaded and computed (its ledger record's counts) and the new entries per
step kind (the cache's folders counted before and after: a ``*_train`` kind means it trained
networks), its claims (verdict, effect, interval) and the default build's claims of the chapter
at that moment (``_build/<profile>/ledger/<chapter>.json``), which the outcome is compared with.
An exercise whose folder is up to date (same parameters, code and data) is not run again.

``--no-training`` runs an exercise only as long as it trains nothing: the moment a training
step takes the lock of an entry it is about to compute (``<cache>/.locks/<kind>_train/``), the
run's processes are stopped, before any network is written to the cache; its record says so.
The exercises that need an edit of the library, or are done in a live view, are never run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from normbook.publish import exercises, project
from normbook.publish.chapter_jobs import RESULT, execute_command
from normbook.publish.exercises import Exercise, exercise_dir
from normbook.runtime import cache
from normbook.runtime.devices import cpu_model, git_commit


def entry_counts(root: Path) -> dict[str, int]:
    """{kind: number of finished entries} in the cache at ``root``."""
    if not root.is_dir():
        return {}
    return {d.name: sum(1 for e in d.iterdir() if (e / "meta.json").exists())
            for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")}  # fmt: skip


def training_locks(root: Path) -> set[str]:
    """The lock files of training steps' entries (taken before an entry is computed)."""
    locks = root / ".locks"
    if not locks.is_dir():
        return set()
    return {f"{d.name}/{f.name}" for d in locks.iterdir() if d.name.endswith("_train")
            for f in d.iterdir()}  # fmt: skip


def _stop_tree(pid: int) -> None:
    """Stop the process ``pid`` and every process it started (the chapter's kernel runs in its
    own session, so a process group would miss it), by their ids."""
    import psutil

    try:
        parent = psutil.Process(pid)
        procs = [*parent.children(recursive=True), parent]
    except psutil.NoSuchProcess:
        return
    for p in procs:
        try:
            p.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(procs, timeout=10)
    for p in alive:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass


def _claims(record: dict | None) -> list[dict] | None:
    if record is None:
        return None
    keys = ("section", "claim", "verdict", "effect", "low", "high", "unit")
    return [{k: c.get(k) for k in keys} for c in record.get("claims", [])]


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def run_exercise(ex: Exercise, no_training: bool = False, say=print) -> dict:
    """Execute one exercise into its folder and write its record (returned)."""
    folder = exercise_dir(ex)
    folder.mkdir(parents=True, exist_ok=True)
    root = cache.cache_root().resolve()
    before, locks_before = entry_counts(root), training_locks(root)
    default = _read_json(project.build_dir(ex.profile) / "ledger" / f"{ex.chapter}.json")
    env = {**os.environ, "NORMBOOK_BUILD_DIR": str(folder.resolve()),
           "NORMBOOK_CACHE": str(root)}  # fmt: skip
    cmd = execute_command(ex.path, ex.profile, ex.values())
    say(f"[{ex.label}] {' '.join(cmd[2:])}")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            bufsize=1, cwd=project.ROOT, env=env)  # fmt: skip
    stopped: list[str] = []
    done = threading.Event()

    def guard() -> None:  # --no-training: stop the run at its first training lock
        while not done.wait(0.5):
            new = training_locks(root) - locks_before
            if new:
                stopped.extend(sorted(new))
                say(f"[{ex.label}] it started training ({', '.join(sorted(new))}): stopping it")
                _stop_tree(proc.pid)
                return

    watcher = threading.Thread(target=guard, daemon=True) if no_training else None
    if watcher:
        watcher.start()
    seconds, tail = None, []
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip("\n")
        if line.startswith(RESULT):
            value = line[len(RESULT) :].strip()
            seconds = None if value == "none" else float(value)
        elif line.strip():
            tail = (tail + [line])[-20:]
            say(f"[{ex.label}] {line}")
    code = proc.wait()
    done.set()
    if watcher:
        watcher.join()
    wall = time.perf_counter() - t0
    old = exercises.read_outcome(ex)
    if code == 0 and seconds is None and old and old.get("status") == "done":
        return old  # up to date: the record of the run that made it stands
    point = _read_json(folder / ex.profile / "ledger" / f"{ex.chapter}.json")
    after = entry_counts(root)
    record = {
        "label": ex.label, "chapter": ex.chapter, "profile": ex.profile,
        "overrides": ex.values(), "commit": git_commit(short=True),
        "status": "stopped" if stopped else "failed" if code else
                  "done" if seconds is not None else "up to date",
        "error": "" if code == 0 or stopped else "\n".join(tail[-6:]),
        "stopped_at": stopped,
        "seconds": round(seconds, 1) if seconds is not None else None,
        "wall": round(wall, 1),
        "cpu": cpu_model(), "cores": os.cpu_count(),
        "measured": time.strftime("%Y-%m-%d %H:%M:%S"),
        "cache": (point or {}).get("cache") if code == 0 else None,
        "new_entries": {k: n - before.get(k, 0) for k, n in after.items() if n > before.get(k, 0)},
        "claims": _claims(point) if code == 0 else None,
        "default": _claims(default),
    }  # fmt: skip
    project.write_atomic(folder / "outcome.json", json.dumps(record, indent=1))
    return record


def selected(only: str | None) -> list[Exercise]:
    """The runnable exercises, or those named (comma-separated labels)."""
    if not only:
        return [ex for ex in exercises.EXERCISES if ex.runnable]
    names = [s.strip() for s in only.split(",") if s.strip()]
    unknown = [n for n in names if n not in exercises.BY_LABEL]
    if unknown:
        raise SystemExit(f"error: unknown exercise(s) {', '.join(unknown)}; exercises: "
                         + ", ".join(exercises.BY_LABEL))  # fmt: skip
    chosen = [exercises.BY_LABEL[n] for n in names]
    edits = [ex.label for ex in chosen if ex.edit]
    if edits:
        raise SystemExit(f"error: {', '.join(edits)} need an edit of the library; no command "
                         f"runs them")  # fmt: skip
    in_page = [ex.label for ex in chosen if ex.live]
    if in_page:
        raise SystemExit(f"error: {', '.join(in_page)} are done in a chapter's live view, in "
                         f"the browser; no command runs them")  # fmt: skip
    return chosen


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m normbook.tools.exercise_runs", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--only", help="comma-separated exercise labels (default: every runnable one)")
    ap.add_argument("--no-training", action="store_true",
                    help="stop any exercise that starts training a network")  # fmt: skip
    ap.add_argument("--no-render", action="store_true", help="do not rebuild the book's HTML")
    args = ap.parse_args(argv)
    chosen = selected(args.only)
    records = []
    for ex in chosen:
        rec = run_exercise(ex, no_training=args.no_training)
        records.append(rec)
        print(
            f"[exercise] {ex.label}: {rec['status']}, {rec['seconds']} s, "
            f"{exercises.trained_words(rec) if rec['status'] == 'done' else ''}",
            flush=True,
        )
    if not args.no_render:
        profiles = {ex.profile for ex in chosen}
        for profile in sorted(profiles):
            if any(project.is_executed(ch, profile) for ch in project.chapters()):
                from normbook.publish.site import render

                render(profile, partial=True)
    failed = [r["label"] for r in records if r["status"] == "failed"]
    if failed:
        print(f"[exercise] failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
