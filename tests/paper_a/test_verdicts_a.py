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
    assert verdicts.beyond_bound(FIVE_SEEDS_CLEAR, [True] * 5) == R
    assert verdicts.beyond_bound(FIVE_SEEDS_CLEAR, [True, False, True, True, True]) == PARTLY
    assert verdicts.beyond_bound(FIVE_SEEDS_NULL, [True] * 5) == NOT
    assert verdicts.beyond_bound(TWO_SEEDS, [True] * 2) == INC


def test_overlap_enables():
    assert verdicts.overlap_enables(_sig(1e-4), _sig(1e-6)) == R
    assert verdicts.overlap_enables(_sig(1e-4), _sig(0.3)) == PARTLY
    assert verdicts.overlap_enables(_sig(0.4), _sig(1e-6)) == NOT


def test_transition_matches():
    assert verdicts.transition_matches([0.55, 0.56, 0.57], 0.5, 0.62) == R
    assert verdicts.transition_matches([0.2, 0.21, 0.22], 0.5, 0.62) == NOT
    assert verdicts.transition_matches([0.45, 0.5, 0.55], 0.5, 0.62) == INC  # straddles
    assert verdicts.transition_matches([0.55], 0.5, 0.62) == INC  # one seed: no interval
    assert verdicts.transition_matches([0.55, float("nan")], 0.5, 0.62) == NOT


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
    with pytest.raises(ValueError, match="no model"):
        verdicts.at_chance("o = 0", np.array([]), 1000, [])
    from types import SimpleNamespace

    eq = dict(name="none", shift=2, radius=4, reach=[4, 4], max_change=[0.0, 0.0])
    assert verdicts.exactly_equivariant(SimpleNamespace(**eq, exact=[True, True])).holds
    assert not verdicts.exactly_equivariant(SimpleNamespace(**eq, exact=[True, False])).holds
    leak = {**eq, "reach": [4, 9]}  # gradient reaching past R: the padding or a norm leaks
    assert not verdicts.exactly_equivariant(SimpleNamespace(**leak, exact=[True, True])).holds
    dead = {**eq, "reach": [4, -1]}  # a network with constant output: reported, not failed
    check = verdicts.exactly_equivariant(SimpleNamespace(**dead, exact=[True, True]))
    assert check.holds and "constant output" in check.evidence
    all_dead = {**eq, "reach": [-1, -1]}  # nothing left to check: it cannot pass vacuously
    assert not verdicts.exactly_equivariant(SimpleNamespace(**all_dead, exact=[True, True])).holds


# ----------------------------------------------------------------------------- ledgers on
# synthetic runs: each row must come out the right way round (swapped arguments would not)


def _loc(frac: float, seq_len: int = 40, band: int = 4, band_frac: float = 1.0):
    """A Localization whose interior fraction is ``frac`` and whose boundary band (within
    ``band`` of an end) is localized at ``band_frac``."""
    from normbook.core.stats import EffectSize
    from normbook.paper_a.detector import Localization, boundary_distance

    localized = boundary_distance(seq_len) < band
    localized &= np.random.default_rng(0).random(seq_len) < band_frac + 1e-9
    eff = EffectSize(0.0, 0.0, 0.0, seq_len)
    return Localization(localized, 3, frac, frac, eff, eff)


def _run(fracs, band_frac: float = 1.0, name: str = "net"):
    from types import SimpleNamespace

    per_seed = [_loc(f, band_frac=band_frac) for f in fracs]
    return SimpleNamespace(per_seed=per_seed, batch_mean=per_seed, radius=4, name=name)


RISING = [[0.1, 0.12], [0.2, 0.22], [0.3, 0.35], [0.5, 0.5]]  # per G = 1, 2, 4, 8 (= C)
ONLY_C = [[0.1, 0.12], [0.11, 0.09], [0.1, 0.11], [0.5, 0.5]]  # only InstanceNorm localizes


