"""Normalization layers for a stack of M independent models laid side by side.

Activations have shape (batch, M*C, length): model m owns channels [m*C, (m+1)*C).
Every layer below normalizes each model with its own statistics, so M models
trained together behave exactly like M models trained alone.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

NORM_KINDS = ("none", "instance", "group", "batch", "layer")
BATCH_EVAL_MODES = ("minibatch", "population")


class ChannelLayerNorm(nn.Module):
    """Per-position LayerNorm over each model's C channels (no spatial pooling).

    A control: it normalizes, but shares nothing across positions.
    The affine parameters are per channel, never per position (a per-position affine
    would leak absolute position).
    """

    def __init__(self, n_models: int, channels: int, eps: float = 1e-5):
        super().__init__()
        self.n_models, self.channels, self.eps = n_models, channels, eps
        self.weight = nn.Parameter(torch.ones(n_models * channels))
        self.bias = nn.Parameter(torch.zeros(n_models * channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, mc, length = x.shape
        h = x.view(b, self.n_models, self.channels, length)
        mean = h.mean(dim=2, keepdim=True)
        var = h.var(dim=2, unbiased=False, keepdim=True)
        h = ((h - mean) / torch.sqrt(var + self.eps)).view(b, mc, length)
        return h * self.weight[None, :, None] + self.bias[None, :, None]


class StackedBatchNorm(nn.BatchNorm1d):
    """BatchNorm1d whose evaluation statistics are selectable.

    ``eval_mode="minibatch"`` keeps using the current batch's statistics at evaluation
    (the paper's setting, which lets samples talk to each other); ``"population"`` uses
    the running averages collected in training (PyTorch's default).
    """

    def __init__(self, num_features: int, eval_mode: str = "minibatch", **kw):
        super().__init__(num_features, **kw)
        self.eval_mode = eval_mode

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training or self.eval_mode == "population":
            return super().forward(x)
        if self.eval_mode != "minibatch":
            raise ValueError(f"eval_mode must be one of {BATCH_EVAL_MODES}, got {self.eval_mode!r}")
        return F.batch_norm(x, None, None, self.weight, self.bias, True, 0.0, self.eps)


def make_norm(
    kind: str, n_models: int, channels: int, groups: int = 1, batch_eval: str = "minibatch"
) -> nn.Module:
    """One norm layer for M stacked models of C channels each.

    GroupNorm over M models with G groups each is exactly ``nn.GroupNorm(M*G, M*C)``
    (groups never straddle models), and InstanceNorm is its G = C case.
    """
    mc = n_models * channels
    if kind == "none":
        return nn.Identity()
    if kind == "instance":
        return nn.GroupNorm(mc, mc, affine=True)
    if kind == "group":
        if groups < 1 or channels % groups:
            raise ValueError(f"groups must divide the width {channels}, got {groups}")
        return nn.GroupNorm(n_models * groups, mc, affine=True)
    if kind == "batch":
        if batch_eval not in BATCH_EVAL_MODES:
            raise ValueError(f"batch_eval must be one of {BATCH_EVAL_MODES}, got {batch_eval!r}")
        return StackedBatchNorm(mc, eval_mode=batch_eval)
    if kind == "layer":
        return ChannelLayerNorm(n_models, channels)
    raise ValueError(f"norm must be one of {NORM_KINDS}, got {kind!r}")
