"""Each chapter's last measured execution time per profile (``_build/<profile>/timings.json``),
kept across warm rebuilds, and the table ``make book`` prints at its end.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .devices import cpu_model
from .project import build_dir, write_atomic


def _timings_file(profile: str) -> Path:
    return build_dir(profile) / "timings.json"


def load_timings(profile: str) -> dict:
    """{chapter: {"seconds", "measured", "cpu"}}: each chapter's last measured execution (a
    chapter that was up to date keeps the time of the run that made it)."""
    f = _timings_file(profile)
    try:
        data = json.loads(f.read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict) and "seconds" in v}


def record_timing(profile: str, chapter: str, seconds: float | None) -> None:
    """Keep ``chapter``'s execution time when it executed (``seconds`` not None)."""
    if seconds is None:
        return
    timings = load_timings(profile)
    _timings_file(profile).parent.mkdir(parents=True, exist_ok=True)
    timings[chapter] = {"seconds": round(seconds, 1), "cpu": cpu_model(), "cores": os.cpu_count(),
                        "measured": time.strftime("%Y-%m-%d %H:%M:%S")}  # fmt: skip
    write_atomic(_timings_file(profile), json.dumps(timings, indent=1))


def timings_table(profile: str, stems: list[str]) -> str:
    """The chapters' last measured execution times, with the machine and when."""
    timings = load_timings(profile)
    rows = [f"[timings] last measured execution per chapter ({profile}):"]
    total = 0.0
    for stem in stems:
        t = timings.get(stem)
        if t is None:
            rows.append(f"  {stem:<22} never measured here")
            continue
        total += t["seconds"]
        rows.append(f"  {stem:<22} {t['seconds']:>8.1f} s  {t['measured']}  {t['cpu']}, "
                    f"{t['cores']} cores")  # fmt: skip
    rows.append(f"  {'total':<22} {total:>8.1f} s ({total / 60:.1f} min)")
    return "\n".join(rows)
