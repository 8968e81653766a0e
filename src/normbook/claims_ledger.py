"""The "Claims ledger" page: every claim the chapters graded in this build, in one table, read
from the records the chapters wrote (:mod:`normbook.core.ledger`), never typed."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from .core import ledger
from .core.fmt import table
from .core.params import Spec
from .core.verdicts import GRADES, INCONCLUSIVE, NOT, PARTLY, REPRODUCED

LEDGER = Spec(
    chapter="ledger",
    params=[],
    profiles={"smoke": {}, "cpu": {}, "paper": {}},
    packages=("claims_ledger",),
    reads_ledger=True,
)

# The chapters that grade claims, in the book's order (a missing record is reported).
GRADED = (
    "a1_localization",
    "a2_mechanism",
    "a3_which_norms",
    "a4_stress",
    "b1_setup_accuracy",
    "b2_sparsity",
    "b3_clusters",
    "b4_stress",
)
PAPER_NAMES = {"A": "Paper A (normalization side channel)", "B": "Paper B (BatchNorm)"}
# Okabe-Ito, colour-blind safe
VERDICT_COLORS = {REPRODUCED: "#009E73", PARTLY: "#56B4E9", NOT: "#D55E00", INCONCLUSIVE: "#999999"}


def records(profile: str, chapters=GRADED) -> list[dict]:
    """The chapters' records at ``profile``, in the book's order."""
    return ledger.read(profile, order=list(chapters))


def missing(recs: list[dict], chapters=GRADED) -> list[str]:
    """Graded chapters with no record at this profile (not executed, or failed)."""
    have = {r["chapter"] for r in recs}
    return [c for c in chapters if c not in have]


def _num(v, unit: str) -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, unit)


def _p(p) -> str:
    return "n/a" if p is None else "< 1e-300" if p == 0 else f"{p:.3g}"


def section_title(label: str) -> str:
    """``a2-verdict`` -> ``A2 verdict``; ``a4-circular`` -> ``A4 circular``."""
    chapter, _, rest = label.partition("-")
    return f"{chapter.upper()} {rest.replace('-', ' ')}".strip()


def claim_rows(recs: list[dict]) -> list[dict]:
    """One table row per claim: where it comes from, the verdict, the effect with its interval,
    the test with its p-value, and the null."""
    rows = []
    for r in recs:
        for c in r["claims"]:
            u = c["unit"]
            rows.append(
                {
                    "paper": c["paper"],
                    "from": f"{{ref}}`{section_title(c['section'])} <{c['section']}>`",
                    "claim": c["claim"],
                    "verdict": f"**{c['verdict']}**",
                    "effect [interval]": (
                        f"{_num(c['effect'], u)} [{_num(c['low'], u)}, {_num(c['high'], u)}]"
                    ),
                    "test": f"{c['test']}; p = {_p(c['p'])}",
                    "null": c["null"],
                }
            )
    return rows


def claims_table(recs: list[dict]) -> str:
    return table(claim_rows(recs))


def counts(recs: list[dict]) -> dict[str, dict[str, int]]:
    """Verdicts per paper: {paper: {grade: count}}."""
    out = {p: dict.fromkeys(GRADES, 0) for p in PAPER_NAMES}
    for r in recs:
        for c in r["claims"]:
            out[c["paper"][0]][c["verdict"]] += 1  # "B (our check)" counts under paper B
    return out


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


def verdict_summary(recs: list[dict]):
    """Horizontal bars: how many claims of each paper got each verdict."""
    c = counts(recs)
    papers = list(PAPER_NAMES)
    fig, ax = plt.subplots(figsize=(7.5, 1.0 + 0.7 * len(papers)), dpi=150)
    left = np.zeros(len(papers))
    for grade in GRADES:
        n = np.array([c[p][grade] for p in papers], dtype=float)
        ax.barh(range(len(papers)), n, left=left, color=VERDICT_COLORS[grade], label=grade)
        for i, (x0, w) in enumerate(zip(left, n)):
            if w:
                ax.text(x0 + w / 2, i, f"{int(w)}", ha="center", va="center", fontsize=9)
        left += n
    ax.set_yticks(range(len(papers)), [PAPER_NAMES[p] for p in papers])
    ax.invert_yaxis()
    ax.set_xlabel("claims")
    ax.legend(ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.35), frameon=False, fontsize=8)
    fig.tight_layout()
    return fig


def table_or_none(rows: list[dict]) -> str:
    return table(rows) if rows else "*(no chapter has recorded any yet at this profile)*"
