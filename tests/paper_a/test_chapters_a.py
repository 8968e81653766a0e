"""Chapters A1-A3 end to end on tiny networks: typed results, ledgers, figures and tables."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from normbook.core import verdicts as vocabulary  # noqa: E402
from normbook.paper_a import (  # noqa: E402
    diagrams,
    equivariance,
    figures,
    multihop,
    packnorm,
    tables,
    verdicts,
    which_norms,
)
from normbook.paper_a.specs import A2  # noqa: E402

GRADES = {vocabulary.REPRODUCED, vocabulary.PARTLY, vocabulary.NOT, vocabulary.INCONCLUSIVE}


@pytest.fixture
def a1_runs(tiny_setup):
    from normbook.paper_a import localization

    setup = tiny_setup(seeds=(0, 1))
    return (
        setup,
        localization.run(setup, setup.cnn("none")),
        localization.run(setup, setup.chapter_cnn),
    )


def test_a1_ledger_figures_and_tables(a1_runs):
    setup, none, normed = a1_runs
    checks = [equivariance.check(r) for r in (none, normed)]
    assert checks[0].exact == [True, True] and not any(checks[1].exact)
    ledger = verdicts.a1_ledger(none, normed, checks[0], setup.detector.window)
    assert len(ledger) == 3 and {v.verdict for v in ledger} <= GRADES
    assert f"R = {setup.radius}" in ledger[0].evidence
    for fig in (
        figures.task_example(24, 2),
        figures.loss_curves([none, normed]),
        figures.mean_predictions([none, normed]),
        figures.depth_maps([none, normed]),
    ):
        assert fig.axes
    for text in (
        tables.equivariance(checks),
        tables.localization([none, normed]),
        tables.probe_distances([none, normed]),
    ):
        assert text.startswith("|") and "instance" in text and "none" in text


def test_a2_ledger_figures_and_tables(a1_runs):
    setup, none, normed = a1_runs
    P = A2.resolve("smoke", pack_steps=5, n_test=64, overlap_fracs=[0.0, 1.0])
    pack = packnorm.run(packnorm.configs(P))
    assert pack.pack.acc.shape == (2, 1) and len(pack.p_zero) == 1
    hops = multihop.compare(normed.probe_distances, 3, 24, 3.0)
    ledger = verdicts.a2_ledger(pack, hops, normed, 3.0)
    assert len(ledger) == 5 and {v.verdict for v in ledger} <= GRADES
    for fig in (
        diagrams.mechanism(3, 2, 24),
        figures.packnorm_example(5, 2),
        figures.packnorm_accuracy(pack),
        figures.probe_reach([none, normed], 3.0),
    ):
        assert fig.axes
    assert tables.packnorm(pack).count("\n") == 3 and "iterated" in tables.hops(
        hops, normed, none, 3.0
    )


def test_a3_ledger_figures_and_tables(tiny_setup):
    setup = tiny_setup(seeds=(0, 1), n_eval=128, width=4)
    groups = which_norms.group_sweep(setup, [1, 4])
    bn = which_norms.batchnorm_runs(setup)
    null = which_norms.NullLevel.of(*bn.null)
    assert groups.instance is groups.runs[4] and null.slope >= max(null.slopes)
    sizes = which_norms.eval_batch_sweep(setup, [16, 8])
    assert sizes.sizes == [8, 16] and sizes.largest == 16 and sizes.reference == 8
    eq_pop = equivariance.check(bn.population)
    assert eq_pop.exact == [True, True]  # population statistics: Prop. C.1
    ledger = verdicts.a3_ledger(groups, bn, null, eq_pop, sizes)
    assert len(ledger) == 5 and {v.verdict for v in ledger} <= GRADES
    for fig in (
        figures.groups(groups, null, setup.radius),
        figures.eval_batch_size(sizes),
        figures.predictions_and_maps([bn.none, bn.minibatch], "t"),
    ):
        assert fig.axes
    assert "(InstanceNorm)" in tables.boundary(bn, groups.instance)
    assert "population (16)" in tables.eval_batch(sizes, [0, 1])
    assert "beyond null" in tables.groups(groups, null)
