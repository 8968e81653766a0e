"""Claim tests against a smallest effect of interest, and the verdict vocabulary: every grade
of ``decide`` has a case where it must be given and one where it must not."""

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats as sps

from normbook.grading import claims, power, verdicts
from normbook.grading.claims import ClaimTest
from normbook.grading.verdicts import NOT_SHOWN, NOT_TESTABLE, PARTLY, REFUTED, REPRODUCED, Control

OK = Control("family", "learned", True, "")
FAILED = Control("family", "learned", False, "")


def test_mean_test_is_two_one_sided_t_tests_against_the_sesoi():
    d = np.array([0.14, 0.16, 0.18, 0.17, 0.18])
    t = claims.mean_test(d, 0.05, null="z")
    assert t.p == pytest.approx(sps.ttest_1samp(d, 0.05, alternative="greater").pvalue)
    assert t.p_refute == pytest.approx(sps.ttest_1samp(d, 0.05, alternative="less").pvalue)
    ci = sps.ttest_1samp(d, 0).confidence_interval(claims.CLAIM_CONFIDENCE)
    assert (t.low, t.high) == pytest.approx((ci.low, ci.high))
    assert t.effect == pytest.approx(d.mean()) and t.sesoi == 0.05 and t.n == 5
    # the interval and the tests say the same thing: low > SESOI exactly when p < alpha
    for shift in np.linspace(-0.2, 0.2, 21):
        u = claims.mean_test(d + shift, 0.05, null="z")
        assert u.clears() == (u.low > 0.05) and u.below() == (u.high < 0.05)


def test_one_discordant_seed_does_not_decide_the_claim():
    # a seed that barely learned: the exact sign-flip test could not reach 0.05 (p >= 1/16)
    t = claims.mean_test(np.array([0.14, 0.16, 0.02, 0.17, 0.18]), 0.05, null="z")
    assert t.clears()


def test_mean_test_degenerate_cases():
    one = claims.mean_test(np.array([0.3]), 0.05, null="z")
    assert math.isnan(one.p) and math.isnan(one.p_refute) and math.isnan(one.low)
    same = claims.mean_test(np.zeros(5), 0.05, null="z")  # no spread: the sign test's bound
    assert (same.low, same.high) == (0.0, 0.0) and same.p_refute == 2**-5 and not same.clears()
    assert not claims.mean_test(np.zeros(4), 0.05, null="z").below()  # 2^-4 > alpha
    at = claims.mean_test(np.full(5, 0.05), 0.05, null="z")  # equal to the SESOI: undecided
    assert at.p == at.p_refute == 1.0
    with pytest.raises(ValueError):
        claims.mean_test(np.zeros((2, 2)), 0.05, null="z")
    with pytest.raises(ValueError):
        claims.paired([1, 2], [1, 2, 3], 0.05, null="z")


def test_rank_shift_test_uses_only_the_order_against_the_sesoi():
    never = np.full(5, 14.0)  # no BN never settles (one past the last of 13 layers)
    bn = np.array([11.0, 12, 12, 13, 11])
    t = claims.rank_shift_test(never, bn, 0.5, null="z")
    assert t.p == pytest.approx(1 / 252) and t.clears() and t.p_refute > 0.5  # C(10, 5)
    assert t.effect == 2.0 and t.low > 0.5 and "P(x > y + SESOI) = 1.00" in t.test
    # the sentinel's size changes nothing: "never" coded 100 ranks the same as 14
    far = claims.rank_shift_test(np.full(5, 100.0), bn, 0.5, null="z")
    assert (far.p, far.p_refute) == (t.p, t.p_refute)
    # the paired t test on the same values is moved by the sentinel
    assert claims.mean_test(never - bn, 0.5, null="z").effect != claims.mean_test(
        np.full(5, 100.0) - bn, 0.5, null="z").effect  # fmt: skip
    same = claims.rank_shift_test(bn, bn, 0.5, null="z")  # no shift: below the SESOI?
    assert not same.clears()
    below = claims.rank_shift_test(bn - 3, bn, 0.5, null="z")
    assert below.below() and below.high < 0.5
    # the interval and the tests say the same thing at every shift
    rng = np.random.default_rng(4)
    for _ in range(30):
        a, b = rng.integers(1, 8, 5).astype(float), rng.integers(1, 8, 5).astype(float)
        r = claims.rank_shift_test(a, b, 0.5, null="z")
        assert r.clears() == (r.low > 0.5) and r.below() == (r.high < 0.5)
    tied = claims.rank_shift_test(np.ones(5), np.ones(5) - 0.5, 0.5, null="z")
    assert tied.p == tied.p_refute == 1.0
    with pytest.raises(ValueError):
        claims.rank_shift_test(np.zeros((2, 2)), np.zeros(2), 0.5, null="z")


