"""Paper A verdict rules: each has a case where it must pass and one where it must fail."""

import numpy as np
import pytest

from normbook.core.claims import ClaimTest, paired_signflip
from normbook.paper_a import verdicts

R, PARTLY, NOT, INC = verdicts.REPRODUCED, verdicts.PARTLY, verdicts.NOT, verdicts.INCONCLUSIVE
FIVE_SEEDS_CLEAR = paired_signflip([0.8, 0.7, 0.9, 0.6, 0.75], [0.1] * 5, null="null")
FIVE_SEEDS_NULL = paired_signflip([0.1, 0.12, 0.09, 0.11, 0.1], [0.1] * 5, null="null")
TWO_SEEDS = paired_signflip([0.8, 0.9], [0.1, 0.1], null="null")


def _sig(p: float) -> ClaimTest:
    return ClaimTest(0.5, 0.3, 0.7, p, 12, "t", "n", min_p=0.0)


def test_beyond_nulls_needs_every_null():
    vals = [0.5, 0.6, 0.55, 0.7, 0.65]
    ok = verdicts.beyond_nulls(vals, {"a": [0.1] * 5, "b": [0.05] * 5})
    assert ok.significant() and ok.effect == pytest.approx(np.mean(vals) - 0.1)
    # the second null is as high as the network on one seed: that null is not beaten
    bad = verdicts.beyond_nulls(vals, {"a": [0.1] * 5, "b": [0.6, 0.0, 0.0, 0.0, 0.9]})
    assert not bad.significant()


def test_whole_sequence():
    assert verdicts.whole_sequence(FIVE_SEEDS_CLEAR, [30, 31, 29, 31, 30], 31, 4) == R
    assert verdicts.whole_sequence(FIVE_SEEDS_CLEAR, [30, 12, 29, 31, 30], 31, 4) == PARTLY
    assert verdicts.whole_sequence(FIVE_SEEDS_NULL, [30, 31, 29, 31, 30], 31, 4) == NOT
    assert verdicts.whole_sequence(TWO_SEEDS, [31, 31], 31, 4) == INC


def test_beyond_bound():
    assert verdicts.beyond_bound(FIVE_SEEDS_CLEAR, [2, 1, 3, 1, 1]) == R
    assert verdicts.beyond_bound(FIVE_SEEDS_CLEAR, [2, 0, 3, 1, 1]) == PARTLY
    assert verdicts.beyond_bound(FIVE_SEEDS_NULL, [2, 1, 3, 1, 1]) == NOT


def test_overlap_enables():
    assert verdicts.overlap_enables(_sig(1e-4), _sig(1e-6)) == R
    assert verdicts.overlap_enables(_sig(1e-4), _sig(0.3)) == PARTLY
    assert verdicts.overlap_enables(_sig(0.4), _sig(1e-6)) == NOT


def test_transition_matches():
    assert verdicts.transition_matches(0.55, 0.5, 0.62, 0.1) == R
    assert verdicts.transition_matches(0.42, 0.5, 0.62, 0.1) == PARTLY
    assert verdicts.transition_matches(0.2, 0.5, 0.62, 0.1) == NOT
    assert verdicts.transition_matches(float("nan"), 0.5, 0.62, 0.1) == NOT


def test_grows_with_groups():
    assert verdicts.grows_with_groups(_sig(0.01), [True, True], control_ok=True) == R
    assert verdicts.grows_with_groups(_sig(0.01), [True, False], control_ok=True) == PARTLY
    assert verdicts.grows_with_groups(_sig(0.3), [True, True], control_ok=True) == NOT
    assert verdicts.grows_with_groups(_sig(0.01), [True, True], control_ok=False) == INC


def test_localizes():
    assert verdicts.localizes(FIVE_SEEDS_CLEAR) == R
    assert verdicts.localizes(FIVE_SEEDS_NULL) == NOT
    assert verdicts.localizes(FIVE_SEEDS_CLEAR, control_ok=False) == INC


def test_checks_fail_when_the_property_fails():
    assert verdicts.at_chance("o = 0", np.array([500]), 1000, [0.97]).holds
    assert not verdicts.at_chance("o = 0", np.array([700]), 1000, [1e-30]).holds
    assert verdicts.cyclic_null("x", np.array([0.0, 3e-7])).holds
    assert not verdicts.cyclic_null("x", np.array([0.0, 0.2])).holds
