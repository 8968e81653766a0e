"""The intro's "Findings at a glance": each paper's central questions, answered by the verdicts
this build's chapters recorded (read from the ledger, never typed)."""

from __future__ import annotations

from dataclasses import dataclass

from .claims_ledger import PAPER_NAMES, _num, missing, needs, section_title
from .core.params import Spec
from .paper_a.recorded import BARE_COMMAND, COMMAND
from .paper_a.recorded import CLAIM_PREFIX as PAPER_SCALE

INTRO = Spec(
    chapter="intro",
    params=[],
    profiles={"smoke": {}, "cpu": {}, "paper": {}},
    packages=("claims_ledger", "findings"),
    reads_ledger=True,
)


@dataclass(frozen=True)
class Question:
    """A central question of a paper and the claims that answer it: (section label, the start
    of the claim's text as the chapter words it)."""

    paper: str
    text: str
    claims: tuple[tuple[str, str], ...]
    recorded: bool = False  # answered by a recorded paper-scale run (absent until one exists)


CENTRAL = (
    Question("A", "Do normalization layers let a CNN localize positions beyond its receptive "
             "field?", (("a1-verdict", "With instance: the interior mean prediction"),)),
    Question("A", "Is the whole sequence localized, as in the paper's Fig. 1a?",
             (("a1-verdict", "With instance: the mean prediction beyond one hop"),)),
    Question("A", "At the paper's own scale (a recorded run), is the whole sequence localized?",
             (("a1-paper-scale", f"{PAPER_SCALE}With instance: the interior mean prediction"),
              ("a1-paper-scale",
               f"{PAPER_SCALE}With instance: the mean prediction beyond one hop")),
             recorded=True),
    Question("A", "Does the signal reach farther with more normalization layers (multi-hop "
             "message passing)?",
             (("a5-layers",
               "At a fixed receptive field, the share of the first band's slope kept"),)),
    Question("B", "Does BatchNorm change representational sparsity?",
             (("b2-verdict", "MNIST: BN representations are less sparse"),
              ("b2-verdict", "CIFAR-10: BN representations are more sparse"))),
    Question("B", "Are class clusters purer with BatchNorm (lower Davies-Bouldin index)?",
             (("b3-verdict", "MNIST: class-based clusters are purer with BN"),
              ("b3-verdict", "CIFAR-10: class-based clusters are purer with BN"))),
    Question("B", "On CIFAR-10, is it BatchNorm or its ten-times-higher learning rate that "
             "makes the clusters purer?",
             (("b4-verdict", "CIFAR-10: BN itself lowers the class-based DBI"),
              ("b4-verdict", "Critics' confound, CIFAR-10: the paper's higher BN learning rate "
                             "by itself lowers the class"))),
)  # fmt: skip


def _find(recs: list[dict], section: str, start: str) -> dict | None:
    for r in recs:
        for c in r["claims"]:
            if c["section"] == section and c["claim"].startswith(start):
                return c
    return None


def answers(recs: list[dict]) -> list[tuple[Question, list[dict | None]]]:
    """Each central question with its claim records (None where a chapter has no record in
    this build). With every chapter recorded, a claim not found means its wording changed:
    that stops the page rather than leave a question unanswered."""
    out = [(q, [_find(recs, s, start) for s, start in q.claims]) for q in CENTRAL]
    if not missing(recs):
        lost = [start for q, cs in out if not q.recorded
                for (_, start), c in zip(q.claims, cs) if c is None]  # fmt: skip
        if lost:
            raise ValueError(f"no recorded claim starts {lost[0]!r}: update findings.CENTRAL")
    return out


def _effect(c: dict) -> str:
    u = c["unit"]
    return f"{_num(c['effect'], u)} [{_num(c['low'], u)}, {_num(c['high'], u)}]"


def sentence(q: Question, claims: list[dict | None]) -> str:
    """One sentence answering ``q`` from its claims' verdicts and effects."""
    if q.recorded and all(c is None for c in claims):
        return (
            f"**{q.text}** Not yet: this build has no recorded paper-scale run. On a machine "
            f"with a GPU, `{COMMAND}` makes one (a bare machine with Python, torch, numpy and "
            f"scipy: `{BARE_COMMAND}`); {{ref}}`a1-paper-scale` then grades it."
        )
    parts = []
    for c in claims:
        if c is None:
            parts.append("no record in this build")
            continue
        effect = (
            "no estimate at this budget" if _num(c["effect"], c["unit"]) == "n/a"
            else f"effect {_effect(c)} against a smallest effect of interest of {c['sesoi_text']}"
        )  # fmt: skip
        where = f"{{ref}}`{section_title(c['section'])} <{c['section']}>`"
        need = f"; it needs {needs(c)}" if needs(c) else ""
        parts.append(f"*{c['claim']}*: **{c['verdict']}** ({effect}{need}; {where})")
    return f"**{q.text}** " + "; ".join(parts) + "."


def findings_md(recs: list[dict], paper: str) -> str:
    """A paper's central questions, one computed sentence each, as a Markdown list."""
    lines = [f"**{PAPER_NAMES[paper]}**", ""]
    lines += [f"- {sentence(q, cs)}" for q, cs in answers(recs) if q.paper == paper]
    return "\n".join(lines)