def test_paired_is_the_mean_test_of_the_differences():
    x, y = np.array([0.3, 0.5, 0.2, 0.6, 0.4]), np.array([0.1, 0.1, 0.0, 0.2, 0.1])
    a, b = claims.paired(x, y, 0.1, null="y"), claims.mean_test(x - y, 0.1, null="y")
    assert (a.p, a.p_refute, a.low, a.high) == pytest.approx((b.p, b.p_refute, b.low, b.high))


def test_a_part_without_a_test_leaves_the_claim_without_one():
    good = claims.mean_test(np.array([0.5, 0.6, 0.55, 0.7, 0.65]), 0.05, null="a")
    none = claims.mean_test(np.array([0.5]), 0.05, null="b")
    assert math.isnan(claims.all_of(good, none).p)


def test_accuracy_within_is_an_equivalence_test_around_chance():
    assert claims.accuracy_within([4010, 3990], 8000, 0.05).clears()
    assert claims.accuracy_within([4010, 2400], 8000, 0.05).below()  # 0.30: not at chance either
    assert claims.accuracy_within([4010, 5600], 8000, 0.05).below()
    assert not claims.accuracy_within([20, 22], 40, 0.05).clears()  # too few pairs to tell


def test_all_of_needs_every_part_and_is_refuted_by_any():
    good = claims.mean_test(np.array([0.5, 0.6, 0.55, 0.7, 0.65]), 0.05, null="a")
    weak = claims.mean_test(np.array([0.01, 0.02, 0.0, 0.015, 0.01]), 0.05, null="b")
    both = claims.all_of(good, weak)
    assert both.p == pytest.approx(max(good.p, weak.p)) and not both.clears()
    assert both.p_refute == pytest.approx(min(1, 2 * weak.p_refute)) and both.below()
    assert both.effect == weak.effect and both.null == "a and b"  # the part that binds
    assert claims.all_of(good, good).clears()


def test_rank_trend_against_a_sesoi_on_rho():
    x = np.repeat([1, 2, 4, 8, 16], 2)
    rising = claims.rank_trend(x, x + 0.1 * np.arange(10) % 2, 0.3)
    assert rising.effect > 0.9 and rising.clears() and rising.low < rising.effect < rising.high
    falling = claims.rank_trend(x, -x.astype(float), 0.3)
    assert falling.below() and not falling.clears()
    flat = claims.rank_trend(x, np.ones(10), 0.3)
    assert math.isnan(flat.p) and math.isnan(flat.p_refute)
    assert math.isnan(claims.rank_trend([1, 2, 3], [1, 2, 3], 0.3).p)  # three models: no test


def test_accuracy_above_chance_needs_every_model():
    t = claims.accuracy_above([900, 880], 1000, 0.05)
    assert t.clears() and t.effect == pytest.approx(0.38)  # the least accurate model
    t = claims.accuracy_above([900, 510], 1000, 0.05)
    assert not t.clears() and t.below()  # one model at chance refutes "every model beats it"


def test_inside_band_is_an_equivalence_test():
    assert claims.inside_band([0.55, 0.56, 0.57], 0.5, 0.62, null="p").clears()
    outside = claims.inside_band([0.2, 0.21, 0.22], 0.5, 0.62, null="p")
    assert outside.below() and not outside.clears()
    straddles = claims.inside_band([0.45, 0.5, 0.55], 0.5, 0.62, null="p")
    assert not straddles.clears() and not straddles.below()
    assert math.isnan(claims.inside_band([0.55], 0.5, 0.62, null="p").p)


