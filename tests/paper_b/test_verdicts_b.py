"""Paper B verdict rules and each chapter's ledger built from typed results: every rule has a
case where it must pass (reproduced) and one where it must fail (refuted, or not shown when a
positive control failed, the difference may still be moving, or the interval contains the
claim's SESOI)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from normbook.grading.claims import ALPHA
from normbook.grading.verdicts import NOT_SHOWN, NOT_TESTABLE, PARTLY, REFUTED, REPRODUCED, decide
from normbook.paper_b import paper_values
from normbook.paper_b.b1_setup_accuracy import claims as b1_claims
from normbook.paper_b.b2_sparsity import claims as b2_claims
from normbook.paper_b.b3_clusters import claims as b3_claims
from normbook.paper_b.cached import analysis
from normbook.paper_b.cached.analysis import (
    ClusterConfig,
    Clusters,
    Sparsity,
    SparsityConfig,
    TrainingCurves,
)
from normbook.paper_b.grading import pairing, rules
from normbook.paper_b.grading.sesoi import ACCURACY, DBI, LEARNED_ACCURACY, SETTLE, SPARSITY
from normbook.paper_b.runs import classify

# seed-to-seed spread of 5 seeds, BN and no BN (paired differences vary by at most 0.015)
JITTER = {
    True: np.array([0.0, 0.01, -0.01, 0.02, -0.02]),
    False: np.array([0.005, -0.005, 0.0, 0.01, -0.01]),
}


def _per_seed(value: float, n: int = 5, bn: bool = True, scale: float = 1.0) -> np.ndarray:
    return value + scale * JITTER[bn][:n]


# ----------------------------------------------------------------------------- contrasts


def test_contrasts_per_seed():
    v = np.array([[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 2.0, 2.0]])
    assert rules.layer_mean(v).tolist() == [2.5, 1.0]
    assert rules.deeper_half(v).tolist() == [3.5, 2.0]  # conv3-conv4 of 4
    thirteen = np.arange(13.0)[None, :]
    assert rules.deeper_half(thirteen).tolist() == [np.arange(6, 13).mean()]  # conv7-13
    assert rules.settling_layer(np.array([3, 12, 9, 10, 11]), 10, 1) == 3
    assert rules.settling_layer(np.array([10, 10, 3]), 10, 1) == 4  # last layer off
    assert rules.settling_layer(np.array([10, 10, 10]), 10, 0) == 1
    k = paper_values.N_CLASSES + paper_values.K_STAR_TOLERANCE
    assert rules.settling_layers(np.array([[k, k], [k + 1, k]])).tolist() == [1.0, 2.0]


def test_contrast_of_a_metric_per_seed():
    values = {
        ("mnist", True): np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 2.0]]),
        ("mnist", False): np.ones((2, 4)),
        ("cifar10", True): np.zeros((2, 6)),
        ("cifar10", False): np.zeros((2, 6)),
    }
    c = rules.Contrast.per_dataset(values)["mnist"]
    bn, nobn, where = c.per_seed("deeper")
    assert bn.tolist() == [3.5, 2.0] and nobn.tolist() == [1.0, 1.0]
    assert where == "mean over conv3–conv4"
    assert c.per_seed("layers")[2] == "mean over all conv layers"
    assert c.lower.tolist() == [False, False, False, False]
    assert c.diff == pytest.approx(1.25) and c.last == (3.0, 1.0)


# ----------------------------------------------------------------------------- rules


def test_signed_is_the_claims_way_and_relative_on_request():
    bn, nobn = np.array([1.0, 2.0]), np.array([2.0, 4.0])
    assert rules.signed(bn, nobn, "lower").tolist() == [1.0, 2.0]
    assert rules.signed(bn, nobn, "higher").tolist() == [-1.0, -2.0]
    assert rules.signed(bn, nobn, "lower", relative=True).tolist() == [0.5, 0.5]
    # relative to the no-BN value's magnitude: the sign stays the claim's
    assert rules.signed([-1.0], [-2.0], "higher", relative=True).tolist() == [0.5]
    with pytest.raises(ValueError, match="expect"):
        rules.signed(bn, nobn, "sideways")
    with pytest.raises(ValueError, match="one shape"):
        rules.signed(bn, nobn[:1], "lower")


def test_direction_is_a_t_test_against_the_sesoi():
    bn, nobn = _per_seed(0.1), _per_seed(0.3, bn=False)
    lower = rules.direction(bn, nobn, "lower", "x", SPARSITY)
    assert lower.effect == pytest.approx(0.2) and lower.n == 5 and lower.sesoi == SPARSITY.value
    assert lower.null == "x: no BN − BN, same seeds"
    assert lower.test == "paired t test, one-sided against the SESOI, 5 seeds"
    assert lower.low < 0.2 < lower.high and lower.clears() and not lower.below()
    higher = rules.direction(bn, nobn, "higher", "x", SPARSITY)
    assert higher.effect == pytest.approx(-0.2) and higher.null == "x: BN − no BN, same seeds"
    assert higher.below() and not higher.clears()
    with pytest.raises(ValueError, match="one value per seed"):
        rules.direction(bn[:, None], nobn[:, None], "lower", "x", SPARSITY)


def test_dbi_effects_are_relative_to_the_no_bn_index():
    bn, nobn = np.array([1.0, 2.0, 3.0, 1.5, 0.5]), np.array([2.0, 2.5, 4.0, 2.0, 1.0])
    test = rules.direction(bn, nobn, "lower", "DBI", DBI)
    assert test.effect == pytest.approx(np.mean((nobn - bn) / nobn))
    assert rules.direction(bn, nobn, "higher", "DBI", DBI).effect == pytest.approx(
        np.mean((bn - nobn) / nobn)
    )
    # any other SESOI: the absolute difference
    absolute = rules.direction(bn, nobn, "lower", "x", SPARSITY).effect
    assert absolute == pytest.approx(np.mean(nobn - bn))
    # scaling both indices (another layer geometry) leaves the relative effect alone
    assert rules.direction(10 * bn, 10 * nobn, "lower", "DBI", DBI).effect == pytest.approx(
        test.effect
    )


def test_learned_is_every_seed_at_least_twice_chance():
    acc = {("mnist", True): np.array([0.9, 0.95]), ("mnist", False): np.array([0.9, 0.15])}
    bn, nobn = rules.learned(acc, rules.both("mnist"))
    assert bn.passed and bn.family == "MNIST BN" and "20%" in bn.check
    assert not nobn.passed and nobn.family == "MNIST no BN"
    assert nobn.evidence == "test accuracy 90.0%, 15.0%"
    edge = {("mnist", True): np.array([LEARNED_ACCURACY, 0.3])}
    assert rules.learned(edge, [classify.Variant("mnist", True)])[0].passed


def _decide(bn, nobn, acc=0.9, rising=False, sesoi=ACCURACY, expect="higher"):
    """The grade of a direction claim on MNIST, both families at ``acc`` (one no-BN seed at
    ``acc`` when a tuple (seed accuracies) is given)."""
    test = rules.direction(bn, nobn, expect, "x", sesoi)
    a = np.full(5, acc) if np.isscalar(acc) else np.asarray(acc, float)
    controls = rules.learned(
        {("mnist", True): np.full(5, 0.9), ("mnist", False): a}, rules.both("mnist")
    )
    return decide(test, controls, rising=rising)


def test_reproduced_needs_the_interval_beyond_the_sesoi():
    grade = _decide(_per_seed(0.90, scale=0.1), _per_seed(0.88, bn=False, scale=0.1))
    assert grade.verdict == REPRODUCED and grade.p < ALPHA
    # a gain smaller than the SESOI is no gain worth claiming, even if every seed shows it
    small = _decide(_per_seed(0.881, scale=0.1), _per_seed(0.88, bn=False, scale=0.1))
    assert small.verdict == REFUTED
    # an interval that contains the SESOI: too little power, never refuted
    wide = _decide(_per_seed(0.885), _per_seed(0.88, bn=False))
    assert wide.verdict == NOT_SHOWN and "contains the SESOI" in wide.why


def test_refuted_needs_a_difference_that_stopped_moving():
    bn, nobn = _per_seed(0.87, scale=0.1), _per_seed(0.88, bn=False, scale=0.1)
    test = rules.direction(bn, nobn, "higher", "x", ACCURACY)
    assert test.high < ACCURACY.value and test.below()  # the whole interval below the SESOI
    assert _decide(bn, nobn, rising=False).verdict == REFUTED
    moving = _decide(bn, nobn, rising=True)
    assert moving.verdict == NOT_SHOWN and "still be rising" in moving.why
    unknown = _decide(bn, nobn, rising=None)
    assert unknown.verdict == NOT_SHOWN and "no kept states" in unknown.why


def test_a_family_that_did_not_learn_makes_a_claim_not_shown_never_refuted():
    bn, nobn = _per_seed(0.5, scale=0.1), _per_seed(0.9, bn=False, scale=0.1)
    assert _decide(bn, nobn).verdict == REFUTED  # both learned: refuted
    # one seed of the no-BN family at chance
    grade = _decide(bn, nobn, acc=(0.9, 0.9, 0.1, 0.9, 0.9))
    assert grade.verdict == NOT_SHOWN
    assert grade.why == (
        "positive control failed: MNIST no BN (learned: test accuracy ≥ 20% in every seed)"
    )
    # nor reproduced: a control gates every grade
    up = _decide(nobn, bn, acc=(0.9, 0.9, 0.1, 0.9, 0.9))
    assert up.verdict == NOT_SHOWN


def _curves(effect_at, dataset="mnist", fractions=(0.25, 0.5), layers=4, expect="lower"):
    """Kept states whose signed BN-vs-no-BN effect per seed (same in every layer) is
    ``effect_at[k]`` at state k (the last: the kept model); no BN at 0.5 everywhere."""
    e = np.asarray(effect_at, float)
    e = e[:, None] if e.ndim == 1 else e  # [states, seeds]
    nobn = np.full((*e.shape, layers), 0.5)
    bn = nobn - e[..., None] if expect == "lower" else nobn + e[..., None]
    values = {(dataset, True): bn, (dataset, False): nobn}
    return TrainingCurves("sparsity", np.array([*fractions, 1.0]), values, 0)


# networks the epoch cap cut (the late gain decides), and networks early stopping ended
CAPPED = [SimpleNamespace(capped=True)] + [SimpleNamespace(capped=False)] * 9
FINISHED = [SimpleNamespace(capped=False)] * 10


def _capped_moving(curves, expect):
    """MNIST layer sparsity's :func:`rules.moving` where the cap cut a network."""
    return rules.moving(curves, "mnist", expect, rules.layer_mean, SPARSITY, nets=CAPPED)


