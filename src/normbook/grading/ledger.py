"""The claims ledger's records: every chapter writes the claims and checks it graded, with the
section they come from and the parameters it ran with, to one file per chapter and profile; the
"Claims ledger" page reads them all. Nothing in the ledger is typed: it is what the chapters
executed in this build produced.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import time
from dataclasses import asdict
from numbers import Integral, Real
from pathlib import Path

from normbook.grading.verdicts import HELD, Check, Verdict
from normbook.runtime import cache
from normbook.runtime.params import Params, Spec

FORMAT = 8  # bump when the record's fields change
PROFILE_SCALE = "profile"  # a claim graded on this build's own run (else: a recorded run's scale)

# Missing and infinite numbers, one way in every record, reference and comparison. In memory a
# missing number (NaN: no interval, no p) is None and an infinite one a float infinity (a
# stability distance of infinity: no line a rounding difference could cross; an infinite
# effect). Strict JSON has neither NaN nor infinity: a record or reference writes a missing
# number as null and an infinite one as the string "inf" or "-inf" (:func:`encoded`), and
# reads them back as None and a float infinity (:func:`decoded`). No text field of a record
# is ever exactly "inf" or "-inf".
INFINITIES = {"inf": math.inf, "-inf": -math.inf}


def number(v):
    """A record's number in memory: NaN (missing) as None, anything else (an infinity too) as
    it is."""
    return None if isinstance(v, float) and math.isnan(v) else v


def encoded(obj):
    """``obj`` (a record, a reference) as strict JSON holds it: every NaN null, every infinity
    the string "inf" or "-inf", at any depth."""
    if isinstance(obj, dict):
        return {k: encoded(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [encoded(v) for v in obj]
    if isinstance(obj, Real) and not isinstance(obj, Integral):
        v = float(obj)
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else v
    return obj


def decoded(obj):
    """``obj`` as :func:`encoded` wrote it, read back: "inf" and "-inf" as float infinities
    (null stays None, missing), at any depth."""
    if isinstance(obj, dict):
        return {k: decoded(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [decoded(v) for v in obj]
    return INFINITIES.get(obj, obj) if isinstance(obj, str) else obj


def ledger_dir(profile: str) -> Path:
    """Where the chapters executed at ``profile`` record their claims (beside their notebooks)."""
    return cache.build_root() / profile / "ledger"


def _test_numbers(t) -> dict:
    return {k: number(x) for k, x in asdict(t).items()}


def _late_gain(grade) -> dict | None:
    rise = grade.rising
    return None if rise is None else {k: number(x) for k, x in rise.record().items()}


def _held(g) -> dict:
    """Why the rule held a grade at *not shown* (:data:`.verdicts.HELD`), as the grade says it,
    never read from its text: the quantity may still be moving, no kept states tell, no interval."""
    return {k: getattr(g, k) for k in HELD}


def part_record(name: str, g) -> dict:
    """One part of a claim of parts: its grade and why (and why it was held, :func:`_held`), its
    test's numbers, its late gain."""
    return {"name": name, "verdict": g.verdict, "why": g.why, **_held(g), "p_grade": number(g.p),
            **(_test_numbers(g.test) if g.test is not None else {}),
            "late_gain": _late_gain(g)}  # fmt: skip


def claim_record(v: Verdict, section: str, scale: str = PROFILE_SCALE) -> dict:
    """Everything a ledger row shows, and enough to re-derive its grade: the test's numbers,
    every part's (for a claim of parts), the late gain that decided "may still be rising", why
    the grade was held (:func:`_held`) and each control's evidence. Missing numbers are None,
    infinite ones float infinities (:func:`encoded` writes them as JSON)."""
    t = asdict(v.test)
    return {
        "paper": v.paper,
        "key": v.key,
        "scale": scale,
        "claim": v.claim,
        "paper_says": v.paper_says,
        "verdict": v.verdict,
        "why": v.grade.why,
        **_held(v.grade),
        "p_grade": number(v.grade.p),
        "section": section,
        "unit": v.unit,
        "evidence": v.evidence,
        "sesoi_text": v.sesoi_text(),
        "sesoi_name": v.sesoi.name if v.sesoi else "paper's band",
        "controls": [
            {
                "family": c.family,
                "check": c.check,
                "passed": c.passed,
                "evidence": c.evidence,
                "premise_refuted": c.premise_refuted,
                "premise_key": c.premise_key,
            }
            for c in v.controls
        ],
        **{k: number(x) for k, x in t.items()},
        "refutable": v.grade.refutable,
        "parts": [part_record(name, g) for name, g in v.grade.parts],
        "late_gain": _late_gain(v.grade),
        "code": [list(c) for c in v.code],
    }


def check_record(c: Check, section: str) -> dict:
    return {"paper": c.paper, "check": c.check, "holds": c.holds, "section": section,
            "evidence": c.evidence}  # fmt: skip


