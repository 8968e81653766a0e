"""Each chapter's measured execution times per profile (``_build/<profile>/timings.json``), kept
across rebuilds, and the table ``make book`` prints at its end.

A chapter keeps two runs: its last *cold* one (it computed cache entries: trained networks, ran
evaluations or analyses) and its last *cached* one (it computed nothing, every entry loaded).
Which one a run was is read from the chapter's claims-ledger record, which counts the cache
entries the run loaded and computed (:func:`normbook.grading.ledger.write`). A page that writes no
record (the pages built from every chapter's record: intro, claims ledger, Methods) trains
nothing, so its runs count as cached. The chapter pages state both times (:mod:`.costs`).

File format 2: ``{"format": 2, "chapters": {chapter: {"cold": run, "cached": run}}}``, each run
``{"seconds", "computed", "loaded", "cpu", "cores", "measured"}`` and, where measured,
``"cpu_s"``: the CPU seconds of the chapter's processes (its kernel and workers, all cores). The
file before it (format 1,
``{chapter: {"seconds", "cpu", "cores", "measured"}}``, each chapter's last run whatever it
computed) is read as runs of kind ``"unknown"``; a chapter's unknown run is dropped once it has
both a cold and a cached run measured. Beside the chapters, ``"builds"`` keeps the whole book's
last cold and last cached execution (:func:`record_build`), each ``{"seconds", "chapters",
"computed", "jobs", "cpu", "cores", "measured"}`` and ``"cpu_s"``, its chapters' summed.
"""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

from normbook.publish.project import build_dir, write_atomic
from normbook.runtime.devices import cpu_model

FORMAT = 2
KINDS = ("cold", "cached", "unknown")  # unknown: a format-1 entry, cold or cached not recorded


def duration(seconds: float) -> str:
    """A measured time as a page states it: "45 s", "5 min 27 s", "41 min", "1 h 12 min"."""
    s = round(seconds)
    if s < 60:
        return f"{max(s, 1)} s"
    if s < 600:
        m, r = divmod(s, 60)
        return f"{m} min" + (f" {r} s" if r else "")
    m = round(seconds / 60)
    return f"{m} min" if m < 60 else f"{m // 60} h {m % 60:02d} min"


def machine(run: dict) -> str:
    """The machine of a measured run: its CPU model and its cores."""
    cores = run.get("cores")
    return f"{run.get('cpu', 'an unrecorded CPU')}" + (f", {cores} cores" if cores else "")


NOT_MEASURED = "not measured on this machine yet (`make book` measures it)"


def _timings_file(profile: str) -> Path:
    return build_dir(profile) / "timings.json"


def _valid(run) -> bool:
    return isinstance(run, dict) and isinstance(run.get("seconds"), (int, float))


def migrate(data: dict) -> dict[str, dict[str, dict]]:
    """The chapters' runs from a timings file of either format (format 1: each entry becomes
    the chapter's run of kind ``"unknown"``)."""
    if data.get("format") == FORMAT:
        chapters = data.get("chapters") or {}
        return {ch: {k: r for k, r in runs.items() if k in KINDS and _valid(r)}
                for ch, runs in chapters.items() if isinstance(runs, dict)}  # fmt: skip
    return {ch: {"unknown": run} for ch, run in data.items() if _valid(run)}


