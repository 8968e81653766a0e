"""Chapters A1-A3 end to end on tiny networks: typed results, ledgers, figures and tables."""

from dataclasses import replace

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from normbook.grading import verdicts as vocabulary  # noqa: E402
from normbook.grading.verdicts import Control  # noqa: E402
from normbook.paper_a import plots, run_tables  # noqa: E402
from normbook.paper_a.a1_localization import claims as a1_claims  # noqa: E402
from normbook.paper_a.a1_localization import figures as a1_figures  # noqa: E402
from normbook.paper_a.a1_localization import tables as a1_tables  # noqa: E402
from normbook.paper_a.a2_mechanism import claims as a2_claims  # noqa: E402
from normbook.paper_a.a2_mechanism import figures as a2_figures  # noqa: E402
from normbook.paper_a.a2_mechanism import tables as a2_tables  # noqa: E402
from normbook.paper_a.a2_mechanism.spec import A2  # noqa: E402
from normbook.paper_a.a3_which_norms import claims as a3_claims  # noqa: E402
from normbook.paper_a.a3_which_norms import figures as a3_figures  # noqa: E402
from normbook.paper_a.a3_which_norms import tables as a3_tables  # noqa: E402
from normbook.paper_a.measures import equivariance, multihop  # noqa: E402
from normbook.paper_a.runs import localization, packnorm, which_norms  # noqa: E402

GRADES = set(vocabulary.GRADES)


@pytest.fixture
def a1_runs(tiny_setup):
    setup = tiny_setup(seeds=(0, 1))
    return (
        setup,
        localization.localize(setup, setup.cnn("none")),
        localization.localize(setup, setup.chapter_cnn),
        localization.circular_null(setup, setup.chapter_cnn),
    )


def localization_curve(setup, run):
    return localization.curve(setup, run.cnn)


def test_a1_ledger_figures_and_tables(a1_runs):
    setup, none, normed, circular = a1_runs
    checks = [equivariance.check(r) for r in (none, normed)]
    assert checks[0].exact == [True, True] and not any(checks[1].exact)
    cyc = equivariance.cyclic_change(circular.net, 24, shift=5)
    curve = localization_curve(setup, normed)
    claims, sanity = a1_claims.a1_ledger(none, normed, circular, checks[0], cyc, curve)
    assert len(claims) == 3 and {v.verdict for v in claims} <= GRADES
    assert [v.key for v in claims] == ["a1_side_channel", "a1_whole_sequence", "a1_inward_spread"]
    assert not claims[2].grade.refutable  # Fig. 1b's reach: no probes at the kept states
    probed = localization.curve(setup, normed.cnn, with_probes=True)
    claims = a1_claims.a1_ledger(none, normed, circular, checks[0], cyc, curve, probed)[0]
    assert all(v.grade.refutable for v in claims) and "at the kept states" in claims[2].evidence
    assert all(c.holds for c in sanity) and len(sanity) == 2
    assert "circular" in claims[0].test.null and claims[0].test.n == 2
    assert all(v.controls and v.sesoi for v in claims)  # every claim: its controls, its SESOI
    for fig in (
        a1_figures.task_example(24, 2),
        plots.loss_curves([none, normed]),
        a1_figures.mean_predictions([none, normed]),
        a1_figures.depth_maps([none, normed]),
    ):
        assert fig.axes
    for text in (
        run_tables.equivariance(checks),
        a1_tables.localization([none, normed]),
        a1_tables.probe_distances([none, normed]),
    ):
        assert text.startswith("|") and "instance" in text and "none" in text


def test_a2_ledger_figures_and_tables(a1_runs):
    setup, none, normed, circular = a1_runs
    params = A2.resolve("smoke", pack_steps=5, n_test=64, overlap_fracs=[0.0, 0.5, 1.0])
    pack = packnorm.overlap_sweep(packnorm.PackSetup.from_params(params))
    assert pack.pack.acc.shape == (3, 1) and len(pack.p_zero) == 1
    hops = multihop.compare(normed.probe_distances, 3, 24, 3.0)
    probed = localization.curve(setup, normed.cnn, with_probes=True)
    kept = packnorm.late_accuracy(pack.setup)  # the sweep at the state kept by half the budget
    assert kept.at_step == 2 and kept.correct.shape == pack.pack.correct.shape
    claims, sanity = a2_claims.a2_ledger(pack, normed, none, circular, 3.0, probed, kept)
    assert len(claims) == 2 and {v.verdict for v in claims} <= GRADES
    assert [v.key for v in claims] == ["a2_transition", "a2_multi_hop"]
    assert claims[1].grade.refutable  # the multi-hop reach, judged at the kept states
    assert claims[0].grade.refutable and "rising judged at 0.4 of" in claims[0].evidence
    assert len(sanity) == 2 and "transition" in claims[0].claim
    # accuracy rising with the overlap is no claim: pooled statistics give it at any R
    assert not any("rises with o" in v.claim for v in claims)
    for fig in (
        a2_figures.mechanism(3, 2, 24),
        a2_figures.packnorm_example(5, 2),
        a2_figures.packnorm_accuracy(pack),
        a2_figures.probe_reach([none, normed], 3.0),
    ):
        assert fig.axes
    assert a2_tables.packnorm(pack).count("\n") == 4 and "iterated" in a2_tables.hops(
        hops, normed, none, 3.0
    )


