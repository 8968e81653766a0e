"""Paper A verdict rules on synthetic runs: each has a case where it must pass and one where it
must fail, a family that never learned grades nothing, and what symmetry decides is a check."""

from types import SimpleNamespace

import numpy as np
import pytest

from normbook.grading.claims import Rise
from normbook.grading.verdicts import (
    MOOT,
    NOT_SHOWN,
    PARTLY,
    REFUTED,
    REPRODUCED,
    Check,
    Verdict,
    decide,
)
from normbook.paper_a.a1_localization.claims import a1_ledger
from normbook.paper_a.a2_mechanism.claims import a2_ledger
from normbook.paper_a.a3_which_norms.claims import a3_ledger
from normbook.paper_a.cached.packnet import PackConfig, PackTrainConfig
from normbook.paper_a.grading import late, nulls, rules, sesoi
from normbook.paper_a.measures import bands
from normbook.paper_a.runs.packnorm import Accuracy, PackResult, PackSetup


def _curve(run, fractions=(0.25, 0.5)):
    """A flat compute-to-effect curve: every kept state equals the trained run."""
    return SimpleNamespace(fractions=np.array([*fractions, 1.0]), runs=[run] * 3,
                           values=lambda m: np.array([np.asarray(m(run), float)] * 3))  # fmt: skip


def _rising_curve(run):
    """A curve whose tested quantity, whatever it is, climbs by 0.2 over the last half."""
    return SimpleNamespace(fractions=np.array([0.25, 0.5, 1.0]), runs=[run] * 3,
                           values=lambda m: np.asarray(m(run), float) + np.array(
                               [[-0.3], [-0.2], [0.0]]))  # fmt: skip


def _nulls(fake_run, profile):
    return (fake_run(profile["boundary"], name="none", seed=1),
            fake_run(profile["flat"], name="circular", seed=2))  # fmt: skip


def test_bands_measure_within_each_end(fake_run, profile):
    ramp, boundary, flat = (fake_run(profile[k]) for k in ("ramp", "boundary", "flat"))
    assert np.allclose(bands.boundary_slope(ramp), 1, atol=0.05)
    assert np.allclose(bands.boundary_slope(boundary), 1, atol=0.05)
    assert np.allclose(bands.boundary_slope(flat), 0, atol=0.05)
    hop = fake_run(profile["one_hop"])
    assert np.allclose(bands.first_hop_slope(hop), 1, atol=0.05)
    assert np.allclose(bands.beyond_hop_slope(hop), 0, atol=0.02)
    assert np.allclose(bands.beyond_hop_slope(ramp), 1, atol=0.05)


def test_learned_and_side_channel_controls(fake_run, profile):
    assert rules.learned(fake_run(profile["boundary"])).passed
    assert not rules.learned(fake_run(profile["flat"])).passed
    # every ReLU dead: the output moves only where the padding reaches, not with the input
    dead = fake_run(lambda i: 0.5 + 0.05 * (np.minimum(i, 74 - i) < 8))
    assert not rules.learned(dead).passed
    assert rules.side_channel(fake_run(profile["one_hop"])).passed
    assert not rules.side_channel(fake_run(profile["boundary"])).passed


def test_a_family_that_never_learned_grades_nothing(fake_run, profile):
    none, circ = _nulls(fake_run, profile)
    flat = fake_run(profile["flat"], name="BatchNorm")
    v = rules.localizes_verdict("claim", flat, none, circ, _curve(flat))
    assert v.verdict == NOT_SHOWN and "positive control failed" in v.grade.why


def test_localizes_goes_every_way(fake_run, profile):
    none, circ = _nulls(fake_run, profile)
    ramp, boundary = fake_run(profile["ramp"]), fake_run(profile["boundary"], seed=3)
    assert rules.localizes_verdict("c", ramp, none, circ, _curve(ramp)).verdict == REPRODUCED
    # learned the ramp near the ends, nothing beyond, and flat through training: refuted
    v = rules.localizes_verdict("c", boundary, none, circ, _curve(boundary))
    assert v.verdict == REFUTED and v.test.high < sesoi.SLOPE.value
    # the same while the curve may still be rising, or without a curve: not shown
    rising = _rising_curve(boundary)
    assert rules.localizes_verdict("c", boundary, none, circ, rising).verdict == NOT_SHOWN
    assert rules.localizes_verdict("c", boundary, none, circ, None).verdict == NOT_SHOWN