def _a3(mb, pop, none, circ, big, mb_band=0.5, control_p=1 / 32, gn=RISING, rising=False):
    from types import SimpleNamespace

    bn = SimpleNamespace(
        minibatch=_run(mb, mb_band), population=_run(pop), none=_run(none), circular=_run(circ)
    )
    sizes = SimpleNamespace(runs={32: bn.minibatch, 128: _run(big)}, reference=32, largest=128)
    groups = SimpleNamespace(
        group_counts=[1, 2, 4, 8],
        width=8,
        values=lambda fn: np.array(gn),
    )
    eq = SimpleNamespace(
        name="pop", shift=2, exact=[True] * 5, reach=[4] * 5, radius=4, max_change=[0.0] * 5
    )
    control = ClaimTest(0.4, 0.3, 0.5, control_p, 5, "t", "n", min_p=1 / 32)
    claims, checks = verdicts.a3_ledger(groups, control, bn, eq, np.zeros(5), sizes, rising, rising)
    return [c.verdict for c in claims], checks


def test_a3_ledger_rows_come_out_the_right_way_round():
    five = lambda v: [v + 0.01 * i for i in range(5)]  # noqa: E731
    grades, checks = _a3(five(0.5), five(0.1), five(0.1), five(0.1), five(0.2))
    # G < C: 6 models rising (the G = C row is the control and is left out of the trend)
    assert grades == [R, R, R, R, R] and all(c.holds for c in checks)
    # a jump at G = C alone is not growth with G
    assert _a3(five(0.5), five(0.1), five(0.1), five(0.1), five(0.2), gn=ONLY_C)[0][0] == NOT
    # population statistics as good as minibatch: "destroy" fails; batch 128 better: no fading
    grades, _ = _a3(five(0.5), five(0.6), five(0.1), five(0.1), five(0.7))
    assert grades[2] == NOT and grades[4] == NOT
    # minibatch at the null level: the claims that need localization are inconclusive
    grades, _ = _a3(five(0.1), five(0.1), five(0.1), five(0.1), five(0.1))
    assert grades[1] == NOT and grades[2:] == [INC, INC, INC]
    # the positive control fails: GroupNorm and minibatch claims are inconclusive
    grades, _ = _a3(five(0.5), five(0.1), five(0.1), five(0.1), five(0.2), control_p=0.5)
    assert grades[:2] == [INC, INC]
    # curves still rising: what would be "not reproduced" is inconclusive at this budget
    grades, _ = _a3(five(0.1), five(0.1), five(0.1), five(0.1), five(0.1), gn=ONLY_C, rising=True)
    assert grades == [INC] * 5


def _curve(slopes_per_step, fractions=(0.25, 0.5)):
    from types import SimpleNamespace

    slope = np.array(slopes_per_step, dtype=float)  # (K, seeds)
    return SimpleNamespace(fractions=np.array([*fractions, 1.0]), slope=slope)


def test_a_curve_has_flattened_only_when_its_late_gain_is_bounded_below_the_margin():
    flat = _curve([[0.0, 0.0, 0.0], [0.30, 0.31, 0.29], [0.301, 0.309, 0.293]])
    rising = _curve([[0.0, 0.0, 0.0], [0.10, 0.12, 0.11], [0.20, 0.23, 0.21]])
    noisy = _curve([[0.0, 0.0, 0.0], [0.2, 0.2, 0.2], [0.1, 0.3, 0.22]])  # mean gain ~0, wide
    assert not verdicts.still_rising(flat)
    assert verdicts.still_rising(rising) and verdicts.still_rising(noisy)
    assert verdicts.still_rising(flat, rising)  # any rising curve counts
    g = verdicts.late_gain(rising)
    assert g.effect == pytest.approx(0.1033, abs=1e-3) and g.low < g.effect < g.high
    no_half = _curve([[0.0, 0.0], [0.3, 0.3]], fractions=(0.75,))
    assert verdicts.still_rising(no_half)  # nothing kept by half the budget: cannot tell
    assert verdicts.at_budget(NOT, True) == INC and verdicts.at_budget(NOT, False) == NOT
    assert verdicts.at_budget(R, True) == R