def test_moving_means_the_effect_may_still_gain_half_its_sesoi():
    half = 0.5 * SPARSITY.value
    flat = _curves(np.tile(0.05 + JITTER[True] / 10, (3, 1)))
    assert _capped_moving(flat, "lower").may is False
    # gained more than half the SESOI over the last half of the budget (0.5 -> 1.0)
    late = _curves(np.stack([0.0 + JITTER[True] / 10, 0.03 + JITTER[True] / 10,
                             0.03 + 1.5 * half + JITTER[True] / 10]))  # fmt: skip
    assert _capped_moving(late, "lower").may is True
    # without spread: just above and just below half the SESOI
    for gain, expected in ((1.1 * half, True), (0.9 * half, False)):
        c = _curves(np.tile([[0.0], [0.03], [0.03 + gain]], (1, 5)))
        assert _capped_moving(c, "lower").may is expected
    # it gained early on only (0.25 -> 0.5), then stopped: not moving
    early = _curves(np.tile([[0.0], [0.05], [0.05]], (1, 5)))
    assert _capped_moving(early, "lower").may is False
    # shrinking (moving against the claim) cannot turn a refutation into a reproduction
    shrinking = _curves(np.tile([[0.1], [0.1], [0.05]], (1, 5)))
    assert _capped_moving(shrinking, "lower").may is False
    # the same effect read the other way ("higher") is moving
    up = _curves(np.tile([[0.0], [0.0], [0.05]], (1, 5)), expect="higher")
    assert _capped_moving(up, "higher").may is True
    assert _capped_moving(up, "lower").may is False
    # no state kept by half the budget: it cannot tell, so it may be moving
    late_only = _curves(np.tile([[0.05], [0.05]], (1, 5)), fractions=(0.75,))
    assert _capped_moving(late_only, "lower").may is True
    assert _capped_moving(None, "lower") is None


