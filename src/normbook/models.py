"""The 1-D CNN of PROTOCOL A.1, as a stack of M independent models.

Each hidden block is conv(k) -> norm -> ReLU; a 1x1 conv head maps C channels to one
prediction per position. M models (seeds or variants of one norm) are evaluated in one
pass with grouped convolutions, which keeps both cores busy on small models.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
import torch.nn.functional as F

from .norms import make_norm

PADDINGS = ("zeros", "circular")


@dataclass(frozen=True)
class CNNConfig:
    depth: int = 16
    width: int = 32
    kernel: int = 5
    norm: str = "instance"
    groups: int = 1
    batch_eval: str = "minibatch"
    padding: str = "zeros"

    @property
    def receptive_radius(self) -> int:
        """R(d) = floor(k/2) * d: how far an output can see along the sequence."""
        return (self.kernel // 2) * self.depth


def _uniform_(t: torch.Tensor, bound: float, g: torch.Generator) -> None:
    with torch.no_grad():
        t.copy_(torch.rand(t.shape, generator=g) * 2 * bound - bound)


class StackedCNN(nn.Module):
    """M copies of the localization CNN; input (B, M, L) -> output (B, M, L)."""

    def __init__(self, cfg: CNNConfig, seeds: list[int]):
        super().__init__()
        if cfg.padding not in PADDINGS:
            raise ValueError(f"padding must be one of {PADDINGS}, got {cfg.padding!r}")
        self.cfg, self.seeds, m, c = cfg, list(seeds), len(seeds), cfg.width
        self.n_models = m
        self.convs = nn.ModuleList()
        self.norms = nn.ModuleList()
        for layer in range(cfg.depth):
            c_in = 1 if layer == 0 else c
            self.convs.append(nn.Conv1d(m * c_in, m * c, cfg.kernel, padding=cfg.kernel // 2,
                                        padding_mode=cfg.padding, groups=m))
            self.norms.append(make_norm(cfg.norm, m, c, cfg.groups, cfg.batch_eval))
        self.head = nn.Conv1d(m * c, m, 1, groups=m)
        self._init_per_model()

    def _init_per_model(self) -> None:
        """PyTorch's default conv init, drawn per model from that model's seed.

        Drawing model m's weights from its own generator makes the stacked model's
        slice m identical to a model built alone with the same seed.
        """
        m = self.n_models
        for i, seed in enumerate(self.seeds):
            g = torch.Generator().manual_seed(seed)
            for conv in [*self.convs, self.head]:
                out_per, c_in, k = conv.out_channels // m, conv.in_channels // m, conv.kernel_size[0]
                bound = 1.0 / math.sqrt(c_in * k)
                sl = slice(i * out_per, (i + 1) * out_per)
                _uniform_(conv.weight[sl], bound, g)
                _uniform_(conv.bias[sl], bound, g)

    def forward(self, x: torch.Tensor, return_activations: bool = False):
        acts = []
        h = x
        for conv, norm in zip(self.convs, self.norms):
            h = F.relu(norm(conv(h)))
            if return_activations:
                acts.append(h)
        out = self.head(h)
        return (out, acts) if return_activations else out

    def model_state(self, i: int) -> dict[str, torch.Tensor]:
        """Model i's parameters and buffers, unstacked (for comparisons and tests)."""
        m = self.n_models
        out = {}
        for name, t in self.state_dict().items():
            if t.ndim == 0:
                continue
            per = t.shape[0] // m
            out[name] = t[i * per:(i + 1) * per].clone()
        return out

    @classmethod
    def from_model_states(cls, cfg: CNNConfig, seeds: list[int],
                          states: list[dict[str, torch.Tensor]]) -> "StackedCNN":
        """Stack separately stored models (the inverse of :meth:`model_state`)."""
        net = cls(cfg, seeds)
        full = net.state_dict()
        for name in full:
            if full[name].ndim:
                full[name] = torch.cat([s[name] for s in states], dim=0)
        net.load_state_dict(full)
        return net


def set_batch_eval(net: nn.Module, mode: str) -> None:
    """Choose minibatch or population statistics for every BatchNorm at evaluation."""
    from .norms import StackedBatchNorm
    for mod in net.modules():
        if isinstance(mod, StackedBatchNorm):
            mod.eval_mode = mode
