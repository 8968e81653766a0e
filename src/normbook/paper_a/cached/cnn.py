"""The 1-D CNN of paper A, as a stack of M independent models.

Each hidden block is conv(k) -> norm -> ReLU, optionally followed by ``mix`` blocks
conv(1) -> norm -> ReLU (more normalization layers at the same receptive field), or, with
``mix_norm`` off, conv(1) -> ReLU (the same depth and capacity, no more normalization
layers: chapter A5's matched control); a 1x1 conv
head maps C channels to one prediction per position. M models (seeds or variants of one
norm) are evaluated in one pass with grouped convolutions, which keeps both cores busy on
small models.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from normbook.paper_a.cached import stacking
from normbook.paper_a.cached.norms import StackedBatchNorm, make_norm

PADDINGS = ("zeros", "circular")
INITS = ("default", "he")


@dataclass(frozen=True)
class CNNConfig:
    depth: int
    width: int
    kernel: int
    norm: str  # one of norms.NORM_KINDS
    groups: int = 1
    batch_eval: str = "minibatch"
    padding: str = "zeros"
    mix: int = 0  # kernel-1 conv -> norm -> ReLU blocks after each kernel-k block
    mix_norm: bool = True  # False: the kernel-1 blocks are conv -> ReLU (no normalization)
    init: str = "default"  # PyTorch's default conv init, or "he" (Kaiming normal, zero biases)

    @property
    def receptive_radius(self) -> int:
        """R(d) = floor(k/2) * d: how far an output can see along the sequence (kernel-1 blocks
        add none)."""
        return (self.kernel // 2) * self.depth

    @property
    def n_layers(self) -> int:
        """Conv -> norm -> ReLU layers, kernel-1 blocks included."""
        return self.depth * (1 + self.mix)

    @property
    def norm_layers(self) -> int:
        """Normalization layers (0 without normalization)."""
        if self.norm == "none":
            return 0
        return self.n_layers if self.mix_norm else self.depth

    @property
    def layer_norms(self) -> list[str]:
        """Each layer's normalization, input to output ("none" in unnormalized kernel-1
        blocks)."""
        return [self.norm if (i % (1 + self.mix) == 0 or self.mix_norm) else "none"
                for i in range(self.n_layers)]  # fmt: skip

    @property
    def kernels(self) -> list[int]:
        """Each layer's kernel size, input to output."""
        return [k for _ in range(self.depth) for k in (self.kernel, *[1] * self.mix)]

    @property
    def label(self) -> str:
        """``none``, ``instance``, ``group (G=4)``, ``batch, minibatch``, ``layer``; with
        kernel-1 blocks, the number of normalization layers after a comma."""
        if self.norm == "group":
            name = f"group (G={self.groups})"
        else:
            name = f"batch, {self.batch_eval}" if self.norm == "batch" else self.norm
        if self.mix and not self.mix_norm:
            return f"{name}, {self.norm_layers} norm layers + {self.depth * self.mix} plain k=1"
        return f"{name}, {self.norm_layers} norm layers" if self.mix else name


def _uniform_(t: torch.Tensor, bound: float, g: torch.Generator) -> None:
    with torch.no_grad():
        t.copy_(torch.rand(t.shape, generator=g) * 2 * bound - bound)


class StackedCNN(nn.Module):
    """M copies of the localization CNN; input (B, M, L) -> output (B, M, L)."""

    def __init__(self, cfg: CNNConfig, seeds: list[int]):
        super().__init__()
        if cfg.padding not in PADDINGS:
            raise ValueError(f"padding must be one of {PADDINGS}, got {cfg.padding!r}")
        if cfg.init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {cfg.init!r}")
        self.cfg, self.seeds, m, c = cfg, list(seeds), len(seeds), cfg.width
        self.n_models = m
        self.convs = nn.ModuleList()
        self.norms = nn.ModuleList()
        for layer, (k, norm) in enumerate(zip(cfg.kernels, cfg.layer_norms)):
            c_in = 1 if layer == 0 else c
            self.convs.append(
                nn.Conv1d(m * c_in, m * c, k, padding=k // 2, padding_mode=cfg.padding, groups=m)
            )
            self.norms.append(make_norm(norm, m, c, cfg.groups, cfg.batch_eval))
        self.head = nn.Conv1d(m * c, m, 1, groups=m)
        self._init_per_model()

    def _init_per_model(self) -> None:
        """The conv init, drawn per model from that model's seed: PyTorch's default (uniform,
        bound 1/sqrt(fan_in)), or He's (normal, std sqrt(2/fan_in), zero biases), which keeps
        a ReLU network's signal from layer to layer without normalization.

        Drawing model m's weights from its own generator makes the stacked model's
        slice m identical to a model built alone with the same seed.
        """
        m = self.n_models
        for i, seed in enumerate(self.seeds):
            g = torch.Generator().manual_seed(seed)
            for conv in [*self.convs, self.head]:
                out_per, c_in, k = (
                    conv.out_channels // m,
                    conv.in_channels // m,
                    conv.kernel_size[0],
                )
                sl = slice(i * out_per, (i + 1) * out_per)
                if self.cfg.init == "he":
                    with torch.no_grad():
                        std = math.sqrt(2.0 / (c_in * k))
                        conv.weight[sl].copy_(torch.randn(conv.weight[sl].shape, generator=g) * std)
                        conv.bias[sl].zero_()
                    continue
                bound = 1.0 / math.sqrt(c_in * k)
                _uniform_(conv.weight[sl], bound, g)
                _uniform_(conv.bias[sl], bound, g)

    def forward(self, x: torch.Tensor, return_activations: bool = False, each_layer=None):
        """Predictions (B, M, L); with ``return_activations`` also every layer's activations,
        and ``each_layer(d, h)`` is called with layer d's activations as they are made (a
        depth probe that reads them without keeping all layers: 32 of them at a GPU's pass
        size would not fit)."""
        acts = []
        h = x
        for d, (conv, norm) in enumerate(zip(self.convs, self.norms)):
            # In place: no norm's backward needs its output, so this saves a pass over memory
            # (7-20 % of a training step, measured) and changes no number.
            h = F.relu(norm(conv(h)), inplace=True)
            if return_activations:
                acts.append(h)
            if each_layer is not None:
                each_layer(d, h)
        out = self.head(h)
        return (out, acts) if return_activations else out

    def model_state(self, i: int) -> dict[str, torch.Tensor]:
        """Model i's parameters and buffers, unstacked (for the cache and for tests)."""
        return stacking.unstack(self, i, self.n_models)

    @classmethod
    def from_model_states(
        cls, cfg: CNNConfig, seeds: list[int], states: list[dict[str, torch.Tensor]]
    ) -> StackedCNN:
        """Stack separately stored models (the inverse of :meth:`model_state`), in eval mode."""
        return stacking.restack(cls(cfg, seeds), states)


def set_batch_eval(net: nn.Module, mode: str) -> None:
    """Choose minibatch or population statistics for every BatchNorm at evaluation."""
    for mod in net.modules():
        if isinstance(mod, StackedBatchNorm):
            mod.eval_mode = mode


def set_padding(net: nn.Module, mode: str) -> None:
    """Evaluate trained weights with another padding: ``circular`` removes the boundary, so the
    network becomes exactly shift-equivariant under cyclic shifts and cannot localize anything
    (the null that keeps the network's own noise)."""
    if mode not in PADDINGS:
        raise ValueError(f"padding must be one of {PADDINGS}, got {mode!r}")
    for mod in net.modules():
        if isinstance(mod, nn.Conv1d) and mod.kernel_size[0] > 1:
            mod.padding_mode = mode
