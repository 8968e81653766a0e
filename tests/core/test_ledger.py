"""The claims ledger is rebuilt from what the chapters recorded: changing one chapter's result
changes the ledger's table and makes the ledger page stale."""

import json

import pytest

from normbook.book_pages import ledger as claims_ledger
from normbook.grading import ledger
from normbook.grading.claims import ClaimTest
from normbook.grading.verdicts import NOT_SHOWN, REFUTED, REPRODUCED, Check, Grade, Verdict
from normbook.pages import report
from normbook.publish import project
from normbook.runtime.params import Param, Spec

SPEC = Spec(
    chapter="a1_localization",  # a graded chapter's name, so the ledger page orders it
    params=[Param("seeds", list, "seeds", list_of=int)],
    profiles={p: {"seeds": [0, 1]} for p in ("smoke", "cpu", "paper")},
)


@pytest.fixture
def ledger_root(tmp_path, monkeypatch):
    monkeypatch.setattr(ledger, "ledger_dir", lambda profile: tmp_path / profile / "ledger")
    monkeypatch.setattr(report, "md", lambda text: None)
    monkeypatch.setattr(report, "glue", lambda name, value: None)
    return tmp_path


def _execute_chapter(effect: float, verdict: str, seeds=None):
    """What a chapter does: start, grade one claim and one check, show and record them."""
    ns = {"profile": "smoke", "seeds": seeds}
    _, run = report.start(SPEC, ns)
    test = ClaimTest(effect, effect - 0.1, effect + 0.1, 0.01, 0.99, 5, "paired t test", "none",
                     0.05)  # fmt: skip
    claims = [Verdict("A", "it localizes", Grade(verdict, "why", 0.01), test)]
    checks = [Check("A", "equivariant", True, "max change 0")]
    report.show_verdicts("a1", claims)
    report.show_checks("a1", checks)
    run.record("a1-verdict", claims=claims, checks=checks)
    return run


def test_changing_a_chapter_result_changes_the_ledger(ledger_root):
    _execute_chapter(0.5, REPRODUCED)
    recs = claims_ledger.records("smoke")
    before, digest = claims_ledger.claims_table(recs), ledger.digest("smoke")
    assert "**reproduced**" in before and "0.500 [0.400, 0.600]" in before
    assert "{ref}`A1 verdict <a1-verdict>`" in before
    assert claims_ledger.counts(recs)["A"][REPRODUCED] == 1
    assert "SESOI" in before and "adjusted" in before and "<details>" in before

    _execute_chapter(0.05, REFUTED)  # the same chapter, another result
    recs = claims_ledger.records("smoke")
    after = claims_ledger.claims_table(recs)
    assert "**refuted**" in after and "**reproduced**" not in after
    assert ledger.digest("smoke") != digest
    assert len(recs) == 1 and len(recs[0]["claims"]) == 1  # replaced, not appended


def test_ledger_page_stamp_follows_the_records(ledger_root):
    page = project.ROOT / "book" / "ledger.py"
    resolved = claims_ledger.LEDGER.resolve("smoke")
    _execute_chapter(0.5, REPRODUCED)
    k1 = project.chapter_key(page, "smoke", resolved)
    assert project.chapter_key(page, "smoke", resolved) == k1
    _execute_chapter(0.05, REFUTED)
    assert project.chapter_key(page, "smoke", resolved) != k1
    # a chapter that does not read the ledger keeps its stamp
    a2 = project.ROOT / "book" / "a2_mechanism.py"
    p2 = project.spec_for(a2).resolve("smoke")
    assert project.chapter_key(a2, "smoke", p2) == project.stamp(a2, dict(p2))


def test_changed_parameters_are_shown(ledger_root):
    _execute_chapter(0.5, REPRODUCED, seeds=[3, 4, 5])
    rows = claims_ledger.provenance(claims_ledger.records("smoke"), {SPEC.chapter: SPEC})
    assert rows[0]["parameters changed from the profile"] == "`seeds=[3, 4, 5]`"
    summary = claims_ledger.checks_summary(claims_ledger.records("smoke"))
    assert summary[0]["checks that hold"] == "1 of 1"


