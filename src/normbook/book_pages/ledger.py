"""The "Claims ledger" page: every claim the chapters graded in this build, in one table, read
from the records the chapters wrote (:mod:`normbook.grading.ledger`), never typed."""

from __future__ import annotations

import math

import numpy as np

from normbook.book_pages import reference
from normbook.grading import ledger, stability
from normbook.grading.claims import (
    ALPHA,
    CLAIM_CONFIDENCE,
    MULTIPLICITY,
    adjusted,
)
from normbook.grading.power import MAX_UNITS, units_needed
from normbook.grading.verdicts import (
    BY_SYMMETRY,
    DECISIVE,
    GRADES,
    MOOT,
    NOT_SHOWN,
    NOT_TESTABLE,
    PARTLY,
    REFUTED,
    REPRODUCED,
    code_links,
    effect_interval,
    fold,
    number_or_dash,
    p_text,
)
from normbook.pages.figures import canvas, shared_legend
from normbook.pages.fmt import table
from normbook.runtime.params import Spec

LEDGER = Spec(
    chapter="ledger",
    params=[],
    profiles={"smoke": {}, "cpu": {}, "paper": {}},
    reads_ledger=True,
)

# The chapters that grade claims, in the book's order (a missing record is reported).
GRADED = (
    "a1_localization",
    "a2_mechanism",
    "a3_which_norms",
    "a4_stress",
    "a5_reach",
    "b1_setup_accuracy",
    "b2_sparsity",
    "b3_clusters",
    "b4_stress",
)
PAPER_NAMES = {"A": "Paper A (normalization side channel)", "B": "Paper B (BatchNorm)"}
# Okabe-Ito, colour-blind safe
VERDICT_COLORS = {REPRODUCED: "#009E73", PARTLY: "#56B4E9", REFUTED: "#D55E00",
                  NOT_SHOWN: "#999999", MOOT: "#CC79A7", NOT_TESTABLE: "#E6E6E6"}  # fmt: skip


def records(profile: str, chapters=GRADED) -> list[dict]:
    """The chapters' records at ``profile``, in the book's order, each claim with its final
    verdict (:func:`final`)."""
    return final(ledger.read(profile, order=list(chapters)))


def missing(recs: list[dict], chapters=GRADED) -> list[str]:
    """Graded chapters with no record at this profile (not executed, or failed)."""
    have = {r["chapter"] for r in recs}
    return [c for c in chapters if c not in have]


# Where a claim comes from, for the counts: the papers' own claims as they state them,
# re-tests of them in settings they did not run (the stress chapters and the multi-hop study),
# the critics' claims (the public reviews' questions) and this book's own claims.
ORIGINS = {"paper": "the paper's own claims", "re-test": "re-tests of the paper's claims",
           "critics": "critics' claims", "ours": "this book's own claims"}  # fmt: skip
RETEST_CHAPTERS = ("a4_stress", "a5_reach", "b4_stress")


def origin(c: dict, chapter: str) -> str:
    """A claim's origin (:data:`ORIGINS`), from its record: "(ours)" rows and the book's
    controls are ours, a reviewer's or critic's question is the critics', a paper's claim
    graded in a stress or extension chapter is a re-test, every other paper claim is the
    paper's own."""
    says = c.get("paper_says") or ""
    if c["claim"].startswith("Critics'") or (
        says.startswith("not in the paper") and ("review" in says or "critic" in says)
    ):
        return "critics"
    if (
        c["claim"].startswith("(ours)")
        or not says
        or says == "(ours)"
        or says.startswith("not in the paper")
    ):
        return "ours"
    return "re-test" if chapter in RETEST_CHAPTERS else "paper"


def opposite_sign(c: dict) -> bool:
    """Whether a claim's effect, or one of its parts', is wholly of the opposite sign of the
    paper's (its interval lies below zero; effects are signed the claim's way). A band
    comparison has no sign."""
    below = lambda x: not x.get("band") and x.get("high") is not None and x["high"] < 0
    return below(c) or any(below(p) for p in c.get("parts", []))


def section_title(label: str) -> str:
    """``a2-verdict`` -> ``A2 verdict``; ``a4-circular`` -> ``A4 circular``."""
    chapter, _, rest = label.partition("-")
    return f"{chapter.upper()} {rest.replace('-', ' ')}".strip()