def test_beyond_nulls_needs_every_null():
    vals = [0.5, 0.6, 0.55, 0.7, 0.65]
    ok = nulls.beyond_nulls(vals, {"a": [0.1] * 5, "b": [0.05] * 5}, 0.05)
    assert ok.clears() and ok.effect == pytest.approx(np.mean(vals) - 0.1)
    bad = nulls.beyond_nulls(vals, {"a": [0.1] * 5, "b": [0.6, 0.0, 0.0, 0.0, 0.9]}, 0.05)
    assert not bad.clears()


def _a1(fake_run, normed, curve=None):
    none, circ = _nulls(fake_run, {"boundary": profiles_["boundary"], "flat": profiles_["flat"]})
    for r, d in ((normed, [30] * 5), (none, [9] * 5), (circ, [-1] * 5)):
        r.probe_distances = np.array([[2] * 5, [5] * 5, [8] * 5, d])
    eq = SimpleNamespace(name="none", shift=4, exact=[True] * 5, reach=[8] * 5, radius=8,
                         max_change=[0.0] * 5)  # fmt: skip
    claims, checks = a1_ledger(none, normed, circ, eq, np.zeros(5), curve or _curve(normed))
    return [c.verdict for c in claims], checks


profiles_ = {}


@pytest.fixture(autouse=True)
def _profiles(profile):
    profiles_.update(profile)


def test_a1_whole_sequence_is_graded_beyond_one_hop(fake_run, profile):
    grades, checks = _a1(fake_run, fake_run(profile["ramp"]))
    assert grades == [REPRODUCED, REPRODUCED, REPRODUCED] and all(c.holds for c in checks)
    # all of the signal within one hop: the side channel exists, the whole sequence is refuted
    grades, _ = _a1(fake_run, fake_run(profile["one_hop"]))
    assert grades[0] == REPRODUCED and grades[1] == REFUTED
    # the same networks still rising: the whole-sequence claim is not shown, not refuted
    hop = fake_run(profile["one_hop"])
    assert _a1(fake_run, hop, _rising_curve(hop))[0][1] == NOT_SHOWN
    # no side channel at all: the strongest evidence against the whole sequence, not a failure
    grades, _ = _a1(fake_run, fake_run(profile["boundary"], seed=4))
    assert grades[1] == REFUTED


def _a3(fake_run, profile, bn_profile, gn_slopes, gn_profile=None):
    none, circ = _nulls(fake_run, profile)
    mb = fake_run(profile[bn_profile], name="BatchNorm")
    gn = fake_run(profile[gn_profile], name="GroupNorm") if gn_profile else mb
    mb.batch_mean = mb.per_seed
    none.batch_mean = none.per_seed
    bn = SimpleNamespace(minibatch=mb, population=none, none=none, circular=circ)
    sizes = SimpleNamespace(runs={32: mb, 128: none}, reference=32, largest=128)
    runs = {g: SimpleNamespace(slope_interior=s, out=gn.out, radius=8, name=f"G={g}", seq_len=75,
                               per_seed=gn.per_seed) for g, s in gn_slopes.items()}  # fmt: skip
    groups = SimpleNamespace(group_counts=list(gn_slopes), width=max(gn_slopes), runs=runs)
    eq = SimpleNamespace(name="population", shift=4, exact=[True] * 5, reach=[8] * 5,
                         radius=8, max_change=[0.0] * 5)  # fmt: skip
    proper = [_curve(runs[g]) for g in list(gn_slopes)[:-1]]
    claims, checks = a3_ledger(groups, bn, eq, np.zeros(5), sizes, proper, _curve(mb))
    return claims, checks


RISING = {1: [0.01, 0.02], 2: [0.05, 0.06], 4: [0.1, 0.12], 8: [0.2, 0.22], 32: [0.3, 0.3]}
FALLING = {1: [0.2, 0.22], 2: [0.1, 0.12], 4: [0.05, 0.06], 8: [0.01, 0.02], 32: [0.3, 0.3]}


def test_a3_ledger_rows_come_out_the_right_way_round(fake_run, profile):
    claims, checks = _a3(fake_run, profile, "ramp", RISING)
    assert [c.verdict for c in claims][:2] == [REPRODUCED, REPRODUCED]
    assert all(c.holds for c in checks)
    assert _a3(fake_run, profile, "ramp", FALLING)[0][0].verdict == REFUTED
    # BatchNorm learned the ends but no side channel: refuted, and the claim that rests on it
    # (fading with the evaluation batch) is moot
    claims, _ = _a3(fake_run, profile, "boundary", RISING)
    assert claims[1].verdict == REFUTED and claims[3].verdict == MOOT
    # BatchNorm never learned: its claims are not shown, never refuted, and the fade is not
    # shown either (its premise is undecided, not refuted)
    claims, _ = _a3(fake_run, profile, "flat", RISING)
    assert claims[1].verdict == NOT_SHOWN and claims[2].verdict == NOT_SHOWN
    assert claims[3].verdict == NOT_SHOWN


