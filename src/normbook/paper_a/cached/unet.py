"""**1-D U-Net** (:class:`StackedUNet`), reconstructed in the style of the diffusion planners of
Janner et al. (2022), smaller. The choices are ours where the brief left them open:

* ``levels`` encoder levels; level l has ``width * growth**l`` channels (Janner: dim_mults
  doubling the channels). Each level is ``blocks`` blocks conv(k) -> norm -> activation
  (stride 1, ``k // 2`` padding), then down-sampling by 2; the bottleneck (level ``levels``)
  has ``blocks`` blocks; each decoder level up-samples by 2, concatenates the encoder's skip
  on the channel axis and applies ``blocks`` blocks; a 1x1 conv head gives one output per
  position. No residual connections and no time embedding (there is no diffusion time).
* down-sampling: ``down="conv"`` a strided conv (k = 3, stride 2, padding 1, as Janner's
  Downsample1d) or ``"avgpool"`` (average of each pair); neither is followed by a norm.
* up-sampling: ``up="transpose"`` a transposed conv (k = 4, stride 2, padding 1, as Janner's
  Upsample1d) or ``"nearest"`` (each value repeated twice); no norm after either.
* activation: ``"mish"`` (Janner's) or ``"relu"``. Mish's derivative is non-zero almost
  everywhere, so an input gradient vanishes only where there is no path (the radius test).
* norm: ``"group"`` with ``groups`` groups per model, GroupNorm as in Janner's Conv1dBlock
  (they use 8 groups), or ``"none"``. Stacked: ``nn.GroupNorm(M*G, M*C)`` (:func:`make_norm`).
* skips: model m's channels are contiguous, so concatenation views (B, M, C, L), concatenates
  on C and views back: groups never mix models.
* circular padding (the null) wraps every conv with kernel > 1, the strided down-sampling conv
  and the transposed up-sampling conv (its input is wrapped by one coarse position and the
  output cropped), so the whole net is exactly equivariant to cyclic shifts by 2**levels.
* the receptive radius R is computed exactly, not from a formula: the skeleton network
  (no norm, identity activation, positive weights) is differentiated on a sequence long enough
  that nothing reaches the padding, and R is the largest |j - i| with a non-zero input gradient
  over outputs i of every residue mod 2**levels (with positive weights no paths cancel, so a
  non-zero gradient is exactly the existence of a path). The interior is every index at least
  R from both ends, as for the plain CNN.
* the test compares indices of one residue mod 2**levels
  (:func:`.arch_runs.summarize_periodic`): a net that down-samples is equivariant only to
  shifts by 2**levels, so even without a boundary its
  mean output repeats with that period, which the span test (i - 1 against i + 1) would count
  as localization (it does: a circular-padding U-Net "localizes" every index). The span test
  here asks whether i - 2**levels and i + 2**levels differ.

Chapter A4's ``cpu`` choices (its ``unet_*`` and ``arch_*`` parameters, piloted): 2 levels,
width 8 doubling per level, one block per level, k = 3, GroupNorm with G = 8 per model at every
level (Janner's count: instance-like at level 0, 2 and 4 channels per group below), Mish,
avgpool down, nearest up, one-cycle Adam at peak 1e-2. Janner's strided/transposed convs are the
``down="conv"``/``up="transpose"`` options; they were piloted only with G = 4 and a constant lr
(600-1500 steps), where no U-Net left its constant interior prediction; G = 8 with a constant lr
3e-3 did for one seed of three in 3000 steps, the one-cycle schedule for every seed (piloted
with avgpool/nearest only).
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from normbook.paper_a.cached import stacking
from normbook.paper_a.cached.arch_common import (
    ArchConfig,
    check_common,
    declare_steps,
    init_per_model,
    one_of,
    positive,
    set_padding,
)
from normbook.paper_a.cached.norms import make_norm
from normbook.paper_a.cached.task import ramp, sample_inputs

UNET_NORMS = ("group", "none")


ACTIVATIONS = ("mish", "relu")


DOWNS = ("conv", "avgpool")


UPS = ("transpose", "nearest")


@dataclass(frozen=True)
class UNetConfig(ArchConfig):
    """Every size and choice of a U-Net localization run (architecture, training, evaluation),
    all required: chapter A4's come from its parameters
    (:func:`normbook.paper_a.runs.arch_runs.unet_config`)."""

    seq_len: int
    levels: int
    width: int  # channels at level 0; level l has width * growth**l
    growth: int
    blocks: int  # conv -> norm -> activation blocks per level (and in the bottleneck)
    kernel: int
    norm: str
    groups: int  # per model at every level (Janner's 8), used by norm="group"
    activation: str
    down: str
    up: str
    seeds: tuple[int, ...]
    steps: int
    batch_size: int
    lr: float  # the peak of the one-cycle schedule
    schedule: str
    checkpoints: tuple[float, ...]  # fractions of the steps whose states are kept (A4: one)
    n_eval: int  # predictions per index, both streams together
    eval_batch: int  # samples per stream batch (streams alternate batch by batch)
    device: str
    detector: object  # the measures' DetectorConfig (runs.arch_runs); not in any key

    kind = "U-Net"
    cache_kind = "a_unet"
    loss_dims = (0, 2)

    # each field's chapter A4 parameter (besides the shared ones, _ARCH_PARAMS)
    PARAMS = dict(seq_len="unet_len", levels="unet_levels", width="unet_width",
                  growth="unet_growth", blocks="unet_blocks", kernel="unet_kernel",
                  groups="unet_groups", activation="unet_activation", down="unet_down",
                  up="unet_up", steps="unet_steps", n_eval="unet_eval")  # fmt: skip

    def __post_init__(self):
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        for name in ("seq_len", "levels", "width", "growth", "blocks", "kernel", "groups"):
            positive(name, getattr(self, name))
        if self.kernel % 2 == 0:
            raise ValueError(f"kernel must be odd (centred convolutions), got {self.kernel}")
        one_of("norm", self.norm, UNET_NORMS)
        one_of("activation", self.activation, ACTIVATIONS)
        one_of("down", self.down, DOWNS)
        one_of("up", self.up, UPS)
        if self.norm == "group" and self.width % self.groups:
            raise ValueError(f"groups ({self.groups}) must divide the width ({self.width})")
        block = 2**self.levels
        if self.seq_len % block:
            raise ValueError(
                f"seq_len ({self.seq_len}) must be divisible by 2**levels = {block} "
                f"(every level halves the sequence)"
            )
        check_common(self)

    @property
    def channels(self) -> list[int]:
        """Channels per model at levels 0..levels (the last is the bottleneck)."""
        return [self.width * self.growth**level for level in range(self.levels + 1)]

    @property
    def receptive_radius(self) -> int:
        """The exact receptive radius R (see :func:`unet_radius`)."""
        return unet_radius(self.levels, self.kernel, self.blocks, self.down, self.up)

    @property
    def train_length(self) -> int:
        return self.seq_len

    def architecture(self) -> dict:
        """The fields that define the network (norm-independent ones left as they are)."""
        keys = ("levels", "width", "growth", "blocks", "kernel", "norm", "activation", "down")
        arch = {k: getattr(self, k) for k in (*keys, "up")}
        arch["groups"] = self.groups if self.norm == "group" else 0
        return arch

    def network(self) -> type:
        return StackedUNet

    def draw(self, batch: int, gens) -> torch.Tensor:
        return sample_inputs(batch, len(gens), self.seq_len, gens)

    def target(self) -> torch.Tensor:
        return ramp(self.seq_len)

    def outputs(self, m: int) -> dict[str, tuple[int, ...]]:
        return {"out": (m, self.seq_len)}

    def views(self, y: torch.Tensor) -> dict[str, np.ndarray]:
        return {"out": y.numpy()}


class _Block(nn.Module):
    """conv(k) -> norm -> activation for M stacked models."""

    def __init__(self, m: int, c_in: int, c_out: int, cfg: UNetConfig):
        super().__init__()
        k = cfg.kernel
        self.conv = nn.Conv1d(m * c_in, m * c_out, k, padding=k // 2, groups=m)
        self.norm = make_norm(cfg.norm, m, c_out, cfg.groups)
        self.act = nn.Mish() if cfg.activation == "mish" else nn.ReLU()

    def forward(self, x):
        return self.act(self.norm(self.conv(x)))


class _TransposeUp(nn.ConvTranspose1d):
    """Janner's Upsample1d (k = 4, stride 2, padding 1), with a circular mode: the input is
    wrapped by one coarse position on each side and the output cropped by 3 (= 1 + 2), which
    adds exactly the contributions that fall off either end to the other end."""

    def __init__(self, m: int, c: int):
        super().__init__(m * c, m * c, 4, stride=2, padding=1, groups=m)
        self.wrap = False

    def forward(self, x):
        if not self.wrap:
            return super().forward(x)
        x = F.pad(x, (1, 1), mode="circular")
        return F.conv_transpose1d(x, self.weight, self.bias, 2, 3, groups=self.groups)


class StackedUNet(nn.Module):
    """M copies of the 1-D U-Net; input (B, M, L) -> output (B, M, L)."""

    def __init__(self, cfg: UNetConfig, seeds: list[int], padding: str = "zeros"):
        super().__init__()
        self.cfg, self.seeds, m = cfg, list(seeds), len(seeds)
        self.n_models, ch = m, cfg.channels
        self.down_blocks, self.downs = nn.ModuleList(), nn.ModuleList()
        c_prev = 1
        for level in range(cfg.levels):
            self.down_blocks.append(self._blocks(c_prev, ch[level]))
            c_prev = ch[level]
            if cfg.down == "conv":
                self.downs.append(nn.Conv1d(m * c_prev, m * c_prev, 3, 2, 1, groups=m))
            else:
                self.downs.append(nn.AvgPool1d(2))
        self.mid = self._blocks(ch[-2], ch[-1])
        self.ups, self.up_blocks = nn.ModuleList(), nn.ModuleList()
        for level in reversed(range(cfg.levels)):
            c_low = ch[level + 1]
            if cfg.up == "transpose":
                self.ups.append(_TransposeUp(m, c_low))
            else:
                self.ups.append(nn.Upsample(scale_factor=2, mode="nearest"))
            self.up_blocks.append(self._blocks(c_low + ch[level], ch[level]))
        self.head = nn.Conv1d(m * ch[0], m, 1, groups=m)
        init_per_model(
            [m for m in self.modules() if isinstance(m, (nn.Conv1d, nn.ConvTranspose1d))],
            self.seeds,
        )
        set_padding(self, padding)

    def _blocks(self, c_in: int, c_out: int) -> nn.Sequential:
        m, cfg = self.n_models, self.cfg
        return nn.Sequential(
            *(_Block(m, c_in if b == 0 else c_out, c_out, cfg) for b in range(cfg.blocks))
        )

    def _cat(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """Concatenate channels model by model: (B, M*Ca, L), (B, M*Cb, L) -> (B, M*(Ca+Cb), L)."""
        n, m, length = a.shape[0], self.n_models, a.shape[-1]
        out = torch.cat([a.view(n, m, -1, length), b.view(n, m, -1, length)], dim=2)
        return out.view(n, -1, length)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, skips = x, []
        for blocks, down in zip(self.down_blocks, self.downs):
            h = blocks(h)
            skips.append(h)
            h = down(h)
        h = self.mid(h)
        for up, blocks, skip in zip(self.ups, self.up_blocks, reversed(skips)):
            h = blocks(self._cat(up(h), skip))
        return self.head(h)

    def model_state(self, i: int) -> dict[str, torch.Tensor]:
        return stacking.unstack(self, i, self.n_models)

    @classmethod
    def from_model_states(cls, cfg, seeds, states, padding: str = "zeros") -> StackedUNet:
        return stacking.restack(cls(cfg, seeds, padding), states)


# ============================================================================ receptive radius


@functools.lru_cache(maxsize=64)
def unet_radius(levels: int, kernel: int, blocks: int, down: str, up: str) -> int:
    """The exact receptive radius of the U-Net skeleton (see the module docstring): the
    largest |j - i| with a path from input j to output i, over outputs of every residue."""
    block = 2**levels
    n = 8
    while True:
        cfg = UNetConfig(
            seq_len=block * n, levels=levels, width=1, growth=1, blocks=blocks, kernel=kernel,
            norm="none", groups=1, activation="relu", down=down, up=up, seeds=(0,), steps=1,
            batch_size=1, lr=1.0, schedule="constant", checkpoints=(), n_eval=64, eval_batch=32,
            device="cpu", detector=None,
        )  # fmt: skip
        net = StackedUNet(cfg, [0]).double()
        lo, hi, centre = _path_field(net, cfg.seq_len)
        if lo.min() > block and hi.max() < cfg.seq_len - 1 - block:  # far from the padding
            return int(max((centre - lo).max(), (hi - centre).max()))
        n *= 2


def _path_field(net: StackedUNet, seq_len: int):
    """Leftmost and rightmost input with a path to each output of one block of 2**levels
    outputs in the middle (identity activation, positive weights: gradients cannot cancel)."""
    for mod in net.modules():
        if isinstance(mod, _Block):
            mod.act = nn.Identity()
    with torch.no_grad():
        for p in net.parameters():
            p.fill_(0.01)
    block = 2**net.cfg.levels
    centre = (seq_len // 2 // block) * block + np.arange(block)
    x = torch.zeros(block, 1, seq_len, dtype=torch.float64, requires_grad=True)
    out = net(x)
    out[torch.arange(block), 0, torch.as_tensor(centre)].sum().backward()
    lo, hi = [], []
    for r in range(block):
        nz = np.flatnonzero(x.grad[r, 0].numpy())
        lo.append(nz.min())
        hi.append(nz.max())
    return np.array(lo), np.array(hi), centre


declare_steps(UNetConfig, sys.modules[__name__])