def test_moving_reads_dbi_effects_relative_to_the_no_bn_index():
    # no BN 0.5: an absolute gain of 0.02 is 4 % of the index, more than half of DBI's 5 %
    c = _curves(np.tile([[0.0], [0.0], [0.02]], (1, 5)))
    assert rules.moving(c, "mnist", "lower", rules.deeper_half, DBI, nets=CAPPED).may is True
    c = _curves(np.tile([[0.0], [0.0], [0.01]], (1, 5)))  # 2 %: less than half of 5 %
    assert rules.moving(c, "mnist", "lower", rules.deeper_half, DBI, nets=CAPPED).may is False


def test_a_family_of_finished_networks_has_stopped_moving_whatever_its_late_gain():
    """The stopping rule: where early stopping ended every compared network, the difference
    cannot move further (graded, refutable); one network cut by the cap keeps the check."""
    half = 0.5 * SPARSITY.value
    late = _curves(np.tile([[0.0], [0.03], [0.03 + 3 * half]], (1, 5)))
    moving = _capped_moving(late, "lower")
    assert moving.may is True and (moving.capped, moving.networks) == (1, 10)
    done = rules.moving(late, "mnist", "lower", rules.layer_mean, SPARSITY, nets=FINISHED)
    assert done.may is False and (done.capped, done.networks) == (0, 10)
    assert done.gain.effect == pytest.approx(moving.gain.effect)  # the gain stays on record
    # no kept states: finished networks are still graded; a capped one leaves it unrefutable
    none = rules.moving(None, "mnist", "lower", rules.layer_mean, SPARSITY, nets=FINISHED)
    assert none is not None and none.may is False
    assert _capped_moving(None, "lower") is None
    # graded both ways: an effect of the other sign is refuted only when the networks finished
    bn, nobn = _per_seed(0.4, bn=True), _per_seed(0.5, bn=False)
    test = rules.direction(bn, nobn, "higher", "accuracy", ACCURACY)
    assert decide(test, rising=done).verdict == REFUTED
    held = decide(test, rising=moving)
    assert held.verdict == NOT_SHOWN and held.moving
    # the ledger's reason says how many networks the cap cut
    from normbook.book_pages.ledger import needs
    from normbook.grading.ledger import part_record

    rec = part_record("x", held) | {"verdict": NOT_SHOWN, "controls": []}
    assert needs(rec) == ("a longer budget: the epoch cap cut 1 of its 10 networks, and the "
                          "tested quantity may still be moving the claim's way")  # fmt: skip


def _models(acc: dict, checkpoints=(0.5,), late: dict | None = None, capped=True):
    """Fake ``Models``: test accuracy per variant and seed; each run's validation accuracy is
    its test accuracy at the end of its 2-epoch budget, and ``late[variant]`` (default 0)
    less at epoch 1 (half the budget). Without ``checkpoints`` no states were kept; ``capped``:
    the cap ended every run (else early stopping at the end of the budget)."""
    late = late or {}
    trained = {}
    for v, a in acc.items():
        cfg = SimpleNamespace(checkpoints=tuple(checkpoints), max_epochs=2)
        trained[v] = [
            SimpleNamespace(cfg=cfg, seed=s, kept_val_acc=float(x), capped=capped,
                            stopped_epoch=2.0,
                            curves={"epoch": np.array([1.0, 2.0]),
                                    "val_acc": np.array([x - late.get(v, 0.0), x])})
            for s, x in enumerate(np.asarray(a, float))
        ]  # fmt: skip
    return SimpleNamespace(accuracy={v: np.asarray(a, float) for v, a in acc.items()},
                           trained=trained)  # fmt: skip


