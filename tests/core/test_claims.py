"""Claim tests and the verdict vocabulary: exact sign-flip p-values, intervals, the
intersection-union combination, and every grade of ``grade_test``."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from normbook.core import claims, verdicts


def test_signflip_p_is_exact():
    # five positive differences: only 1 of 32 sign patterns has a mean as large
    t = claims.paired_signflip([1, 2, 3, 4, 5], [0, 0, 0, 0, 0], null="zero")
    assert t.p == pytest.approx(1 / 32) and t.min_p == pytest.approx(1 / 32)
    assert t.significant() and t.powered() and t.n == 5 and t.null == "zero"
    # |d| = 1, 1, 2, 3, 4 with one 1 negative: sums 11 (none flipped) and 9 (either 1 flipped)
    # reach the observed 9, so 3 of 32 patterns
    t = claims.paired_signflip([1, 2, 3, 4, -1], [0, 0, 0, 0, 0], null="zero")
    assert t.p == pytest.approx(3 / 32)


def test_signflip_of_one_seed_is_exact_and_never_significant():
    up, down = (claims.paired_signflip([x], [0], null="zero") for x in (2.0, -2.0))
    assert (up.p, down.p, up.min_p) == (0.5, 1.0, 0.5) and not up.significant()
    assert claims.paired_signflip([2.0], [0], "zero", alternative="less").p == 1.0
    assert np.isnan(up.low) and np.isnan(up.high)  # no spread to estimate from one seed


def test_signflip_interval_is_students_t():
    x, y = np.array([0.3, 0.5, 0.2, 0.6, 0.4]), np.array([0.1, 0.1, 0.0, 0.2, 0.1])
    t = claims.paired_signflip(x, y, null="y")
    ci = sps.ttest_1samp(x - y, 0).confidence_interval(0.90)  # two-sided 1 - 2 alpha
    assert (t.low, t.high) == pytest.approx((ci.low, ci.high))
    assert t.effect == pytest.approx((x - y).mean())


def test_signflip_cannot_reach_alpha_with_four_seeds():
    t = claims.paired_signflip([1, 2, 3, 4], [0, 0, 0, 0], null="zero")
    assert t.p == pytest.approx(1 / 16) and not t.powered(0.05) and not t.significant(0.05)


def test_min_paired_seeds():
    assert claims.min_paired_seeds(0.05) == 5 and claims.min_paired_seeds(0.1) == 4
    for alpha in (0.01, 0.05, 0.1):
        n = claims.min_paired_seeds(alpha)
        assert 2.0**-n < alpha <= 2.0 ** -(n - 1)


def test_signflip_of_identical_values_is_p_one():
    t = claims.paired_signflip([0.1, 0.1, 0.2], [0.1, 0.1, 0.2], null="same")
    assert t.p == 1.0 and t.effect == 0.0


def test_signflip_refuses_mismatched_shapes():
    with pytest.raises(ValueError):
        claims.paired_signflip([[1, 2]], [[0, 0]], null="x")


def test_worst_of_rests_on_the_binding_test():
    a = claims.paired_signflip([1, 2, 3, 4, 5], [0, 0, 0, 0, 0], null="a")
    b = claims.paired_signflip([1, 2, 3, 4, 5], [0.5, 0, 0, 0, 9], null="b")
    w = claims.worst_of(a, b)
    assert b.p > a.p and (w.p, w.effect, w.low, w.high) == (b.p, b.effect, b.low, b.high)
    assert w.null == "a and b"
    # on a tie of p-values, the smaller effect binds
    c = claims.paired_signflip([1, 2, 3, 4, 5], [0.5, 0.5, 0.5, 0.5, 0.5], null="c")
    assert claims.worst_of(a, c).effect == c.effect


def test_spearman_trend():
    t = claims.spearman_trend([1, 2, 3, 4, 5, 6], [0.1, 0.2, 0.15, 0.4, 0.5, 0.6])
    assert t.effect > 0.8 and t.significant() and t.low < t.effect < t.high
    t = claims.spearman_trend([1, 2, 3, 4, 5, 6], [0.6, 0.5, 0.4, 0.3, 0.2, 0.1])
    assert t.effect == pytest.approx(-1) and not t.significant()
    flat = claims.spearman_trend([1, 2, 3, 4, 5], [0.2] * 5)
    assert flat.p == 1.0 and flat.powered()
    assert not claims.spearman_trend([1, 2, 3], [1, 2, 3]).powered()


def test_binomial_above_chance_needs_every_model():
    t = claims.binomial_above_chance([900, 880], 1000)
    assert t.significant() and t.effect == pytest.approx(0.88)
    t = claims.binomial_above_chance([900, 510], 1000)
    assert not t.significant() and t.low < 0.51 < t.high


@pytest.mark.parametrize(
    "p, min_p, strong, control_ok, grade",
    [
        (0.01, 0.001, True, True, verdicts.REPRODUCED),
        (0.01, 0.001, False, True, verdicts.PARTLY),
        (0.40, 0.001, True, True, verdicts.NOT),
        (0.25, 0.25, True, True, verdicts.INCONCLUSIVE),  # too few seeds to reach alpha
        (0.01, 0.001, True, False, verdicts.INCONCLUSIVE),  # the positive control failed
    ],
)
def test_grade_test(p, min_p, strong, control_ok, grade):
    t = claims.ClaimTest(0.1, 0.0, 0.2, p, 5, "test", "null", min_p=min_p)
    assert verdicts.grade_test(t, strong=strong, control_ok=control_ok) == grade


def test_verdict_row_shows_effect_interval_test_p_and_null():
    t = claims.ClaimTest(0.25, 0.1, 0.4, 0.031, 5, "paired sign-flip", "no-norm", min_p=0.03)
    row = verdicts.Verdict("A", "claim", verdicts.REPRODUCED, t, "more").row()
    assert row["effect [90% CI]"] == "0.250 [0.100, 0.400]"
    assert row["test"] == "paired sign-flip; p = 0.031" and row["null"] == "no-norm"
    assert claims.CLAIM_CONFIDENCE == pytest.approx(1 - 2 * claims.ALPHA)
    same = claims.paired_signflip([1, 1, 1, 1, 1], [0, 0, 0, 0, 0], null="z")
    assert math.isnan(same.low) and same.p == pytest.approx(1 / 32)  # no spread: no interval
    nan = claims.ClaimTest(0.5, math.nan, math.nan, math.nan, 1, "comparison", "paper")
    assert "n/a" in verdicts.Verdict("A", "c", verdicts.NOT, nan).row()["effect [90% CI]"]


def test_failed_check_reads_as_a_bug():
    assert "bug" in verdicts.Check("A", "x", False, "e").row()["result"]
    assert verdicts.Check("A", "x", True, "e").row()["result"] == "holds"