def group(c: dict) -> str:
    """A claim's family for the counts and the adjustment: its paper (``A``, ``B``), or its
    paper at a recorded run's scale (graded on other data, so counted and adjusted apart)."""
    scale = c.get("scale", ledger.PROFILE_SCALE)
    base = c["paper"][0] + (", by symmetry" if c["paper"].endswith(BY_SYMMETRY) else "")
    return base if scale == ledger.PROFILE_SCALE else f"{base}, {scale}"


def group_name(g: str) -> str:
    return PAPER_NAMES.get(g) or f"Paper {g}"


def groups(recs: list[dict]) -> list[str]:
    """Both papers, then every recorded scale that has claims."""
    extra = sorted({group(c) for r in recs for c in r["claims"]} - set(PAPER_NAMES))
    return [*PAPER_NAMES, *extra]


def adjusted_p(recs: list[dict], method: str = MULTIPLICITY) -> dict[tuple[int, int], float]:
    """Adjusted p-value of every graded claim, per paper (:func:`group`; Benjamini-Hochberg,
    or ``method``, :func:`normbook.grading.claims.adjusted`): the p of the question that decided
    its grade (clears or below the SESOI), among the claims of that paper that were tested (a
    failed control or an untestable claim has no p). Keyed by (record index, claim index)."""
    out = {}
    for paper in groups(recs):
        idx = [(i, j) for i, r in enumerate(recs) for j, c in enumerate(r["claims"])
               if group(c) == paper and c.get("p_grade") is not None]  # fmt: skip
        ps = [recs[i]["claims"][j]["p_grade"] for i, j in idx]
        out |= dict(zip(idx, adjusted(ps, method).tolist()))
    return out


def graded(c: dict) -> str:
    """A claim's grade at its own level, before the paper-wide adjustment."""
    return c.get("graded", c["verdict"])


def adjusted_verdict(c: dict, p_adj: float | None) -> str:
    """A claim's final grade: a decisive grade whose adjusted p is not below ALPHA becomes
    *not shown*."""
    if graded(c) in DECISIVE and (p_adj is None or not p_adj < ALPHA):
        return NOT_SHOWN
    return graded(c)


def final(recs: list[dict]) -> list[dict]:
    """The records with each claim's final verdict, decided by its adjusted p over its paper's
    tested claims (:func:`adjusted_p`): ``verdict`` and ``why`` are final, ``graded`` and
    ``graded_why`` keep the chapter's grade at the claim's own level, ``p_adjusted`` the
    adjusted p, ``level`` the raw p the adjustment asks of the claim at its rank (ALPHA times
    its rank over the family's size), ``stability`` the distance from its line in standard
    errors with ``line`` the line and ``near_line`` the flag (:mod:`normbook.grading.stability`).
    Idempotent."""
    adj = adjusted_p(recs)
    n = {g: sum(group(c) == g and c.get("p_grade") is not None for r in recs
                for c in r["claims"]) for g in groups(recs)}  # fmt: skip
    rank = {}  # each tested claim's rank by p within its paper (1: the smallest)
    for g in groups(recs):
        tested = sorted(((c["p_grade"], (i, j)) for i, r in enumerate(recs)
                         for j, c in enumerate(r["claims"])
                         if group(c) == g and c.get("p_grade") is not None))  # fmt: skip
        rank |= {key: k + 1 for k, (_, key) in enumerate(tested)}
    out = []
    for i, r in enumerate(recs):
        claims = []
        for j, c in enumerate(r["claims"]):
            c = {**c, "graded": graded(c), "graded_why": c.get("graded_why", c.get("why", ""))}
            p_adj = adj.get((i, j))
            c["p_adjusted"] = p_adj
            c["level"] = rank.get((i, j), 1) * ALPHA / max(1, n[group(c)])
            c["verdict"] = adjusted_verdict(c, p_adj)
            c["why"] = c["graded_why"] if c["verdict"] == c["graded"] else (
                f"{c['graded']} at its own level (p {p_text(c.get('p_grade'))}), not after the "
                f"false-discovery adjustment over {group_name(group(c)).split(' (')[0]}'s "
                f"{n[group(c)]} tested claims (p {p_text(p_adj)})"
            )  # fmt: skip
            claims.append(c)
        out.append({**r, "claims": claims})
    verdicts = {c.get("key"): c["verdict"] for r in out for c in r["claims"]}
    for r in out:
        for c in r["claims"]:
            premise_verdict(c, verdicts)
            c["stability"], c["line"] = stability.distance(c)
            c["near_line"] = stability.near_line(c["stability"])
    return out