def _accuracy(n: int, mnist_gain: float, cifar: tuple[float, float], scale=0.1) -> dict:
    return {
        ("mnist", True): _per_seed(0.98 + mnist_gain, n, scale=scale),
        ("mnist", False): _per_seed(0.98, n, False, scale=scale),
        ("cifar10", True): _per_seed(cifar[0], n, scale=scale),
        ("cifar10", False): _per_seed(cifar[1], n, False, scale=scale),
    }


def test_accuracy_curve_and_whether_the_gain_still_moves():
    acc = _accuracy(5, -0.01, (0.6, 0.5))
    fracs, rows = rules.accuracy_curve(_models(acc), "mnist")
    assert fracs.tolist() == [0.5, 1.0] and rows.shape == (2, 5)
    np.testing.assert_allclose(rows[1], acc["mnist", True] - acc["mnist", False])
    np.testing.assert_allclose(rows[0], rows[1])  # no gain over the last half
    assert rules.accuracy_moving(_models(acc), "mnist").may is False
    rising = _models(acc, late={("mnist", True): 0.01})  # BN gained a point since epoch 1
    assert rules.accuracy_moving(rising, "mnist").may is True
    assert rules.accuracy_moving(rising, "cifar10").may is False
    assert rules.accuracy_curve(_models(acc, checkpoints=()), "mnist") is None
    assert rules.accuracy_moving(_models(acc, checkpoints=()), "mnist") is None
    # networks early stopping ended: the gain is final, with or without kept states
    finished = _models(acc, late={("mnist", True): 0.01}, capped=False)
    assert rules.accuracy_moving(finished, "mnist").may is False
    assert rules.accuracy_moving(_models(acc, checkpoints=(), capped=False), "mnist").may is False


def test_settling_test_needs_a_layer_earlier_beyond_the_sesoi():
    early = np.tile([10, 10, 10, 10], (5, 1))  # settles at conv1
    late = np.tile([3, 3, 10, 10], (5, 1))  # at conv3
    test = rules.settling_test(early, late, "mnist")
    assert test.effect == 2.0 and test.sesoi == SETTLE.value and test.clears()
    assert test.null == "MNIST layer where k* settles at 10 ± 2: no BN − BN"
    assert test.test.startswith("Gehan (censored at 'never') against the SESOI shift, exact")
    # both never settle (5 = one past 4 layers): undecided, never "below the SESOI"
    never = np.tile([3, 3, 3, 3], (5, 1))
    both = rules.settling_test(never, never, "mnist")
    assert both.p == both.p_refute == 1.0
    one = rules.settling_test(np.tile([3, 10, 10, 10], (5, 1)), late, "mnist")
    assert one.effect == 1.0 and one.clears()  # one layer earlier in every seed: beyond 0.5
    half = np.array([[3, 10, 10, 10]] * 2 + [[3, 3, 10, 10]] * 3)  # earlier in 2 of 5 seeds
    assert not rules.settling_test(half, late, "mnist").clears()
    assert rules.settling_test(late, late, "cifar10").below()


def test_table1_compares_intervals_with_the_papers_band_only_at_the_paper_profile():
    paper_bn, paper_nobn = (paper_values.TABLE1_ACCURACY["cifar10", bn] for bn in (True, False))

    def acc(bn, nobn):
        return {("cifar10", True): _per_seed(bn, scale=0.1),
                ("cifar10", False): _per_seed(nobn, bn=False, scale=0.1)}  # fmt: skip

    grade, test, parts = b1_claims.table1(acc(paper_bn, paper_nobn), "paper", rising=False)
    assert grade.verdict == REPRODUCED and [g.verdict for _, g in parts] == [REPRODUCED] * 2
    assert test.effect == pytest.approx(paper_bn) and test.null == "paper: 85.99 % ± 2 points"
    grade, _, parts = b1_claims.table1(
        acc(0.55, 0.45), "paper", rising=False
    )  # wholly outside both bands
    assert grade.verdict == REFUTED and [n for n, _ in parts] == ["BN", "no BN"]
    assert b1_claims.table1(acc(paper_bn, 0.45), "paper", rising=False)[0].verdict == PARTLY
    # both means at the band's upper end: neither inside nor outside
    assert b1_claims.table1(acc(paper_bn + 0.02, paper_nobn + 0.02), "paper", rising=False)[
        0
    ].verdict == (NOT_SHOWN)
    for profile in ("smoke", "cpu"):
        for values in (acc(paper_bn, paper_nobn), acc(0.55, 0.45)):
            assert b1_claims.table1(values, profile, rising=False)[0].verdict == NOT_TESTABLE
    # 2 seeds near the paper: the t interval (t = 6.3) is wider than the band
    two = {("cifar10", True): np.array([0.845, 0.875]), ("cifar10", False): np.array([0.78, 0.81])}
    assert b1_claims.table1(two, "paper", rising=False)[0].verdict == NOT_SHOWN
    # wholly outside, but a network stopped at its epoch cap: may still be rising
    assert b1_claims.table1(acc(0.55, 0.45), "paper", rising=True)[0].verdict == NOT_SHOWN


