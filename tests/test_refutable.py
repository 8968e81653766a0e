"""The inventory of rows that cannot come out refuted: it fails on an undeclared one, and on a
declared one that became refutable."""

import pytest

from normbook.grading.verdicts import NOT_SHOWN, NOT_TESTABLE, REPRODUCED
from normbook.tools import refutable

# an example declaration of the tests' own (the book's list may be empty)
SECTION, START = "x-example", "An example claim waiting for its kept states"


@pytest.fixture(autouse=True)
def _declared(monkeypatch):
    monkeypatch.setattr(refutable, "AWAITING", {(SECTION, START): "its kept states"})


def _claim(section, claim, refutable_=True, verdict=NOT_SHOWN):
    return {"section": section, "claim": claim, "refutable": refutable_, "graded": verdict,
            "key": f"{section}_{claim}"}  # fmt: skip


def test_a_claim_without_a_key_or_with_anothers_fails():
    ok = [{"claims": [_claim("x-verdict", "a"), _claim("x-verdict", "b")]}]
    assert refutable.problems(ok) == []
    bad = [{"claims": [{**_claim("x-verdict", "a"), "key": ""}, _claim("x-verdict", "b"),
                       {**_claim("x-verdict", "c"), "key": "x-verdict_b"}]}]  # fmt: skip
    assert refutable.problems(bad) == [
        "claim without a key: x-verdict: a",
        "key used twice: x-verdict_b",
    ]


def test_an_undeclared_blocked_row_fails_and_a_declared_one_passes():
    ok = [{"claims": [_claim(SECTION, START + " ...", False), _claim("x-verdict", "free")]}]
    assert refutable.problems(ok) == []
    new = [{"claims": [_claim(SECTION, START, False), _claim("x-verdict", "new row", False)]}]
    assert refutable.problems(new) == [
        "blocked by construction and not declared: x-verdict: new row"
    ]


def test_a_declared_row_that_became_refutable_must_leave_the_list():
    done = [{"claims": [_claim(SECTION, START, True, REPRODUCED)]}]
    (msg,) = refutable.problems(done)
    assert msg.startswith("declared as blocked but refutable now") and START in msg


def test_rows_not_testable_at_the_profile_are_exempt():
    exempt = [{"claims": [_claim("x-verdict", "absolute numbers", False, NOT_TESTABLE)]}]
    assert refutable.blocked(exempt) == [] and refutable.problems(exempt) == []


def test_with_nothing_declared_every_blocked_row_fails(monkeypatch):
    """The book's own list may be empty: then any blocked row is an error, and none is fine."""
    monkeypatch.setattr(refutable, "AWAITING", {})
    blocked = [{"claims": [_claim("x-verdict", "free"), _claim(SECTION, START, False)]}]
    assert refutable.problems(blocked) == [
        f"blocked by construction and not declared: {SECTION}: {START}"
    ]
    assert refutable.problems([{"claims": [_claim("x-verdict", "free")]}]) == []


def _tied(n, verdict=NOT_SHOWN, parts=()):
    test = "paired t test, one-sided against the SESOI, seeds" + " " + refutable.SIGN_TEST
    return {**_claim("x-verdict", f"tied at {n}", True, verdict), "n": n, "test": test,
            "parts": list(parts)}  # fmt: skip


def test_seeds_that_tie_below_the_sign_tests_floor_are_undecidable():
    """Four tied seeds: 2^-4 = 0.0625 is above the level, whatever the effect; five: 0.031."""
    (msg,) = refutable.floored([{"claims": [_tied(4), _tied(5)]}])
    assert msg.startswith("undecidable with 4 units") and "0.0625" in msg
    t_test = {**_tied(4), "test": "paired t test, one-sided against the SESOI, 4 seeds"}
    assert refutable.floored([{"claims": [t_test]}]) == []  # a t test's p has no floor
    part = {"name": "last layer", "n": 3, "test": _tied(3)["test"]}
    (msg,) = refutable.floored([{"claims": [{**_claim("x-verdict", "parts"), "parts": [part]}]}])
    assert "(part last layer)" in msg
    assert refutable.floored([{"claims": [_tied(4, NOT_TESTABLE)]}]) == []


def test_the_floor_fails_the_check_except_at_smoke(monkeypatch, capsys):
    recs = [{"claims": [{**_tied(4), "code": []}]}]
    monkeypatch.setattr(refutable.claims_ledger, "records", lambda profile: recs)
    monkeypatch.setattr(refutable, "unlinked", lambda recs: [])
    assert refutable.main(["cpu"]) == 1
    assert "undecidable with 4 units" in capsys.readouterr().out
    assert refutable.main(["smoke"]) == 0
    assert "1 tied below the sign test's floor: not failed at smoke" in capsys.readouterr().out


def test_the_floor_check_reads_the_name_the_grading_gives_its_tie_branch():
    """refutable finds tied rows by the test's name: the name mean_test gives them must hold it
    (a renamed branch would otherwise hide every tied row from the check)."""
    from normbook.grading.claims import mean_test

    tied = mean_test([1.0, 1.0, 1.0, 1.0], 0.5, "null")
    assert refutable.SIGN_TEST in tied.test and tied.n == 4
    assert refutable.floor_p({"test": tied.test, "n": tied.n}) == 0.0625
    spread = mean_test([1.0, 1.2, 0.9, 1.1], 0.5, "null")
    assert refutable.floor_p({"test": spread.test, "n": spread.n}) == 0.0
