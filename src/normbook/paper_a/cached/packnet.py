"""The PackNorm two-path network, its data and its training: the computation the
``a_pack_*`` cache keys cover (:mod:`.steps`), and nothing else. The experiment and its
statistics: :mod:`.packnorm`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from normbook.paper_a.cached import stacking
from normbook.paper_a.cached.stacking import device_of
from normbook.runtime import seeding

COUPLINGS = ("pack", "separate")
HEADS = ("pool", "centre")


class PackNorm(nn.Module):
    """Joint InstanceNorm of two paths, for M stacked models of C channels.

    ``forward(a, b)`` with a, b of shape (batch, M*C, length) returns the two normalized
    paths. ``coupled=False`` normalizes each path on its own (plain per-path InstanceNorm):
    the control in which the paths cannot communicate. The affine scale and shift are per
    channel and shared by both paths (it is the same network on both).
    """

    def __init__(self, n_models: int, channels: int, coupled: bool = True, eps: float = 1e-5):
        super().__init__()
        mc = n_models * channels
        self.coupled = coupled
        self.norm = nn.GroupNorm(mc, mc, eps=eps, affine=True)  # G = C: InstanceNorm per model

    @property
    def weight(self) -> nn.Parameter:
        return self.norm.weight

    @property
    def bias(self) -> nn.Parameter:
        return self.norm.bias

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.coupled:
            return self.norm(a), self.norm(b)
        joint = self.norm(torch.cat([a, b], dim=-1))
        return joint[..., : a.shape[-1]], joint[..., a.shape[-1] :]


@dataclass(frozen=True)
class PackConfig:
    """The two-path network: depth x (conv(k) -> PackNorm -> ReLU), then a head on path A."""

    depth: int
    width: int
    kernel: int
    coupling: str = "pack"  # "separate": per-path InstanceNorm, the no-channel control
    head: str = "pool"  # "pool": mean over path A's positions; "centre": path A's centre index

    @property
    def receptive_radius(self) -> int:
        return (self.kernel // 2) * self.depth


@dataclass(frozen=True)
class PackTrainConfig:
    path_len: int  # l' (our choice: 2R + 1)
    steps: int
    batch_size: int
    lr: float
    device: str = "cpu"  # where it trains and is tested (keyed: results differ by device)
    checkpoints: tuple[float, ...] = ()  # fractions of the steps whose states are kept

    def __post_init__(self):
        object.__setattr__(self, "checkpoints", stacking.kept_fractions(self.checkpoints))

    @property
    def checkpoint_steps(self) -> list[int]:
        """The steps whose states are kept (the last step is always the trained model)."""
        return stacking.checkpoint_steps(self.steps, self.checkpoints)


class StackedPackNet(nn.Module):
    """M two-path networks side by side: ``forward(a, b)``, (B, M, L) inputs -> (B, M) logits."""

    def __init__(self, cfg: PackConfig, seeds: list[int]):
        super().__init__()
        if cfg.coupling not in COUPLINGS:
            raise ValueError(f"coupling must be one of {COUPLINGS}, got {cfg.coupling!r}")
        if cfg.head not in HEADS:
            raise ValueError(f"head must be one of {HEADS}, got {cfg.head!r}")
        self.cfg, self.seeds = cfg, list(seeds)
        m, c = len(seeds), cfg.width
        self.n_models = m
        self.convs = nn.ModuleList(
            nn.Conv1d(
                m * (1 if i == 0 else c), m * c, cfg.kernel, padding=cfg.kernel // 2, groups=m
            )
            for i in range(cfg.depth)
        )
        self.norms = nn.ModuleList(
            PackNorm(m, c, coupled=cfg.coupling == "pack") for _ in range(cfg.depth)
        )
        self.head_weight = nn.Parameter(torch.empty(m, c))
        self.head_bias = nn.Parameter(torch.empty(m))
        self._init_per_model()

    def _init_per_model(self) -> None:
        """PyTorch's default init, drawn for each model from its own seed (so the same seed
        gives the same initial network whatever else is in the stack)."""
        m, c = self.n_models, self.cfg.width
        for i, seed in enumerate(self.seeds):
            g = torch.Generator().manual_seed(int(seed))
            with torch.no_grad():
                for conv in self.convs:
                    out_per, c_in = conv.out_channels // m, conv.in_channels // m
                    bound = 1.0 / math.sqrt(c_in * conv.kernel_size[0])
                    sl = slice(i * out_per, (i + 1) * out_per)
                    conv.weight[sl] = (
                        torch.rand(conv.weight[sl].shape, generator=g) * 2 - 1
                    ) * bound
                    conv.bias[sl] = (torch.rand(conv.bias[sl].shape, generator=g) * 2 - 1) * bound
                bound = 1.0 / math.sqrt(c)
                self.head_weight[i] = (torch.rand(c, generator=g) * 2 - 1) * bound
                self.head_bias[i] = (torch.rand((), generator=g) * 2 - 1) * bound

    def features(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Last-layer activations of both paths, each (B, M*C, L)."""
        batch = a.shape[0]
        h = torch.cat([a, b], dim=0)  # both paths through the same convolutions
        for conv, norm in zip(self.convs, self.norms):
            h = conv(h)
            ha, hb = norm(h[:batch], h[batch:])
            h = F.relu(torch.cat([ha, hb], dim=0))
        return h[:batch], h[batch:]

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        ha, _ = self.features(a, b)
        batch, mc, length = ha.shape
        ha = ha.view(batch, self.n_models, mc // self.n_models, length)
        pooled = ha.mean(dim=-1) if self.cfg.head == "pool" else ha[..., length // 2]
        return torch.einsum("bmc,mc->bm", pooled, self.head_weight) + self.head_bias

    def model_state(self, i: int) -> dict[str, torch.Tensor]:
        return stacking.unstack(self, i, self.n_models)


# ----------------------------------------------------------------------------- data


def generator(seed: int, overlap: int, stream: str) -> torch.Generator:
    """The data stream of one (overlap, seed) model for one purpose."""
    return seeding.generator(seed, stream, salt=int(overlap) * 7_919)


def sample_pair(
    batch: int, path_len: int, overlap: int, g: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One model's batch: path A (B, L), path B (B, L), label (B,) = 1.0 when B overlaps A.

    Every draw is made whatever the labels, so the stream does not depend on them.
    """
    if not 0 <= overlap <= path_len:
        raise ValueError(f"overlap must be in [0, {path_len}], got {overlap}")
    z = torch.randn(batch, 2 * path_len - overlap, generator=g)
    independent = torch.randn(batch, path_len, generator=g)
    label = (torch.rand(batch, generator=g) < 0.5).float()
    a = z[:, :path_len]
    b_overlap = z[:, path_len - overlap : 2 * path_len - overlap]
    b = torch.where(label[:, None] > 0, b_overlap, independent)
    return a, b, label


def sample_stack(batch: int, path_len: int, overlaps: list[int], gens: list[torch.Generator]):
    """Batches for M models: a, b of shape (B, M, L) and labels (B, M)."""
    parts = [sample_pair(batch, path_len, o, g) for o, g in zip(overlaps, gens)]
    return tuple(torch.stack(t, dim=1) for t in zip(*parts))


# ----------------------------------------------------------------------------- training


def train_pack(
    cfg: PackConfig,
    tc: PackTrainConfig,
    overlaps: list[int],
    seeds: list[int],
    desc: str = "PackNorm",
) -> tuple[StackedPackNet, stacking.Trained]:
    """Train one model per (overlap, seed) pair, all in one stacked pass.

    The per-model binary cross-entropies are summed, so each model gets exactly its own
    gradient, and Adam is elementwise. Returns the net and its :class:`stacking.Trained` record
    (loss history (steps, M), states at ``tc.checkpoint_steps``).
    """
    if len(overlaps) != len(seeds):
        raise ValueError("need one overlap per model")
    net = StackedPackNet(cfg, seeds).to(tc.device)
    gens = [generator(s, o, "train") for o, s in zip(overlaps, seeds)]

    def bce():
        a, b, y = (
            t.to(tc.device) for t in sample_stack(tc.batch_size, tc.path_len, overlaps, gens)
        )
        return F.binary_cross_entropy_with_logits(net(a, b), y, reduction="none").mean(dim=0)

    record = stacking.train(
        net, len(seeds), tc.steps, tc.lr, bce, f"{desc} ({cfg.coupling}, {len(seeds)} models)",
        keep_at=tc.checkpoint_steps,
    )  # fmt: skip
    return net, record


# Rows (pairs x stacked models) per forward pass on a CPU. The pairs are drawn 1,024 at a time
# (the stream, so the test pairs, do not depend on this), then passed in slices: a pass of
# 1,024 pairs x 45 models (70 MB per activation) runs 4.4x slower than slices of 32 pairs,
# which keep a pass in the caches as training does (1,440 rows, 45 models), with the same bits
# (measured, AMD EPYC Zen 3, one thread). On a GPU one pass takes the whole draw.
CPU_PASS_ROWS = 1_536


@torch.no_grad()
def correct_counts(
    net: StackedPackNet, path_len: int, overlaps: list[int], n_test: int, batch_size: int = 1024
) -> np.ndarray:
    """Correct decisions per model on ``n_test`` fresh pairs (stream 'eval'); a positive logit
    says "overlapping"."""
    net.eval()
    dev = device_of(net)
    gens = [generator(s, o, "eval") for o, s in zip(overlaps, net.seeds)]
    correct = np.zeros(net.n_models, dtype=np.int64)
    step = batch_size if dev.type != "cpu" else max(1, CPU_PASS_ROWS // net.n_models)
    done = 0
    while done < n_test:
        b = min(batch_size, n_test - done)
        a, bb, y = (t.to(dev) for t in sample_stack(b, path_len, overlaps, gens))
        logits = torch.cat([net(a[i : i + step], bb[i : i + step]) for i in range(0, b, step)])
        correct += ((logits > 0).float() == y).sum(dim=0).cpu().numpy().astype(np.int64)
        done += b
    return correct