def _load_file(profile: str) -> dict:
    try:
        data = json.loads(_timings_file(profile).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load_timings(profile: str) -> dict[str, dict[str, dict]]:
    """{chapter: {"cold": run, "cached": run, "unknown": run}}, each kind present when measured
    (a chapter that was up to date keeps the runs that made it)."""
    return migrate(_load_file(profile))


def load_builds(profile: str) -> dict[str, dict]:
    """{"cold": run, "cached": run}: the whole book's last execution of each kind, when
    measured (:func:`record_build`)."""
    data = _load_file(profile)
    builds = data.get("builds") if data.get("format") == FORMAT else None
    return {k: r for k, r in (builds or {}).items() if k in ("cold", "cached") and _valid(r)}


def _write(profile: str, timings: dict, builds: dict) -> None:
    data = {"format": FORMAT, "chapters": timings, **({"builds": builds} if builds else {})}
    _timings_file(profile).parent.mkdir(parents=True, exist_ok=True)
    write_atomic(_timings_file(profile), json.dumps(data, indent=1))


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that ended and were waited for."""
    own, children = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                     resource.RUSAGE_CHILDREN))  # fmt: skip
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _machine() -> dict:
    return {"cpu": cpu_model(), "cores": os.cpu_count(),
            "measured": time.strftime("%Y-%m-%d %H:%M:%S")}  # fmt: skip


def record_build(
    profile: str, seconds: float, kinds: dict[str, str | None], jobs: int
) -> str | None:
    """Keep the wall time of a build that executed every chapter (``kinds``: {chapter: what
    :func:`record_timing` returned}, None for one that was up to date): as the book's cold
    execution when some chapter computed cache entries, else as its execution from the cache.
    A build that left any chapter as it was is neither; returns the kind recorded."""
    if not kinds or None in kinds.values():
        return None
    kind = "cold" if "cold" in kinds.values() else "cached"
    timings = load_timings(profile)
    runs = [timings.get(ch, {}).get(k, {}) for ch, k in kinds.items()]
    computed = sum(r.get("computed", 0) for r in runs)
    builds = load_builds(profile)
    builds[kind] = {"seconds": round(seconds, 1), "chapters": len(kinds), "jobs": jobs,
                    "computed": computed, **_machine()}  # fmt: skip
    if all("cpu_s" in r for r in runs):
        builds[kind]["cpu_s"] = round(sum(r["cpu_s"] for r in runs), 1)
    _write(profile, timings, builds)
    return kind


def run_cache_counts(profile: str, chapter: str, seconds: float) -> dict[str, int] | None:
    """{"loaded", "computed"}: the cache entries of the chapter's run that just ended, from its
    ledger record; None when the chapter has no record written by that run (a page built from
    the others' records writes none)."""
    from normbook.grading.ledger import ledger_dir

    path = ledger_dir(profile) / f"{chapter}.json"
    try:
        if path.stat().st_mtime < time.time() - seconds - 5:  # an older run's record
            return None
        counts = json.loads(path.read_text()).get("cache")
    except (OSError, ValueError):
        return None
    if not isinstance(counts, dict):
        return None
    return {k: int(counts.get(k) or 0) for k in ("loaded", "computed")}


def record_timing(
    profile: str,
    chapter: str,
    seconds: float | None,
    counts: dict[str, int] | None = None,
    cpu_s: float | None = None,
) -> str | None:
    """Keep ``chapter``'s execution time when it executed (``seconds`` not None), as its cold
    run when it computed cache entries, else as its cached run. ``counts`` ({"loaded",
    "computed"}): default, read from the record the run wrote. ``cpu_s``: the CPU seconds its
    processes used. Returns the kind recorded."""
    if seconds is None:
        return None
    if counts is None:
        counts = run_cache_counts(profile, chapter, seconds) or {"loaded": 0, "computed": 0}
    kind = "cold" if counts.get("computed", 0) > 0 else "cached"
    timings = load_timings(profile)
    runs = timings.setdefault(chapter, {})
    runs[kind] = {
        "seconds": round(seconds, 1),
        "computed": int(counts.get("computed", 0)),
        "loaded": int(counts.get("loaded", 0)),
        **_machine(),
        **({"cpu_s": round(cpu_s, 1)} if cpu_s is not None else {}),
    }
    if "cold" in runs and "cached" in runs:
        runs.pop("unknown", None)
    _write(profile, timings, load_builds(profile))
    return kind


def _cell(run: dict | None, kind: str) -> str:
    if run is None:
        return f"{kind} -"
    extra = f", {run['computed']} computed" if kind == "cold" else ""
    extra += f", {run['cpu_s']:.0f} CPU s" if "cpu_s" in run else ""
    return f"{kind} {run['seconds']:.1f} s ({run.get('measured', '?')}{extra})"


def timings_table(profile: str, stems: list[str]) -> str:
    """The chapters' last cold and last cached execution times, with the machine and when."""
    timings = load_timings(profile)
    rows = [f"[timings] per chapter ({profile}): the last run that computed cache entries "
            f"(cold) and the last that loaded them all (cached):"]  # fmt: skip
    totals = dict.fromkeys(KINDS, 0.0)
    for stem in stems:
        runs = timings.get(stem)
        if not runs:
            rows.append(f"  {stem:<22} never measured here")
            continue
        for kind, run in runs.items():
            totals[kind] += run["seconds"]
        machine = next(iter(runs.values()))
        cells = [_cell(runs.get(k), k) for k in ("cold", "cached")]
        if "unknown" in runs:
            cells.append(_cell(runs["unknown"], "cold or cached"))
        rows.append(f"  {stem:<22} {' | '.join(cells)}  {machine['cpu']}, "
                    f"{machine['cores']} cores")  # fmt: skip
    names = {"unknown": "cold or cached"}
    total = ", ".join(f"{names.get(k, k)} {v:.1f} s ({v / 60:.1f} min)"
                      for k, v in totals.items() if v)  # fmt: skip
    rows.append(f"  {'total':<22} {total or '-'}")
    return "\n".join(rows)
