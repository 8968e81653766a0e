"""Chapter A4's prose helpers: the sentences its grades support."""

from __future__ import annotations

from normbook.grading.verdicts import REFUTED, REPRODUCED, Control, Verdict


def rf_reading(rows: list[Verdict]) -> str:
    """The sentence the receptive-field test supports, from its grades."""
    grades = {r.verdict for r in rows}
    if REFUTED in grades:
        return (
            "a network whose receptive field is a single position still tells overlapping from "
            "independent sequences when the normalization pools both paths, so the overlap "
            "sweep measures how much the two paths' pooled statistics share, not how far "
            "receptive fields reach"
        )
    if grades == {REPRODUCED}:
        return (
            "without receptive fields to overlap the networks stay at chance, as the paper's "
            "reading of the transition requires"
        )
    return "at this budget the test cannot tell whether the transition depends on R"


def control_line(controls: list[Control]) -> str:
    """Which positive controls passed, for prose."""
    failed = [c for c in controls if not c.passed]
    return "every positive control passed" if not failed else "failed: " + "; ".join(
        f"{c.family} ({c.check})" for c in failed)  # fmt: skip


def rf_checks(rows: list[Verdict]) -> str:
    """What holds a head's row, for prose: its failed learning check with the row's own test
    (:meth:`.Verdict.blocked_text`), and which heads, trained alike, pass the same check."""
    said = {r.key: r.blocked_text() for r in rows}
    held = [text for text in said.values() if text]
    if not held:
        return "every head passed its learning check"
    passing = [c.family for r in rows if not said[r.key] for c in r.controls]
    also = (f"; {' and '.join(passing)}, trained alike, passed the same check"
            if passing else "; no head passed it")  # fmt: skip
    return "; ".join(held) + also