# ----------------------------------------------------------------------------- checks


def _fake_models(cfgs: dict, seeds_bn=(0, 1), seeds_nobn=(0, 1)):
    return SimpleNamespace(
        trained={
            v: [SimpleNamespace(cfg=c, seed=s) for s in (seeds_bn if v.batchnorm else seeds_nobn)]
            for v, c in cfgs.items()
        }
    )


def test_seed_pairing_holds_for_the_chapters_configs_and_fails_when_pairing_breaks():
    from normbook.paper_b.b1_setup_accuracy.spec import B1

    cfgs = classify.Setup.from_params(B1.resolve("smoke")).configs
    checks = pairing.seed_pairing(_fake_models(cfgs))
    assert len(checks) == 4 and all(c.holds for c in checks)
    assert "largest absolute BN − no BN difference 0 over the 10 initial" in checks[0].evidence
    broken = {**cfgs, ("mnist", False): dataclasses.replace(cfgs["mnist", False], init="pytorch")}
    assert [c.holds for c in pairing.seed_pairing(_fake_models(broken))] == [
        False,
        True,
        True,
        True,
    ]
    other = {**cfgs, ("cifar10", False): dataclasses.replace(cfgs["cifar10", False], batch_size=16)}
    assert [c.holds for c in pairing.seed_pairing(_fake_models(other))] == [
        True,
        True,
        True,
        False,
    ]
    swapped = pairing.seed_pairing(_fake_models(cfgs, seeds_nobn=(1, 0)))
    assert not any(c.holds for c in swapped)


# ----------------------------------------------------------------------------- ledgers


def test_b1_ledger():
    paper = (0.8599, 0.79435)
    ledger = b1_claims.b1_ledger(_models(_accuracy(5, 0.05, paper)), "paper")
    assert [v.verdict for v in ledger] == [REPRODUCED] * 3
    assert ledger[2].claim == "Table 1: CIFAR-10 test accuracy 85.99 % (BN) and 79.435 % (no BN)"
    assert ledger[0].evidence == (
        "BN 85.99% ± 0.16%, no BN 79.44% ± 0.08% (mean ± sd over seeds); BN higher in 5 of 5 seeds"
    )
    assert ledger[2].evidence == "ours: BN 85.99%, no BN 79.44%; profile `paper`"
    assert ledger[2].sesoi is None and ledger[0].sesoi is ACCURACY
    assert [c.family for c in ledger[0].controls] == ["CIFAR-10 BN", "CIFAR-10 no BN"]
    row = ledger[0].row()
    assert (
        "<b>test</b>: paired t test, one-sided against the SESOI, 5 seeds; p(reproduce) = "
        in row["claim (as tested)"]
    )
    effect = row["effect [90% CI] vs SESOI"]
    assert effect.startswith("+6.55% [")
    assert effect.endswith("; SESOI 0.5 percentage points of test accuracy")
    # BN worse on both datasets, the gap flat through training: refuted; Table 1 wholly off,
    # refuted where early stopping ended every network, held where the cap cut them
    worse = _models(_accuracy(5, -0.01, (0.4, 0.5)))
    assert [v.verdict for v in b1_claims.b1_ledger(worse, "paper")] == [REFUTED, REFUTED,
                                                                        NOT_SHOWN]  # fmt: skip
    done = _models(_accuracy(5, -0.01, (0.4, 0.5)), capped=False)
    assert [v.verdict for v in b1_claims.b1_ledger(done, "paper")] == [REFUTED] * 3
    held = b1_claims.b1_ledger(worse, "paper")[2].grade.parts[0][1]
    assert held.moving and (held.rising.capped, held.rising.networks) == (10, 10)
    # Table 1 needs the `paper` profile
    assert [v.verdict for v in b1_claims.b1_ledger(worse, "cpu")] == [REFUTED, REFUTED,
                                                                      NOT_TESTABLE]  # fmt: skip
    assert b1_claims.b1_ledger(_models(_accuracy(5, 0.05, paper)), "cpu")[2].verdict == NOT_TESTABLE
    # still gaining at the end of the budget, or no kept states: not shown
    late = {("cifar10", True): 0.01, ("mnist", True): 0.01}
    rising = b1_claims.b1_ledger(_models(_accuracy(5, -0.01, (0.4, 0.5)), late=late), "cpu")
    assert [v.verdict for v in rising[:2]] == [NOT_SHOWN] * 2
    blind = b1_claims.b1_ledger(_models(_accuracy(5, -0.01, (0.4, 0.5)), checkpoints=()), "cpu")
    assert [v.verdict for v in blind[:2]] == [NOT_SHOWN] * 2
    # the same networks ended by early stopping: finished, so graded
    ended = b1_claims.b1_ledger(_models(_accuracy(5, -0.01, (0.4, 0.5)), late=late,
                                        capped=False), "cpu")  # fmt: skip
    assert [v.verdict for v in ended[:2]] == [REFUTED] * 2
    # 2 seeds, gains near the SESOI: the intervals are too wide to tell
    two = b1_claims.b1_ledger(_models(_accuracy(2, 0.03, (0.83, 0.8), scale=1.0)), "paper")
    assert [v.verdict for v in two] == [NOT_SHOWN] * 3


