"""The reference ledger and every build's comparison with it.

A reference ledger (``results/<profile>/ledger.json``, committed; ``make reference`` writes it
from the last build, :mod:`normbook.tools.reference`) keeps every claim's final and own-level
verdict, effect, interval, p-values, units and stability (:mod:`normbook.grading.stability`),
every check's outcome, and the build's provenance: the commit, each chapter's code hash and
parameters, the machine that executed it, and the machines (CPU, instruction sets, threads,
versions) that computed the cache entries its numbers came from. Every build compares its own
ledger with it, claim by claim (matched by key, never by wording), and says why a claim
differs: earlier code (the chapter's code hash differs from the reference's), other parameters
(a chapter re-run with its own), and where code and parameters are the same, what the entries
record: another machine, other library versions, or no recorded difference.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from normbook.grading import ledger
from normbook.grading.stability import distance_text
from normbook.grading.verdicts import NOT_SHOWN
from normbook.runtime import cache
from normbook.runtime.devices import machine_text, origin_text  # noqa: F401 - as named here

FORMAT = 1  # bump when the reference's fields change
RESULTS = cache.REPO_ROOT / "results"
COMMAND = "make reference"
# a claim's numbers that the reference keeps (the row's own fields, after the adjustment)
CLAIM_FIELDS = ("paper", "key", "scale", "section", "claim", "verdict", "graded", "effect", "low",
                "high", "p", "p_refute", "p_grade", "p_adjusted", "level", "n", "sesoi", "unit",
                "stability", "line", "near_line")  # fmt: skip
# effects that agree to this relative tolerance are the same number (a last-bit difference in
# an analysis of the same networks, say); beyond it the effect differs
SAME_EFFECT = 1e-9

MACHINE, EARLIER_CODE, OTHER_PARAMS, NOT_RUN = (
    "the machine", "earlier code", "other parameters", "not executed in this build")  # fmt: skip
# Where code and parameters are the same, what the cache entries' own records say of the rest:
# another library version on the same machine, no recorded difference at all, or a side whose
# entries record no machine (a reference made before entries recorded one).
VERSIONS, SAME_ORIGIN, UNRECORDED = (
    "library versions", "no recorded difference (same code, parameters, machines and versions)",
    "the machine or versions (the entries record none)")  # fmt: skip
ORIGIN_CAUSES = (MACHINE, VERSIONS, SAME_ORIGIN, UNRECORDED)


def path(profile: str) -> Path:
    return RESULTS / profile / "ledger.json"


def claim_id(c: dict) -> str:
    """A claim's identity across builds: its key, at its scale (the profile's own run or a
    recorded paper-scale run)."""
    return f"{c['key'] or c['claim']}@{c.get('scale', 'profile')}"


def snapshot(recs: list[dict], profile: str, provenance: dict) -> dict:
    """The reference made of ``recs`` (records with their final verdicts,
    :func:`normbook.book_pages.ledger.final`) and the build's ``provenance``, its numbers as a
    record's (a missing one None, an infinite one a float infinity: :func:`.ledger.number`).
    Every claim must have an identity of its own."""
    claims, seen = [], set()
    for r in recs:
        for c in r["claims"]:
            cid = claim_id(c)
            if cid in seen:
                raise ValueError(f"two claims share the identity {cid!r}: give each a key")
            seen.add(cid)
            claims.append({"chapter": r["chapter"],
                           **{k: ledger.number(c.get(k)) for k in CLAIM_FIELDS}})  # fmt: skip
    return {
        "format": FORMAT,
        "profile": profile,
        "provenance": provenance,
        "chapters": {
            r["chapter"]: {
                **{k: r.get(k) for k in ("code", "params", "machine", "written")},
                # the machines that computed the entries its numbers came from
                "computed_by": (r.get("cache") or {}).get("machines"),
            }
            for r in recs
        },  # fmt: skip
        "claims": claims,
        "checks": [
            {"chapter": r["chapter"], "check": k["check"], "holds": k["holds"]}
            for r in recs
            for k in r["checks"]
        ],  # fmt: skip
    }


def dumps(ref: dict) -> str:
    """The reference as committed: strict JSON, one field a line, a missing number null and an
    infinite one "inf" or "-inf", as in a ledger record (:func:`.ledger.encoded`)."""
    return json.dumps(ledger.encoded(ref), indent=1, allow_nan=False, default=str) + "\n"


def loads(text: str) -> dict:
    """A reference read back (:func:`.ledger.decoded`): "inf" a float infinity. One written
    before infinities were kept wrote a row with no line (stability infinity) as null, beside
    ``near_line`` false (a failed control's null has ``near_line`` null): read as infinity."""
    ref = ledger.decoded(json.loads(text))
    for c in ref.get("claims", []) if isinstance(ref, dict) else []:
        if isinstance(c, dict) and c.get("stability", 0) is None and c.get("near_line") is False:
            c["stability"] = math.inf
    return ref


def problems(ref: dict) -> list[str]:
    """What is wrong with a reference's shape (empty: nothing)."""
    out = []
    if not isinstance(ref, dict) or ref.get("format") != FORMAT:
        return [f"format is {ref.get('format') if isinstance(ref, dict) else ref!r}, not {FORMAT}"]
    for name in ("profile", "provenance", "chapters", "claims", "checks"):
        if name not in ref:
            out.append(f"no {name!r}")
    for i, c in enumerate(ref.get("claims", [])):
        missing = [k for k in ("chapter", *CLAIM_FIELDS) if k not in c]
        if missing:
            out.append(f"claim {i} has no {', '.join(missing)}")
    for name, ch in ref.get("chapters", {}).items():
        if not ch.get("code") or not isinstance(ch.get("params"), dict):
            out.append(f"chapter {name} has no code hash or parameters")
    prov = ref.get("provenance", {})
    for k in ("commit", "date", "machine"):
        if k not in prov:
            out.append(f"provenance has no {k!r}")
    return out


def load(profile: str) -> dict | None:
    """The committed reference at ``profile`` (None: there is none); one-line errors for a
    damaged one."""
    return load_file(path(profile))


def load_file(f: Path) -> dict | None:
    """The reference ledger in file ``f`` (None: no such file), checked (:func:`problems`)."""
    if not f.exists():
        return None
    try:
        ref = loads(f.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"reference ledger {f} is not valid JSON ({exc}); `{COMMAND}` "
                         "rewrites it") from None  # fmt: skip
    bad = problems(ref)
    if bad:
        raise ValueError(f"reference ledger {f}: {bad[0]}; `{COMMAND}` rewrites it")
    return ref


@dataclass(frozen=True)
class Difference:
    """A claim whose verdict or effect differs from the reference's, or that one side lacks."""

    chapter: str
    ident: str
    section: str
    claim: str
    kind: str  # "verdict", "effect", "missing" (in the reference only), "new" (this build only)
    cause: str  # EARLIER_CODE, OTHER_PARAMS, NOT_RUN, or one of ORIGIN_CAUSES
    ref: dict | None  # the reference's row
    this: dict | None  # this build's row

    @property
    def flagged(self) -> bool | None:
        """Whether either side flagged the row near its line (None: neither could say)."""
        flags = [r.get("near_line") for r in (self.ref, self.this) if r]
        return True if any(flags) else (None if all(f is None for f in flags) else False)


@dataclass
class Comparison:
    """A build's ledger against the reference's."""

    ref: dict
    compared: int = 0  # claims both have, in chapters run with the reference's parameters
    agree: int = 0  # of those, with the same final verdict
    identical: int = 0  # of those, with the same effect to SAME_EFFECT
    differences: list[Difference] = field(default_factory=list)
    chapters: dict[str, str] = field(default_factory=dict)  # chapter -> the cause, where not same
    overrides: dict[str, dict] = field(default_factory=dict)  # chapter -> its re-run parameters
    machines: list[dict] = field(default_factory=list)  # this build's machines (one, normally)
    # chapter -> what its entries' records say where code and parameters are the same
    origin: dict[str, str] = field(default_factory=dict)
    versions: dict[str, list[str]] = field(default_factory=dict)  # chapter -> version changes
    entry_machines: dict[str, list] = field(default_factory=dict)  # chapter -> this build's

    def of(self, kind: str) -> list[Difference]:
        return [d for d in self.differences if d.kind == kind]


def _same_effect(a, b) -> bool:
    """Whether two effects are the same number: both missing, the same infinity, or finite and
    within ``SAME_EFFECT`` of each other."""
    if a is None or b is None:
        return a is None and b is None
    if not (math.isfinite(a) and math.isfinite(b)):
        return a == b
    return abs(a - b) <= SAME_EFFECT * max(1.0, abs(a), abs(b))


def chapter_cause(rec: dict | None, ref_chapter: dict) -> str | None:
    """Why a chapter's claims may differ from the reference's other than by the machine: not
    run, run with other parameters, or run with other code (None: same code and parameters)."""
    if rec is None:
        return NOT_RUN
    if (
        rec.get("overrides")
        or json.loads(json.dumps(rec["params"], default=str)) != (ref_chapter["params"])
    ):
        return OTHER_PARAMS
    if rec.get("code") != ref_chapter["code"]:
        return EARLIER_CODE
    return None


def _entry_machines(machines) -> list[dict] | None:
    """The machines of a side's cache entries (None: some entries, or the side, record none)."""
    found = [m.get("machine") for m in machines or []]
    return found if found and all(found) else None


def origin_cause(rec: dict, ref_chapter: dict) -> tuple[str, list[str]]:
    """For a chapter run with the reference's code and parameters, what differs in where its
    numbers were computed, from the machines its cache entries record on each side: the
    machine (another CPU, instruction set, pin or thread count), library versions (listed), or
    nothing recorded. Where a side's entries record no machine, the executing machines are
    compared instead (another one: the machine; the same: unrecorded)."""
    from normbook.runtime.devices import same_machine, version_changes

    mine = _entry_machines((rec.get("cache") or {}).get("machines"))
    theirs = _entry_machines(ref_chapter.get("computed_by"))
    if mine is None or theirs is None:
        a, b = rec.get("machine"), ref_chapter.get("machine")
        return (MACHINE if a and b and not same_machine(a, b) else UNRECORDED), []
    if any(not any(same_machine(a, b) for b in theirs) for a in mine) or any(
            not any(same_machine(a, b) for a in mine) for b in theirs):  # fmt: skip
        return MACHINE, []
    changes = sorted({c for a in mine for b in theirs if same_machine(a, b)
                      for c in version_changes(b, a)})  # fmt: skip
    return (VERSIONS, changes) if changes else (SAME_ORIGIN, [])


def compare(recs: list[dict], ref: dict) -> Comparison:
    """This build's ``recs`` (final verdicts) claim by claim against the reference ``ref``."""
    out = Comparison(ref)
    by_chapter = {r["chapter"]: r for r in recs}
    out.entry_machines = {r["chapter"]: (r.get("cache") or {}).get("machines") for r in recs}
    mine = {claim_id(c): (r["chapter"], c) for r in recs for c in r["claims"]}
    out.machines = [m for m in {json.dumps(r["machine"], sort_keys=True): r["machine"]
                                for r in recs if r.get("machine")}.values()]  # fmt: skip
    for name, ch in ref["chapters"].items():
        cause = chapter_cause(by_chapter.get(name), ch)
        if cause:
            out.chapters[name] = cause
        else:
            out.origin[name], changes = origin_cause(by_chapter[name], ch)
            if changes:
                out.versions[name] = changes
        if cause == OTHER_PARAMS:
            rec = by_chapter[name]
            out.overrides[name] = rec.get("overrides") or {
                k: v for k, v in rec["params"].items() if ch["params"].get(k) != v}  # fmt: skip
    theirs = {claim_id(c): c for c in ref["claims"]}
    for cid, rc in theirs.items():
        cause = out.chapters.get(rc["chapter"]) or out.origin.get(rc["chapter"], UNRECORDED)
        if cause in (OTHER_PARAMS, NOT_RUN):
            continue  # not graded the reference's way in this build: nothing to compare
        found = mine.get(cid)
        if found is None:
            out.differences.append(Difference(rc["chapter"], cid, rc["section"], rc["claim"],
                                              "missing", cause, rc, None))  # fmt: skip
            continue
        c = found[1]
        out.compared += 1
        if c["verdict"] != rc["verdict"]:
            out.differences.append(Difference(rc["chapter"], cid, c["section"], c["claim"],
                                              "verdict", cause, rc, c))  # fmt: skip
            continue
        out.agree += 1
        if _same_effect(c.get("effect"), rc.get("effect")):
            out.identical += 1
        else:
            out.differences.append(Difference(rc["chapter"], cid, c["section"], c["claim"],
                                              "effect", cause, rc, c))  # fmt: skip
    for cid, (chapter, c) in mine.items():
        if cid not in theirs and out.chapters.get(chapter) != OTHER_PARAMS:
            cause = out.chapters.get(chapter) or out.origin.get(chapter, UNRECORDED)
            out.differences.append(Difference(chapter, cid, c["section"], c["claim"], "new",
                                              cause, None, c))  # fmt: skip
    return out


def short_verdict(v: str | None) -> str:
    return "–" if v is None else ("not shown" if v == NOT_SHOWN else v)


# ----------------------------------------------------------------------------- in words


def reference_text(ref: dict) -> str:
    """``AMD EPYC (...), oneDNN on Intel AVX2, 2026-12-06, commit 1234abcd``."""
    prov = ref["provenance"]
    return f"{machine_text(prov['machine'])}, {prov['date']}, commit {prov['commit'][:10]}"


def _effect(row: dict | None) -> str:
    if row is None:
        return "–"
    from normbook.grading.verdicts import effect_interval

    return effect_interval({**row, "unit": row.get("unit") or ".3g"})


def short_claim(claim: str, n: int = 90) -> str:
    """A claim's text cut at a word to at most ``n`` characters, its table separators escaped."""
    text = claim if len(claim) <= n else claim[: n - 1].rsplit(" ", 1)[0] + " …"
    return text.replace("|", "\\|")


# why a comparison table shows a dash (pages.fmt.table's footnote)
DASHES = {"reference": "the reference has no such claim",
          "this build": "this build has no such claim",
          "from its line (reference / here)": "no distance: a failed positive control, a "
          "refuted premise, or a side without the claim"}  # fmt: skip


def _flag(row: dict | None) -> str:
    """A side's distance from its line, in the ledger page's words (:func:`.distance_text`)."""
    if row is None:
        return "–"
    return distance_text(row.get("stability")) + (" (near its line)" if row.get("near_line")
                                                  else "")  # fmt: skip


def sentence(cmp: Comparison | None, profile: str) -> str:
    """The comparison in one paragraph: how many claims give the reference's verdict, against
    which machine and date; each chapter that ran other code or parameters; whether every
    claim that differs was flagged near its line. With no reference, the command that makes
    one."""
    if cmp is None:
        return (f"**Against the reference.** No reference ledger for the `{profile}` profile "
                f"(`results/{profile}/ledger.json`): `{COMMAND}` writes one from this "
                "build.")  # fmt: skip
    text = (f"**Against the reference.** This build gives the reference's verdict for "
            f"{cmp.agree} of {cmp.compared} claims (reference: {reference_text(cmp.ref)}; "
            f"this build: {'; '.join(map(machine_text, cmp.machines)) or 'an unrecorded machine'})"
            ".")  # fmt: skip
    differ = cmp.of("verdict")
    if differ:
        flagged = [d for d in differ if d.flagged]
        text += (f" {len(differ)} {'differs' if len(differ) == 1 else 'differ'} (below); "
                 f"{len(flagged)} of them {'was' if len(flagged) == 1 else 'were'} flagged near "
                 "its line in the reference or here")  # fmt: skip
        missed = [d for d in differ if d.cause in ORIGIN_CAUSES and not d.flagged]
        text += (f", and {len(missed)} that the stability measure did not flag differ with the "
                 "same code and parameters." if missed else ".")  # fmt: skip
    other = cmp.of("effect")
    if other:
        text += (f" {len(other)} of the agreeing claims have another effect (beyond a relative "
                 f"{SAME_EFFECT:g}); {cmp.identical} have the same.")  # fmt: skip
    for cause in (EARLIER_CODE, OTHER_PARAMS, NOT_RUN):
        names = sorted(ch for ch, c in cmp.chapters.items() if c == cause)
        if not names:
            continue
        what = {EARLIER_CODE: "the reference was made with earlier code for",
                OTHER_PARAMS: "run with other parameters than the reference's, so not compared:",
                NOT_RUN: "not executed in this build:"}[cause]  # fmt: skip
        shown = [f"{n} ({', '.join(f'{k} {v}' for k, v in cmp.overrides[n].items())})"
                 if cause == OTHER_PARAMS else n for n in names]  # fmt: skip
        text += f" Chapters {what} {', '.join(shown)}."
    for kind, words in (("missing", "graded in the reference but not here"),
                        ("new", "graded here but not in the reference")):  # fmt: skip
        if cmp.of(kind):
            text += (
                f" {len(cmp.of(kind))} {'claim' if len(cmp.of(kind)) == 1 else 'claims'} {words}."
            )
    return text


def difference_rows(cmp: Comparison | None, kinds=("verdict", "missing", "new")) -> list[dict]:
    """One row per claim that differs: both verdicts, both effects, the distance from its line
    on each side, and the cause (the machine, earlier code)."""
    if cmp is None:
        return []
    return [{
        "claim": f"{short_claim(d.claim)} ({{ref}}`{d.section}`)",
        "reference": f"**{short_verdict((d.ref or {}).get('verdict'))}**; {_effect(d.ref)}",
        "this build": f"**{short_verdict((d.this or {}).get('verdict'))}**; {_effect(d.this)}",
        "from its line (reference / here)": f"{_flag(d.ref)} / {_flag(d.this)}",
        "cause": d.cause + (f" ({', '.join(cmp.versions[d.chapter])})"
                            if d.chapter in cmp.versions else ""),
        "computed by (reference / here)": f"{origin_text(_ref_origin(cmp.ref, d.chapter))} / "
                                          f"{origin_text(cmp.entry_machines.get(d.chapter))}",
    } for d in cmp.differences if d.kind in kinds]  # fmt: skip


def _ref_origin(ref: dict, chapter: str):
    return (ref["chapters"].get(chapter) or {}).get("computed_by")


# ----------------------------------------------------------------------------- another ISA


def as_records(ref: dict) -> list[dict]:
    """A reference's claims regrouped as build records, so that two references compare as a
    build and its reference do."""
    return [{"chapter": name, "params": ch["params"], "overrides": {}, "code": ch["code"],
             "machine": ch.get("machine"), "checks": [],
             "cache": {"machines": ch.get("computed_by")},
             "claims": [c for c in ref["claims"] if c["chapter"] == name]}
            for name, ch in ref["chapters"].items()]  # fmt: skip


def isa_studies(profile: str) -> list[tuple[str, dict, dict]]:
    """The committed builds of one commit on other instruction sets, each with the build it is
    compared with: ``results/<profile>/isa/<commit>/reference.json`` (the commit as the
    reference machine built it) and beside it ``<name>.json`` (the same commit with oneDNN held
    to another ISA, say). They stay valid when the reference moves to newer code: each study
    compares builds of its own commit. As (name, other, its reference)."""
    out = []
    for folder in sorted((RESULTS / profile / "isa").glob("*/")):
        base_file = folder / "reference.json"
        base = loads(base_file.read_text()) if base_file.exists() else None
        for f in sorted(folder.glob("*.json")):
            if f.name == "reference.json":
                continue
            other = loads(f.read_text())
            bad = (problems(base) if base is not None else [f"{base_file} is missing"]) or (
                problems(other))  # fmt: skip
            if bad:
                raise ValueError(f"{f}: {bad[0]}")
            if other["provenance"]["commit"] != base["provenance"]["commit"]:
                raise ValueError(f"{f}: not the commit of {base_file}")
            out.append((f.stem, other, base))
    return out


def shifts(ref: dict, other: dict) -> list[float]:
    """How far each tested claim's deciding p moved between two builds, in standard errors:
    ``|z(p_adjusted) - z(p_adjusted')|`` (:func:`normbook.grading.stability.z`), for every claim
    both tested, with finite positions."""
    from normbook.grading.stability import z

    theirs = {claim_id(c): c for c in other["claims"]}
    out = []
    for c in ref["claims"]:
        o = theirs.get(claim_id(c))
        if o and c["p_adjusted"] is not None and o["p_adjusted"] is not None:
            a, b = z(c["p_adjusted"]), z(o["p_adjusted"])
            if math.isfinite(a) and math.isfinite(b):
                out.append(abs(a - b))
    return out
