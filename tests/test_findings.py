"""The intro's findings are read from the ledger: every central question finds its claims in a
build's records, and the wording follows the recorded verdict and effect."""

from __future__ import annotations

import math

from normbook import findings


def _record(section, claim, verdict="reproduced", effect=0.4):
    return {"chapter": section.split("-")[0], "claims": [{
        "section": section, "claim": claim, "verdict": verdict, "unit": ".2f",
        "effect": effect, "low": 0.3, "high": 0.5, "sesoi_text": "0.05 of the ramp's slope",
        "paper": "A"}]}  # fmt: skip


def test_each_question_reads_its_claims_and_words_the_verdict():
    q = findings.CENTRAL[0]
    section, start = q.claims[0]
    recs = [_record(section, start + " (and the rest of the sentence)")]
    (found, claims), *_ = findings.answers(recs)
    assert found is q and claims[0]["claim"].startswith(start)
    text = findings.sentence(q, claims)
    assert "**reproduced**" in text and "0.40 [0.30, 0.50]" in text and section in text
    refuted = [_record(section, start, verdict="refuted", effect=math.nan)]
    text = findings.sentence(q, findings.answers(refuted)[0][1])
    assert "**refuted**" in text and "no estimate at this budget" in text


def test_a_missing_record_is_said_not_guessed():
    q, claims = findings.answers([])[0]
    assert claims == [None] and "no record in this build" in findings.sentence(q, claims)


def test_a_reworded_claim_stops_the_page_once_every_chapter_is_recorded(monkeypatch):
    monkeypatch.setattr(findings, "missing", lambda recs: [])
    import pytest

    with pytest.raises(ValueError, match="update findings.CENTRAL"):
        findings.answers([_record("a1-verdict", "a claim reworded")])


def test_the_paper_scale_question_says_how_to_make_its_record():
    q = next(q for q in findings.CENTRAL if q.recorded)
    _, claims = next((a, c) for a, c in findings.answers([]) if a is q)
    text = findings.sentence(q, claims)
    assert "Not yet" in text and "make paper-run" in text
    section, start = q.claims[1]
    recs = [_record(section, start + " (Fig. 1a)", verdict="refuted")]
    text = findings.sentence(q, next(c for a, c in findings.answers(recs) if a is q))
    assert "**refuted**" in text