def test_b1_ledger_a_family_that_did_not_learn_is_not_shown_never_refuted():
    acc = _accuracy(5, -0.01, (0.4, 0.5))
    acc["cifar10", True] = np.array([0.4, 0.4, 0.15, 0.4, 0.4])  # one seed below twice chance
    ledger = b1_claims.b1_ledger(_models(acc), "cpu")
    assert ledger[0].test.high < ACCURACY.value  # clearly below the SESOI...
    assert ledger[0].verdict == NOT_SHOWN  # ...but CIFAR-10 BN did not learn
    assert "positive control failed: CIFAR-10 BN" in ledger[0].grade.why
    assert [c.passed for c in ledger[0].controls] == [False, True]
    assert ledger[1].verdict == REFUTED  # MNIST learned


def _sparsity(n: int, mnist: tuple, cifar: tuple) -> Sparsity:
    """``n`` seeds; MNIST 4 layers, CIFAR-10 6; per dataset (BN, no BN) per-layer values."""
    arrays = {}
    for ds, (bn, nobn) in (("mnist", mnist), ("cifar10", cifar)):
        for flag, v in ((True, bn), (False, nobn)):
            arrays[ds, flag] = np.asarray(v, float)[None, :] + JITTER[flag][:n, None]
    names = {
        ds: [f"conv{i + 1}" for i in range(arrays[ds, True].shape[1])]
        for ds in ("mnist", "cifar10")
    }
    return Sparsity(SparsityConfig(), arrays, arrays, names, 4 * n, 0, 1.0)


def _flat(values: dict, metric: str = "sparsity") -> TrainingCurves:
    """Kept states at a quarter and half of the budget equal to the final values."""
    return TrainingCurves(metric, np.array([0.25, 0.5, 1.0]),
                          {v: np.stack([a] * 3) for v, a in values.items()}, 0)  # fmt: skip


def test_b2_ledger():
    paper_like = _sparsity(5, ([0.1] * 4, [0.3] * 4), ([0.6] * 6, [0.5] * 6))
    good = _models(_accuracy(5, 0.05, (0.6, 0.5)))
    ledger = b2_claims.b2_ledger(paper_like, good, None)
    assert [v.verdict for v in ledger] == [REPRODUCED] * 2  # the signature is read, not graded
    assert ledger[0].test.null == (
        "MNIST layer sparsity, mean over all conv layers: no BN − BN, same seeds"
    )
    assert ledger[0].test.effect == pytest.approx(0.2)
    assert ledger[1].test.effect == pytest.approx(0.1)
    assert ledger[0].evidence == (
        "BN 0.100 ± 0.016, no BN 0.300 ± 0.008 (mean ± sd over seeds); BN lower in 5 of 5 seeds"
    )
    b1 = b1_claims.b1_ledger(good, "cpu")
    assert b2_claims.signature_reading(ledger, b1).startswith("supported")
    worse = _models(_accuracy(5, -0.05, (0.6, 0.5)))
    assert b2_claims.signature_reading(ledger, b1_claims.b1_ledger(worse, "cpu")).startswith(
        "half supported"
    )
    # the same direction on both datasets (a consistent signature), flat through training
    consistent = _sparsity(5, ([0.1] * 4, [0.3] * 4), ([0.2] * 6, [0.5] * 6))
    ledger = b2_claims.b2_ledger(consistent, good, _flat(consistent.layer))
    assert [v.verdict for v in ledger] == [REPRODUCED, REFUTED]
    assert b2_claims.signature_reading(ledger, b1).startswith("not supported")
    # without kept states the wrong direction is not shown, never refuted
    assert b2_claims.b2_ledger(consistent, good, None)[1].verdict == NOT_SHOWN
    # a CIFAR-10 family that did not learn: not shown either
    acc = _accuracy(5, 0.05, (0.6, 0.5))
    acc["cifar10", False] = _per_seed(0.1, bn=False, scale=0.1)
    ledger = b2_claims.b2_ledger(consistent, _models(acc), _flat(consistent.layer))
    assert ledger[1].verdict == NOT_SHOWN and "positive control failed" in ledger[1].grade.why
    # 2 seeds, effects near their SESOIs: the intervals are too wide to tell
    two = _sparsity(2, ([0.3] * 4, [0.33] * 4), ([0.53] * 6, [0.5] * 6))
    ledger = b2_claims.b2_ledger(two, _models(_accuracy(2, 0.03, (0.53, 0.5), scale=1.0)), None)
    assert [v.verdict for v in ledger] == [NOT_SHOWN] * 2


def _clusters(n: int = 5, **override) -> Clusters:
    """``n`` seeds; MNIST 4 layers, CIFAR-10 6; BN equal to no BN and k* = 10 everywhere unless
    ``override`` gives ``{metric}_{dataset}`` as (BN, no BN) per-layer values (DBIs jittered
    per seed)."""
    layers = {"mnist": 4, "cifar10": 6}
    metrics = {m: {} for m in ("class_dbi", "k_star", "dbi_k_star", "dbi_fixed_k")}
    for m, per_variant in metrics.items():
        for ds, nl in layers.items():
            base = np.full(nl, 10.0 if m == "k_star" else 1.0)
            bn, no = override.get(f"{m}_{ds}", (base, base))
            for flag, v in ((True, bn), (False, no)):
                jitter = 0 if m == "k_star" else JITTER[flag][:n, None]
                per_variant[ds, flag] = np.asarray(v, float)[None, :] + jitter + np.zeros((n, 1))
    curve = {v: np.zeros((*a.shape, 5)) for v, a in metrics["k_star"].items()}
    names = {ds: [f"conv{i + 1}" for i in range(nl)] for ds, nl in layers.items()}
    return Clusters(
        ClusterConfig(k_min=2, k_max=20, fixed_k=10),
        *metrics.values(),
        curve,
        {},
        names,
        4 * n,
        0,
        1.0,
    )