def test_power_is_the_noncentral_t_and_matches_the_test_itself():
    assert claims.t_power(5, 1.0, 0.0) != claims.t_power(5, 1.0, 0.0)  # no SESOI: undefined
    assert claims.t_power(5, 0.0, 0.1) == 1.0
    assert claims.t_power(6, 1.0, 1.0) > claims.t_power(5, 1.0, 1.0) > claims.t_power(4, 1.0, 1.0)
    sim = power.simulate_power([5], [1.0, 2.0], draws=300)
    assert np.allclose(sim.simulated, sim.analytic, atol=0.1)


def test_late_gain_and_may_rise():
    fr = np.array([0.25, 0.5, 1.0])
    flat = np.array([[0.0, 0.0, 0.0], [0.30, 0.31, 0.29], [0.301, 0.309, 0.293]])
    rising = np.array([[0.0, 0.0, 0.0], [0.10, 0.12, 0.11], [0.20, 0.23, 0.21]])
    noisy = np.array([[0.0, 0.0, 0.0], [0.2, 0.2, 0.2], [0.1, 0.3, 0.22]])
    assert not claims.may_rise(flat, fr, 0.02)
    assert claims.may_rise(rising, fr, 0.02) and claims.may_rise(noisy, fr, 0.02)
    g = claims.late_gain(rising, fr)
    assert g.effect == pytest.approx(0.1033, abs=1e-3) and g.low < g.effect < g.high
    assert claims.may_rise(flat[[0, 2]], np.array([0.75, 1.0]), 0.02)  # nothing by half


def test_adjusted_is_benjamini_hochberg_or_holm_and_skips_untested_rows():
    ps = [0.01, 0.04, float("nan"), 0.03]
    adj = claims.adjusted(ps)
    assert math.isnan(adj[2])
    assert adj[[0, 1, 3]] == pytest.approx(sps.false_discovery_control([0.01, 0.04, 0.03]))
    holm = claims.adjusted(ps, "holm")
    # sorted 0.01, 0.03, 0.04: x3, x2, x1, each at least the one before
    assert holm[[0, 3, 1]] == pytest.approx([0.03, 0.06, 0.06]) and math.isnan(holm[2])
    assert claims.adjusted([0.5, 0.9], "holm").tolist() == [1.0, 1.0]  # capped at 1
    assert claims.adjusted([0.02, 0.02], "holm").tolist() == [0.04, 0.04]  # ties: both x2
    assert claims.adjusted([]).size == 0
    # Holm never below BH, never below the raw p, never above Bonferroni
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = rng.uniform(0, 0.2, 7)
        h, b = claims.adjusted(p, "holm"), claims.adjusted(p)
        assert np.all(h >= b - 1e-15) and np.all(b >= p - 1e-15)
        assert np.all(h <= np.minimum(1, 7 * p) + 1e-15)
    with pytest.raises(ValueError):
        claims.adjusted(ps, "bonferroni")


# ----------------------------------------------------------------------------- decide


def _test(low, high, effect=None, n=5) -> ClaimTest:
    """A test whose interval is [low, high] around a SESOI of 0.05 (p-values from it)."""
    effect = (low + high) / 2 if effect is None else effect
    p = 0.01 if low > 0.05 else 0.5
    p_ref = 0.01 if high < 0.05 else 0.5
    return ClaimTest(effect, low, high, p, p_ref, n, "t", "null", 0.05)


CLEARS, BELOW, STRADDLES = _test(0.1, 0.2), _test(-0.01, 0.02), _test(0.0, 0.2)


@pytest.mark.parametrize(
    "test, controls, rising, testable, grade",
    [
        (CLEARS, (OK,), False, True, REPRODUCED),
        (CLEARS, (OK,), True, True, REPRODUCED),  # still rising does not undo a reproduction
        (BELOW, (OK,), False, True, REFUTED),  # an interval inside the SESOI band: refuted
        (BELOW, (OK,), True, True, NOT_SHOWN),  # ...unless the quantity may still be rising
        (BELOW, (OK,), None, True, NOT_SHOWN),  # ...or no kept states can tell
        (BELOW, (FAILED,), False, True, NOT_SHOWN),  # a family that never learned grades nothing
        (CLEARS, (FAILED,), False, True, NOT_SHOWN),
        (STRADDLES, (OK,), False, True, NOT_SHOWN),  # too little power is not "refuted"
        (CLEARS, (OK,), False, False, NOT_TESTABLE),
    ],
)
def test_decide(test, controls, rising, testable, grade):
    g = verdicts.decide(test, controls, rising=rising, testable=testable)
    assert g.why
    assert g.verdict == grade
    if grade in (REPRODUCED, REFUTED):
        assert g.p == pytest.approx(0.01)