def test_a_page_reusing_a_chapter_finds_the_parameters_it_ran_with(ledger_root):
    assert ledger.executed_params(SPEC, "smoke").seeds == [0, 1]  # not run: the profile's
    _execute_chapter(0.5, REPRODUCED, seeds=[3, 4, 5])
    assert ledger.executed_params(SPEC, "smoke").seeds == [3, 4, 5]


def test_every_chapter_parameter_survives_its_record(ledger_root):
    from normbook.publish.chapters import SPECS

    for spec in SPECS.values():
        params = spec.resolve("paper")
        ledger.write(spec.chapter, "paper", dict(params), [], [])
        assert ledger.executed_params(spec, "paper") == params, spec.chapter


def test_a_failed_run_leaves_no_old_record(ledger_root):
    _execute_chapter(0.5, REPRODUCED)
    report.start(SPEC, {"profile": "smoke"})  # started again, then failed before grading
    assert claims_ledger.missing(claims_ledger.records("smoke"))[0] == "a1_localization"


def test_corrupt_record_says_how_to_fix(ledger_root):
    folder = ledger.ledger_dir("smoke")
    folder.mkdir(parents=True)
    (folder / "b1_setup_accuracy.json").write_text("{not json")
    with pytest.raises(ValueError, match="re-execute chapter b1_setup_accuracy"):
        claims_ledger.records("smoke")
    (folder / "b1_setup_accuracy.json").write_text(json.dumps({"format": 0}))
    with pytest.raises(ValueError, match="old format"):
        claims_ledger.records("smoke")


def test_the_adjusted_p_decides_the_final_verdict():
    def claim(p, verdict=REPRODUCED):
        return {"paper": "A", "verdict": verdict, "why": "interval clears the SESOI",
                "p_grade": p, "section": "a1-verdict", "claim": "c", "unit": ".2f",
                "effect": 0.1, "low": 0.0, "high": 0.2, "sesoi_text": "0.05", "test": "t",
                "p": p, "p_refute": 0.9, "null": "n"}  # fmt: skip

    recs = [{"chapter": "a1_localization",
             "claims": [claim(0.04), claim(0.001), claim(0.6), claim(0.03)]}]  # fmt: skip
    adj = claims_ledger.adjusted_p(recs)  # BH: 0.001 x 4, 0.03 x 4/2, 0.04 x 4/3 -> 0.053
    assert adj[0, 1] == pytest.approx(0.004) and adj[0, 3] == pytest.approx(0.0533, abs=1e-3)
    alone, after = claims_ledger.counts(recs, alone=True), claims_ledger.counts(recs)
    assert alone["A"][REPRODUCED] == 4 and after["A"][REPRODUCED] == 1
    fin = claims_ledger.final(recs)
    first = fin[0]["claims"][0]
    assert first["verdict"] == NOT_SHOWN and first["graded"] == REPRODUCED
    assert first["why"].startswith("reproduced at its own level (p = 0.04), not after the false")
    assert "Paper A's 4 tested claims (p = 0.0533)" in first["why"]
    assert first["level"] == pytest.approx(0.05 * 3 / 4)  # third smallest of four
    assert fin[0]["claims"][1]["why"] == "interval clears the SESOI"  # kept
    assert claims_ledger.final(fin) == fin  # idempotent
    assert recs[0]["claims"][0]["verdict"] == REPRODUCED  # the input is not changed
    assert (
        "**not shown at this budget** (reproduced at its own level"
        in claims_ledger.claim_rows(recs)[0]["verdict"]
    )
    assert "1 (alone: 4)" in claims_ledger.counts_table(recs)
    assert claims_ledger.holm_would_leave(recs) == (1, 1)  # Holm: 0.004 only
    untested = {"paper": "A", "verdict": REFUTED, "p_grade": None}  # no p: never decisive
    assert claims_ledger.adjusted_verdict(untested, None) != REFUTED