LO, HI = 0.5, 2.0
PAPER_LIKE = dict(
    class_dbi_mnist=([HI, HI, LO, LO], [1] * 4),  # lower over the deeper half
    class_dbi_cifar10=([HI, HI, HI, LO, LO, LO], [1] * 6),
    k_star_mnist=([10, 10, 10, 10], [3, 3, 10, 10]),  # settles at layer 1 vs 3
    k_star_cifar10=([10] * 6, [3, 3, 3, 3, 3, 12]),  # settles at layer 1 vs 6
    dbi_k_star_cifar10=([1, 1, 1, LO, LO, LO], [1] * 6),
    dbi_k_star_mnist=([HI, HI, HI, LO], [1] * 4),  # worse except at the last layer
    dbi_fixed_k_mnist=([1, 1, LO, LO], [1] * 4),
    dbi_fixed_k_cifar10=([1, 1, 1, LO, LO, LO], [1] * 6),
)


def check_b3(build):
    """Chapter B3's rules, row by row where a row's key names it, every row where a scenario
    holds for all (so a new row in the claims module needs no edit here): ``build`` is
    :func:`b3_claims.b3_ledger` or a stand-in with the same arguments."""
    good = _models(_accuracy(5, 0.05, (0.6, 0.5)))
    ledger = build(_clusters(**PAPER_LIKE), good, None)
    by = {v.key: v for v in ledger}
    assert len(by) == len(ledger) and all(k.startswith("b3_") for k in by)
    assert all(v.verdict == REPRODUCED for v in ledger)
    assert by["b3_purer_classes_mnist"].test.null == (
        "MNIST class-based DBI, mean over conv3–conv4: no BN − BN, same seeds"
    )
    assert by["b3_purer_classes_cifar10"].test.null.startswith(
        "CIFAR-10 class-based DBI, mean over conv4–conv6"
    )
    # relative: no BN's index 1.0 (+ jitter), BN's 0.5
    c = _clusters(**PAPER_LIKE)
    bn, nobn = (rules.deeper_half(c.class_dbi["mnist", b]) for b in (True, False))
    purer = by["b3_purer_classes_mnist"]
    assert purer.test.effect == pytest.approx(np.mean((nobn - bn) / nobn))
    assert purer.test.effect == pytest.approx(0.5, abs=0.01)
    assert purer.evidence == (
        "BN 0.50 ± 0.02, no BN 1.00 ± 0.01 (mean ± sd over seeds); BN lower in 5 of 5 seeds"
    )
    earlier = by["b3_k_star_earlier"]
    assert earlier.evidence.startswith(
        "MNIST settling layer: BN 1.0 ± 0.0, no BN 3.0 ± 0.0 (mean ± sd over seeds); BN earlier "
        "in 5 of 5 seeds; CIFAR-10 settling layer: BN 1.0 ± 0.0, no BN 6.0 ± 0.0"
    )
    assert earlier.evidence.endswith("MNIST: reproduced; CIFAR-10: reproduced")
    assert by["b3_higher_dbi_k_star_mnist"].evidence.startswith(
        "higher over conv1–conv3: reproduced; lower at conv4: reproduced; at conv4: effect +0.50"
    )
    fixed = by["b3_purer_at_fixed_k"]
    assert fixed.claim.startswith("(ours) At fixed k = 10,") and fixed.paper == "B (ours)"
    assert len(earlier.controls) == 4 and len(by["b3_lower_dbi_k_star_cifar10"].controls) == 2
    # nothing differs between BN and no BN: below every SESOI, but without kept states none
    # of the claims is refuted
    assert all(v.verdict == NOT_SHOWN for v in build(_clusters(), good, None))
    # with flat class-DBI curves the class-DBI claims are refuted; the k-means claims have no
    # kept states
    same = _clusters()
    ledger = build(same, good, {"class_dbi": _flat(same.class_dbi, "class_dbi")})
    by = {v.key: v.verdict for v in ledger}
    assert by["b3_purer_classes_mnist"] == by["b3_purer_classes_cifar10"] == REFUTED
    assert {
        by[k]
        for k in (
            "b3_k_star_earlier",
            "b3_lower_dbi_k_star_cifar10",
            "b3_higher_dbi_k_star_mnist",
            "b3_purer_at_fixed_k",
        )
    } == {NOT_SHOWN}
    # with every metric flat at the kept states, every claim can be refuted
    flat = {m: _flat(getattr(same, m), m) for m in analysis.KMEANS_CURVES}
    ledger = build(same, good, flat)
    assert all(v.verdict == REFUTED and v.grade.refutable for v in ledger)
    # ...unless a family did not learn
    acc = _accuracy(5, 0.05, (0.6, 0.5))
    acc["mnist", True] = np.full(5, 0.1)
    by = {
        v.key: v.verdict
        for v in build(same, _models(acc), {"class_dbi": _flat(same.class_dbi, "class_dbi")})
    }
    assert (by["b3_purer_classes_mnist"], by["b3_purer_classes_cifar10"]) == (NOT_SHOWN, REFUTED)
    # only one part of each two-part claim holds
    partial = {
        **PAPER_LIKE,
        "k_star_cifar10": ([10] * 6, [10] * 6),  # settles alike on CIFAR-10
        "dbi_k_star_mnist": ([LO] * 4, [1] * 4),  # better everywhere, not only at the last
        "dbi_fixed_k_cifar10": ([1] * 6, [1] * 6),
    }
    by = {v.key: v for v in build(_clusters(**partial), good, None)}
    assert {k: v.verdict for k, v in by.items() if v.verdict != REPRODUCED} == {
        "b3_k_star_earlier": PARTLY, "b3_higher_dbi_k_star_mnist": PARTLY,
        "b3_purer_at_fixed_k": PARTLY}  # fmt: skip
    # whole layers, every BN network earlier: the exact rank test's 1/252 for MNIST stays
    # below 0.05 after Bonferroni over the two datasets (a paired sign test's 2^-5 would not)
    assert by["b3_k_star_earlier"].grade.why.startswith("MNIST: reproduced; CIFAR-10: not shown")
    assert by["b3_k_star_earlier"].grade.p == pytest.approx(2 / 252)
    # 2 seeds, class-based DBI about 6 % lower (SESOI 5 %): too wide to tell; the settling
    # layers have no spread, and two seeds per group give the rank test only 1/6
    near = {**PAPER_LIKE, "class_dbi_mnist": ([1, 1, 0.94, 0.94], [1] * 4),
            "class_dbi_cifar10": ([1, 1, 1, 0.94, 0.94, 0.94], [1] * 6)}  # fmt: skip
    two = {
        v.key: v.verdict
        for v in build(_clusters(2, **near), _models(_accuracy(2, 0.05, (0.6, 0.5))), None)
    }
    assert {two[k] for k in ("b3_purer_classes_mnist", "b3_purer_classes_cifar10",
                             "b3_k_star_earlier")} == {NOT_SHOWN}  # fmt: skip


