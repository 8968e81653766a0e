"""The reference ledger and the comparison every build makes with it, on planted references:
the same ledger agrees everywhere; a changed verdict, a changed effect, a missing claim, a
chapter run with other code or parameters are each reported; a damaged reference is refused in
one line; and the stability flag marks a row that sits near its line."""

import copy
import json
import math

import pytest

from normbook.book_pages import ledger as claims_ledger
from normbook.book_pages import reference
from normbook.grading import ledger, stability
from normbook.grading.claims import ClaimTest, Rise, Sesoi
from normbook.grading.verdicts import (
    NOT_SHOWN,
    REFUTED,
    REPRODUCED,
    Check,
    Control,
    Grade,
    Verdict,
)

MACHINE = {"cpu": "AMD EPYC (cpu family 25, model 1)", "isa": "Intel AVX2",
           "aten_capability": "AVX2", "torch": "2.13.0+cpu", "onednn": "3.12.0",
           "flags": {}}  # fmt: skip
OTHER_MACHINE = {**MACHINE, "cpu": "AMD EPYC (cpu family 25, model 17)", "isa": "Intel AVX-512"}
SESOI = Sesoi(0.05, "of the ramp's slope", "planted")


def claim(key: str, effect: float, p: float, p_refute: float, verdict: str = REPRODUCED,
          section: str = "a1-verdict", controls=(), rising=None) -> dict:  # fmt: skip
    """A ledger row as a chapter records it."""
    test = ClaimTest(effect, effect - 0.1, effect + 0.1, p, p_refute, 5, "paired t test", "none",
                     SESOI.value)  # fmt: skip
    grade = Grade(verdict, "planted", min(p, p_refute), test, rising=rising)
    v = Verdict("A", f"claim {key}", grade, test, SESOI, controls=tuple(controls), key=key)
    return ledger.claim_record(v, section)


def record(chapter: str, claims: list[dict], code: str = "c0", machine=MACHINE, params=None,
           overrides=None) -> dict:  # fmt: skip
    check = ledger.check_record(Check("A", "equivariant", True, "0"), "a1-checks")
    return {"format": ledger.FORMAT, "chapter": chapter, "profile": "cpu",
            "params": params or {"seeds": [0, 1, 2]}, "overrides": overrides or {},
            "written": "2026-12-06 06:00:00", "claims": claims, "checks": [check], "numbers": {},
            "provenance": ["MNIST: verified"], "cache": {"loaded": 0, "computed": 0},
            "code": code, "machine": machine}  # fmt: skip


def build(**changes) -> list[dict]:
    """A two-chapter build with final verdicts; ``changes`` edits claims by key."""
    a1 = [claim("a1_side", 0.20, 1e-4, 0.99), claim("a1_whole", 0.01, 0.9, 1e-3, REFUTED)]
    a2 = [claim("a2_hop", 0.06, 0.3, 0.6, NOT_SHOWN, section="a2-verdict")]
    recs = [record("a1_localization", a1), record("a2_mechanism", a2)]
    for r in recs:
        r["claims"] = [changes.get(c["key"], c) for c in r["claims"]]
    return claims_ledger.final(recs)


def snapshot(recs) -> dict:
    return reference.snapshot(recs, "cpu", {"commit": "abc123", "date": "2026-12-06",
                                            "machine": MACHINE})  # fmt: skip


def test_the_same_ledger_agrees_on_every_claim():
    recs = build()
    cmp = reference.compare(recs, snapshot(recs))
    assert (cmp.compared, cmp.agree, cmp.identical) == (3, 3, 3)
    assert cmp.differences == [] and cmp.chapters == {}
    text = reference.sentence(cmp, "cpu")
    assert "gives the reference's verdict for 3 of 3 claims" in text
    assert "AMD EPYC (cpu family 25, model 1), oneDNN on Intel AVX2, 2026-12-06" in text


def test_a_changed_verdict_is_reported_with_both_verdicts_and_effects():
    ref = snapshot(build())
    recs = build(a1_side=claim("a1_side", 0.07, 0.2, 0.8, NOT_SHOWN))
    for r in recs:
        r["machine"] = OTHER_MACHINE
    cmp = reference.compare(recs, ref)
    (d,) = cmp.of("verdict")
    assert (d.ident, d.cause) == ("a1_side@profile", reference.MACHINE)
    assert (cmp.compared, cmp.agree) == (3, 2)
    text = reference.sentence(cmp, "cpu")
    assert "verdict for 2 of 3 claims" in text and "Intel AVX-512" in text
    (row,) = reference.difference_rows(cmp)
    assert "**reproduced**; 0.200 [0.100, 0.300]" in row["reference"]
    assert "**not shown**; 0.0700 [-0.0300, 0.170]" in row["this build"] or (
        "**not shown**" in row["this build"] and "0.070" in row["this build"]
    )
    assert row["cause"] == reference.MACHINE and "{ref}`a1-verdict`" in row["claim"]