def test_a_grade_held_by_construction_says_why_in_its_fields():
    """*not shown* held by the rule carries a field for why (``moving``, ``no_kept_states``,
    ``no_interval``), which the ledger and the stability measure read instead of ``why``; a
    claim of parts carries its parts' flags."""
    flags = lambda g: tuple(getattr(g, k) for k in verdicts.HELD)  # noqa: E731
    assert flags(verdicts.decide(BELOW, (OK,), rising=True)) == (True, False, False)
    assert flags(verdicts.decide(BELOW, (OK,), rising=None)) == (False, True, False)
    for rising in (False, True, None):  # reproduced or refuted: nothing held
        assert flags(verdicts.decide(CLEARS, (OK,), rising=rising)) == (False, False, False)
    assert flags(verdicts.decide(BELOW, (OK,), rising=False)) == (False, False, False)
    assert flags(verdicts.decide(STRADDLES, (OK,), rising=True)) == (False, False, False)
    empty = ClaimTest(math.nan, math.nan, math.nan, math.nan, math.nan, 1, "t", "null", 0.05)
    assert flags(verdicts.decide(empty, (OK,), rising=True)) == (False, False, True)
    out = claims.inside_band(np.array([0.9, 0.91, 0.92, 0.9]), 0.4, 0.6, null="band")
    assert flags(verdicts.decide(out, (OK,), rising=True)) == (True, False, False)
    assert flags(verdicts.decide(out, (OK,), rising=None)) == (False, True, False)
    moving = verdicts.decide(BELOW, (OK,), rising=True)
    rep = verdicts.decide(CLEARS, (OK,), rising=False)
    g = verdicts.decide_parts([("a", rep), ("b", moving)])
    assert g.moving and not g.no_kept_states and g.parts[1][1].moving


def test_a_failed_control_is_named():
    g = verdicts.decide(
        BELOW, (OK, Control("GroupNorm G = 2", "learned the ramp", False, "")), rising=False
    )
    assert g.verdict == NOT_SHOWN and "GroupNorm G = 2" in g.why


def test_a_claim_whose_premise_was_refuted_is_moot_and_otherwise_graded():
    """A premise refuted: the claim is moot, whatever its own test says; a premise reproduced:
    graded as usual; a premise not shown: not shown (a failed control), not moot."""
    refuted = Control.of_claim("BatchNorm", "localizes beyond R", verdicts.REFUTED, "bn")
    for test in (CLEARS, BELOW, STRADDLES):
        g = verdicts.decide(test, (OK, refuted), rising=False)
        assert g.verdict == verdicts.MOOT and g.why == (
            "its premise was refuted: BatchNorm, localizes beyond R"
        )
    held = Control.of_claim("BatchNorm", "localizes beyond R", NOT_SHOWN, "bn")
    assert verdicts.decide(BELOW, (OK, held), rising=False).verdict == NOT_SHOWN
    holds = Control.of_claim("BatchNorm", "localizes beyond R", REPRODUCED, "bn")
    assert verdicts.decide(BELOW, (OK, holds), rising=False).verdict == verdicts.REFUTED
    assert verdicts.MOOT in verdicts.GRADES and verdicts.MOOT not in verdicts.DECISIVE
    # the ledger keeps it apart from not shown: its own count, no distance to a line
    from normbook.book_pages.ledger import counts, needs_table
    from normbook.grading import stability

    row = {"paper": "A", "verdict": verdicts.MOOT, "graded": verdicts.MOOT, "key": "fade",
           "controls": [{"passed": False, "premise_refuted": True}]}  # fmt: skip
    assert stability.distance(row)[1].startswith("its premise")
    recs = [{"chapter": "a3_which_norms", "claims": [row]}]
    assert counts(recs)["A"][verdicts.MOOT] == 1 and counts(recs)["A"][NOT_SHOWN] == 0
    assert needs_table(recs) == "*(no claim is not shown)*"


