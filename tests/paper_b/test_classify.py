"""Paper B training: determinism, the early-stopping rule, the cache, workers, the typed
result of a chapter's training run, and the weights kept at checkpoints."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from torch import nn

from normbook.paper_b.b1_setup_accuracy.spec import B1
from normbook.paper_b.cached import analysis, training
from normbook.paper_b.runs import classify
from normbook.paper_b.runs.classify import Models, Variant
from normbook.runtime import cache, seeding


def _sub(full, cfg):
    return full.of(cfg)


def test_same_seed_same_weights_and_accuracy_different_seed_differs(synthetic_full, tiny_cfg):
    full = synthetic_full()
    cfg = tiny_cfg()
    a = classify.train_one(cfg, 3, _sub(full, cfg), show_progress=False)
    b = classify.train_one(cfg, 3, _sub(full, cfg), show_progress=False)
    c = classify.train_one(cfg, 4, _sub(full, cfg), show_progress=False)
    assert a.state.keys() == b.state.keys()
    assert all(np.array_equal(a.state[k], b.state[k]) for k in a.state)
    assert a.test_acc == b.test_acc and a.test_loss == b.test_loss
    np.testing.assert_array_equal(a.curves["val_loss"], b.curves["val_loss"])
    assert not np.array_equal(
        a.state["features.conv1.conv.weight"], c.state["features.conv1.conv.weight"]
    )
    assert torch.get_num_threads() == 2  # the one-thread setting is restored (conftest sets 2)
    # it learned the synthetic task (a broken training loop would sit near 0.1)
    assert a.test_acc > 0.5


def test_early_stopping_stops_after_patience_and_keeps_best_weights(synthetic_full, tiny_cfg):
    full = synthetic_full()
    # lr so large that SGD diverges: the validation loss stops improving early on
    cfg = tiny_cfg(
        batchnorm=False,
        optimizer="sgd",
        lr=5.0,
        momentum=0.9,
        max_epochs=6,
        patience=2,
        evals_per_epoch=4,
    )
    res = classify.train_one(cfg, 0, _sub(full, cfg), show_progress=False)
    v = res.curves["val_loss"]
    assert res.early_stopped
    best = int(np.nanargmin(np.where(np.isfinite(v), v, np.nan)))
    assert res.best_epoch == res.curves["epoch"][best]
    # stop exactly `patience` evaluations after the best one (or at a non-finite loss)
    assert len(v) - 1 - best == cfg.patience or not np.isfinite(v[-1])
    assert len(v) < cfg.max_epochs * cfg.evals_per_epoch
    # the kept weights are the best ones: re-evaluating them gives the best validation loss
    sub = _sub(full, cfg)
    model = classify.model_from_state(cfg, res.state)
    vl, _ = training.evaluate(model, *sub.tensors("val"))
    assert vl == pytest.approx(v[best], rel=1e-5)


def test_what_ended_a_run_is_read_from_its_entry(synthetic_full, tiny_cfg):
    """Early stopping (patience, also when it fires at the last evaluation), the cap, and a
    run kept at an accuracy check: only the cap counts as cut short."""
    full = synthetic_full()
    stopped = tiny_cfg(batchnorm=False, optimizer="sgd", lr=5.0, momentum=0.9, max_epochs=6,
                       patience=2, evals_per_epoch=4)  # fmt: skip
    capped = tiny_cfg(max_epochs=2, evals_per_epoch=3, patience=100)
    for cfg, ended in ((stopped, "early stopping"), (capped, "the cap")):
        res = classify.train_one(cfg, 0, _sub(full, cfg), show_progress=False)
        t = classify.TrainedModel(cfg, 0, training.entry(res))
        assert t.ended_by == ended and t.capped == (ended == "the cap")
    # patience runs out exactly at the cap's last evaluation: early stopping ended it
    meta = {"early_stopped": True, "stopped_epoch": 2.0}
    assert classify.TrainedModel(capped, 0, cache.Entry(meta=meta)).ended_by == "early stopping"
    checked = {"early_stopped": False, "reached_epoch": 1.5, "reached_val_acc": 0.6}
    t = classify.TrainedModel(capped, 0, cache.Entry(meta=checked), {"until_val_acc": 0.6})
    assert t.ended_by == "the accuracy check" and not t.capped


def test_no_early_stop_runs_all_epochs_and_curve_shapes(synthetic_full, tiny_cfg):
    full = synthetic_full()
    cfg = tiny_cfg(max_epochs=2, evals_per_epoch=3, patience=100)
    res = classify.train_one(cfg, 0, _sub(full, cfg), show_progress=False)
    assert not res.early_stopped
    assert len(res.curves["epoch"]) == 6
    np.testing.assert_allclose(res.curves["epoch"][[2, 5]], [1.0, 2.0])
    assert res.stopped_epoch == 2.0
    assert all(len(v) == 6 for v in res.curves.values())
    assert np.all((res.curves["val_acc"] >= 0) & (res.curves["val_acc"] <= 1))


def test_splits_are_disjoint_deterministic_and_validated(tiny_cfg):
    tr, va = training.split_indices(1000, 300, 100, seed=5)
    tr2, va2 = training.split_indices(1000, 300, 100, seed=5)
    assert np.array_equal(tr, tr2) and np.array_equal(va, va2)
    assert len(tr) == 300 and len(va) == 100 and not set(tr) & set(va)
    with pytest.raises(ValueError):
        training.split_indices(100, 90, 20, seed=0)
    with pytest.raises(ValueError, match="n_train"):
        tiny_cfg(n_train=59_000, n_val=2_000)
    with pytest.raises(ValueError, match="dataset"):
        tiny_cfg(dataset="imagenet")


def test_cache_hit_does_not_retrain(monkeypatch, synthetic_full, tiny_cfg):
    full = {"mnist": synthetic_full()}
    cfg = tiny_cfg(max_epochs=1)
    first = classify.train_all([(cfg, 0), (cfg, 1)], full)
    assert [t.hit for t in first] == [False, False]

    def boom(*a, **k):
        raise AssertionError("retrained despite a cached model")

    monkeypatch.setattr(classify, "train_one", boom)
    again = classify.train_all([(cfg, 0), (cfg, 1)], full)
    assert [t.hit for t in again] == [True, True]
    for a, b in zip(first, again):
        assert a.test_acc == b.test_acc
        assert all(torch.equal(a.state[k], b.state[k]) for k in a.state)
        np.testing.assert_array_equal(a.curves["val_loss"], b.curves["val_loss"])
    # a different seed, config or data copy is a different entry
    with pytest.raises(AssertionError, match="retrained"):
        classify.train_all([(cfg, 2)], full)
    with pytest.raises(AssertionError, match="retrained"):
        classify.train_all([(dataclasses.replace(cfg, lr=0.02), 0)], full)
    other = dataclasses.replace(full["mnist"], data_id="another-copy")
    with pytest.raises(AssertionError, match="retrained"):
        classify.train_all([(cfg, 0)], {"mnist": other})


def test_worker_processes_give_identical_models(synthetic_full, tiny_cfg):
    full = {"mnist": synthetic_full()}
    cfg = tiny_cfg(max_epochs=1, n_train=128, n_val=32, n_test=50)
    jobs = [(cfg, 0), (dataclasses.replace(cfg, batchnorm=False), 0)]
    local = [classify.train_one(c, s, _sub(full["mnist"], c), show_progress=False) for c, s in jobs]
    pooled = classify.train_all(jobs, full, workers=2)
    for loc, t in zip(local, pooled):
        assert not t.hit and t.test_acc == loc.test_acc
        assert all(np.array_equal(loc.state[k], t.state[k].numpy()) for k in loc.state)


def test_setup_from_the_chapter_parameters(tiny_cfg):
    params = B1.resolve("cpu", workers=1, allow_unverified="no")
    setup = classify.Setup.from_params(params)
    assert (
        setup.seeds == tuple(params.seeds)
        and setup.workers == 1
        and setup.allow_unverified is False
    )
    cfgs = setup.configs
    assert list(cfgs) == list(classify.VARIANTS)
    assert cfgs["cifar10", False].variant == ("cifar10", False)
    m_bn, m_no = cfgs["mnist", True], cfgs["mnist", False]
    c_bn, c_no = cfgs["cifar10", True], cfgs["cifar10", False]
    assert m_bn.optimizer == m_no.optimizer == "sgd" and m_bn.lr == m_no.lr == 0.01
    assert c_bn.optimizer == c_no.optimizer == "adam"
    assert (c_bn.lr, c_no.lr) == (1e-3, 1e-4)
    assert m_bn.arch == "standard_cnn" and c_bn.arch == "vgg16"
    # BN and no BN differ only in batchnorm (and, on CIFAR-10, the paper's learning rates)
    assert dataclasses.replace(m_no, batchnorm=True) == m_bn
    assert dataclasses.replace(c_no, batchnorm=True, lr=c_bn.lr) == c_bn
    paper = B1.resolve("paper")
    assert paper.seeds == [0, 1, 2, 3, 4] and paper.mnist_width == 64 and paper.vgg_width == 1.0
    assert classify.allow_flag("env") is None and classify.allow_flag("no") is False
    assert m_bn.device == "cpu" and classify.resolve_device("cpu") == "cpu"
    assert classify.resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="device"):
        tiny_cfg(device="tpu")
    assert m_bn.at_paper_width() == dataclasses.replace(m_bn, width=64)
    assert c_no.at_paper_width().width == 1.0 and (m_bn.in_channels, c_bn.in_channels) == (1, 3)


def test_seeded_streams_are_the_books_seeding_rule():
    # initial weights and minibatch order use streams 12 and 11 of seed * 1_000_003
    model = training.kaiming_init(nn.Sequential(nn.Conv2d(1, 3, 3), nn.Linear(4, 2)), seed=5)
    gen = torch.Generator().manual_seed(5 * 1_000_003 + 12)
    want = torch.empty(3, 1, 3, 3)
    nn.init.kaiming_normal_(want, mode="fan_out", nonlinearity="relu", generator=gen)
    assert torch.equal(model[0].weight, want)
    order = torch.randperm(10, generator=seeding.generator(5, "order"))
    assert torch.equal(
        order, torch.randperm(10, generator=torch.Generator().manual_seed(5 * 1_000_003 + 11))
    )


def test_models_typed_result(synthetic_full, tiny_cfg):
    full = {"mnist": synthetic_full()}
    cfgs = {
        Variant("mnist", bn): tiny_cfg(batchnorm=bn, max_epochs=1, n_train=128, n_val=32, n_test=50)
        for bn in (True, False)
    }
    done = classify.train_all([(c, s) for c in cfgs.values() for s in (3, 4)], full)
    models = Models({v: [t for t in done if t.cfg == c] for v, c in cfgs.items()}, full)
    assert models.seeds == [3, 4] and models.n_models == 4 and models.cache_hits == 0
    assert models.configs == cfgs and models.variants == list(cfgs)
    acc = models.accuracy
    assert set(acc) == {("mnist", True), ("mnist", False)} and acc["mnist", True].shape == (2,)
    assert acc["mnist", False].tolist() == [t.test_acc for t in done[2:]]
    assert models.train_seconds == pytest.approx(sum(t.train_seconds for t in done))
    assert models.provenance == []  # synthetic data has no files
    assert all(t.stopped_epoch == 1.0 and not t.early_stopped for t in models.all)
    again = classify.train_all([(c, s) for c in cfgs.values() for s in (3, 4)], full)
    assert (
        Models({v: [t for t in again if t.cfg == c] for v, c in cfgs.items()}, full).cache_hits == 4
    )


def test_training_keeps_the_weights_at_the_checkpoints_apart_from_the_kept_ones(
    synthetic_full, tiny_cfg
):
    full = synthetic_full()
    cfg = tiny_cfg(max_epochs=2, patience=100, checkpoints=(0.25, 0.5))
    (t,) = classify.train_all([(cfg, 0)], {"mnist": full})
    names = set(cfg.build(0).state_dict())
    assert set(t.state) == names  # the kept weights only, no checkpoint among them
    assert not any(k.startswith("checkpoint") for k in t.state)
    first, half = t.checkpoint(0), t.checkpoint(1)
    assert set(first) == names and set(half) == names and t.checkpoint(2) is None
    w = "features.conv1.conv.weight"
    assert not torch.equal(first[w], half[w]) and not torch.equal(half[w], t.state[w])
    # the weights at half the 2-epoch budget are the weights after the first epoch: those a
    # 1-epoch run of the same seed keeps (its only evaluation is at the end of that epoch)
    one_cfg = dataclasses.replace(cfg, max_epochs=1, evals_per_epoch=1, checkpoints=())
    one = classify.train_one(one_cfg, 0, full.of(cfg), show_progress=False)
    assert one.best_epoch == 1.0
    for k in names:
        np.testing.assert_array_equal(half[k].numpy(), one.state[k])
    # the cache gives them back; the analyses read them as states of the run
    (again,) = classify.train_all([(cfg, 0)], {"mnist": full})
    assert again.hit and torch.equal(again.checkpoint(1)[w], half[w])
    models = classify.Models({("mnist", True): [again]}, {"mnist": full})
    states = analysis.states(models)
    assert [s.stage for s in states] == [{"checkpoint": 0.25}, {"checkpoint": 0.5}, {}]
    assert torch.equal(states[1].state[w], half[w]) and states[2] is again
    # the same states as whole sets of models, and an analysis along them
    at = analysis.at_states(models)
    assert [m.all[0].stage for m in at] == [{"checkpoint": 0.25}, {"checkpoint": 0.5}, {}]
    runs = analysis.along(models, lambda m: m.all[0].stage)
    assert list(runs.fractions) == [0.25, 0.5, 1.0] and runs.missing == 0
    assert runs.results[-1] == {}
    late = analysis.along(models, lambda m: m.all[0].stage, late=True)  # a late gain's two ends
    assert list(late.fractions) == [0.5, 1.0] and late.results == [{"checkpoint": 0.5}, {}]
    assert analysis.late_states([0.25, 0.5, 0.75]) == [1] and analysis.late_states([0.75]) == []