def test_showing_records_nothing_and_glued_numbers_are_recorded_raw(ledger_root, monkeypatch):
    monkeypatch.setattr(report, "git_commit", lambda short=False: "test")
    _, run = report.start(SPEC, {"profile": "smoke"})
    test = ClaimTest(0.5, 0.4, 0.6, 0.01, 0.99, 5, "paired t test", "none", 0.05)
    report.show_verdicts("a1", [Verdict("A", "it localizes", Grade(REPRODUCED, "why", 0.01), test)])
    assert "a1_localization" in claims_ledger.missing(claims_ledger.records("smoke"))
    run.glue("a1_slope", 0.0058)
    run.glue_all("a1", {"n": 5, "flag": True, "text": "0.3 [0.1, 0.5]", "nan": float("nan")})
    run.finish()
    rec = claims_ledger.records("smoke")[0]
    assert rec["numbers"] == {"a1_slope": 0.0058, "a1_n": 5.0}  # no text, bool or nan
    assert rec["claims"] == []


def test_recorded_paper_scale_claims_are_counted_and_adjusted_apart():
    def claim(p, scale=ledger.PROFILE_SCALE):
        return {"paper": "A", "verdict": REPRODUCED, "p_grade": p, "scale": scale}

    recorded = "paper scale (recorded run)"
    recs = [{"chapter": "a1_localization",
             "claims": [claim(0.04), claim(0.001), claim(0.04, recorded)]}]  # fmt: skip
    c = claims_ledger.counts(recs, alone=True)
    assert list(c) == ["A", "B", f"A, {recorded}"]
    assert c["A"][REPRODUCED] == 2 and c[f"A, {recorded}"][REPRODUCED] == 1
    adj = claims_ledger.adjusted_p(recs)
    assert adj[0, 2] == pytest.approx(0.04)  # alone in its family: unadjusted
    assert adj[0, 0] == pytest.approx(0.04)  # two in the profile's family
    assert "Paper A, paper scale" in claims_ledger.counts_table(recs)


def test_a_not_shown_claim_says_what_would_decide_it():
    base = {"paper": "A", "verdict": NOT_SHOWN, "p_grade": 0.3, "section": "a1-verdict",
            "claim": "c", "unit": ".2f", "effect": 0.08, "low": 0.03, "high": 0.13,
            "sesoi_text": "0.05", "sesoi": 0.05, "n": 5, "p": 0.3, "p_refute": 0.7,
            "null": "n", "test": "paired t test, one-sided against the SESOI, 5 seeds",
            "why": "interval contains the SESOI (too little power)"}  # fmt: skip
    assert claims_ledger.needs(base).startswith("power: about ")
    assert "(has 5)" in claims_ledger.needs(base)
    bad = {**base, "controls": [{"family": "no norm", "check": "learned", "passed": False,
                                 "evidence": ""}]}  # fmt: skip
    assert claims_ledger.needs(bad) == "a control: no norm must pass (learned)"
    kept = {**base, "why": "below the SESOI, but no kept states tell whether it was still rising",
            "no_kept_states": True}  # fmt: skip
    assert claims_ledger.needs(kept).startswith("a measurement: ")
    assert claims_ledger.needs({**base, "why": "of the other sign, but may still be rising",
                                "moving": True}).startswith("a longer budget")  # fmt: skip
    # the record's fields decide, never the words of its why
    assert claims_ledger.needs({**base, "moving": True}).startswith("a longer budget")
    assert claims_ledger.needs({**base, "why": "below, but may still be rising (no kept states)"}
                               ).startswith("power: ")  # fmt: skip
    assert claims_ledger.needs({**base, "verdict": REPRODUCED}) == ""
    # decisive alone, not after the adjustment: seeds at the level its rank asks of it
    held = claims_ledger.final([{"chapter": "a1_localization", "claims": [
        {**base, "verdict": REPRODUCED, "p_grade": 0.04, "why": "interval clears the SESOI",
         "low": 0.055, "high": 0.105},
        {**base, "p_grade": 0.03}, {**base, "p_grade": 0.5}]}])[0]["claims"][0]  # fmt: skip
    assert held["verdict"] == NOT_SHOWN and "at level 0.033" in claims_ledger.needs(held)
    recs = [{"chapter": "a1_localization", "claims": [base, bad, kept]}]
    table = claims_ledger.needs_table(recs)
    assert "| 1 | 1 | 0 | 1 |" in table.replace("  ", " ")
    assert (
        "<b>what would decide it</b>: power: about"
        in claims_ledger.claim_rows(recs)[0]["claim (as tested)"]
    )