def premise_verdict(c: dict, final_verdicts: dict[str, str]) -> None:
    """A claim on a premise (``Control.of_claim``) at its final verdict: refuted, moot."""
    for k in c.get("controls", []):
        premise = final_verdicts.get(k.get("premise_key") or "")
        if premise is None or premise == REPRODUCED:
            continue
        if premise == REFUTED:
            c["verdict"], c["why"] = MOOT, f"its premise was refuted: {k['family']}"
        elif c["verdict"] in (MOOT, *DECISIVE):
            c["verdict"], c["why"] = NOT_SHOWN, (
                f"its premise ({k['family']}) is {premise} after the false-discovery "
                "adjustment")  # fmt: skip


def needs(c: dict) -> str:
    """What would decide a *not shown* claim ("" otherwise), from its record: a control, a
    measurement (no kept states, or no interval), a longer budget (:func:`cut_by_cap`), or
    power (:func:`normbook.grading.power.units_needed`, at the level the adjustment asks)."""
    if c["verdict"] != NOT_SHOWN:
        return ""
    failed = [k for k in c.get("controls", []) if not k["passed"]]
    if failed:
        return "a control: " + "; ".join(f"{k['family']} must pass ({k['check']})"
                                         for k in failed)  # fmt: skip
    if stability.held(c, "no_kept_states"):  # the grade's fields, never its why's words
        return ("a measurement: the tested quantity at the kept states along training (whether "
                "it was still moving)")  # fmt: skip
    if stability.held(c, "no_interval"):
        return "a measurement: at least two units with an interval"
    if stability.held(c, "moving"):
        return "a longer budget: " + cut_by_cap(c)
    level = ALPHA
    if c.get("graded") in DECISIVE:  # decisive alone: the level its rank asks of it
        level = c.get("level", ALPHA)
    n = units_needed(*(c.get(k) if c.get(k) is not None else math.nan
                       for k in ("effect", "low", "high")), int(c.get("n") or 0),
                     c.get("sesoi") if c.get("sesoi") is not None else math.nan,
                     c.get("test", ""), level)  # fmt: skip
    if n is None:
        return "power: more seeds or models (this test gives no closed-form count)"
    if n > MAX_UNITS:
        return f"power: no number of seeds up to {MAX_UNITS:,} (the effect sits at the SESOI)"
    at = f" at level {level:.2g}" if level < ALPHA else ""
    return f"power: about {n:,} seeds at the observed effect and spread{at} (has {c['n']})"


def cut_by_cap(c: dict) -> str:
    """Why a row held by a moving quantity waits for a longer budget: how many of its networks
    the epoch cap cut (where counted), from its record's late gains."""
    gains = [g for g in (c.get("late_gain"), *(p.get("late_gain") for p in c.get("parts", [])))
             if g and g.get("may_rise")]  # fmt: skip
    counted = [g for g in gains if g.get("capped") is not None]
    if not counted:
        return "the tested quantity may still be moving the claim's way"
    cut = max(counted, key=lambda g: g["capped"])
    return (
        f"the epoch cap cut {cut['capped']} of its {cut['networks']} networks, and the "
        "tested quantity may still be moving the claim's way"
    )


def needs_table(recs: list[dict]) -> str:
    """The *not shown* claims per paper by what would decide them (:func:`needs`)."""
    recs = final(recs)
    kinds = ("power", "a measurement", "a longer budget", "a control")
    rows = []
    for g in groups(recs):
        got = [needs(c).split(":")[0] for r in recs for c in r["claims"]
               if group(c) == g and c["verdict"] == NOT_SHOWN]  # fmt: skip
        if got:
            rows.append({"paper": group_name(g), **{k: str(got.count(k)) for k in kinds}})
    return table(rows) if rows else "*(no claim is not shown)*"


def line_text(c: dict) -> str:
    """How far a row sits from its line: ``2.3 SE``, ``0.4 SE, near its line``, ``no line``
    (nothing a rounding difference could cross), ``–`` (a failed control: no distance)."""
    return stability.distance_text(c.get("stability")) + (
        " **near its line**" if c.get("near_line") else "")  # fmt: skip


