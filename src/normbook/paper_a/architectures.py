"""Two architectures beyond the plain 1-D CNN, put through paper A's localization test.

Both take i.i.d. N(0, 1) noise and regress position; both are stacked, M independent models
(one per seed) in one pass with grouped convolutions, trained with :func:`stacking.train`
(Adam on the summed per-model MSE), cached per seed, and evaluated with per-index moments in
two independent streams, so :func:`detector.summarize` and
:func:`verdicts.localizes_verdict` apply unchanged. Each has its two nulls: the no-norm network
of the same seeds, and the same trained normalized network evaluated with circular padding.

    unet, grid = UNetConfig.from_params(P), Grid2dConfig.from_params(P)
    unet = architectures.unet_runs(unet)                # .norm .none .circular
    grid = architectures.grid_runs(grid)                # idem, per axis too

**1-D U-Net** (:class:`StackedUNet`), reconstructed in the style of the diffusion planners of
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
* the test compares indices of one residue mod 2**levels (:func:`summarize_periodic`): a net
  that down-samples is equivariant only to shifts by 2**levels, so even without a boundary its
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

**2-D CNN** (:class:`StackedCNN2d`): conv(k) -> norm -> ReLU blocks with zero padding, a 1x1
head to two channels regressing the row coordinate i/(H-1) and the column coordinate j/(W-1)
on H x W noise images; norm ``"instance"`` or ``"none"`` (``"group"`` also works).
R = (k // 2) * depth. Localization is tested per axis: the row channel averaged over columns
is one value per row index (the column channel averaged over rows, one per column), with
moments in two streams exactly as :func:`localization.evaluate`; a row's average includes
columns near the left and right padding, but that padding is the same for every row, so
without a norm interior rows still cannot be told apart. The run's own ``per_seed`` joins the
two axes (:func:`join_axes`); ``.rows`` and ``.cols`` are the axes alone.

Training follows paper A's :class:`training.TrainConfig` fields (steps, batch_size, lr,
schedule, device); inputs come from each seed's ``train`` stream, evaluation from its
``eval`` stream, initial weights from a generator seeded with the seed itself (as
:class:`cnn.StackedCNN`), so a stacked model is the model trained alone.
"""

from __future__ import annotations

import functools
import math
import re
import sys
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..core import cache, seeding, stats
from ..core.devices import resolve_device
from ..core.progress import progress
from ..core.seeding import generators
from ..core.stats import effect_size
from . import detector, localization, norms, stacking, task
from .detector import DetectorConfig, Localization, Moments
from .localization import EVAL_PASS_SAMPLES, SummarizedRun
from .norms import make_norm
from .stacking import device_of
from .task import ramp, sample_inputs
from .training import TrainConfig

UNET_NORMS = ("group", "none")
GRID_NORMS = ("instance", "group", "none")
ACTIVATIONS = ("mish", "relu")
DOWNS = ("conv", "avgpool")
UPS = ("transpose", "nearest")
PADDINGS = ("zeros", "circular")


