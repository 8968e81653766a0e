"""Part B training: determinism, the early-stopping rule, the cache, and the chapter specs."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from normbook import classify
from normbook.classify import ClassifierConfig, Splits
from normbook.params import ParameterError
from normbook.specs_b import B1, B2, B3


def synthetic_full(n_train=400, n_test=120, seed=0, dataset="mnist") -> Splits:
    """MNIST-shaped uint8 images: noise plus a bright patch whose position is the class."""
    rng = np.random.default_rng(seed)

    def make(n):
        y = rng.integers(0, 10, n).astype(np.uint8)
        x = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
        for i, c in enumerate(y):
            r, q = divmod(int(c), 5)
            x[i, 2 + 14 * r: 12 + 14 * r, 5 * q: 8 + 5 * q] = 250
        return x, y

    x_tr, y_tr = make(n_train)
    x_te, y_te = make(n_test)
    return Splits(dataset, x_tr, y_tr, x_tr[:0], y_tr[:0], x_te, y_te, "synthetic-" + str(seed))


def tiny_cfg(**kw) -> ClassifierConfig:
    base = dict(dataset="mnist", batchnorm=True, width=2, optimizer="adam", lr=0.01,
                batch_size=16, max_epochs=2, patience=3, evals_per_epoch=2, n_train=256,
                n_val=64, n_test=100)
    base.update(kw)
    return ClassifierConfig(**base)


def _sub(full, cfg):
    return full.subset(cfg.n_train, cfg.n_val, cfg.n_test, cfg.split_seed)


def test_same_seed_same_weights_and_accuracy_different_seed_differs():
    full = synthetic_full()
    cfg = tiny_cfg()
    a = classify.train_one(cfg, 3, _sub(full, cfg), show_progress=False)
    b = classify.train_one(cfg, 3, _sub(full, cfg), show_progress=False)
    c = classify.train_one(cfg, 4, _sub(full, cfg), show_progress=False)
    assert a.state.keys() == b.state.keys()
    assert all(np.array_equal(a.state[k], b.state[k]) for k in a.state)
    assert a.test_acc == b.test_acc and a.test_loss == b.test_loss
    np.testing.assert_array_equal(a.curves["val_loss"], b.curves["val_loss"])
    assert not np.array_equal(a.state["features.conv1.conv.weight"],
                              c.state["features.conv1.conv.weight"])
    assert torch.get_num_threads() == 2  # the one-thread setting is restored (conftest sets 2)
    # it learned the synthetic task (a broken training loop would sit near 0.1)
    assert a.test_acc > 0.5


def test_early_stopping_stops_after_patience_and_keeps_best_weights():
    full = synthetic_full()
    # lr so large that SGD diverges: the validation loss stops improving early on
    cfg = tiny_cfg(batchnorm=False, optimizer="sgd", lr=5.0, momentum=0.9, max_epochs=6,
                   patience=2, evals_per_epoch=4)
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
    vl, _ = classify.evaluate(model, *sub.tensors("val"))
    assert vl == pytest.approx(v[best], rel=1e-5)


def test_no_early_stop_runs_all_epochs_and_curve_shapes():
    full = synthetic_full()
    cfg = tiny_cfg(max_epochs=2, evals_per_epoch=3, patience=100)
    res = classify.train_one(cfg, 0, _sub(full, cfg), show_progress=False)
    assert not res.early_stopped
    assert len(res.curves["epoch"]) == 6
    np.testing.assert_allclose(res.curves["epoch"][[2, 5]], [1.0, 2.0])
    assert res.stopped_epoch == 2.0
    assert all(len(v) == 6 for v in res.curves.values())
    assert np.all((res.curves["val_acc"] >= 0) & (res.curves["val_acc"] <= 1))


def test_splits_are_disjoint_deterministic_and_validated():
    tr, va = classify.split_indices(1000, 300, 100, seed=5)
    tr2, va2 = classify.split_indices(1000, 300, 100, seed=5)
    assert np.array_equal(tr, tr2) and np.array_equal(va, va2)
    assert len(tr) == 300 and len(va) == 100 and not set(tr) & set(va)
    with pytest.raises(ValueError):
        classify.split_indices(100, 90, 20, seed=0)
    with pytest.raises(ValueError, match="n_train"):
        tiny_cfg(n_train=59_000, n_val=2_000)
    with pytest.raises(ValueError, match="dataset"):
        tiny_cfg(dataset="imagenet")


def test_cache_hit_does_not_retrain(monkeypatch):
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


def test_worker_processes_give_identical_models():
    full = {"mnist": synthetic_full()}
    cfg = tiny_cfg(max_epochs=1, n_train=128, n_val=32, n_test=50)
    jobs = [(cfg, 0), (dataclasses.replace(cfg, batchnorm=False), 0)]
    local = [classify.train_one(c, s, _sub(full["mnist"], c), show_progress=False)
             for c, s in jobs]
    pooled = classify.train_all(jobs, full, workers=2)
    for loc, t in zip(local, pooled):
        assert not t.hit and t.test_acc == loc.test_acc
        assert all(np.array_equal(loc.state[k], t.state[k].numpy()) for k in loc.state)


def test_configs_follow_protocol_b1():
    P = B1.resolve("cpu")
    cfgs = classify.configs(P)
    assert set(cfgs) == set(classify.VARIANTS)
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
    assert paper.seeds == [0, 1, 2, 3] and paper.mnist_width == 64 and paper.vgg_width == 1.0
    assert classify.allow_flag("env") is None and classify.allow_flag("no") is False
    assert m_bn.device == "cpu" and classify.resolve_device("cpu") == "cpu"
    assert classify.resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="device"):
        tiny_cfg(device="tpu")


def test_training_parameters_shared_by_all_part_b_chapters():
    train_names = B1.names
    for prof in ("smoke", "cpu", "paper"):
        p1 = B1.resolve(prof)
        for spec in (B2, B3):
            p = spec.resolve(prof)
            assert {k: p[k] for k in train_names} == {k: p1[k] for k in train_names}
    assert len(B1.resolve("cpu").seeds) >= 2


@pytest.mark.parametrize("spec, overrides, match", [
    (B1, {"nonsense": 1}, "unknown parameter 'nonsense'"),
    (B1, {"mnist_width": "wide"}, "parameter 'mnist_width'"),
    (B1, {"mnist_width": 2.5}, "parameter 'mnist_width'"),
    (B1, {"seeds": "0,x"}, "parameter 'seeds'"),
    (B1, {"seeds": [1, 1]}, "distinct"),
    (B1, {"allow_unverified": "maybe"}, "parameter 'allow_unverified'"),
    (B1, {"device": "gpu"}, "parameter 'device'"),
    (B1, {"init": "xavier"}, "parameter 'init'"),
    (B1, {"mnist_train": 59_000, "n_val": 2_000}, "exceeds the 60,000"),
    (B1, {"cifar_train": 49_000, "n_val": 2_000}, "exceeds the 50,000"),
    (B1, {"n_test": 20_000}, "parameter 'n_test'"),
    (B1, {"batch_size": 700}, "parameter 'batch_size'"),
    (B1, {"cifar_lr_nobn": 0}, "parameter 'cifar_lr_nobn'"),
    (B2, {"sparsity_images": 400}, "parameter 'sparsity_images'"),
    (B2, {"sparsity_split": "val"}, "parameter 'sparsity_split'"),
    (B3, {"k_min": 9, "k_max": 5}, "parameter 'k_min'"),
    (B3, {"k_max": 300}, "parameter 'k_max'"),
    (B3, {"cluster_features": "pixels"}, "parameter 'cluster_features'"),
])
def test_spec_errors_are_one_line(spec, overrides, match):
    with pytest.raises(ParameterError, match=match) as exc:
        spec.resolve("smoke", **overrides)
    assert "\n" not in str(exc.value)


def test_spec_overrides_and_command_line_strings():
    P = B3.resolve("smoke", seeds="3,4,5", pca_components="0", k_max="15")
    assert P.seeds == [3, 4, 5] and P.pca_components == 0 and P.k_max == 15
    assert B2.resolve("smoke", channel_spatial_mean="false").channel_spatial_mean is False