def test_the_groupnorm_trend_needs_a_family_that_shows_the_side_channel(fake_run, profile):
    # every G < C family learned the ends only: a trend in their slopes is a trend in noise
    trend = _a3(fake_run, profile, "ramp", RISING, gn_profile="boundary")[0][0]
    assert (
        trend.verdict == NOT_SHOWN and "GroupNorm, G < C (shows the side channel" in trend.grade.why
    )
    assert _a3(fake_run, profile, "ramp", RISING, gn_profile="one_hop")[0][0].verdict == REPRODUCED


def test_by_construction_properties_are_checks_not_claims(fake_run, profile):
    claims, checks = _a3(fake_run, profile, "ramp", RISING)
    assert all(isinstance(c, Verdict) for c in claims) and all(isinstance(c, Check) for c in checks)
    assert not any("population" in c.claim.lower() for c in claims)  # Prop. C.1 decides it
    assert any("population" in c.check.lower() for c in checks)


def test_reach_is_in_layers_and_beats_both_nulls(fake_run, profile):
    normed, (none, circ) = fake_run(profile["ramp"]), _nulls(fake_run, profile)
    normed.probe_distances = np.array([[2] * 5, [5] * 5, [16] * 5, [30, 29, 30, 31, 30]])
    none.probe_distances = np.array([[2] * 5, [4] * 5, [6] * 5, [9, 10, 9, 9, 8]])
    circ.probe_distances = np.full((4, 5), -1)
    t = nulls.reach_test(normed, none, circ, factor=1.0)
    assert t.clears() and t.effect == pytest.approx((30 - 8 - 1) / 2)  # (excess - null's) / 2
    assert nulls.reach_test(none, normed, circ, factor=1.0).below()
    # no spread at all (whole indices): five seeds give the sign test's bound, 2^-5 per null
    none.probe_distances = np.array([[2] * 5, [4] * 5, [6] * 5, [9] * 5])
    normed.probe_distances = np.array([[2] * 5, [5] * 5, [16] * 5, [30] * 5])
    assert nulls.reach_test(normed, none, circ, factor=1.0).clears()


def test_checks_fail_when_the_property_fails():
    assert rules.at_chance("o = 0", np.array([500]), 1000, [0.97]).holds
    assert not rules.at_chance("o = 0", np.array([700]), 1000, [1e-30]).holds
    assert rules.cyclic_null("x", np.array([0.0, 3e-7])).holds
    assert not rules.cyclic_null("x", np.array([0.0, 0.2])).holds
    five = np.array([0.001, -0.002, 0.0, 0.002, -0.001])
    assert rules.flat_interior("x", five, np.full(5, 0.001)).verdict == REPRODUCED
    assert rules.flat_interior("x", five + 0.2, np.full(5, 0.001)).verdict == REFUTED
    with pytest.raises(ValueError, match="no model"):
        rules.at_chance("o = 0", np.array([]), 1000, [])
    eq = dict(name="none", shift=2, radius=4, reach=[4, 4], max_change=[0.0, 0.0])
    assert rules.exactly_equivariant(SimpleNamespace(**eq, exact=[True, True])).holds
    assert not rules.exactly_equivariant(SimpleNamespace(**eq, exact=[True, False])).holds
    leak = {**eq, "reach": [4, 9]}  # gradient reaching past R: the padding or a norm leaks
    assert not rules.exactly_equivariant(SimpleNamespace(**leak, exact=[True, True])).holds
    dead = {**eq, "reach": [4, -1]}  # a network with constant output: reported, not failed
    check = rules.exactly_equivariant(SimpleNamespace(**dead, exact=[True, True]))
    assert check.holds and "constant output" in check.evidence
    all_dead = {**eq, "reach": [-1, -1]}  # nothing left to check: it cannot pass vacuously
    assert not rules.exactly_equivariant(SimpleNamespace(**all_dead, exact=[True, True])).holds


def test_a_curve_is_rising_until_its_late_gain_is_bounded_below_half_the_sesoi(fake_run, profile):
    run = fake_run(profile["ramp"])
    assert not late.rising(_curve(run), bands.interior_slope)
    assert late.rising(_rising_curve(run), bands.interior_slope)
    g = late.late_gain(_rising_curve(run))
    assert g.effect == pytest.approx(0.2) and g.low <= g.effect <= g.high


def test_partly_needs_a_claim_of_parts():
    test = nulls.beyond_nulls([0.5] * 5, {"a": [0.0] * 5}, 0.05)
    assert decide(test, rising=False).verdict != PARTLY


