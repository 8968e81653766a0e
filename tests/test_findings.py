"""The intro's findings are read from the ledger: every central question finds its claim in a
build's records, every refutation is shown, the verdict is worded "at this profile" with what
would decide it, opposite-sign effects are flagged, and counts are split by origin."""

from __future__ import annotations

import math

import pytest

from normbook.book_pages import intro as findings
from normbook.book_pages import ledger as claims_ledger


def _claim(section, claim, verdict="reproduced", effect=0.4, low=0.3, high=0.5, key="", **kw):
    return {"section": section, "claim": claim, "key": key, "verdict": verdict, "unit": ".2f",
            "effect": effect, "low": low, "high": high, "sesoi_text": "0.05 of the ramp's slope",
            "sesoi": 0.05, "paper": "A", "paper_says": "the paper's words", "n": 5,
            "test": "one-sided t", **kw}  # fmt: skip


def _record(chapter, *claims, **kw):
    """A chapter's record; its central claims the claims do not name are planted beside them
    (a chapter run with the profile's parameters grades every one)."""
    keys = {c["key"] for c in claims}
    central = [] if kw.get("overrides") else [
        _claim("x-verdict", "planted", key=q.key) for q in findings.CENTRAL
        if q.chapter == chapter and q.key not in keys]  # fmt: skip
    return {"chapter": chapter, "claims": [*claims, *central], "params": {}, "numbers": {}, **kw}


def test_each_question_reads_its_claim_by_key_and_words_the_verdict_at_this_profile():
    q = findings.CENTRAL[0]
    recs = [_record(q.chapter, _claim("a1-verdict", "any wording at all", key=q.key))]
    (found, (r, c)), *_ = findings.answers(recs)
    assert found is q and c["key"] == q.key
    table = findings.findings_table(recs, "cpu", "A")
    assert "**reproduced**" in table and "0.40 [0.30, 0.50]" in table
    assert q.text in table and "a1-verdict" in table


def test_a_chapter_rerun_with_other_parameters_never_breaks_the_intro():
    """A claim the re-run chapter graded under another wording is still found by its key and
    says the chapter ran with other parameters; one it did not grade is named, not an error."""
    q, q2 = findings.CENTRAL[0], findings.CENTRAL[1]
    rerun = {"seq_len": 200, "norm": "group", "groups": 4}
    recs = [_record(q.chapter, _claim("a1-verdict", "With group: ...", key=q.key),
                    overrides=rerun)]  # fmt: skip
    table = findings.findings_table(recs, "cpu", "A")
    assert "chapter run with other parameters: seq_len 200, norm group, groups 4" in table
    assert f"{q2.text} (**not graded in this build**: chapter run with other parameters" in table
    assert (f"Graded by a chapter run with other parameters, so not the `cpu` profile's run "
            f"(the reference compares none of them): {q.text} (other parameters: seq_len 200, "
            "norm group, groups 4).") in table  # fmt: skip


def test_a_refutation_no_question_shows_is_added_and_ours_is_not():
    other = _claim("a4-extra", "Some other claim", verdict="refuted")
    ours = _claim("a4-extra", "(ours) a control", verdict="refuted", paper_says="")
    table = findings.findings_table([_record("a4_stress", other, ours)], "cpu", "A")
    assert "Some other claim" not in table and "the paper's words" in table
    assert "(a further refutation)" in table and "**refuted** at `cpu`" in table
    assert table.count("(a further refutation)") == 1


def test_no_estimate_is_a_dash_with_its_reason():
    c = _claim("a1-verdict", "x", verdict="refuted", effect=math.nan, low=math.nan,
               high=math.nan)  # fmt: skip
    assert findings.effect_text(c) == "– (no estimate at this budget)"


def test_a_missing_record_is_said_not_guessed():
    assert "No record in this build for" in findings.findings_table([], "cpu", "A")


def test_a_renamed_key_in_a_default_run_stops_the_page():
    with pytest.raises(ValueError, match="a1_side_channel.*update book_pages.intro.CENTRAL"):
        findings.answers(
            [
                {
                    "chapter": "a1_localization",
                    "params": {},
                    "numbers": {},
                    "claims": [_claim("a1-verdict", "x", key="renamed")],
                }
            ]
        )


