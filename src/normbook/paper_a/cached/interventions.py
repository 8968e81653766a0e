"""Replacing a trained network's normalization statistics at evaluation (chapter A4's
interventions): the computation the ``a_intervene`` cache key covers (:mod:`.steps`), and
nothing else."""

from __future__ import annotations

import types
from contextlib import contextmanager

import torch
from torch import nn

from normbook.paper_a.cached.cnn import StackedCNN
from normbook.paper_a.cached.evaluation import EvalConfig, evaluate
from normbook.paper_a.cached.task import sample_inputs
from normbook.runtime.seeding import generators

MODES = ("population", "shuffled", "interior")


def norm_layers(net: StackedCNN) -> list[nn.GroupNorm]:
    """The network's InstanceNorm/GroupNorm layers, input to output."""
    if net.cfg.mix:  # the interior mode's reach (i + 1) * r assumes one kernel throughout
        raise ValueError("interventions need networks without kernel-1 blocks (mix = 0)")
    layers = [n for n in net.norms if isinstance(n, nn.GroupNorm)]
    if len(layers) != len(net.norms):
        raise ValueError(f"interventions need GroupNorm/InstanceNorm layers, got {net.cfg.norm!r}")
    return layers


def _group_view(mod: nn.GroupNorm, x: torch.Tensor) -> torch.Tensor:
    b, c, length = x.shape
    return x.reshape(b, mod.num_groups, c // mod.num_groups, length)


def _moments(xg: torch.Tensor, dims=(2, 3)) -> tuple[torch.Tensor, torch.Tensor]:
    return xg.mean(dim=dims, keepdim=True), xg.var(dim=dims, unbiased=False, keepdim=True)


def _normalize(mod: nn.GroupNorm, x: torch.Tensor, mean, var) -> torch.Tensor:
    y = ((_group_view(mod, x) - mean) / torch.sqrt(var + mod.eps)).reshape(x.shape)
    return y * mod.weight[None, :, None] + mod.bias[None, :, None]


@torch.no_grad()
def population_stats(net: StackedCNN, seq_len: int, n_samples: int) -> list[tuple]:
    """Per norm layer: mean and variance over ``n_samples`` fresh inputs and all positions
    (what BatchNorm would use at evaluation), drawn from the stream the depth probes are fitted
    on: fitting data, never the evaluation's."""
    layers, captured = norm_layers(net), {}
    hooks = [
        mod.register_forward_hook(lambda m, inp, out, i=i: captured.setdefault(i, []).append(
            _group_view(m, inp[0]).transpose(0, 1).reshape(m.num_groups, -1)))
        for i, mod in enumerate(layers)
    ]  # fmt: skip
    try:
        x = sample_inputs(n_samples, net.n_models, seq_len, generators(net.seeds, "probe_fit"))
        net(x.to(next(net.parameters()).device))
    finally:
        for h in hooks:
            h.remove()
    out = []
    for i in range(len(layers)):
        flat = torch.cat(captured[i], dim=1)
        out.append((flat.mean(dim=1)[None, :, None, None], flat.var(dim=1)[None, :, None, None]))
    return out


@contextmanager
def intervened(net: StackedCNN, mode: str, layers: list[int], pop: list[tuple] | None = None):
    """Within the block, the norm layers ``layers`` (0-based) normalize with the statistics
    ``mode`` names instead of each sample's own (:data:`MODES`)."""
    if mode not in MODES:
        raise ValueError(f"intervention must be one of {MODES}, got {mode!r}")
    norms, r = norm_layers(net), net.cfg.kernel // 2

    def forward_for(i: int):
        def forward(mod, x):
            xg = _group_view(mod, x)
            if mode == "population":
                mean, var = pop[i]
            elif mode == "shuffled":
                mean, var = (torch.roll(t, 1, dims=0) for t in _moments(xg))
            else:  # layer i+1's conv output at p sees inputs p +- (i+1)r: keep those inside
                lo, hi = (i + 1) * r, x.shape[-1] - (i + 1) * r
                mean, var = _moments(xg[..., lo:hi])
            return _normalize(mod, x, mean, var)

        return forward

    try:
        for i in layers:
            norms[i].forward = types.MethodType(forward_for(i), norms[i])
        yield net
    finally:
        for i in layers:
            norms[i].__dict__.pop("forward", None)


def layer_sets(depth: int) -> dict[str, list[int]]:
    """The conditions of a sweep and the norm layers (0-based) each intervenes at: "all" of
    them at once, then each layer alone ("1".."d")."""
    return {"all": list(range(depth)), **{str(i + 1): [i] for i in range(depth)}}


def intervention_arrays(net: StackedCNN, seq_len: int, ev: EvalConfig, ref_samples: int) -> dict:
    """What one cached intervention sweep holds: the baseline's moments ("base/...") and, per
    mode and condition of :func:`layer_sets`, the moments with that condition's layers
    intervened ("mode/cond/..."); every evaluation on the same fresh inputs."""
    pop = population_stats(net, seq_len, ref_samples)
    arrays = {"base": evaluate(net, seq_len, ev, None)}
    for mode in MODES:
        for cond, layers in layer_sets(net.cfg.depth).items():
            with intervened(net, mode, layers, pop):
                arrays[f"{mode}/{cond}"] = evaluate(net, seq_len, ev, None)
    return {f"{k}/{a}": v for k, d in arrays.items() for a, v in d.items()}