def test_check_records_keep_their_evidence():
    rec = ledger.check_record(Check("A", "equivariant", True, "max change 0"), "a1-verdict")
    assert rec["evidence"] == "max change 0"


def test_a_claim_record_holds_what_re_derives_its_grade():
    import numpy as np

    from normbook.grading.claims import may_rise, mean_test
    from normbook.grading.verdicts import Control, decide, decide_parts

    fr = np.array([0.25, 0.5, 1.0])
    flat = np.array([[0.0] * 5, [0.01, 0.0, 0.02, 0.01, 0.0], [0.01, 0.0, 0.02, 0.01, 0.0]])
    rise = may_rise(flat, fr, 0.025)
    assert not rise and rise.gain.high < 0.025
    low = mean_test(np.array([0.001, 0.0, 0.002, -0.001, 0.001]), 0.05, null="n")
    high = mean_test(np.array([0.3, 0.31, 0.29, 0.3, 0.32]), 0.05, null="m")
    ok = Control("f", "learned", True, "R² 0.9")
    parts = [("a", decide(low, [ok], rising=rise)), ("b", decide(high, [ok], rising=False))]
    v = Verdict("A", "two parts", decide_parts(parts), high, controls=(ok,))
    rec = ledger.claim_record(v, "a1-verdict")
    assert [p["name"] for p in rec["parts"]] == ["a", "b"]
    a, b = rec["parts"]
    assert a["verdict"] == REFUTED and a["effect"] == low.effect and a["high"] == low.high
    assert a["late_gain"]["high"] == rise.gain.high and a["late_gain"]["margin"] == 0.025
    assert b["verdict"] == REPRODUCED and b["late_gain"] is None  # False: nothing measured
    assert rec["controls"][0]["evidence"] == "R² 0.9"
    json.dumps(rec)  # plain JSON


def test_rows_that_hold_by_symmetry_are_adjusted_apart():
    def claim(p, paper="A"):
        return {"paper": paper, "verdict": REPRODUCED, "p_grade": p, "why": "w"}

    # a near-certain p in the paper's family would lower the BH bar for a borderline claim
    mixed = [{"chapter": "a1_localization", "claims": [claim(0.04), claim(1e-9), claim(1e-9)]}]
    assert claims_ledger.adjusted_p(mixed)[0, 0] == pytest.approx(0.04)
    apart = [{"chapter": "a1_localization",
              "claims": [claim(0.04), claim(1e-9, "A (by symmetry)"), claim(0.5)]}]  # fmt: skip
    assert claims_ledger.adjusted_p(apart)[0, 0] == pytest.approx(0.08)  # two in its family
    assert "A, by symmetry" in claims_ledger.counts(apart)


def test_the_same_result_written_again_keeps_the_digest(ledger_root):
    """A chapter re-executed to the same record (an edited figure) leaves the pages that read
    every record current; only the time it was written differs."""
    import json

    _execute_chapter(0.5, REPRODUCED)
    digest = ledger.digest("smoke")
    (f,) = ledger.ledger_dir("smoke").glob("*.json")
    record = json.loads(f.read_text())
    f.write_text(json.dumps({**record, "written": "2099-01-01 00:00:00"}))
    assert ledger.digest("smoke") == digest
    f.write_text(json.dumps({**record, "numbers": {**record["numbers"], "x": 1}}))
    assert ledger.digest("smoke") != digest