def test_decide_parts():
    rep, ref = (verdicts.decide(t, (OK,), rising=False) for t in (CLEARS, BELOW))
    shown = verdicts.decide(STRADDLES, (OK,), rising=False)
    assert verdicts.decide_parts([("a", rep), ("b", rep)]).verdict == REPRODUCED
    g = verdicts.decide_parts([("at lr 1e-3", rep), ("at lr 1e-4", ref)])
    assert g.verdict == PARTLY and "at lr 1e-4: refuted" in g.why and g.p == pytest.approx(0.02)
    # which part holds was not fixed in advance: a part that clears only at alpha is not enough
    lucky = verdicts.Grade(REPRODUCED, "x", 0.04)
    assert verdicts.decide_parts([("a", lucky), ("b", shown)]).verdict == NOT_SHOWN
    assert verdicts.decide_parts([("a", ref), ("b", shown)]).verdict == REFUTED  # p 0.02
    weak = verdicts.Grade(REFUTED, "x", 0.04)  # below its SESOI at 0.04, not after Bonferroni
    assert verdicts.decide_parts([("a", weak), ("b", shown)]).verdict == NOT_SHOWN
    assert verdicts.decide_parts([("a", shown), ("b", shown)]).verdict == NOT_SHOWN


def test_verdict_row_shows_effect_interval_sesoi_test_and_null():
    t = ClaimTest(0.25, 0.1, 0.4, 0.031, 0.9, 5, "paired t test", "no-norm", 0.05)
    s = claims.Sesoi(0.05, "of the ramp's slope", "reason")
    v = verdicts.Verdict("A", "claim", verdicts.decide(t, rising=False), t, s, "more")
    row = v.row()
    assert list(row) == ["claim (as tested)", "verdict", "effect [90% CI] vs SESOI"]
    effect = row["effect [90% CI] vs SESOI"]
    assert effect == "0.250 [0.100, 0.400]; SESOI 0.050 of the ramp's slope"
    assert "reproduced" in row["verdict"]
    # the test, its p-values, the null and the evidence fold under the claim, escaped
    claim, folded = row["claim (as tested)"].split(" <details>")
    assert claim == "claim" and folded.endswith("</details>")
    assert "<b>test</b>: paired t test; p(reproduce) = 0.031" in folded
    assert "<b>compared with</b>: no-norm" in folded and "<b>evidence</b>: more" in folded
    assert "a &lt; b \\| c" in verdicts.fold({"x": "a < b | c"})
    assert claims.CLAIM_CONFIDENCE == pytest.approx(1 - 2 * claims.ALPHA)


def test_failed_check_reads_as_a_bug():
    assert "bug" in verdicts.Check("A", "x", False, "e").row()["result"]
    assert verdicts.Check("A", "x", True, "e").row()["result"] == "holds"


def test_units_needed_reaches_the_target_power_at_the_observed_effect():
    rng = np.random.default_rng(3)
    d = rng.normal(0.08, 0.05, 5)  # SESOI 0.05: the interval straddles it
    t = claims.mean_test(d, 0.05, null="z")
    n = power.units_needed(t.effect, t.low, t.high, t.n, 0.05, t.test)
    sd, delta = float(d.std(ddof=1)), abs(t.effect - 0.05)
    assert claims.t_power(n, sd, delta) >= power.TARGET_POWER > claims.t_power(n - 1, sd, delta)
    # a stricter level needs more seeds; an effect at the SESOI, none
    assert power.units_needed(t.effect, t.low, t.high, t.n, 0.05, t.test, alpha=0.001) > n
    assert power.units_needed(0.05, 0.0, 0.1, 5, 0.05, t.test) == power.MAX_UNITS + 1
    r = claims.rank_shift_test(np.array([3.0, 4, 2, 5, 4]), np.array([2.0, 3, 3, 2, 4]), 0.5,
                               null="z")  # fmt: skip
    m = power.units_needed(r.effect, r.low, r.high, r.n, 0.5, r.test)
    assert m > 5  # not decided by five: Noether's formula asks for more
    assert power.units_needed(0.1, 0.0, 0.2, 5, 0.05, "Spearman rank correlation") is None
    assert power.units_needed(0.1, math.nan, math.nan, 5, 0.05, t.test) is None