def test_a_changed_effect_a_missing_claim_and_a_new_one_are_each_reported():
    ref = snapshot(build())
    recs = build(a1_side=claim("a1_side", 0.21, 1e-4, 0.99))
    recs[1]["claims"] = [claim("a2_other", 0.06, 0.3, 0.6, NOT_SHOWN, section="a2-verdict")]
    recs = claims_ledger.final(recs)
    cmp = reference.compare(recs, ref)
    assert [d.ident for d in cmp.of("effect")] == ["a1_side@profile"]
    assert [d.ident for d in cmp.of("missing")] == ["a2_hop@profile"]
    assert [d.ident for d in cmp.of("new")] == ["a2_other@profile"]
    text = reference.sentence(cmp, "cpu")
    assert "1 of the agreeing claims have another effect" in text
    assert "1 claim graded in the reference but not here" in text
    assert "1 claim graded here but not in the reference" in text


def test_a_chapter_with_other_code_is_said_to_differ_by_its_code():
    ref = snapshot(build())
    recs = build(a1_side=claim("a1_side", 0.07, 0.2, 0.8, NOT_SHOWN))
    recs[0]["code"] = "c1"
    cmp = reference.compare(recs, ref)
    assert cmp.chapters == {"a1_localization": reference.EARLIER_CODE}
    assert cmp.of("verdict")[0].cause == reference.EARLIER_CODE
    assert "the reference was made with earlier code for a1_localization" in (
        reference.sentence(cmp, "cpu")
    )


def test_a_chapter_run_with_other_parameters_is_not_compared_and_says_with_which():
    ref = snapshot(build())
    recs = build(a1_side=claim("a1_side", 0.07, 0.2, 0.8, NOT_SHOWN))
    recs[0]["params"] = {"seeds": [0, 1, 2], "seq_len": 200}
    recs[0]["overrides"] = {"seq_len": 200}
    cmp = reference.compare(recs, ref)
    assert cmp.chapters == {"a1_localization": reference.OTHER_PARAMS}
    assert cmp.compared == 1 and cmp.differences == []
    assert "a1_localization (seq_len 200)" in reference.sentence(cmp, "cpu")


def test_a_chapter_not_executed_is_named():
    ref = snapshot(build())
    cmp = reference.compare(build()[1:], ref)
    assert cmp.chapters == {"a1_localization": reference.NOT_RUN}
    assert "not executed in this build: a1_localization" in reference.sentence(cmp, "cpu")


def test_without_a_reference_one_sentence_gives_the_command():
    text = reference.sentence(None, "cpu")
    assert "`make reference`" in text and "results/cpu/ledger.json" in text


def test_the_reference_passes_its_schema_and_damage_is_refused_in_one_line(tmp_path, monkeypatch):
    ref = snapshot(build())
    assert reference.problems(ref) == []
    assert reference.problems(json.loads(reference.dumps(ref))) == []
    broken = copy.deepcopy(ref)
    del broken["claims"][0]["effect"]
    assert reference.problems(broken) == ["claim 0 has no effect"]
    assert reference.problems({**ref, "format": 0})[0].startswith("format is 0")
    monkeypatch.setattr(reference, "RESULTS", tmp_path)
    assert reference.load("cpu") is None
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "ledger.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON.*make reference"):
        reference.load("cpu")
    (tmp_path / "cpu" / "ledger.json").write_text(reference.dumps(broken))
    with pytest.raises(ValueError, match="claim 0 has no effect"):
        reference.load("cpu")
    (tmp_path / "cpu" / "ledger.json").write_text(reference.dumps(ref))
    assert reference.load("cpu")["claims"] == ref["claims"]


def test_two_claims_with_one_identity_cannot_make_a_reference():
    recs = build()
    recs[1]["claims"][0]["key"] = "a1_side"
    with pytest.raises(ValueError, match="a1_side@profile"):
        snapshot(recs)


# ----------------------------------------------------------------------------- stability