def test_a3_ledger_figures_and_tables(tiny_setup):
    setup = tiny_setup(seeds=(0, 1), n_eval=128, width=4)
    groups = which_norms.group_sweep(setup, [1, 4], [0])
    assert groups.runs[1].seeds == [0]
    bn = which_norms.batchnorm_runs(setup)
    circ = localization.circular_null(setup, setup.cnn("instance"))
    null = which_norms.NullLevel.of(bn.none, circ)
    assert groups.instance is groups.runs[4] and null.slope >= max(null.slopes)
    sizes = which_norms.eval_batch_sweep(setup, [16, 8])
    assert sizes.sizes == [8, 16] and sizes.largest == 16 and sizes.reference == 8
    tested = which_norms.batch_mean_runs(setup, sizes.reference)
    assert tested.circular.padding == "circular" and tested.population.mode == "population"
    eq_pop = equivariance.check(bn.population)
    assert eq_pop.exact == [True, True]  # population statistics: Prop. C.1
    cyc = equivariance.cyclic_change(tested.circular.net, 24, shift=3)
    curves = which_norms.group_curves(setup, [1], [0])
    bn_curve = localization.curve(setup, bn.minibatch.cnn)
    bm_curves = which_norms.batch_mean_curves(setup, sizes)
    assert bm_curves.largest.runs[-1].batch_size == 16
    claims, sanity = a3_claims.a3_ledger(
        groups, tested, eq_pop, cyc, sizes, curves, bn_curve, bm_curves
    )
    assert len(claims) == 4 and {v.verdict for v in claims} <= GRADES
    assert [v.key for v in claims] == ["a3_group_trend", "a3_batchnorm_localizes",
                                       "a3_batchnorm_boundary", "a3_batch_size_fades"]  # fmt: skip
    assert all(v.grade.refutable for v in claims)  # the boundary and batch-size rows too
    assert all(c.holds for c in sanity)
    for fig in (
        a3_figures.groups(groups, null, setup.radius),
        a3_figures.eval_batch_size(sizes),
        a3_figures.predictions_and_maps([bn.none, bn.minibatch], "t"),
    ):
        assert fig.axes
    assert "(InstanceNorm)" in a3_tables.boundary(bn, groups.instance)
    assert "population (16)" in a3_tables.eval_batch(sizes, [0, 1])
    assert "beyond null" in a3_tables.groups(groups, null)
    # what holds the trend, both ways: a failed family check is named with InstanceNorm's
    ok, failed = Control("f", "c", True, "e"), Control("GroupNorm, G < C", "c", False, "0.001")
    held = a3_claims.trend_check_text(replace(claims[0], controls=(ok, failed)), groups.instance)
    assert "GroupNorm, G < C failed its check" in held and "InstanceNorm (G = C)" in held
    passed = a3_claims.trend_check_text(replace(claims[0], controls=(ok,)), groups.instance)
    assert passed == "Every family check of the trend passed"


def test_groupnorm_with_one_group_per_channel_is_instancenorms_config(tiny_setup):
    import torch

    from normbook.paper_a.cached import norms

    setup = tiny_setup(seeds=(0,))
    assert setup.cnn("group", groups=setup.width) == setup.cnn("instance")
    assert setup.cnn("group", groups=1) != setup.cnn("instance")
    # the two modules compute the same function, so sharing their networks is exact
    x = torch.randn(3, 2 * setup.width, 7)
    g = norms.make_norm("group", 2, setup.width, groups=setup.width)
    i = norms.make_norm("instance", 2, setup.width)
    torch.testing.assert_close(g(x), i(x), rtol=0, atol=0)