def reference_text(c: dict, chapter: str, cmp) -> str:
    """A row against the reference ledger (:mod:`.reference`): the same verdict, or how and why
    it differs."""
    cause = cmp.chapters.get(chapter)
    if cause == reference.OTHER_PARAMS:
        return "**not compared** (chapter run with other parameters)"
    ident = reference.claim_id(c)
    d = next((d for d in cmp.differences if d.ident == ident), None)
    suffix = f" ({cause})" if cause else ""
    if d is None:
        return "**same**" + suffix
    # a difference names its cause, the entries' machines included where code and parameters
    # are the same (another machine, library versions, or none recorded)
    versions = cmp.versions.get(chapter)
    suffix = f" ({d.cause}{': ' + ', '.join(versions) if versions else ''})"
    if d.kind == "new":
        return "**new** (not in the reference)" + suffix
    ref = reference.short_verdict(d.ref["verdict"])
    if d.kind == "effect":
        return f"**same**, other effect (reference {number_or_dash(d.ref['effect'], c['unit'])})"
    return f"**differs** (reference: {ref}, {effect_interval({**d.ref, 'unit': c['unit']})})" + (
        suffix)  # fmt: skip


def claim_rows(recs: list[dict], cmp=None) -> list[dict]:
    """One table row per claim: its paper and chapter (the section it comes from), the claim,
    the final verdict with why, the effect with its interval beside the smallest effect of
    interest, how far the verdict sits from its line (:mod:`normbook.grading.stability`) and,
    given a comparison ``cmp`` with the reference ledger, whether the reference agrees; the
    paper's wording, the origin, the test with its p-values (raw and adjusted per paper), the
    null and what would decide a claim not shown fold under the claim."""
    recs = final(recs)
    adj = adjusted_p(recs)
    rows = []
    for i, r in enumerate(recs):
        for j, c in enumerate(r["claims"]):
            need = needs(c)
            flag = " ⚠ opposite sign of the paper's" if opposite_sign(c) else ""
            folded = {
                "paper says": c.get("paper_says") or "(ours)",
                "origin": ORIGINS[origin(c, r["chapter"])],
                "test": f"{c['test']}; p {p_text(c['p'])}, p(below) {p_text(c['p_refute'])}, "
                f"adjusted {p_text(adj.get((i, j)))}",
                "compared with": c["null"],
                "what would decide it": need,
            }
            effect = effect_interval(c)
            rows.append(
                {
                    "paper": c["paper"],
                    "chapter": f"{{ref}}`{section_title(c['section'])} <{c['section']}>`",
                    "claim (as tested)": c["claim"] + fold(folded) + code_links(c.get("code", [])),
                    "verdict": f"**{c['verdict']}**{flag} ({c['why']})",
                    f"effect [{CLAIM_CONFIDENCE:.0%} CI] vs SESOI": (
                        f"{effect}; SESOI {c['sesoi_text']}"
                    ),
                    "from its line": line_text(c),
                    **({"vs reference": reference_text(c, r["chapter"], cmp)} if cmp else {}),
                }
            )
    return rows


def claims_table(recs: list[dict], cmp=None) -> str:
    """The claims as a table; in the built page it sorts and filters (``book/_static/
    ledger.js``: by paper, chapter, verdict and the comparison with the reference, and a text
    search), without JavaScript it is the plain table."""
    why = {
        "from its line": "no distance: a positive control failed, or the claim's premise "
        "was refuted (the Methods page)"
    }
    # full width: seven columns may use the page's margin column at 1280 px
    return (f":::{{container}} full-width ledger-table\n\n"
            f"{table(claim_rows(recs, cmp), missing=why)}\n:::")  # fmt: skip


def counts(recs: list[dict], alone: bool = False) -> dict[str, dict[str, int]]:
    """Final verdicts per paper (:func:`final`): {paper: {grade: count}}; ``alone``: the
    grades each claim got at its own level, before the adjustment."""
    recs = final(recs)
    out = {p: dict.fromkeys(GRADES, 0) for p in groups(recs)}
    for r in recs:
        for c in r["claims"]:
            out[group(c)][c["graded"] if alone else c["verdict"]] += 1
    return out


def holm_would_leave(recs: list[dict]) -> tuple[int, int]:
    """(decisive verdicts Holm's family-wise adjustment would leave, decisive verdicts after
    the adjustment that decides), over every family: how much the choice matters."""
    recs = final(recs)
    holm = adjusted_p(recs, "holm")
    kept = decisive = 0
    for i, r in enumerate(recs):
        for j, c in enumerate(r["claims"]):
            decisive += c["verdict"] in DECISIVE
            kept += c["verdict"] in DECISIVE and holm.get((i, j), 1.0) < ALPHA
    return kept, decisive


def counts_table(recs: list[dict]) -> str:
    """Final verdicts per paper, with the grades at each claim's own level beside them where
    the adjustment changed the count."""
    fin, alone = counts(recs), counts(recs, alone=True)
    rows = [{"paper": group_name(p), **{g: str(fin[p][g]) + (
                f" (alone: {alone[p][g]})" if alone[p][g] != fin[p][g] else "") for g in GRADES}}
            for p in fin]  # fmt: skip
    return table(rows)


