"""GroupNorm and BatchNorm variants: what each pools, and Proposition C.1 for BatchNorm."""

import torch

from normbook.paper_a.cached.cnn import CNNConfig, StackedCNN, set_batch_eval
from normbook.paper_a.cached.norms import make_norm
from normbook.paper_a.measures import equivariance


def test_group_norm_pools_within_groups_only():
    """G groups give G independent statistics: perturbing a channel moves its own group's
    outputs at every position, and leaves the other groups untouched."""
    norm = make_norm("group", 1, 8, groups=4)  # groups of 2 channels
    x = torch.randn(2, 8, 12)
    x2 = x.clone()
    x2[:, 0, 5] += 3.0
    delta = (norm(x2) - norm(x)).abs().amax(dim=0)  # (channels, positions)
    assert (delta[1] > 1e-4).all()  # same group, every position
    assert (delta[0, [0, 11]] > 1e-4).all()
    assert delta[2:].max() == 0.0  # other groups: nothing


def test_group_norm_one_group_couples_every_channel_and_position():
    norm = make_norm("group", 1, 6, groups=1)
    x = torch.randn(3, 6, 10)
    x2 = x.clone()
    x2[:, 2, 7] -= 2.0
    delta = (norm(x2) - norm(x)).abs().amax(dim=0)
    assert (delta > 1e-5).all()
    ref = torch.nn.functional.group_norm(x, 1, norm.weight, norm.bias, eps=norm.eps)
    torch.testing.assert_close(norm(x), ref)


def _trained_batchnorm(seed=0):
    net = StackedCNN(CNNConfig(depth=3, width=4, kernel=3, norm="batch"), [seed])
    net.train()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _ in range(20):
            net(torch.randn(16, 1, 40, generator=g))
    net.eval()
    return net


def test_batchnorm_population_statistics_make_the_network_translation_equivariant():
    """Proposition C.1 applies to BatchNorm with population statistics (a fixed affine map),
    not to BatchNorm with minibatch statistics."""
    net = _trained_batchnorm()
    set_batch_eval(net, "population")
    assert equivariance.shift_check(net, 60, shift=4)[0] == 0.0
    set_batch_eval(net, "minibatch")
    assert equivariance.shift_check(net, 60, shift=4)[0] > 1e-4


def test_batchnorm_minibatch_with_one_sample_is_instance_norm_statistics():
    bn = make_norm("batch", 1, 4, batch_eval="minibatch")
    inn = make_norm("instance", 1, 4)
    bn.eval()
    x = torch.randn(1, 4, 15)
    torch.testing.assert_close(bn(x), inn(x), rtol=1e-4, atol=1e-4)
