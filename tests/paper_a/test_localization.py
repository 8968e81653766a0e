"""The localization experiment: a setup from parameters, per-seed training cache, cached
evaluation, typed results, and the guard on networks a chapter did not declare."""

import numpy as np
import pytest
import torch

from normbook.paper_a.runs import localization


def test_configs_carry_every_knob(tiny_setup):
    setup = tiny_setup(seeds=(3, 4))
    assert setup.seeds == (3, 4) and setup.radius == 2 and setup.half == 11
    assert (setup.train.seq_len, setup.train.steps, setup.eval.batch_size) == (24, 3, 16)
    assert setup.chapter_cnn.norm == "instance" and setup.radius_per_depth.tolist() == [1, 2]


def test_trained_models_hit_the_cache_per_seed(monkeypatch, tiny_setup):
    setup = tiny_setup()
    cnn, tc = setup.cnn("instance"), setup.train
    net_a, loss_a, hits = localization.trained(cnn, tc, [0, 1])
    assert hits == [False, False]
    seen = []
    real = localization.train_stack
    monkeypatch.setattr(
        localization, "train_stack", lambda c, t, seeds: seen.append(seeds) or real(c, t, seeds)
    )
    net_b, loss_b, hits = localization.trained(cnn, tc, [1, 0, 2])
    assert seen == [[2]] and hits == [True, True, False]  # only the new seed trains
    np.testing.assert_array_equal(loss_b[:, 1], loss_a[:, 0])
    for name, t in net_a.model_state(0).items():
        assert torch.equal(net_b.model_state(1)[name], t)
    # GroupNorm with G = C is InstanceNorm: the same cached models are reused
    localization.trained(setup.cnn("group", groups=4), tc, [0])
    assert seen == [[2]]


def test_evaluation_is_cached_too(monkeypatch, tiny_setup):
    setup = tiny_setup()
    first = localization.localize(setup, setup.cnn("none"))
    assert not first.cache_hit and first.depth_maps.shape == (2, 1, 24)
    monkeypatch.setattr(
        localization, "evaluation_arrays", lambda *a, **k: pytest.fail("re-evaluated")
    )
    second = localization.localize(setup, setup.cnn("none"))
    assert second.cache_hit and second.train_cache_hits == [True]
    np.testing.assert_array_equal(first.out.mean, second.out.mean)
    assert second.distances == first.distances and second.n_per_index == 64


def test_evaluation_without_probes(tiny_setup):
    setup = tiny_setup()
    res = localization.localize(setup, setup.cnn("instance"), with_probes=False)
    assert res.n_per_index == 64 and res.probe is None and res.depth_maps is None
    assert len(res.per_seed) == 1 and res.name == "instance"


def test_same_seed_same_numbers(tiny_setup, tmp_path, monkeypatch):
    setup = tiny_setup(seeds=(0, 1))
    a = localization.localize(setup, setup.cnn("instance"))
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path / "other"))  # recompute from scratch
    b = localization.localize(setup, setup.cnn("instance"))
    assert not b.cache_hit
    np.testing.assert_array_equal(a.loss, b.loss)
    np.testing.assert_array_equal(a.out.mean, b.out.mean)
    np.testing.assert_array_equal(a.probe.mean, b.probe.mean)


def test_circular_null_has_no_boundary(tiny_setup):
    """The same trained weights with circular padding: outputs move with a cyclic shift (up to
    rounding in the pooled statistics), and the cache keeps it apart from the zero-padded run."""
    from normbook.paper_a.measures import equivariance

    setup = tiny_setup(seeds=(0, 1))
    zeros = localization.localize(setup, setup.chapter_cnn, with_probes=False)
    circ = localization.circular_null(setup, setup.chapter_cnn, with_probes=False)
    assert circ.padding == "circular" and "circular" in circ.name
    assert not np.array_equal(zeros.out.mean, circ.out.mean)
    assert equivariance.cyclic_change(circ.net, 24, shift=7).max() < 1e-5
    assert equivariance.cyclic_change(zeros.net, 24, shift=7).max() > 1e-3


def test_pretrain_in_workers_gives_the_numbers_of_training_here(tiny_setup, tmp_path, monkeypatch):
    setup = tiny_setup(seeds=(0, 1))
    runs = [*localization.chapter_networks(setup), (setup, setup.cnn("group", groups=2))]
    runs.append((setup, setup.cnn("group", groups=4)))  # G = C is InstanceNorm: claimed once
    assert localization.pretrain(runs, workers=2) == 6
    assert localization.pretrain(runs, workers=2) == 0  # all cached now
    loaded = localization.localize(setup, setup.cnn("group", groups=2))
    assert loaded.train_cache_hits == [False, False]  # trained by this run, in a worker
    with pytest.raises(localization.UndeclaredNetworkError, match="not among the networks"):
        localization.localize(setup, setup.cnn("group", groups=1))  # declared by no one
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path / "other"))
    monkeypatch.setattr(localization, "_declared", False)  # a kernel that never pretrained
    here = localization.localize(setup, setup.cnn("group", groups=2))  # trained in this process
    assert here.train_cache_hits == [False, False]
    np.testing.assert_array_equal(here.loss, loaded.loss)
    for i in range(2):
        for name, t in here.net.model_state(i).items():
            assert torch.equal(loaded.net.model_state(i)[name], t), name


def test_the_device_native_evaluation_agrees_with_the_cpu_path(tiny_setup):
    """The device-native path (moments accumulated in torch float64, large passes, streams
    split per pass), forced on the CPU with the same inputs, gives the CPU path's moments up to
    float32 rounding of the forward pass."""
    from dataclasses import replace

    from normbook.paper_a.cached import evaluation, probes

    setup = tiny_setup(seeds=(0, 1), n_eval=1000)
    net, _, _ = localization.trained(setup.chapter_cnn, setup.train, list(setup.seeds))
    ev = replace(setup.eval, n_samples=1000)
    w = probes.fit_probes(net, setup.seq_len, 2, 32)
    cpu = evaluation.evaluate(net, setup.seq_len, ev, w, on_device=False)
    native = evaluation.evaluate(net, setup.seq_len, ev, w, on_device=True)
    assert set(cpu) == set(native)
    for k in cpu:
        np.testing.assert_allclose(native[k], cpu[k], rtol=1e-5, atol=1e-7, err_msg=k)