def test_b3_ledger():
    check_b3(b3_claims.b3_ledger)


def test_a_new_b3_row_is_one_place():
    """A row added in B3's claims module alone (here planted: a second class-based DBI row on
    MNIST, under its own key) passes every check above unedited, and reaches the chapter's
    words, its table, its record and its code links, with no list of rows to edit anywhere
    else."""
    from normbook.grading import ledger as records
    from normbook.pages import report
    from normbook.publish import sphinx_code

    def planted(clusters, models, curves):
        rows = b3_claims.b3_ledger(clusters, models, curves)
        c = rules.Contrast.per_dataset(clusters.class_dbi)["mnist"]
        up = rules.moving((curves or {}).get("class_dbi"), "mnist", "lower", rules.deeper_half,
                          b3_claims.DBI, nets=rules.compared(models, "mnist"))  # fmt: skip
        return rows + [b3_claims.class_dbi_row(c, "mnist", rising=up,
                       controls=rules.learned(models.accuracy, rules.both("mnist")),
                       key="b3_planted_classes_mnist", where="a planted row")]  # fmt: skip

    check_b3(planted)
    good = _models(_accuracy(5, 0.05, (0.6, 0.5)))
    ledger = planted(_clusters(**PAPER_LIKE), good, None)
    new = ledger[-1]
    assert report.in_words(ledger).count("\n- ") == len(ledger) - 1
    assert report.in_words(ledger).splitlines()[-1].startswith(f"- {new.claim}")
    assert len(set(report.in_words(ledger).splitlines())) == len(ledger)  # each line its own
    assert records.claim_record(new, "b3-verdict")["key"] == "b3_planted_classes_mnist"
    assert [role for role, *_ in new.code] == ["rule", "effect", "SESOI"]
    for _, module, name in new.code:  # each link lands on a definition its source page anchors
        sphinx_code.locate(f"{module}.{name}")


def test_every_claim_has_a_key_of_its_chapter_unique_in_the_chapter():
    """The prose names a claim by its key (``{glue:text}`b2_less_sparse_mnist```), never by its
    position; chapter B2's reading of the signature finds B1's and B2's rows by theirs."""
    good = _models(_accuracy(5, 0.05, (0.6, 0.5)))
    sparsity = _sparsity(5, ([0.1] * 4, [0.3] * 4), ([0.6] * 6, [0.5] * 6))
    ledgers = {
        "b1": b1_claims.b1_ledger(good, "cpu"),
        "b2": b2_claims.b2_ledger(sparsity, good, None),
        "b3": b3_claims.b3_ledger(_clusters(**PAPER_LIKE), good, None),
    }
    keys = [v.key for rows in ledgers.values() for v in rows]
    assert len(set(keys)) == len(keys)
    assert all(v.key.startswith(f"{prefix}_") for prefix, rows in ledgers.items() for v in rows)
    assert [v.key for v in ledgers["b2"]] == ["b2_less_sparse_mnist", "b2_more_sparse_cifar10"]