def test_units_needed_has_no_count_for_equivalence_and_bounds_the_no_spread_case():
    w = claims.within(np.array([-0.03, -0.07, 0.01, -0.05, -0.01]), 0.05, null="z")
    assert power.units_needed(w.effect, w.low, w.high, w.n, 0.05, w.test) is None
    same = claims.mean_test(np.full(4, 0.2), 0.05, null="z")  # no spread, 4 seeds: 2^-4 > 0.05
    assert not same.clears()
    assert power.units_needed(same.effect, same.low, same.high, 4, 0.05, same.test) == 5
    r = claims.rank_shift_test(np.array([3.0, 4, 2, 5, 4]), np.array([2.0, 3, 3, 2, 4]), 0.5,
                               null="z")  # fmt: skip
    share = float(r.test.split("= ")[-1].rstrip(")"))
    z = sps.norm.ppf(0.95) + sps.norm.ppf(power.TARGET_POWER)
    # Noether's formula, per group: N_total = z^2 / (12 c (1 - c) (P - 1/2)^2), c = 1/2
    per_group = math.ceil(z**2 / (12 * 0.25 * (share - 0.5) ** 2) / 2)
    assert power.units_needed(r.effect, r.low, r.high, r.n, 0.5, r.test) == per_group


def test_rank_shift_test_leaves_two_nevers_undecided():
    # both families never settle (14 = one past 13 layers): shifting one "never" by the SESOI
    # must not order it after the other, so nothing is shown either way
    never = np.full(5, 14.0)
    t = claims.rank_shift_test(never, never, 1.0, null="z", never=14)
    assert t.p == t.p_refute == 1.0 and "Gehan" in t.test
    # uncensored, the shift orders them: every x below y + 1, "below the SESOI" at 1/252
    naive = claims.rank_shift_test(never, never, 1.0, null="z")
    assert naive.p_refute == pytest.approx(1 / 252)
    # a "never" is surely later than a layer below its censoring point, undecided past it
    bn = np.array([5.0, 6, 5, 6, 5])
    assert claims.rank_shift_test(never, bn, 1.0, null="z", never=14).p == pytest.approx(1 / 252)
    late = np.array([13.0, 13, 13, 13, 13])  # + 1 = 14: as late as "never" can be known to be
    assert claims.rank_shift_test(never, late, 1.0, null="z", never=14).p == 1.0
    # without censored units Gehan's statistic is Mann-Whitney's
    a, b = np.array([3.0, 4, 2, 5, 4]), np.array([2.0, 3, 3, 2, 4])
    g, m = (claims.rank_shift_test(a, b, 0.5, null="z", never=n) for n in (99, None))
    assert (g.p, g.p_refute, g.low, g.high) == (m.p, m.p_refute, m.low, m.high)
    exact = sps.PermutationMethod(n_resamples=np.inf)  # exact over splits, ties included
    assert g.p == pytest.approx(
        sps.mannwhitneyu(a, b + 0.5, alternative="greater", method=exact).pvalue
    )


def test_a_verdict_names_its_rule_its_measure_and_its_sesoi_from_the_code():
    """A row's links are taken from code objects, each given explicitly: ``rule=`` (the function
    that applies the rule), ``measure=``, and the SESOI's module constant."""
    from normbook.grading.verdicts import Verdict, code_links
    from normbook.paper_a.grading.sesoi import SLOPE
    from normbook.paper_a.measures import bands

    def a_rule():
        test = claims.mean_test([0.2, 0.3, 0.25], SLOPE.value, null="x")
        return Verdict.graded("A", "c", test, SLOPE, rising=False, rule=a_rule,
                              measure=bands.interior_slope)  # fmt: skip

    v = a_rule()
    assert v.code == (
        # a nested rule links to the definition a source page anchors: the enclosing one
        ("rule", __name__, "test_a_verdict_names_its_rule_its_measure_and_its_sesoi_from_the_code"),
        ("effect", "normbook.paper_a.measures.bands", "interior_slope"),
        ("SESOI", "normbook.paper_a.grading.sesoi", "SLOPE"),
    )
    html = code_links(v.code)
    assert "_code/normbook/paper_a/measures/bands.html#interior_slope" in html
    assert html in v.row()["claim (as tested)"]
    # the link is the function given, whoever calls Verdict.graded: a module-level rule
    linked = Verdict.graded("A", "c", v.test, SLOPE, rising=False, rule=claims.mean_test,
                            measure=bands.interior_slope)  # fmt: skip
    assert linked.code[0] == ("rule", "normbook.grading.claims", "mean_test")