def test_dead_null_networks_leave_the_comparison_with_their_seeds(fake_run, profile):
    from types import SimpleNamespace

    none, circ = _nulls(fake_run, profile)
    ramp = fake_run(profile["ramp"])
    assert nulls.alive(none).all() and nulls.null_learned(none).passed
    dead = fake_run(profile["flat"], name="none")  # every null network learned nothing
    two = SimpleNamespace(**{**vars(none), "per_seed": [*none.per_seed[:2], *dead.per_seed[2:]]})
    two.slope_interior = [s.effect_interior.slope for s in two.per_seed]
    assert nulls.alive(two).tolist() == [True, True, False, False, False]
    v = rules.localizes_verdict("c", ramp, two, circ, _curve(ramp))
    assert v.test.n == 2 and "3 of 5 died" in v.test.null  # paired on the two live seeds
    assert nulls.null_learned(two).passed  # two learned: still a null
    one = SimpleNamespace(**{**vars(none), "per_seed": [none.per_seed[0], *dead.per_seed[1:]]})
    one.slope_interior = [s.effect_interior.slope for s in one.per_seed]
    w = rules.localizes_verdict("c", ramp, one, circ, _curve(ramp))
    assert w.verdict == NOT_SHOWN and "no normalization (the null)" in w.grade.why
    assert w.test.n == 5 and "4 of 5 died" in w.test.null  # shown over every seed, grades nothing
    gone = rules.localizes_verdict("c", ramp, dead, circ, _curve(ramp))  # none alive
    assert gone.verdict == NOT_SHOWN and gone.test.n == 5 and "no null" in gone.test.null


def _pack_sweep(transitions, at_step=None, n_test=4000):
    """A PackNorm sweep (l' = 16, o = 0, 2, ..., 16) in which seed j's accuracy climbs
    linearly from 1/2 and reaches 0.75 at overlap ``transitions[j]``."""
    o = np.arange(0, 17, 2)
    acc = np.minimum(1.0, 0.5 + 0.25 * o[:, None] / np.asarray(transitions, float))
    correct = np.round(acc * n_test).astype(int)
    return Accuracy(list(o), list(range(len(transitions))), correct, n_test,
                    loss=np.zeros((1, o.size, len(transitions))), at_step=at_step)  # fmt: skip


def _a2(fake_run, profile, end, kept=None):
    cfg = PackConfig(depth=2, width=4, kernel=3)
    setup = PackSetup(net=cfg, control=PackConfig(2, 4, 3, coupling="separate"),
                      train=PackTrainConfig(16, 100, 8, 1e-3, checkpoints=(0.5,)),
                      overlaps=list(range(0, 17, 2)), control_overlaps=[16], seeds=[0, 1, 2],
                      n_test=4000, transition_level=0.75)  # fmt: skip
    control = Accuracy([16], [0, 1, 2], np.full((1, 3), 2000), 4000, loss=np.zeros((1, 1, 3)))
    pack = PackResult(setup, _pack_sweep(end), control)
    normed, (none, circ) = fake_run(profile["ramp"]), _nulls(fake_run, profile)
    for run in (normed, none, circ):
        run.probe_distances = np.full((4, 5), 2)
    half = None if kept is None else _pack_sweep(kept, at_step=50)
    return a2_ledger(pack, normed, none, circ, 3.0, None, half)[0][0]


def test_the_transition_is_refuted_only_once_it_stopped_moving(fake_run, profile):
    """A transition wholly outside the paper's band (at a quarter of l') is refuted when its
    depth inside the band gained less than half a grid step since the kept state; while it was
    still moving toward the band, or without a kept state, it is not shown."""
    end = [3.9, 4.0, 4.1]
    row = _a2(fake_run, profile, end, kept=end)
    assert row.verdict == REFUTED and row.grade.refutable
    assert isinstance(row.grade.rising, Rise) and not row.grade.rising
    assert row.grade.rising.margin == pytest.approx(0.5 * 2 / 16)  # half the grid step, in l'
    assert "rising judged at 0.5 of the budget and the end" in row.evidence
    moving = _a2(fake_run, profile, end, kept=[1.9, 2.0, 2.1])  # from 1/8 of l' to 1/4
    assert moving.verdict == NOT_SHOWN and "may still be moving" in moving.grade.why
    blocked = _a2(fake_run, profile, end)
    assert blocked.verdict == NOT_SHOWN and not blocked.grade.refutable
    inside = _a2(fake_run, profile, [8.9, 9.0, 9.1], kept=[3.9, 4.0, 4.1])
    assert inside.verdict == REPRODUCED  # inside the band is reproduced whatever the curve
