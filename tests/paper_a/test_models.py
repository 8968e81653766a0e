from dataclasses import replace

import numpy as np
import pytest
import torch

from normbook.paper_a.cached.cnn import CNNConfig, StackedCNN, set_batch_eval
from normbook.paper_a.cached.norms import make_norm
from normbook.paper_a.cached.task import sample_inputs
from normbook.paper_a.measures import equivariance
from normbook.runtime.seeding import generators


@pytest.mark.parametrize("kernel,depth", [(3, 2), (5, 4), (7, 3)])
def test_receptive_field_from_input_gradients(kernel, depth):
    net = StackedCNN(CNNConfig(depth=depth, width=8, kernel=kernel, norm="none"), [0, 1])
    reach = equivariance.gradient_reach(net, seq_len=64)
    assert list(reach) == [(kernel // 2) * depth] * 2


def test_instance_norm_reaches_the_whole_sequence():
    net = StackedCNN(CNNConfig(depth=2, width=8, kernel=3, norm="instance"), [0])
    assert equivariance.gradient_reach(net, seq_len=64)[0] == 32


def test_no_norm_interior_is_shift_equivariant_instance_norm_is_not():
    none = StackedCNN(CNNConfig(depth=4, width=8, kernel=5, norm="none"), [0, 1])
    inst = StackedCNN(CNNConfig(depth=4, width=8, kernel=5, norm="instance"), [0, 1])
    assert np.all(equivariance.shift_check(none, 80, shift=5) <= equivariance.SHIFT_TOLERANCE)
    assert np.all(equivariance.shift_check(inst, 80, shift=5) > 1e-4)


def test_a_rounding_sized_change_counts_as_equivariant_a_real_one_does_not():
    tol = equivariance.SHIFT_TOLERANCE
    changes = np.array([0.0, tol, 1e-6])
    eq = equivariance.Equivariance("none", [0, 1, 2], 4, np.array([4, 4, 4]), 2, changes)
    assert eq.exact == [True, True, False]


def test_stacked_model_equals_models_built_alone():
    cfg = CNNConfig(depth=3, width=8, kernel=5, norm="group", groups=2)
    stacked = StackedCNN(cfg, [3, 7])
    x = sample_inputs(4, 2, 40, generators([3, 7], "eval"))
    out = stacked(x)
    for i, seed in enumerate([3, 7]):
        alone = StackedCNN(cfg, [seed])
        for name, t in alone.model_state(0).items():
            assert torch.equal(t, stacked.model_state(i)[name]), name
        torch.testing.assert_close(alone(x[:, i : i + 1]), out[:, i : i + 1], rtol=1e-5, atol=1e-5)


def test_restacking_stored_models_round_trips():
    cfg = CNNConfig(depth=2, width=4, kernel=5, norm="batch")
    net = StackedCNN(cfg, [0, 1])
    again = StackedCNN.from_model_states(cfg, [0, 1], [net.model_state(0), net.model_state(1)])
    for (k, a), b in zip(net.state_dict().items(), again.state_dict().values()):
        assert torch.equal(a, b), k


def test_group_norm_with_g_equal_c_is_instance_norm():
    torch.manual_seed(0)
    x = torch.randn(3, 2 * 8, 20)
    gn, inn = make_norm("group", 2, 8, groups=8), make_norm("instance", 2, 8)
    with torch.no_grad():
        for mod in (gn, inn):
            mod.weight.copy_(torch.linspace(0.5, 2, 16))
            mod.bias.copy_(torch.linspace(-1, 1, 16))
    torch.testing.assert_close(gn(x), inn(x))
    ref = torch.nn.functional.instance_norm(x, weight=inn.weight, bias=inn.bias)
    torch.testing.assert_close(inn(x), ref, rtol=1e-5, atol=1e-5)


def test_group_norm_with_one_group_pools_channels_and_positions_per_model():
    x = torch.randn(2, 2 * 4, 10)
    y = make_norm("group", 2, 4, groups=1)(x)
    per_model = y.view(2, 2, 4 * 10)
    torch.testing.assert_close(per_model.mean(-1), torch.zeros(2, 2), atol=1e-5, rtol=0)
    torch.testing.assert_close(
        per_model.var(-1, unbiased=False), torch.ones(2, 2), atol=1e-3, rtol=0
    )


def test_channel_layer_norm_shares_nothing_across_positions():
    norm = make_norm("layer", 1, 4)
    x = torch.randn(2, 4, 10)
    y = norm(x)
    x2 = x.clone()
    x2[:, 0, 7] += 5.0  # one channel: a shift of all channels would cancel
    y2 = norm(x2)
    changed = (y2 - y).abs().amax(dim=(0, 1)) > 1e-6
    assert changed.tolist() == [i == 7 for i in range(10)]


def test_batch_norm_evaluation_modes():
    net = StackedCNN(CNNConfig(depth=2, width=4, kernel=5, norm="batch"), [0])
    net.train()
    for _ in range(3):
        net(torch.randn(8, 1, 30))
    net.eval()
    x = torch.randn(8, 1, 30)
    other = x.clone()
    other[1:] = torch.randn(7, 1, 30) * 3 + 1
    set_batch_eval(net, "population")
    torch.testing.assert_close(net(x)[0], net(other)[0])  # sample 0 alone decides
    set_batch_eval(net, "minibatch")
    assert (net(x)[0] - net(other)[0]).abs().max() > 1e-3  # the rest of the batch matters


def test_unknown_norm_is_rejected():
    with pytest.raises(ValueError, match="norm must be one of"):
        make_norm("weight", 1, 4)


@pytest.mark.parametrize("norm", ["instance", "batch", "layer", "none"])
def test_the_in_place_relu_changes_no_number_of_training(norm):
    """StackedCNN applies ReLU in place (a speed-up); a few Adam steps give bitwise the weights
    of the out-of-place forward pass."""

    def out_of_place(net, x):
        h = x
        for conv, nrm in zip(net.convs, net.norms):
            h = torch.relu(nrm(conv(h)))
        return net.head(h)

    cfg = CNNConfig(depth=2, width=4, kernel=3, norm=norm, mix=1)
    trained = []
    for forward in (lambda net, x: net(x), out_of_place):
        net = StackedCNN(cfg, [0, 1])
        opt = torch.optim.Adam(net.parameters(), lr=1e-2)
        g = torch.Generator().manual_seed(0)
        for _ in range(5):
            loss = forward(net, torch.randn(4, 2, 16, generator=g)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        trained.append([p.detach() for p in net.parameters()])
    assert all(torch.equal(a, b) for a, b in zip(*trained))


def test_plain_kernel_1_blocks_keep_depth_and_drop_their_normalization():
    normed = CNNConfig(depth=2, width=4, kernel=3, norm="instance", mix=2)
    plain = replace(normed, mix_norm=False)
    assert normed.n_layers == plain.n_layers == 6 and normed.kernels == plain.kernels
    assert (normed.norm_layers, plain.norm_layers) == (6, 2)
    assert plain.layer_norms == ["instance", "none", "none"] * 2
    a, b = StackedCNN(normed, [0]), StackedCNN(plain, [0])
    assert [type(n).__name__ for n in b.norms] == ["GroupNorm", "Identity", "Identity"] * 2
    # the same convolutions, drawn alike: only the normalization layers differ
    assert all(torch.equal(x.weight, y.weight) for x, y in zip(a.convs, b.convs))
    assert plain.label == "instance, 2 norm layers + 4 plain k=1"


def test_he_init_is_drawn_per_model_with_its_scale_and_zero_biases():
    cfg = CNNConfig(depth=3, width=16, kernel=5, norm="none", init="he")
    stacked, alone = StackedCNN(cfg, [7, 8]), StackedCNN(cfg, [8])
    for conv, one in zip([*stacked.convs, stacked.head], [*alone.convs, alone.head]):
        half = conv.weight.shape[0] // 2
        assert torch.equal(conv.weight[half:], one.weight)  # a model stacked is a model alone
        assert not conv.bias.any()
    w = stacked.convs[1].weight  # fan_in = 16 * 5
    assert w.std().item() == pytest.approx((2 / 80) ** 0.5, rel=0.1)
    with pytest.raises(ValueError, match="init must be one of"):
        StackedCNN(replace(cfg, init="xavier"), [0])


def test_the_null_alone_starts_from_he_init_at_every_profile():
    from normbook.paper_a.a1_localization.spec import A1
    from normbook.paper_a.runs import localization

    for profile in ("smoke", "cpu", "paper"):
        setup = localization.Setup.from_params(A1.resolve(profile))
        assert setup.cnn("none").init == "he"
        assert {setup.cnn(n).init for n in ("instance", "batch", "layer")} == {"default"}


def test_at_the_paper_geometry_only_the_he_null_sees_its_input():
    """A 32-layer ReLU network without normalization and PyTorch's default init maps every
    input to about the same output (its signal shrinks about 2.4-fold a layer), so it cannot
    learn; with He init its output moves with its input as the InstanceNorm network's does."""
    cfg = CNNConfig(depth=32, width=32, kernel=5, norm="none")
    x = torch.randn(2, 1, 600, generator=torch.Generator().manual_seed(0))

    def moved(c):
        with torch.no_grad():
            y = StackedCNN(c, [0])(x)
        return (y[0] - y[1]).abs().mean().item() / max(y.abs().mean().item(), 1e-30)

    assert moved(cfg) < 1e-4
    assert moved(replace(cfg, init="he")) > 0.05
    assert moved(replace(cfg, norm="instance")) > 0.05