def test_a_verdict_without_its_rule_is_refused_in_one_line():
    from normbook.grading.verdicts import Verdict
    from normbook.paper_a.grading.sesoi import SLOPE

    test = claims.mean_test([0.2, 0.3, 0.25], SLOPE.value, null="x")
    with pytest.raises(TypeError, match="'k': needs rule=") as exc:
        Verdict.graded("A", "c", test, SLOPE, rising=False, key="k")
    assert "\n" not in str(exc.value)
    with pytest.raises(TypeError, match="needs rule="):
        Verdict.in_parts("A", "c", [("a", verdicts.decide(test, rising=False))], test, SLOPE,
                         rule="not a function")  # fmt: skip


def test_code_links_name_definitions_a_source_page_anchors():
    """A SESOI made from a constant with ``dataclasses.replace`` links to that constant; a
    helper that only assembles rows links to the rule its caller hands it (B4's
    ``_two_parts_row``); a lambda or partial measure links to the definition that holds it."""
    import functools
    from dataclasses import replace

    from normbook.grading.verdicts import Verdict
    from normbook.paper_a.grading.sesoi import CHANCE, SLOPE
    from normbook.paper_a.measures import bands

    assert replace(CHANCE, unit="from chance").code_ref() == (
        "normbook.paper_a.grading.sesoi",
        "CHANCE",
    )
    test = claims.mean_test([0.2, 0.3, 0.25], SLOPE.value, null="x")

    def _assemble(measure, rule):
        return Verdict.graded("A", "c", test, SLOPE, rising=False, rule=rule, measure=measure)

    def the_rule():
        return [_assemble(lambda r: r, the_rule),
                _assemble(functools.partial(bands.interior_slope), the_rule)]  # fmt: skip

    lam, part = the_rule()
    here = "test_code_links_name_definitions_a_source_page_anchors"
    assert lam.code[0][2] == part.code[0][2] == here  # the_rule, nested: enclosing
    assert lam.code[1][2] == here
    assert part.code[1][1:] == ("normbook.paper_a.measures.bands", "interior_slope")


def _row(test, controls):
    return verdicts.Verdict.graded("A", "c", test, claims.Sesoi(0.05, "u", "r"), rising=False,
                                   controls=controls, rule=_row)  # fmt: skip


def test_blocked_text_names_the_failed_check_and_reads_the_test_either_way():
    """A row held by a failed family check says what was measured and which side of the SESOI
    its own test is on; a row whose checks passed, or whose premise failed, says nothing."""
    weak = Control("GroupNorm, G < C", "first-hop slope ≥ 0.05", False, "G = 8: 0.300, 0.000")
    sides = ((CLEARS, "clears the SESOI"), (BELOW, "is below the SESOI"),
             (STRADDLES, "on neither side"))  # fmt: skip
    for test, side in sides:
        v = _row(test, (OK, weak))
        text = v.blocked_text()
        assert v.verdict == NOT_SHOWN and "GroupNorm, G < C failed its check" in text
        assert "G = 8: 0.300, 0.000" in text and side in text and "family failed" not in text
    band = _row(replace(STRADDLES, band=True), (weak,)).blocked_text()
    assert "on neither side of the band's edge" in band
    assert _row(CLEARS, (OK,)).blocked_text() == ""
    premise = Control.of_claim("BatchNorm", "localizes", NOT_SHOWN, "bn")
    held = _row(CLEARS, (premise,))
    assert held.verdict == NOT_SHOWN and held.blocked_text() == ""