def _held_row(rising, test, why=None) -> dict:
    """A record of one claim graded by :func:`decide` (``why``: its words replaced)."""
    from normbook.grading.verdicts import decide

    v = Verdict("A", "c", decide(test, rising=rising), test, key="k")
    rec = ledger.claim_record(v, "a1-verdict")
    return rec if why is None else {**rec, "why": why}


def test_stability_reads_the_moving_field_never_the_words():
    """A grade made "may still be rising" is ``moving`` in its record, and the stability measure
    takes it to its late gain's line with no text at all; a row whose words say "may still be"
    but whose grade is not moving is measured to its p's line, and the ledger page asks it for
    power, not a longer budget."""
    from normbook.grading import stability
    from normbook.grading.claims import Rise

    gain = ClaimTest(0.01, -0.02, 0.024, float("nan"), float("nan"), 5, "late gain", "none")
    below = ClaimTest(0.0, -0.02, 0.02, 0.99, 0.01, 5, "paired t test", "none", 0.05)
    rec = _held_row(Rise(True, gain, 0.02), below, why="")  # moving, its words removed
    assert rec["moving"] is True and rec["no_kept_states"] is False
    (r,) = claims_ledger.final([{"chapter": "a1_localization", "claims": [rec]}])
    c = r["claims"][0]
    assert c["verdict"] == NOT_SHOWN and c["line"] == stability.RISE_LINE
    assert claims_ledger.needs(c).startswith("a longer budget")
    # the same words on a grade that is not moving: not moving
    straddles = ClaimTest(0.05, -0.05, 0.15, 0.5, 0.5, 5, "paired t test", "none", 0.05)
    words = "interval contains the SESOI (the quantity may still be rising)"
    rec = _held_row(Rise(False, gain, 0.025), straddles, why=words)
    assert rec["moving"] is False and "may still be" in rec["why"]
    (r,) = claims_ledger.final([{"chapter": "a1_localization", "claims": [rec]}])
    c = r["claims"][0]
    assert c["verdict"] == NOT_SHOWN and c["line"] == stability.P_LINE
    assert c["stability"] == pytest.approx(stability.p_distance(0.5))
    assert claims_ledger.needs(c).startswith("power: ")
    # "no kept states" likewise: the field holds the row undecided by construction
    held = _held_row(None, below, why="")
    assert held["no_kept_states"] is True
    assert stability.distance({**held, "p_adjusted": 0.01}) == (
        float("inf"), "none: undecided by construction")  # fmt: skip
    assert stability.distance({**held, "no_kept_states": False, "p_adjusted": 0.01,
                               "why": "no kept states"})[1] == stability.P_LINE  # fmt: skip


def test_an_infinite_effect_round_trips_through_the_record(ledger_root):
    """An infinite effect is written "inf" (strict JSON, apart from a missing number's null) and
    read back as infinity; the record reads back as the chapter made it."""
    inf, nan = float("inf"), float("nan")
    test = ClaimTest(inf, 1.0, inf, nan, 0.99, 5, "rank test", "none", 0.05)
    v = Verdict("A", "c", Grade(NOT_SHOWN, "why", nan, test), test, key="k")
    made = ledger.claim_record(v, "a1-verdict")
    assert made["effect"] == inf and made["p"] is None and made["p_grade"] is None
    ledger.write("a1_localization", "smoke", {"seeds": [0]}, [made], [],
                 numbers={"x": -inf, "y": 0.5})  # fmt: skip
    text = (ledger.ledger_dir("smoke") / "a1_localization.json").read_text()
    assert '"effect": "inf"' in text and '"x": "-inf"' in text and '"p": null' in text
    assert "Infinity" not in text and "NaN" not in text
    (rec,) = ledger.read("smoke")
    assert rec["claims"] == [made] and rec["numbers"] == {"x": -inf, "y": 0.5}
    ledger.stamp_build("a1_localization", "smoke", "c0", {"cpu": "x"})
    (rec,) = ledger.read("smoke")
    assert rec["claims"] == [made] and rec["code"] == "c0"


