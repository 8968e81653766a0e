import json
import os

import numpy as np
import pytest
import torch

from normbook import cache, localization, stats, training
from normbook.localization import EvalConfig
from normbook.models import CNNConfig
from normbook.training import TrainConfig


def _compute(counter):
    def compute():
        counter.append(1)
        return cache.Entry({"x": np.arange(3)}, tensors={"w": torch.ones(2)}, meta={"note": "hi"})
    return compute


def test_hit_does_not_recompute_and_returns_the_same_data():
    calls = []
    first = cache.cached("t", {"a": 1}, _compute(calls), (stats,))
    second = cache.cached("t", {"a": 1}, _compute(calls), (stats,))
    assert len(calls) == 1 and not first.hit and second.hit
    np.testing.assert_array_equal(second["x"], np.arange(3))
    assert torch.equal(second.tensors["w"], torch.ones(2))
    assert second.meta["note"] == "hi" and second.meta["config"] == {"a": 1}


def test_key_depends_on_config_and_code():
    calls = []
    cache.cached("t", {"a": 1}, _compute(calls), (stats,))
    cache.cached("t", {"a": 2}, _compute(calls), (stats,))
    cache.cached("t", {"a": 1}, _compute(calls), (stats, training))   # other code, other key
    assert len(calls) == 3


def test_interrupted_compute_leaves_no_entry():
    def boom():
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        cache.cached("t", {"a": 1}, boom, (stats,))
    assert not cache.is_cached("t", {"a": 1}, (stats,))
    kind_dir = cache.cache_root() / "t"
    leftovers = list(kind_dir.glob("*")) if kind_dir.exists() else []
    assert leftovers == []                 # no half-written temporary directory either


def test_corrupt_entry_is_an_error_not_a_silent_recompute():
    calls = []
    cache.cached("t", {"a": 1}, _compute(calls), (stats,))
    path = cache.entry_path("t", {"a": 1}, (stats,))
    (path / "arrays.npz").write_bytes(b"garbage")
    with pytest.raises(cache.CacheError, match="normbook.cache clear"):
        cache.cached("t", {"a": 1}, _compute(calls), (stats,))
    assert len(calls) == 1


def test_clear_and_info():
    cache.cached("t", {"a": 1}, _compute([]), (stats,))
    assert cache.info()["t"][0] == 1
    cache.clear()
    assert cache.info() == {}


def test_trained_models_hit_the_cache_per_seed(monkeypatch):
    cnn = CNNConfig(depth=2, width=4, norm="instance")
    tc = TrainConfig(seq_len=24, steps=5, batch_size=4)
    net_a, loss_a, hits = localization.trained(cnn, tc, [0, 1])
    assert hits == [False, False]
    seen = []
    real = localization.train_stack
    monkeypatch.setattr(localization, "train_stack", lambda c, t, seeds: seen.append(seeds) or real(c, t, seeds))
    net_b, loss_b, hits = localization.trained(cnn, tc, [1, 0, 2])
    assert seen == [[2]] and hits == [True, True, False]          # only the new seed trains
    np.testing.assert_array_equal(loss_b[:, 1], loss_a[:, 0])
    for name, t in net_a.model_state(0).items():
        assert torch.equal(net_b.model_state(1)[name], t)
    # GroupNorm with G = C is InstanceNorm: the same cached models are reused
    localization.trained(CNNConfig(depth=2, width=4, norm="group", groups=4), tc, [0])
    assert seen == [[2]]


def test_evaluation_is_cached_too(monkeypatch):
    cnn = CNNConfig(depth=2, width=4, norm="none")
    tc = TrainConfig(seq_len=24, steps=3, batch_size=4)
    ev = EvalConfig(n_samples=64, batch_size=16, probe_batches=2)
    first, _ = localization.run(cnn, tc, ev, [0])
    monkeypatch.setattr(localization, "evaluate", lambda *a, **k: pytest.fail("re-evaluated"))
    second, _ = localization.run(cnn, tc, ev, [0])
    assert second.hit
    np.testing.assert_array_equal(first["out_mean"], second["out_mean"])


def test_evaluation_without_probes():
    cnn = CNNConfig(depth=2, width=4, norm="instance")
    tc = TrainConfig(seq_len=24, steps=2, batch_size=4)
    entry, _ = localization.run(cnn, tc, EvalConfig(n_samples=64, batch_size=16), [0], with_probes=False)
    assert entry["out_count"].sum() == 64 and entry["probe_count"].sum() == 0
    assert "probe_weights" not in entry


def test_interrupted_write_leaves_no_entry_and_no_temporary(monkeypatch):
    def killed(*a, **k):
        raise KeyboardInterrupt        # as if the run were killed half-way through the write
    monkeypatch.setattr(cache.torch, "save", killed)
    with pytest.raises(KeyboardInterrupt):
        cache.cached("t", {"a": 1}, _compute([]), (stats,))
    assert not cache.is_cached("t", {"a": 1}, (stats,))
    assert list((cache.cache_root() / "t").glob("*")) == []