def _positive(name: str, value: int) -> None:
    if not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _one_of(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def _check_common(cfg) -> None:
    """Training and evaluation fields both configs share."""
    for name in ("steps", "batch_size", "n_eval", "eval_batch"):
        _positive(name, getattr(cfg, name))
    if not cfg.seeds:
        raise ValueError("seeds must name at least one seed")
    if len(set(cfg.seeds)) != len(cfg.seeds):
        raise ValueError(f"seeds must be distinct, got {cfg.seeds}")
    if not cfg.lr > 0:
        raise ValueError(f"lr must be positive, got {cfg.lr}")
    if cfg.n_eval < 2 * cfg.eval_batch:
        raise ValueError(
            f"n_eval ({cfg.n_eval}) must give both streams a batch of eval_batch ({cfg.eval_batch})"
        )
    _one_of("schedule", cfg.schedule, stacking.SCHEDULES)


_ARCH_PARAMS = dict(seeds="arch_seeds", batch_size="arch_batch_size", lr="arch_lr",
                    schedule="arch_schedule", eval_batch="arch_eval_batch")  # fmt: skip


def _from_params(cls, P, **fixed):
    """``cls`` from chapter A4's parameters (``cls.PARAMS`` and the shared ``_ARCH_PARAMS``);
    an invalid config's error names the parameters, not the fields."""
    names = {**cls.PARAMS, **_ARCH_PARAMS}
    values = {f: P[p] for f, p in names.items()}
    values["seeds"] = tuple(values["seeds"])
    try:
        return cls(**values, **fixed, device=resolve_device(P.device),
                   detector=localization.configs(P).detector)  # fmt: skip
    except ValueError as exc:
        msg = str(exc)
        for f, p in sorted(names.items(), key=lambda fp: -len(fp[0])):
            msg = re.sub(rf"\b{f}\b", p, msg)
        raise ValueError(msg) from None


class _RunConfig:
    """What the U-Net and the 2-D CNN configs share: the label and paper A's training config
    (its validation applies) over ``train_length`` positions (the U-Net's sequence length, the
    image height for the 2-D CNN: the cache key has the width)."""

    @property
    def label(self) -> str:
        return f"group (G={self.groups})" if self.norm == "group" else self.norm

    @property
    def train(self) -> TrainConfig:
        return TrainConfig(
            seq_len=self.train_length,
            steps=self.steps,
            batch_size=self.batch_size,
            lr=self.lr,
            schedule=self.schedule,
            device=self.device,
        )


# ============================================================================ configs


@dataclass(frozen=True)
class UNetConfig(_RunConfig):
    """Every size and choice of a U-Net localization run (architecture, training, evaluation),
    all required: chapter A4's come from its parameters (:meth:`from_params`)."""

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
    n_eval: int  # predictions per index, both streams together
    eval_batch: int  # samples per stream batch (streams alternate batch by batch)
    device: str
    detector: DetectorConfig

    # each field's chapter A4 parameter (besides the shared ones, _ARCH_PARAMS)
    PARAMS = dict(seq_len="unet_len", levels="unet_levels", width="unet_width",
                  growth="unet_growth", blocks="unet_blocks", kernel="unet_kernel",
                  groups="unet_groups", activation="unet_activation", down="unet_down",
                  up="unet_up", steps="unet_steps", n_eval="unet_eval")  # fmt: skip

    @classmethod
    def from_params(cls, P, norm: str = "group") -> UNetConfig:
        """Chapter A4's U-Net from its ``unet_*`` and ``arch_*`` parameters."""
        return _from_params(cls, P, norm=norm)

    def __post_init__(self):
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        for name in ("seq_len", "levels", "width", "growth", "blocks", "kernel", "groups"):
            _positive(name, getattr(self, name))
        if self.kernel % 2 == 0:
            raise ValueError(f"kernel must be odd (centred convolutions), got {self.kernel}")
        _one_of("norm", self.norm, UNET_NORMS)
        _one_of("activation", self.activation, ACTIVATIONS)
        _one_of("down", self.down, DOWNS)
        _one_of("up", self.up, UPS)
        if self.norm == "group" and self.width % self.groups:
            raise ValueError(f"groups ({self.groups}) must divide the width ({self.width})")
        block = 2**self.levels
        if self.seq_len % block:
            raise ValueError(
                f"seq_len ({self.seq_len}) must be divisible by 2**levels = {block} "
                f"(every level halves the sequence)"
            )
        _check_common(self)

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


@dataclass(frozen=True)
class Grid2dConfig(_RunConfig):
    """Every size and choice of a 2-D localization run, all required (chapter A4's:
    :meth:`from_params`); ``channels`` is the conv width (``height`` and ``width`` are the
    image's)."""

    height: int
    width: int
    depth: int
    channels: int
    kernel: int
    norm: str
    groups: int  # per model, used by norm="group"
    seeds: tuple[int, ...]
    steps: int
    batch_size: int
    lr: float  # the peak of the one-cycle schedule
    schedule: str
    n_eval: int
    eval_batch: int
    device: str
    detector: DetectorConfig

    PARAMS = dict(height="grid_size", width="grid_size", depth="grid_depth",
                  channels="grid_channels", kernel="grid_kernel", steps="grid_steps",
                  n_eval="grid_eval")  # fmt: skip

    @classmethod
    def from_params(cls, P, norm: str = "instance") -> Grid2dConfig:
        """Chapter A4's 2-D CNN from its ``grid_*`` and ``arch_*`` parameters."""
        return _from_params(cls, P, norm=norm, groups=1)

    def __post_init__(self):
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        for name in ("height", "width", "depth", "channels", "kernel", "groups"):
            _positive(name, getattr(self, name))
        if self.kernel % 2 == 0:
            raise ValueError(f"kernel must be odd (centred convolutions), got {self.kernel}")
        _one_of("norm", self.norm, GRID_NORMS)
        if self.norm == "group" and self.channels % self.groups:
            raise ValueError(f"groups ({self.groups}) must divide channels ({self.channels})")
        if min(self.height, self.width) < 2:
            raise ValueError(
                f"the image needs at least 2 x 2 pixels, got {self.height, self.width}"
            )
        _check_common(self)

    @property
    def receptive_radius(self) -> int:
        """R = floor(k/2) * depth, along either axis."""
        return (self.kernel // 2) * self.depth

    @property
    def train_length(self) -> int:
        return self.height

    def architecture(self) -> dict:
        arch = {k: getattr(self, k) for k in ("height", "width", "depth", "channels", "kernel")}
        return {**arch, "norm": self.norm, "groups": self.groups if self.norm == "group" else 0}


# Piloted on the shared 2-core CPU, one torch thread (two threads were up to 100x slower for
# these small nets while other jobs ran). U-Net cpu: about 57 s for all three runs (5 seeds);
# interior slopes 0.28-0.40 and every tested interior index localized, nulls ~0 and <= 0.23.
# 2-D cpu: about 67 s; it does NOT localize beyond R at this budget (interior slopes <= 0.003;
# 24 x 24 with 8 channels, depth 4, and 2500 steps did not either); smoke: a few seconds each.
# ============================================================================ networks


def _uniform_(t: torch.Tensor, bound: float, g: torch.Generator) -> None:
    with torch.no_grad():
        t.copy_(torch.rand(t.shape, generator=g) * 2 * bound - bound)


def _init_per_model(convs: list[nn.Module], seeds: list[int]) -> None:
    """PyTorch's default conv init U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = a model's input
    channels x kernel size, drawn for model m from ``Generator(seed_m)`` layer by layer, so
    model m's slice of a stack equals the model built alone. Every weight and bias has the
    models along its first axis (transposed convs too: weight (M*C_in, C_out, k))."""
    m = len(seeds)
    for i, seed in enumerate(seeds):
        g = torch.Generator().manual_seed(seed)
        for conv in convs:
            per_w, per_b = conv.weight.shape[0] // m, conv.bias.shape[0] // m
            c_in = conv.in_channels // m
            bound = 1.0 / math.sqrt(c_in * math.prod(conv.kernel_size))
            _uniform_(conv.weight[i * per_w : (i + 1) * per_w], bound, g)
            _uniform_(conv.bias[i * per_b : (i + 1) * per_b], bound, g)


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
        _init_per_model(
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


class StackedCNN2d(nn.Module):
    """M copies of the 2-D CNN; input (B, M, H, W) -> output (B, M, 2, H, W) (row, column)."""

    def __init__(self, cfg: Grid2dConfig, seeds: list[int], padding: str = "zeros"):
        super().__init__()
        self.cfg, self.seeds, m, c = cfg, list(seeds), len(seeds), cfg.channels
        self.n_models = m
        self.convs, self.norms = nn.ModuleList(), nn.ModuleList()
        for layer in range(cfg.depth):
            c_in = 1 if layer == 0 else c
            k = cfg.kernel
            self.convs.append(nn.Conv2d(m * c_in, m * c, k, padding=k // 2, groups=m))
            self.norms.append(make_norm(cfg.norm, m, c, cfg.groups))
        self.head = nn.Conv2d(m * c, m * 2, 1, groups=m)
        _init_per_model([*self.convs, self.head], self.seeds)
        set_padding(self, padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x
        for conv, norm in zip(self.convs, self.norms):
            h = F.relu(norm(conv(h)))
        out = self.head(h)
        return out.view(out.shape[0], self.n_models, 2, *out.shape[-2:])

    def model_state(self, i: int) -> dict[str, torch.Tensor]:
        return stacking.unstack(self, i, self.n_models)

    @classmethod
    def from_model_states(cls, cfg, seeds, states, padding: str = "zeros") -> StackedCNN2d:
        return stacking.restack(cls(cfg, seeds, padding), states)


def set_padding(net: nn.Module, mode: str) -> None:
    """Zero or circular padding on every conv with kernel > 1 or stride > 1 (U-Net's strided
    down-sampling included) and on the transposed up-sampling. Circular padding removes the
    boundary: the net becomes exactly equivariant to cyclic shifts (by 2**levels for the
    U-Net), whatever its norms."""
    _one_of("padding", mode, PADDINGS)
    for mod in net.modules():
        if isinstance(mod, _TransposeUp):
            mod.wrap = mode == "circular"
        elif isinstance(mod, (nn.Conv1d, nn.Conv2d)):
            if max(mod.kernel_size) > 1 or max(mod.stride) > 1:
                mod.padding_mode = mode


def sample_images(
    batch: int, n_models: int, height: int, width: int, gens: list[torch.Generator]
) -> torch.Tensor:
    """i.i.d. N(0, 1) images (batch, n_models, height, width), one stream per model."""
    if len(gens) != n_models:
        raise ValueError(f"need one generator per model ({n_models}), got {len(gens)}")
    return torch.stack([torch.randn(batch, height, width, generator=g) for g in gens], dim=1)


def grid_target(height: int, width: int) -> torch.Tensor:
    """(2, H, W): the row coordinate i/(H-1) and the column coordinate j/(W-1)."""
    rows = ramp(height)[:, None].expand(height, width)
    cols = ramp(width)[None, :].expand(height, width)
    return torch.stack([rows, cols])


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
            batch_size=1, lr=1.0, schedule="constant", n_eval=64, eval_batch=32, device="cpu",
            detector=DetectorConfig(),
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


def gradient_reach(net: nn.Module, seq_len: int, outputs, n_inputs: int = 4) -> np.ndarray:
    """Per model and output index: the largest |j - i| with a non-zero input gradient of output
    i on any of ``n_inputs`` noise inputs ((M, len(outputs)); -1: no gradient). For a U-Net."""
    net = net.cpu().eval()
    m, outputs = net.n_models, list(outputs)
    x = sample_inputs(n_inputs * len(outputs), m, seq_len, generators(net.seeds, "check"))
    x.requires_grad_(True)
    out = net(x).view(len(outputs), n_inputs, m, seq_len)
    sel = torch.stack([out[k, :, :, i] for k, i in enumerate(outputs)])
    sel.sum().backward()
    grad = (x.grad.view(len(outputs), n_inputs, m, seq_len) != 0).any(dim=1)  # (K, M, L)
    reach = np.full((m, len(outputs)), -1)
    for k, i in enumerate(outputs):
        for j in range(m):
            nz = np.flatnonzero(grad[k, j].numpy())
            if nz.size:
                reach[j, k] = np.abs(nz - i).max()
    return reach


# ============================================================================ training


CODE = (task, norms, stacking, seeding, stats, detector)  # plus this module


def _step(cfg, what: str) -> cache.Step:
    """The cached step of ``cfg``'s architecture: "train" or "eval"."""
    return STEPS[_cache_kind(cfg) + "_" + what]


def _build(cfg, seeds, padding: str = "zeros"):
    cls = StackedUNet if isinstance(cfg, UNetConfig) else StackedCNN2d
    return cls(cfg, seeds, padding)


def _draw(cfg, batch: int, gens) -> torch.Tensor:
    m = len(gens)
    if isinstance(cfg, UNetConfig):
        return sample_inputs(batch, m, cfg.seq_len, gens)
    return sample_images(batch, m, cfg.height, cfg.width, gens)


def _target(cfg) -> torch.Tensor:
    return ramp(cfg.seq_len) if isinstance(cfg, UNetConfig) else grid_target(cfg.height, cfg.width)


def train_stack(cfg, seeds: list[int], desc: str = "train"):
    """Train one model per seed in one stacked pass (U-Net or 2-D CNN, by the config's type).
    Returns the net and its :class:`stacking.Trained` record."""
    net = _build(cfg, seeds).to(cfg.device)
    gens = generators(seeds, "train")
    target = _target(cfg).to(cfg.device)
    dims = (0, 2) if isinstance(cfg, UNetConfig) else (0, 2, 3, 4)

    def mse():
        x = _draw(cfg, cfg.batch_size, gens).to(cfg.device)  # drawn on the CPU
        return ((net(x) - target) ** 2).mean(dim=dims)

    tc = cfg.train
    kind = "U-Net" if isinstance(cfg, UNetConfig) else "2-D CNN"
    record = stacking.train(
        net,
        len(seeds),
        tc.steps,
        tc.lr,
        mse,
        f"{desc} ({kind}, {cfg.label}, {len(seeds)} models)",
        tc.schedule,
    )
    return net, record


def _cache_kind(cfg) -> str:
    return "a_unet" if isinstance(cfg, UNetConfig) else "a_grid2d"


def _train_key(cfg, seed: int) -> dict:
    return {"arch": cfg.architecture(), "train": asdict(cfg.train), "seed": int(seed)}


def trained(cfg, padding: str = "zeros"):
    """The trained stack for ``cfg.seeds`` (cached per seed; missing seeds trained together).
    Returns (net with ``padding``, loss history (steps, M), hit per seed)."""
    seeds = list(cfg.seeds)
    keys = [_train_key(cfg, s) for s in seeds]

    def train_missing(idx: list[int]):
        net, record = train_stack(cfg, [seeds[i] for i in idx])
        for j, i in enumerate(idx):
            seconds = np.array([record.seconds / len(idx)])
            arrays = {"loss": record.losses[:, j], "seconds": seconds}
            yield i, cache.Entry(arrays, net.model_state(j))

    entries = _step(cfg, "train").cached_each(keys, train_missing)
    cls = StackedUNet if isinstance(cfg, UNetConfig) else StackedCNN2d
    net = cls.from_model_states(cfg, seeds, [e.tensors for e in entries], padding)
    return net, np.stack([e["loss"] for e in entries], axis=1), [e.hit for e in entries]


# ============================================================================ evaluation


@torch.no_grad()
def evaluate(net: nn.Module, cfg) -> dict[str, np.ndarray]:
    """Streaming per-index moments of the predictions on fresh noise, batches of
    ``cfg.eval_batch`` alternating between two streams (as :func:`localization.evaluate`).

    U-Net: ``out_*`` (2, M, L). 2-D CNN: ``rows_*`` (2, M, H), the row channel averaged over
    columns, ``cols_*`` (2, M, W), the column channel averaged over rows, and ``map`` (M, 2, H, W),
    the mean prediction maps over all samples."""
    net.eval()
    dev, m, bs = device_of(net), net.n_models, cfg.eval_batch
    gens = generators(net.seeds, "eval")
    n_batches = max(2, -(-cfg.n_eval // bs))
    per_pass = max(1, EVAL_PASS_SAMPLES // bs)
    unet = isinstance(cfg, UNetConfig)
    names = ("out",) if unet else ("rows", "cols")
    shapes = [(m, cfg.seq_len)] if unet else [(m, cfg.height), (m, cfg.width)]
    moms = {n: [stats.RunningMoments(s) for _ in range(2)] for n, s in zip(names, shapes)}
    total = None if unet else np.zeros((m, 2, cfg.height, cfg.width))
    for first in progress(range(0, n_batches, per_pass), desc="evaluate"):
        k = min(per_pass, n_batches - first)
        y = net(_draw(cfg, bs * k, gens).to(dev)).double().cpu()
        if unet:
            views = {"out": y.numpy()}
        else:
            total += y.sum(dim=0).numpy()
            views = {
                "rows": y[:, :, 0].mean(dim=-1).numpy(),
                "cols": y[:, :, 1].mean(dim=-2).numpy(),
            }
        for j in range(k):
            rows, stream = slice(j * bs, (j + 1) * bs), (first + j) % 2
            for n in names:
                moms[n][stream].update(views[n][rows])
    arrays = {}
    for n in names:
        arrays.update(stats.stack_moments(n, moms[n]))
    if total is not None:
        arrays["map"] = total / (n_batches * bs)
    return arrays


def _evaluated(cfg, padding: str):
    net, losses, hits = trained(cfg, padding)
    net.to(cfg.device)
    config = {
        "train": [_train_key(cfg, s) for s in cfg.seeds],
        "n_eval": cfg.n_eval,
        "eval_batch": cfg.eval_batch,
        "padding": padding,
    }
    entry = _step(cfg, "eval").cached(config, lambda: cache.Entry(evaluate(net, cfg)))
    return net, losses, hits, entry


class _ArchRun(SummarizedRun):
    """What both architectures' runs add to :class:`localization.SummarizedRun`."""

    @property
    def seq_len(self) -> int:
        return self.out.mean.shape[-1]

    @property
    def mean(self) -> np.ndarray:
        """The pooled mean prediction per seed and index (M, L)."""
        return self.out.pooled_mean

    @property
    def n_per_index(self) -> int:
        return int(self.out.count.sum())


@dataclass
class UNetRun(_ArchRun):
    """One U-Net config's networks (one per seed), evaluated and summarized; ``cnn`` is the
    :class:`UNetConfig` (it has ``label``, ``norm`` and ``receptive_radius``)."""

    cnn: UNetConfig
    seeds: list[int]
    net: StackedUNet = field(repr=False)
    loss: np.ndarray  # (steps, M)
    out: Moments  # (2, M, L)
    per_seed: list[Localization]
    train_cache_hits: list[bool]
    cache_hit: bool
    padding: str = "zeros"


def _by_residue(a: np.ndarray, period: int) -> np.ndarray:
    """(..., L) -> (..., period, L // period): index q * period + r goes to [r, q]."""
    return np.swapaxes(a.reshape(*a.shape[:-1], -1, period), -1, -2)


def _from_residue(a: np.ndarray) -> np.ndarray:
    """The inverse of :func:`_by_residue`."""
    return np.swapaxes(a, -1, -2).reshape(*a.shape[:-2], -1)


def summarize_periodic(
    moments: Moments, radius: int, det: DetectorConfig, period: int
) -> list[Localization]:
    """:func:`detector.summarize` for a network equivariant only to shifts by ``period``.

    A U-Net that down-samples by 2**levels computes the same function only at indices of
    the same residue mod 2**levels, so even without any boundary its mean output repeats with
    that period, and the span test (i - 1 against i + 1) would "localize" the residue. Here
    each test compares indices of one residue class: the span test asks whether i - period
    and i + period differ. The interior fraction counts the indices whose test uses only
    outputs at least R from both ends ([R + period, l - 1 - R - period] for span); effect sizes
    and the localization distance are those of :func:`detector.summarize`. With ``period`` 1
    this is :func:`detector.summarize`.
    """
    seq_len = moments.mean.shape[-1]
    if seq_len % period:
        raise ValueError(f"sequence length {seq_len} is not a multiple of the period {period}")
    split = Moments(
        _by_residue(moments.mean, period), _by_residue(moments.std, period), moments.count
    )
    localized = detector.localized_mask(_from_residue(split.pvalues(det.test)), det.alpha)
    tested = detector.interior_mask(seq_len, radius + period * detector.TEST_REACH[det.test])
    return detector.per_model(localized, moments.pooled_mean, radius, tested, det)


def unet_run(cfg: UNetConfig, padding: str = "zeros") -> UNetRun:
    """Train (or load) the U-Nets of ``cfg.seeds``, evaluate them with ``padding`` (cached),
    and summarize with the interior beyond the exact receptive radius."""
    net, losses, hits, entry = _evaluated(cfg, padding)
    out = Moments.from_arrays(entry, "out")
    return UNetRun(
        cnn=cfg,
        seeds=list(cfg.seeds),
        net=net,
        loss=losses,
        out=out,
        per_seed=summarize_periodic(out, cfg.receptive_radius, cfg.detector, 2**cfg.levels),
        train_cache_hits=hits,
        cache_hit=entry.hit,
        padding=padding,
    )


@dataclass
class AxisRun(_ArchRun):
    """One axis of a 2-D run (``axis`` = "rows" or "columns"), a run of its own."""

    cnn: Grid2dConfig
    seeds: list[int]
    axis: str
    out: Moments  # (2, M, H) or (2, M, W)
    per_seed: list[Localization]
    padding: str = "zeros"

    @property
    def name(self) -> str:
        return f"{super().name} ({self.axis})"


@dataclass
class GridRun(SummarizedRun):
    """One 2-D config's networks; ``rows`` and ``cols`` are the axes as runs of their own and
    ``per_seed`` joins them (:func:`join_axes`); ``maps`` are the mean prediction maps."""

    cnn: Grid2dConfig
    seeds: list[int]
    net: StackedCNN2d = field(repr=False)
    loss: np.ndarray  # (steps, M)
    rows: AxisRun
    cols: AxisRun
    maps: np.ndarray  # (M, 2, H, W): mean row and column predictions
    per_seed: list[Localization]
    train_cache_hits: list[bool]
    cache_hit: bool
    padding: str = "zeros"

    @property
    def mean(self) -> np.ndarray:
        """The mean prediction maps per seed (M, 2, H, W)."""
        return self.maps


def join_axes(rows: AxisRun, cols: AxisRun) -> list[Localization]:
    """Per seed, both axes as one measure: the localized indices of rows then columns, the
    interior fraction over the tested indices of both axes, the effect sizes of both axes' mean
    predictions against their ramps, and the shorter of the two localization distances."""
    radius, test = rows.radius, rows.cnn.detector.test
    parts = []
    for run in (rows, cols):
        n = run.seq_len
        interior = detector.interior_mask(n, radius)
        tested = detector.interior_mask(n, radius + detector.TEST_REACH[test])
        parts.append((run, ramp(n).numpy(), interior, tested))
    out = []
    for s in range(len(rows.per_seed)):
        loc = np.concatenate([r.per_seed[s].localized for r, *_ in parts])
        tested = np.concatenate([t for *_, t in parts])
        interior = np.concatenate([i for _, _, i, _ in parts])
        mean = np.concatenate([r.mean[s] for r, *_ in parts])
        target = np.concatenate([t for _, t, _, _ in parts])
        out.append(
            Localization(
                localized=loc,
                distance=min(r.per_seed[s].distance for r, *_ in parts),
                frac_interior=float(loc[tested].mean()) if tested.any() else float("nan"),
                frac_all=float(loc.mean()),
                effect_all=effect_size(mean, target),
                effect_interior=effect_size(mean, target, interior),
            )
        )
    return out


def grid_run(cfg: Grid2dConfig, padding: str = "zeros") -> GridRun:
    """Train (or load) the 2-D CNNs of ``cfg.seeds``, evaluate them with ``padding`` (cached),
    and summarize each axis with R = floor(k/2) * depth."""
    net, losses, hits, entry = _evaluated(cfg, padding)
    axes = {}
    for name, axis in (("rows", "rows"), ("cols", "columns")):
        out = Moments.from_arrays(entry, name)
        axes[name] = AxisRun(
            cnn=cfg,
            seeds=list(cfg.seeds),
            axis=axis,
            out=out,
            per_seed=detector.summarize(out, cfg.receptive_radius, cfg.detector),
            padding=padding,
        )
    return GridRun(
        cnn=cfg,
        seeds=list(cfg.seeds),
        net=net,
        loss=losses,
        rows=axes["rows"],
        cols=axes["cols"],
        maps=entry["map"],
        per_seed=join_axes(axes["rows"], axes["cols"]),
        train_cache_hits=hits,
        cache_hit=entry.hit,
        padding=padding,
    )


def unet_circular_null(cfg: UNetConfig) -> UNetRun:
    """The same trained U-Nets evaluated with circular padding everywhere (no boundary)."""
    return unet_run(cfg, padding="circular")


def grid_circular_null(cfg: Grid2dConfig) -> GridRun:
    """The same trained 2-D CNNs evaluated with circular padding (no boundary on either axis)."""
    return grid_run(cfg, padding="circular")


@dataclass
class Runs:
    """A normalized config's runs with its two nulls, ready for
    ``verdicts.localizes_verdict(claim, runs.norm, runs.none, runs.circular)``."""

    norm: UNetRun | GridRun
    none: UNetRun | GridRun
    circular: UNetRun | GridRun

    @property
    def all(self) -> list:
        return [self.norm, self.none, self.circular]


def unet_runs(cfg: UNetConfig) -> Runs:
    """``cfg`` (normalized), the same config without norm, and ``cfg``'s circular null."""
    if cfg.norm == "none":
        raise ValueError("unet_runs needs a normalized config (norm='group')")
    return Runs(unet_run(cfg), unet_run(replace(cfg, norm="none")), unet_circular_null(cfg))


def grid_runs(cfg: Grid2dConfig) -> Runs:
    """``cfg`` (normalized), the same config without norm, and ``cfg``'s circular null."""
    if cfg.norm == "none":
        raise ValueError("grid_runs needs a normalized config (norm='instance' or 'group')")
    return Runs(grid_run(cfg), grid_run(replace(cfg, norm="none")), grid_circular_null(cfg))


STEPS = {
    kind: cache.step(kind, *CODE, sys.modules[__name__])
    for kind in ("a_unet_train", "a_unet_eval", "a_grid2d_train", "a_grid2d_eval")
}