def test_a_refuted_row_of_finished_networks_has_no_late_gain_line():
    """Finished networks (none cut by the cap): the late gain is on record, but no line of it
    can flip the row, so the row is measured to its p's line only; with a network cut by the
    cap the late gain's line is the nearer one."""
    from normbook.grading import stability
    from normbook.grading.claims import finished, may_rise

    below = ClaimTest(-0.1, -0.12, -0.08, 1.0, 1e-6, 5, "paired t test", "none", 0.05)
    gain = may_rise([[0.0] * 5, [0.021, 0.023, 0.022, 0.024, 0.020]], [0.5, 1.0], 0.025)
    assert not gain.may and stability.rise_distance(gain.record()) < stability.p_distance(1e-6)
    for capped, line in (([False] * 10, stability.P_LINE), ([True] + [False] * 9,
                                                            stability.RISE_LINE)):  # fmt: skip
        rec = _held_row(finished(gain, capped, 0.025), below)
        (r,) = claims_ledger.final([{"chapter": "a1_localization", "claims": [rec]}])
        c = r["claims"][0]
        assert c["verdict"] == REFUTED and c["line"] == line, capped


def test_a_premise_is_read_at_its_final_verdict():
    """The fade rests on the localizing claim: moot where that claim is refuted after the
    paper-wide adjustment, not shown where the adjustment leaves it undecided."""
    from normbook.grading.verdicts import MOOT, Control, decide

    def rec(key, verdict_of_premise=None, p_refute=0.001, clears=False):
        test = ClaimTest(-0.1, -0.12, -0.08, 1 - p_refute, p_refute, 5, "t", "none", 0.05)
        if clears:
            test = ClaimTest(0.1, 0.08, 0.12, 0.001, 0.999, 5, "t", "none", 0.05)
        controls = () if verdict_of_premise is None else (
            Control.of_claim("BatchNorm", "localizes", verdict_of_premise, "premise"),)  # fmt: skip
        v = Verdict("A", key, decide(test, controls, rising=False), test, key=key,
                    controls=controls)  # fmt: skip
        return ledger.claim_record(v, "a3-verdict")

    strong = [rec("premise"), rec("fade", REFUTED)]
    (r,) = claims_ledger.final([{"chapter": "a3_which_norms", "claims": strong}])
    assert [c["verdict"] for c in r["claims"]] == [REFUTED, MOOT]
    assert r["claims"][1]["line"].startswith("its premise")
    # the premise refuted at its own level (p 0.04) but not after adjusting with others
    weak = [rec("premise", p_refute=0.04), rec("fade", REFUTED),
            *(rec(f"other{i}", p_refute=0.5) for i in range(3))]  # fmt: skip
    (r,) = claims_ledger.final([{"chapter": "a3_which_norms", "claims": weak}])
    verdicts = {c["key"]: c["verdict"] for c in r["claims"]}
    assert verdicts["premise"] == NOT_SHOWN and verdicts["fade"] == NOT_SHOWN
    assert "its premise (BatchNorm) is not shown" in r["claims"][1]["why"]
    # a reproduced premise leaves its dependant as graded
    ok = [rec("premise", clears=True), rec("fade", REPRODUCED)]
    (r,) = claims_ledger.final([{"chapter": "a3_which_norms", "claims": ok}])
    assert r["claims"][1]["verdict"] == REFUTED
    assert claims_ledger.counts(claims_ledger.final(
        [{"chapter": "a3_which_norms", "claims": strong}]))["A"][MOOT] == 1  # fmt: skip
