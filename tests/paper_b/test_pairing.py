"""The seed pairing every paper B test relies on: the BN and the no-BN model of one seed, as
the chapters configure them, start from identical conv and linear weights and train on the
same minibatches in the same order. Recorded from inside :func:`classify.train_one`, so the
test fails if training ever salted a stream with the variant, or if the chapters' configs gave
the two variants different data, minibatch sizes or splits."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from normbook.paper_b.b1_setup_accuracy.spec import B1
from normbook.paper_b.runs import classify


@pytest.fixture
def recorded(monkeypatch, synthetic_full):
    """Train every (dataset, BN) variant of the chapters' configs (smoke widths, synthetic
    data) for seeds 0 and 1, recording each model's initial weights and training inputs."""
    seen = {}
    build = classify.ClassifierConfig.build

    def recording_build(cfg, seed):
        model = build(cfg, seed)
        record = {"init": {k: v.clone() for k, v in model.state_dict().items()}, "batches": []}
        seen[cfg.dataset, cfg.batchnorm, seed] = record

        def hook(module, args):
            if module.training:
                record["batches"].append(args[0].detach().clone())

        model.register_forward_pre_hook(hook)
        return model

    monkeypatch.setattr(classify.ClassifierConfig, "build", recording_build)
    params = B1.resolve("smoke", mnist_train=160, cifar_train=160, n_val=40, n_test=60)
    setup = classify.Setup.from_params(params)
    full = {ds: synthetic_full(dataset=ds, seed=i) for i, ds in enumerate(classify.DATASETS)}
    for v, cfg in setup.configs.items():
        for seed in (0, 1):
            classify.train_one(cfg, seed, full[v.dataset].of(cfg), show_progress=False)
    return setup, seen


def test_chapter_configs_differ_only_in_batchnorm_and_learning_rate(recorded):
    setup, _ = recorded
    for ds in classify.DATASETS:
        bn, nobn = setup.configs[ds, True], setup.configs[ds, False]
        assert dataclasses.replace(bn, batchnorm=False, lr=nobn.lr) == nobn
        assert classify.split_key(bn) == classify.split_key(nobn)


@pytest.mark.parametrize("dataset", list(classify.DATASETS))
def test_bn_and_nobn_of_a_seed_share_initial_weights_and_minibatches(recorded, dataset):
    _, seen = recorded
    for seed in (0, 1):
        bn, nobn = seen[dataset, True, seed], seen[dataset, False, seed]
        # every tensor of the no-BN model exists in the BN model with the same values
        assert set(nobn["init"]) < set(bn["init"])
        conv = [k for k in nobn["init"] if k.endswith("conv.weight")]
        assert len(conv) == (4 if dataset == "mnist" else 13)
        for k, v in nobn["init"].items():
            assert torch.equal(v, bn["init"][k]), k
        # the same minibatches, in the same order
        assert len(bn["batches"]) == len(nobn["batches"]) > 1
        for a, b in zip(bn["batches"], nobn["batches"]):
            assert torch.equal(a, b)
    # ... and the pairing is by seed: another seed starts elsewhere and shuffles differently
    s0, s1 = seen[dataset, True, 0], seen[dataset, True, 1]
    key = "features.conv1.conv.weight"
    assert not torch.equal(s0["init"][key], s1["init"][key])
    assert not torch.equal(s0["batches"][0], s1["batches"][0])