def write(chapter: str, profile: str, params: dict, claims: list[dict], checks: list[dict],
          numbers: dict[str, float] | None = None, provenance: list[str] = (),
          overrides: dict | None = None):  # fmt: skip
    """Replace ``chapter``'s record at ``profile`` atomically (a killed run leaves the old one):
    its parameters and those that differ from the profile's (``overrides``: a chapter re-run
    with other parameters grades other claims), graded claims and checks, the raw values of its
    glued numbers, the data it read (provenance lines) and the cache entries it loaded and
    computed so far (whether this run trained or only read the cache: its time is a cold or a
    cached one). The build adds the chapter's code hash and the machine once it has finished
    (:func:`stamp_build`)."""
    folder = ledger_dir(profile)
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "format": FORMAT,
        "chapter": chapter,
        "profile": profile,
        "params": {k: v for k, v in params.items() if k != "profile"},
        "overrides": {k: v for k, v in (overrides or {}).items() if k != "profile"},
        "written": time.strftime("%Y-%m-%d %H:%M:%S"),
        "claims": claims,
        "checks": checks,
        "numbers": dict(numbers or {}),
        "provenance": list(provenance),
        "cache": {
            "loaded": sum(h for _, h, _ in cache.steps_used()),
            "computed": sum(n for _, _, n in cache.steps_used()),
            # which machines computed them (a build that computed nothing still names the
            # machines that made its numbers)
            "machines": cache.machines_used(),
        },
    }
    _write_atomic(folder / f"{chapter}.json", record)


def _write_atomic(path: Path, record: dict) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(encoded(record), f, indent=1, allow_nan=False, default=str)
    os.replace(tmp, path)


def stamp_build(chapter: str, profile: str, code: str, machine: dict) -> None:
    """Add to ``chapter``'s record what only the build knows once the chapter has finished:
    the hash of the code it ran (its source and every library module it imports) and the
    machine that ran it (CPU, the instruction set oneDNN used, versions). A comparison with a
    reference ledger tells a difference made by other code from one made by another machine.
    No record (a page that grades nothing): nothing to add."""
    path = ledger_dir(profile) / f"{chapter}.json"
    if not path.exists():
        return
    record = json.loads(path.read_text())
    _write_atomic(path, {**record, "code": code, "machine": machine})


def read(profile: str, order: list[str] | None = None) -> list[dict]:
    """Every chapter's record at ``profile``, in ``order`` (chapter names) when given, its
    numbers read back as :func:`claim_record` made them (:func:`decoded`)."""
    folder = ledger_dir(profile)
    records = []
    for f in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            rec = decoded(json.loads(f.read_text()))
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"ledger record {f} is not valid JSON ({exc}); re-execute chapter {f.stem} "
                f"or delete the file"
            ) from None
        if rec.get("format") != FORMAT:
            raise ValueError(f"ledger record {f} has an old format; re-execute chapter {f.stem}")
        records.append(rec)
    if order is not None:
        rank = {name: i for i, name in enumerate(order)}
        records = [r for r in records if r["chapter"] in rank]
        records.sort(key=lambda r: rank[r["chapter"]])
    return records


def executed_params(spec: Spec, profile: str) -> Params:
    """The parameters ``spec``'s chapter last ran with at ``profile`` in this build (its record),
    or the profile's values when it has not run: a page that shows another chapter's cached
    networks finds the ones that chapter trained, whatever it was re-executed with."""
    (rec,) = read(profile, [spec.chapter]) or [{"params": {}}]
    return spec.resolve(profile, **rec["params"])


def digest(profile: str) -> str:
    """A hash of every record at ``profile``, all but the time each was written: the pages
    that read them are stale when a claim, a number or a run's provenance changes, not when a
    chapter re-executes to the same record (an edited figure)."""
    h = hashlib.sha256()
    folder = ledger_dir(profile)
    for f in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        record = {k: v for k, v in json.loads(f.read_text()).items() if k != "written"}
        h.update(f.name.encode())
        h.update(json.dumps(record, sort_keys=True).encode())
    return h.hexdigest()[:16]


def forget(chapter: str, profile: str) -> None:
    """Remove ``chapter``'s record at ``profile`` (a chapter starting over records anew)."""
    (ledger_dir(profile) / f"{chapter}.json").unlink(missing_ok=True)
    _figure_text_file(chapter, profile).unlink(missing_ok=True)


def _figure_text_file(chapter: str, profile: str) -> Path:
    return cache.build_root() / profile / "figure_text" / f"{chapter}.json"


def write_figure_text(chapter: str, profile: str, sizes: dict[str, float]) -> None:
    """Record the smallest text of each of ``chapter``'s figures (page pixels, 1280-px window):
    every page writes it, those that read the ledger too."""
    path = _figure_text_file(chapter, profile)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{chapter}.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(sizes, f, indent=1)
    os.replace(tmp, path)


def small_figure_text(profile: str, chapters: list[str], minimum: float) -> list[str]:
    """``chapter: figure (x px)`` for each recorded figure of ``chapters`` whose smallest text
    is under ``minimum`` page pixels."""
    small = []
    for chapter in chapters:
        path = _figure_text_file(chapter, profile)
        sizes = json.loads(path.read_text()) if path.exists() else {}
        small += [f"{chapter}: {name} ({px:.1f} px)" for name, px in sizes.items() if px < minimum]
    return small