def test_a_row_just_past_the_level_is_near_its_line_and_a_clear_one_is_not():
    near = claim("near", 0.10, 0.04, 0.9)  # alone, p 0.04: adjusted over 1 claim, 0.04
    far = claim("far", 0.30, 1e-8, 0.99)
    (alone,) = claims_ledger.final([record("a1_localization", [near])])
    c = alone["claims"][0]
    assert c["verdict"] == REPRODUCED and c["line"] == stability.P_LINE
    assert c["stability"] == pytest.approx(stability.z(0.04) - stability.z(0.05))
    assert c["near_line"] is True
    (clear,) = claims_ledger.final([record("a1_localization", [far])])
    assert clear["claims"][0]["near_line"] is False
    assert clear["claims"][0]["stability"] > 3


def test_a_not_shown_row_far_from_the_level_is_not_near():
    (r,) = claims_ledger.final([record("a1_localization", [claim("x", 0.06, 0.5, 0.5,
                                                                  NOT_SHOWN)])])  # fmt: skip
    assert r["claims"][0]["near_line"] is False


def test_a_refuted_row_is_as_near_as_its_late_gain_is_to_its_margin():
    gain = ClaimTest(0.01, -0.02, 0.0240, math.nan, math.nan, 5, "late gain", "none")
    rise = Rise(False, gain, 0.025)  # upper end 0.0240 against a margin of 0.025
    c = claim("r", 0.0, 0.99, 1e-9, REFUTED, rising=rise)
    (r,) = claims_ledger.final([record("a1_localization", [c])])
    row = r["claims"][0]
    assert row["verdict"] == REFUTED and row["line"] == stability.RISE_LINE
    assert row["near_line"] is True and row["stability"] < 0.2


def test_a_failed_control_has_no_distance():
    failed = Control("the null", "learned", False, "R² 0.1")
    c = claim("k", 0.2, 1e-4, 0.99, NOT_SHOWN, controls=[failed])
    c["p_grade"] = None  # a failed control is not tested
    (r,) = claims_ledger.final([record("a1_localization", [c])])
    assert r["claims"][0]["near_line"] is None and math.isnan(r["claims"][0]["stability"])


def test_a_difference_says_whether_it_was_flagged():
    ref = snapshot(claims_ledger.final([record("a1_localization", [claim("n", 0.1, 0.04, 0.9)])]))
    recs = claims_ledger.final([record("a1_localization",
                                       [claim("n", 0.09, 0.06, 0.9, NOT_SHOWN)])])  # fmt: skip
    cmp = reference.compare(recs, ref)
    (d,) = cmp.of("verdict")
    assert d.flagged is True
    assert "1 of them was flagged near its line" in reference.sentence(cmp, "cpu")


# ----------------------------------------------------------------------------- make reference


@pytest.fixture
def tool(tmp_path, monkeypatch):
    """``make reference`` on a planted build: its records, a clean checkout, a fake fingerprint."""
    from normbook.tools import fingerprint
    from normbook.tools import reference as tool

    recs = [record(name, []) for name in claims_ledger.GRADED]
    recs[0]["claims"] = [claim("a1_side", 0.2, 1e-4, 0.99)]
    monkeypatch.setattr(claims_ledger, "records", lambda profile: claims_ledger.final(recs))
    monkeypatch.setattr(tool, "stale_chapters", lambda profile: [])
    monkeypatch.setattr(tool, "changed_code", lambda: [])
    monkeypatch.setattr(tool, "git_commit", lambda: "abc123+changes")
    monkeypatch.setattr(fingerprint, "measure", lambda: {"as_is": {}, "pinned": {}})
    monkeypatch.setattr(reference, "RESULTS", tmp_path)
    return tool, recs


def test_make_reference_writes_the_last_build_with_its_provenance(tool, tmp_path):
    tool, recs = tool
    assert tool.main(["--profile", "cpu"]) == 0
    ref = reference.load("cpu")
    assert ref["provenance"]["commit"] == "abc123"  # only results/ differed
    assert ref["provenance"]["machine"] == MACHINE and "torch" in ref["provenance"]["versions"]
    assert ref["provenance"]["fingerprint"] == {"as_is": {}, "pinned": {}}  # measured
    assert ref["chapters"]["a1_localization"]["code"] == "c0"
    assert [c["key"] for c in ref["claims"]] == ["a1_side"]
    assert tool.main(["--check", str(reference.path("cpu"))]) == 0


