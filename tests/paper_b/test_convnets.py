"""Part B networks: geometry, activation capture, BN vs Identity, seeded construction."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from normbook.paper_b.cached.convnets import VGG16, build, capture_activations, geometry


def _x(n=5, c=1, seed=0):
    return torch.randn(n, c, 32, 32, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("bn", [True, False])
def test_standard_cnn_shapes_and_capture(bn):
    k = 4
    model = build("standard_cnn", seed=0, width=k, batchnorm=bn)
    x = _x()
    assert model(x).shape == (5, 10)
    names = model.conv_layer_names()
    assert names == ["conv1", "conv2", "conv3", "conv4"]
    acts = capture_activations(model, x, batch_size=2)
    assert list(acts) == names
    shapes = {n: a.shape for n, a in acts.items()}
    assert shapes == {
        "conv1": (5, k, 32, 32),
        "conv2": (5, 2 * k, 32, 32),
        "conv3": (5, 4 * k, 16, 16),
        "conv4": (5, 8 * k, 8, 8),
    }
    assert all(a.dtype == np.float32 and (a >= 0).all() for a in acts.values())
    flat = capture_activations(model, x, layers=["conv4"], flatten=True)
    assert list(flat) == ["conv4"] and flat["conv4"].shape == (5, 8 * k * 64)
    # batch size differs (2 vs 256), so conv kernels may round differently
    np.testing.assert_allclose(flat["conv4"], acts["conv4"].reshape(5, -1), atol=1e-5)
    norm_types = {type(getattr(model.features, n).norm) for n in names}
    assert norm_types == ({nn.BatchNorm2d} if bn else {nn.Identity})
    assert model.classifier.in_features == 8 * k


@pytest.mark.parametrize("bn", [True, False])
def test_vgg16_shapes_and_capture(bn):
    model = build("vgg16", seed=1, width_mult=1 / 16, batchnorm=bn)
    x = _x(3, c=3)
    assert model(x).shape == (3, 10)
    names = model.conv_layer_names()
    assert names == [f"conv{i}" for i in range(1, 14)]
    acts = capture_activations(model, x)
    expected_c = [4, 4, 8, 8, 16, 16, 16, 32, 32, 32, 32, 32, 32]
    expected_s = [32] * 2 + [16] * 2 + [8] * 3 + [4] * 3 + [2] * 3
    want = [(3, c, s, s) for c, s in zip(expected_c, expected_s)]
    assert [a.shape for a in acts.values()] == want
    assert all((a >= 0).all() for a in acts.values())
    assert sum(isinstance(m, nn.BatchNorm2d) for m in model.modules()) == (13 if bn else 0)
    assert model.classifier.in_features == 32
    tiny = VGG16(width_mult=1e-3, batchnorm=bn)  # channels never drop below 1
    assert tiny.classifier.in_features == 1 and tiny(x).shape == (3, 10)


def test_activations_match_manual_forward():
    model = build("standard_cnn", seed=2, width=3, batchnorm=True)
    # Non-trivial running statistics, so eval-mode BN differs from train-mode BN.
    model.train()
    with torch.no_grad():
        model(_x(16, seed=5) * 3 + 1)
    x = _x(6)
    acts = capture_activations(model, x, batch_size=4)
    assert model.training  # mode restored
    model.eval()
    h, manual = x, {}
    with torch.no_grad():
        for name, module in model.features.named_children():
            h = module(h)
            if name.startswith("conv"):
                manual[name] = h.numpy()
    for name in manual:
        np.testing.assert_allclose(acts[name], manual[name], rtol=1e-5, atol=1e-6)
    assert (acts["conv1"] == 0).any()  # post-ReLU: exact zeros present


def test_hooks_removed_even_on_error():
    model = build("standard_cnn", seed=0, width=2, batchnorm=False)
    relus = list(model.conv_relus().values())
    capture_activations(model, _x(2))
    assert all(len(r._forward_hooks) == 0 for r in relus)
    with pytest.raises(RuntimeError):
        capture_activations(model, torch.zeros(2, 3, 32, 32))  # wrong channel count
    assert all(len(r._forward_hooks) == 0 for r in relus)
    assert model.training
    with pytest.raises(KeyError):
        capture_activations(model, _x(2), layers=["conv9"])


def test_distinct_non_inplace_relus():
    model = build("vgg16", seed=0, width_mult=1 / 32, batchnorm=True)
    relus = list(model.conv_relus().values())
    assert len({id(r) for r in relus}) == 13 and not any(r.inplace for r in relus)


def test_seeded_construction():
    def weights(m):
        return [p.detach().clone() for p in m.state_dict().values()]

    torch.manual_seed(123)
    a = weights(build("standard_cnn", seed=7, width=4, batchnorm=True))
    after = torch.rand(1)
    b = weights(build("standard_cnn", seed=7, width=4, batchnorm=True))
    c = weights(build("standard_cnn", seed=8, width=4, batchnorm=True))
    assert all(torch.equal(u, v) for u, v in zip(a, b))
    assert not all(torch.equal(u, v) for u, v in zip(a, c))
    torch.manual_seed(123)
    assert torch.equal(torch.rand(1), after)  # build() leaves the global RNG alone
    # BN and no-BN twins from one seed share their conv and linear weights.
    bn = build("vgg16", seed=3, width_mult=1 / 16, batchnorm=True)
    nobn = build("vgg16", seed=3, width_mult=1 / 16, batchnorm=False)
    assert torch.equal(bn.features.conv5.conv.weight, nobn.features.conv5.conv.weight)
    assert torch.equal(bn.classifier.weight, nobn.classifier.weight)
    with pytest.raises(ValueError):
        build("resnet", seed=0)


def test_geometry_shapes_and_parameter_count():
    model = build("standard_cnn", seed=0, width=4, batchnorm=True)
    shapes, n_params = geometry(model, in_channels=1)
    assert shapes == {
        "conv1": (4, 32, 32),
        "conv2": (8, 32, 32),
        "conv3": (16, 16, 16),
        "conv4": (32, 8, 8),
    }
    convs = 9 * (1 * 4 + 4 * 8 + 8 * 16 + 16 * 32) + (4 + 8 + 16 + 32)  # weights + biases
    bn = 2 * (4 + 8 + 16 + 32)  # weight + bias
    assert n_params == convs + bn + 32 * 10 + 10