def controls_rows(recs: list[dict]) -> list[dict]:
    """Every positive control (failed: not shown) and premise (refuted: moot), once per
    chapter: what it had to show, and whether it did."""
    rows, seen = [], set()
    for r in recs:
        for c in r["claims"]:
            for k in c.get("controls", []):
                key = (r["chapter"], k["family"], k["check"])
                if key in seen:
                    continue
                seen.add(key)
                rows.append({
                    "chapter": f"{{doc}}`{r['chapter']}`", "family": k["family"],
                    "control": k["check"], "result": "passed" if k["passed"] else (
                        "**refuted**: its dependants are moot" if k.get("premise_refuted")
                        else "**failed**"),
                    "evidence": k["evidence"],
                })  # fmt: skip
    return rows


def checks_summary(recs: list[dict]) -> list[dict]:
    """Per chapter: how many of its by-construction checks hold (a failure is a bug)."""
    return [
        {
            "chapter": f"{{doc}}`{r['chapter']}`",
            "checks that hold": f"{sum(c['holds'] for c in r['checks'])} of {len(r['checks'])}",
            "failed": ", ".join(c["check"] for c in r["checks"] if not c["holds"]) or "none",
        }
        for r in recs
        if r["checks"]
    ]


def provenance(recs: list[dict], specs: dict) -> list[dict]:
    """Per chapter: the profile and time of the run the ledger read, and every parameter that
    differs from that profile's default (a chapter re-executed with other parameters)."""
    rows = []
    for r in recs:
        defaults = specs[r["chapter"]].resolve(r["profile"])
        changed = {k: v for k, v in r["params"].items() if str(defaults.get(k)) != str(v)}
        rows.append(
            {
                "chapter": f"{{doc}}`{r['chapter']}`",
                "profile": f"`{r['profile']}`",
                "executed": r["written"],
                "parameters changed from the profile": (
                    ", ".join(f"`{k}={v}`" for k, v in changed.items()) or "none"
                ),
                "claims": len(r["claims"]),
            }
        )
    return rows


SHORT_ORIGINS = {"paper": "paper's own", "re-test": "re-tests", "critics": "critics'",
                 "ours": "ours"}  # fmt: skip


def verdict_summary(recs: list[dict]):
    """Horizontal bars: how many claims of each paper got each verdict, one bar per origin
    (:func:`origin`: the paper's own claims, re-tests, critics', ours; a count is written on its
    bar where the bar has room for it: two claims or more)."""
    recs = final(recs)
    bars = [(g, o) for g in groups(recs) for o in ORIGINS
            if any(group(c) == g and origin(c, r["chapter"]) == o
                   for r in recs for c in r["claims"])]  # fmt: skip
    fig, axes = canvas(height=1.4 + 0.42 * len(bars))
    ax = axes[0, 0]
    left = np.zeros(len(bars))
    for grade in GRADES:
        n = np.array([sum(group(c) == g and origin(c, r["chapter"]) == o
                          and c["verdict"] == grade for r in recs for c in r["claims"])
                      for g, o in bars], dtype=float)  # fmt: skip
        ax.barh(range(len(bars)), n, left=left, color=VERDICT_COLORS[grade], label=grade)
        for i, (x0, w) in enumerate(zip(left, n)):
            if w >= 2:
                ax.text(x0 + w / 2, i, f"{int(w)}", ha="center", va="center")
        left += n
    labels = [f"{group_name(g).split(' (')[0].replace('Paper ', '')}: {SHORT_ORIGINS[o]}"
              for g, o in bars]  # fmt: skip
    ax.set_yticks(range(len(bars)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("claims")
    shared_legend(fig)
    return fig


def table_or_none(rows: list[dict]) -> str:
    return table(rows) if rows else "*(no chapter has recorded any yet at this profile)*"


def against_reference(recs: list[dict], profile: str):
    """This build's comparison with the reference ledger at ``profile`` (None: there is none;
    :mod:`.reference`)."""
    ref = reference.load(profile)
    return reference.compare(final(recs), ref) if ref else None


def reference_part(cmp, profile: str) -> str:
    """The comparison in words, then each claim that differs with both verdicts and effects."""
    rows = reference.difference_rows(cmp)
    return reference.sentence(cmp, profile) + (
        "\n\n" + table(rows, missing=reference.DASHES) if rows else ""
    )