def test_make_reference_refuses_a_build_it_cannot_vouch_for(tool, monkeypatch, capsys):
    tool, recs = tool
    monkeypatch.setattr(tool, "stale_chapters", lambda profile: ["a2_mechanism"])
    assert tool.main([]) == 2
    assert "chapters not current at profile cpu: a2_mechanism" in capsys.readouterr().err
    monkeypatch.setattr(tool, "stale_chapters", lambda profile: [])
    recs[1]["overrides"] = {"seq_len": 200}
    assert tool.main([]) == 2
    assert "run with other parameters" in capsys.readouterr().err
    recs[1]["overrides"] = {}
    monkeypatch.setattr(tool, "changed_code", lambda: ["src/normbook/grading/claims.py"])
    assert tool.main([]) == 2
    assert "commit them first" in capsys.readouterr().err
    assert reference.load("cpu") is None  # nothing written


def test_the_check_fails_on_any_difference(tool, capsys):
    tool, recs = tool
    assert tool.main([]) == 0
    recs[0]["claims"] = [claim("a1_side", 0.2 + 1e-6, 1e-4, 0.99)]
    assert tool.main(["--check", str(reference.path("cpu"))]) == 1
    assert "a1_side@profile (a1_localization): effect differs" in capsys.readouterr().err


def test_the_smoke_checks_reference_trains_no_fingerprint(tool, monkeypatch, tmp_path):
    """``make test``'s smoke checks write a reference that only ``--check`` reads: the command
    the Makefile runs trains no fingerprint (about 20 s), the check and the Build and compute
    page read the reference without one, and the committed reference cannot be written
    without it."""
    import shlex

    from normbook.publish import compute_page, project
    from normbook.tools import fingerprint

    tool, recs = tool

    def never():
        raise AssertionError("the smoke checks' reference trained the fingerprint")

    monkeypatch.setattr(fingerprint, "measure", never)
    (line,) = [ln for ln in (project.ROOT / "Makefile").read_text().splitlines()
               if "-m normbook.tools.reference" in ln and "--out" in ln]  # fmt: skip
    argv = shlex.split(line.split("-m normbook.tools.reference", 1)[1])
    out = tmp_path / "smoke" / "reference.json"
    argv[argv.index("--out") + 1] = str(out)
    assert "--no-fingerprint" in argv and tool.main(argv) == 0
    ref = reference.load_file(out)
    assert ref["profile"] == "smoke" and "fingerprint" not in ref["provenance"]
    assert tool.main(["--profile", "smoke", "--check", str(out)]) == 0
    assert "The reference keeps no fingerprint" in compute_page.portability("smoke", ref)
    with pytest.raises(SystemExit):  # results/<profile>/ledger.json keeps its fingerprint
        tool.main(["--no-fingerprint"])
    assert reference.load("cpu") is None


def test_the_methods_page_measures_the_flag_against_a_build_on_another_instruction_set(
    tmp_path, monkeypatch
):
    from normbook.book_pages import methods

    monkeypatch.setattr(reference, "RESULTS", tmp_path)
    assert "No build on another instruction set" in methods.stability_study("cpu")
    ref = snapshot(build(a1_side=claim("a1_side", 0.1, 0.012, 0.9)))  # adjusted: 0.018
    other = snapshot(build(a1_side=claim("a1_side", 0.09, 0.08, 0.9, NOT_SHOWN)))
    other["provenance"]["machine"] = {**MACHINE, "isa": "Intel AVX",
                                      "flags": {"ONEDNN_MAX_CPU_ISA": "AVX"}}  # fmt: skip
    study = tmp_path / "cpu" / "isa" / "abc"
    study.mkdir(parents=True)
    (study / "reference.json").write_text(reference.dumps(ref))
    (study / "avx.json").write_text(reference.dumps(other))
    (tmp_path / "cpu" / "ledger.json").write_text(reference.dumps(snapshot(build())))  # newer
    text = methods.stability_study("cpu")
    assert "**`avx`**: AMD EPYC (cpu family 25, model 1), oneDNN on Intel AVX" in text
    assert "(ONEDNN_MAX_CPU_ISA=AVX)" in text and "2 of 3 final verdicts agree" in text
    assert "1 verdicts differ; 1 of them sat within" in text
    assert "claim a1_side ({ref}`a1-verdict`)" in text and "| yes |" in text


def test_a_new_reference_makes_the_pages_that_compare_with_it_stale(tmp_path, monkeypatch):
    from normbook.publish import project

    monkeypatch.setattr(project, "ROOT", tmp_path)
    before = project.reference_digest("cpu")
    (tmp_path / "results" / "cpu").mkdir(parents=True)
    (tmp_path / "results" / "cpu" / "ledger.json").write_text(reference.dumps(snapshot(build())))
    after = project.reference_digest("cpu")
    (tmp_path / "results" / "cpu" / "isa" / "abc").mkdir(parents=True)
    (tmp_path / "results" / "cpu" / "isa" / "abc" / "avx.json").write_text("{}")
    both = project.reference_digest("cpu")
    assert len({before, after, both}) == 3
    (tmp_path / "results" / "cpu" / "other.json").write_text("{}")  # not a ledger
    assert project.reference_digest("cpu") == both


