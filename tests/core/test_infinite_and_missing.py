"""Missing and infinite numbers one way (:func:`normbook.grading.ledger.encoded`): a missing
number is null and an infinite one "inf" in a chapter's record, in the reference and in its
check; both read back as the chapter made them; a row with no line (a stability distance of
infinity) reads "no line" on the ledger page and in the comparison with the reference alike."""

import json
import math

import numpy as np
import pytest

from normbook.book_pages import ledger as claims_ledger
from normbook.book_pages import reference
from normbook.grading import ledger
from normbook.grading.claims import ClaimTest, Sesoi
from normbook.grading.verdicts import NOT_SHOWN, NOT_TESTABLE, REPRODUCED, Grade, Verdict

INF, NAN = math.inf, math.nan
MACHINE = {"cpu": "AMD EPYC (cpu family 25, model 1)", "isa": "Intel AVX2", "flags": {}}
SESOI = Sesoi(0.05, "of the ramp's slope", "planted")


def claim(key: str, effect: float, verdict: str = REPRODUCED, p: float = 1e-4,
          p_refute: float = 0.99, **held) -> dict:  # fmt: skip
    """A ledger row as a chapter records it (``held``: the grade's flags)."""
    test = ClaimTest(effect, effect - 0.1, effect + 0.1, p, p_refute, 5, "rank test", "none",
                     SESOI.value)  # fmt: skip
    grade = Grade(verdict, "planted", min(p, p_refute), test, **held)
    return ledger.claim_record(Verdict("A", f"claim {key}", grade, test, SESOI, key=key),
                               "a1-verdict")  # fmt: skip


def build(*claims: dict) -> list[dict]:
    rec = {"format": ledger.FORMAT, "chapter": "a1_localization", "profile": "cpu",
           "params": {"seeds": [0, 1, 2]}, "overrides": {}, "written": "2026-12-06 06:00:00",
           "claims": list(claims), "checks": [], "numbers": {}, "provenance": [],
           "code": "c0", "machine": MACHINE}  # fmt: skip
    return claims_ledger.final([rec])


def snapshot(recs: list[dict]) -> dict:
    return reference.snapshot(recs, "cpu", {"commit": "abc123", "date": "2026-12-06",
                                            "machine": MACHINE})  # fmt: skip


def test_one_encoding_keeps_missing_and_infinite_apart():
    made = {"a": NAN, "b": INF, "c": -INF, "d": [1.5, INF, (NAN, 2)], "e": "inf is a word",
            "n": 3, "t": True, "f": np.float32(INF), "g": np.float64(0.25)}  # fmt: skip
    text = json.dumps(ledger.encoded(made), allow_nan=False)  # strict JSON
    assert ledger.encoded(made) == {"a": None, "b": "inf", "c": "-inf", "d": [1.5, "inf",
                                    [None, 2]], "e": "inf is a word", "n": 3, "t": True,
                                    "f": "inf", "g": 0.25}  # fmt: skip
    back = ledger.decoded(json.loads(text))
    assert back == {"a": None, "b": INF, "c": -INF, "d": [1.5, INF, [None, 2]],
                    "e": "inf is a word", "n": 3, "t": True, "f": INF, "g": 0.25}  # fmt: skip
    assert ledger.number(NAN) is None and ledger.number(INF) == INF


def test_an_infinite_effect_is_the_same_through_the_reference_and_its_check(tmp_path, monkeypatch):
    from normbook.tools import reference as tool

    recs = build(
        claim("a1_inf", INF),
        claim("a1_neg", -INF, NOT_SHOWN, p=0.5, p_refute=0.5),
        claim("a1_none", NAN, NOT_SHOWN, p=NAN, p_refute=NAN, no_interval=True),
    )
    ref = snapshot(recs)
    rows = {c["key"]: c for c in ref["claims"]}
    assert rows["a1_inf"]["effect"] == INF and rows["a1_neg"]["effect"] == -INF
    assert rows["a1_none"]["effect"] is None and rows["a1_none"]["stability"] == INF
    text = reference.dumps(ref)
    assert '"effect": "inf"' in text and '"effect": "-inf"' in text
    assert '"effect": null' in text and '"stability": "inf"' in text
    f = tmp_path / "ledger.json"
    f.write_text(text)
    loaded = reference.load_file(f)
    assert loaded["claims"] == ref["claims"]
    cmp = reference.compare(recs, loaded)
    assert (cmp.compared, cmp.agree, cmp.identical) == (3, 3, 3) and cmp.differences == []
    # --check: the build against the reference it wrote, identical
    monkeypatch.setattr(claims_ledger, "records", lambda profile: recs)
    assert tool.check("cpu", f) == 0
    # an infinite effect is no finite one, nor the other infinity
    other = build(
        claim("a1_inf", 1e308),
        claim("a1_neg", INF, NOT_SHOWN, p=0.5, p_refute=0.5),
        claim("a1_none", NAN, NOT_SHOWN, p=NAN, p_refute=NAN, no_interval=True),
    )
    cmp = reference.compare(other, loaded)
    assert [d.ident for d in cmp.of("effect")] == ["a1_inf@profile", "a1_neg@profile"]
    assert tool.check("cpu", f) == 0  # records() still the first build
    monkeypatch.setattr(claims_ledger, "records", lambda profile: other)
    assert tool.check("cpu", f) == 1


def test_a_row_with_no_line_reads_no_line_on_the_ledger_page_and_in_the_comparison():
    untestable = claim("a1_x", 0.2, NOT_TESTABLE, p=NAN, p_refute=NAN)
    held = claim("a1_x", 0.0, NOT_SHOWN, p=0.99, p_refute=0.01, no_kept_states=True)
    ref = json.loads(reference.dumps(snapshot(build(untestable))))  # as committed
    assert ref["claims"][0]["stability"] == "inf"
    ref = reference.loads(json.dumps(ref))
    this = build(held)
    assert this[0]["claims"][0]["stability"] == INF
    (row,) = claims_ledger.claim_rows(this)
    assert row["from its line"] == "no line"
    (diff,) = reference.difference_rows(reference.compare(this, ref))
    assert diff["from its line (reference / here)"] == "no line / no line"
    # a failed control has no distance: a dash on both
    assert reference.difference_rows(reference.compare(build(claim("a1_x", 0.2, NOT_SHOWN)), {
        **ref, "claims": [{**ref["claims"][0], "stability": None, "near_line": None}]}))[0][
        "from its line (reference / here)"].startswith("– / ")  # fmt: skip


def test_a_reference_that_wrote_no_line_as_null_still_reads_no_line():
    """Before infinities were kept a reference wrote a row with no line as null, beside
    ``near_line`` false; a failed control's null has ``near_line`` null."""
    old = json.loads(reference.dumps(snapshot(build(claim("a1_x", 0.2, NOT_TESTABLE, p=NAN,
                                                          p_refute=NAN)))))  # fmt: skip
    old["claims"][0]["stability"] = None
    failed = {**old["claims"][0], "key": "a1_y", "stability": None, "near_line": None}
    old["claims"].append(failed)
    ref = reference.loads(json.dumps(old))
    assert ref["claims"][0]["stability"] == INF and ref["claims"][1]["stability"] is None
    committed = reference.load("cpu")
    if committed is None:
        pytest.skip("no committed reference")
    for c in committed["claims"]:  # the committed reference's rows with no line read so
        if c["near_line"] is False and str(c["line"]).startswith("none"):
            assert c["stability"] == INF, c["key"]
        if c["near_line"] is None:
            assert c["stability"] is None, c["key"]