def test_opposite_sign_is_flagged_and_the_undecided_sentence_counts_it():
    flipped = _claim("b3-verdict", "CIFAR-10: DBI(k*) is lower", verdict=claims_ledger.NOT_SHOWN,
                     effect=-0.4, low=-0.5, high=-0.3, graded_why="of the other sign, but may "
                     "still be rising", moving=True)  # fmt: skip
    assert claims_ledger.opposite_sign(flipped)
    assert "⚠ opposite sign" in findings.verdict_text(flipped, "cpu")
    assert not claims_ledger.opposite_sign({**flipped, "band": True})
    text = findings.undecided(
        [
            {
                "chapter": "b3_clusters",
                "params": {},
                "numbers": {},
                "claims": [flipped, _claim("b3-verdict", "y")],
            }
        ]
    )
    assert "1 of 2 claims (50%)" in text and "a longer budget" in text and "⚠" in text


def test_origin_tells_papers_claims_retests_critics_and_ours_apart():
    o = claims_ledger.origin
    assert o(_claim("a1-verdict", "x"), "a1_localization") == "paper"
    assert o(_claim("a4-unet", "x"), "a4_stress") == "re-test"
    assert o(_claim("b4-verdict", "Critics' confound, CIFAR-10: ..."), "b4_stress") == "critics"
    review = "not in the paper (the reviewers' question: BN, or its learning rate)"
    assert o(_claim("b4-verdict", "BN itself", paper_says=review), "b4_stress") == "critics"
    assert o(_claim("b4-verdict", "(ours) MNIST", paper_says=""), "b4_stress") == "ours"
    control = "not in the paper (the matched control of the multi-hop reading)"
    assert o(_claim("a5-layers", "x", paper_says=control), "a5_reach") == "ours"


def test_the_split_reads_b4s_numbers_and_grades():
    n = {"b4_split_sparsity_paper": 0.116, "b4_split_sparsity_bn": -0.046,
         "b4_split_sparsity_lr": 0.162}  # fmt: skip
    bn = _claim("b4-verdict", "BN itself", verdict="partly reproduced", key=findings.SPLIT[0][3])
    lr = _claim("b4-verdict", "the rate", verdict="reproduced", key=findings.SPLIT[0][4])
    text = findings.split_table([_record("b4_stress", bn, lr, numbers=n)])
    assert "0.116 = −0.046 (BatchNorm) + 0.162 (learning rate)" in text
    assert "**partly reproduced**" in text and "**reproduced**" in text
    assert findings.split_table([]) == ""


def test_the_scale_line_states_this_build_against_the_papers():
    a1 = _record("a1_localization", params={"seq_len": 75, "depth": 4, "seeds": [0, 1, 2]})
    b1 = _record("b1_setup_accuracy", params={"vgg_width": 0.125},
                 numbers={"b1_mean_acc_cifar10_bn": 0.52},
                 provenance=["CIFAR-10 train: `x.tar.gz` (UNVERIFIED copy; rebuilt from a JPEG "
                             "export)"])  # fmt: skip
    line = findings.scale_line([a1, b1], "cpu")
    assert "length 75, 4 normalization layers, 3 seeds (paper: 600, 32, 4)" in line
    assert "52%" in line and "85.99 %" in line
    assert "unverified copy of CIFAR-10 (rebuilt from JPEG)" in line
    assert "kernels" not in line  # records without a machine say nothing of it


def test_the_scale_line_says_whether_the_kernels_were_pinned():
    pinned = {"isa": "Intel AVX2", "flags": {"ONEDNN_MAX_CPU_ISA": "AVX2"}}
    a1 = {**_record("a1_localization", params={"seq_len": 75, "depth": 4, "seeds": [0]}),
          "machine": pinned}  # fmt: skip
    assert (
        "kernels pinned to the reference machine's instruction set (`ONEDNN_MAX_CPU_ISA=AVX2`"
        in findings.scale_line([a1], "cpu")
    )
    a1["machine"] = {"isa": "Intel AVX-512", "flags": {}}
    assert "kernels as the CPU chose them (Intel AVX-512; no pins" in findings.scale_line(
        [a1], "cpu"
    )


def test_the_recorded_note_says_how_to_make_a_paper_scale_record():
    assert "make paper-run" in findings.recorded_note([])


def test_a_recorded_paper_scale_grade_sits_beside_this_builds():
    from normbook.paper_a import recorded
    from normbook.paper_a.recorded import CLAIM_PREFIX

    q = findings.CENTRAL[0]
    own = _claim("a1-verdict", "x", key=q.key)
    rec = _claim("a1-paper-scale", CLAIM_PREFIX + own["claim"], verdict="refuted", scale="paper",
                 key=recorded.paper_scale_key(q.key))  # fmt: skip
    table = findings.findings_table([_record("a1_localization", own, rec)], "cpu", "A")
    assert "at the paper's scale (recorded)" in table and "**refuted**; 0.40" in table
    assert "paper's scale (recorded)" not in findings.findings_table(
        [_record("a1_localization", own)], "cpu", "A"
    )