def test_every_committed_build_on_another_instruction_set_is_covered_by_the_flag():
    """The flag's width was chosen by measurement: against every ledger committed beside the
    reference (the same commit computed on another instruction set), each claim whose verdict
    differs sat near its line in one build or the other, and no deciding p moved farther than
    the width. A new committed build that breaks this asks for a new width."""
    studies = reference.isa_studies("cpu")
    if not studies:
        pytest.skip("no build on another instruction set committed")
    for name, other, ref in studies:
        cmp = reference.compare(reference.as_records(other), ref)
        assert cmp.compared == len(ref["claims"]), name
        missed = [d.ident for d in cmp.of("verdict") if not d.flagged]
        assert missed == [], f"{name}: verdicts differ without a flag: {missed}"
        assert max(reference.shifts(ref, other)) <= stability.NEAR_LINE, name


# ---- which machines computed the numbers ---------------------------------------------------

ENTRY = {**MACHINE, "threads": 1, "versions": {"python": "3.11.7", "torch": "2.13.0+cpu",
                                               "numpy": "2.3.5", "scipy": "1.16.3",
                                               "scikit-learn": "1.7.2"}}  # fmt: skip


def _computed_by(recs, *machines):
    for r in recs:
        r["cache"]["machines"] = [{"machine": m, "entries": 3} for m in machines]
    return recs


def test_the_reference_names_the_machines_and_versions_of_each_chapters_entries():
    ref = snapshot(_computed_by(build(), ENTRY))
    for ch in ref["chapters"].values():
        assert ch["computed_by"] == [{"machine": ENTRY, "entries": 3}]
    recs = _computed_by(build(a1_side=claim("a1_side", 0.07, 0.2, 0.8, NOT_SHOWN)), ENTRY)
    (row,) = reference.difference_rows(reference.compare(recs, ref))
    both = row["computed by (reference / here)"]
    assert both.count("AMD EPYC (cpu family 25, model 1), oneDNN on Intel AVX2, 1 thread") == 2
    assert "numpy 2.3.5" in both and "scikit-learn 1.7.2" in both and "(3 entries)" in both


def cmp_recs(changed, machine):
    return _computed_by(build(**changed), machine)


def test_the_machine_is_the_cause_only_where_the_entries_machines_differ():
    ref = snapshot(_computed_by(build(), ENTRY))
    changed = {"a1_side": claim("a1_side", 0.07, 0.2, 0.8, NOT_SHOWN)}
    # another machine executed the notebooks, but every entry came from the reference's
    recs = _computed_by(build(**changed), ENTRY)
    for r in recs:
        r["machine"] = OTHER_MACHINE
    cmp = reference.compare(recs, ref)
    assert cmp.of("verdict")[0].cause == reference.SAME_ORIGIN
    assert "differ by the machine" not in reference.sentence(cmp, "cpu")
    # entries computed on another CPU
    other = {**ENTRY, "cpu": OTHER_MACHINE["cpu"], "isa": OTHER_MACHINE["isa"]}
    cmp = reference.compare(_computed_by(build(**changed), other), ref)
    assert cmp.of("verdict")[0].cause == reference.MACHINE
    # the same machine with another numpy: the version is named, not the machine
    newer = {**ENTRY, "versions": {**ENTRY["versions"], "numpy": "2.4.0"}}
    cmp = reference.compare(_computed_by(build(**changed), newer), ref)
    (d,) = cmp.of("verdict")
    assert d.cause == reference.VERSIONS
    assert cmp.versions["a1_localization"] == ["numpy 2.3.5 -> 2.4.0"]
    assert "numpy 2.3.5 -> 2.4.0" in reference.difference_rows(cmp)[0]["cause"]
    row = next(c for r in cmp_recs(changed, newer) for c in r["claims"] if c["key"] == "a1_side")
    assert claims_ledger.reference_text(row, "a1_localization", cmp) == (
        "**differs** (reference: reproduced, 0.200 [0.100, 0.300]) (library versions: numpy "
        "2.3.5 -> 2.4.0)")  # fmt: skip
    # a reference whose entries record nothing: the executing machines decide, or nothing does
    old = snapshot(build())
    cmp = reference.compare(_computed_by(build(**changed), ENTRY), old)
    assert cmp.of("verdict")[0].cause == reference.UNRECORDED
