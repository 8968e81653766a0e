"""PackNorm (paper A, Section 3.2 / Fig. 3; our reconstruction, stated on the Methods page).

Two sequences ("paths" A and B) run through the *same* CNN. At every normalization layer
PackNorm concatenates the two paths' activations along space, normalizes them jointly
(InstanceNorm: one mean and variance per channel over both paths), and splits them back.
Nothing else couples the paths, so whatever path A learns about path B travels through the
normalization statistics.

Task: path A gets ``a = z[0:l']`` of a noise sequence ``z`` of length ``2l' - o``; path B gets
either ``b = z[l'-o : 2l'-o]`` (its first ``o`` values are ``a``'s last ``o``) or an independent
noise sequence. A head on path A's features must say which. With ``o = 0`` both cases are the
same distribution, so no network can beat chance.

Every (overlap, seed) pair is one model; all of them are trained side by side in one stacked
network (grouped convolutions, per-model normalization), each with its own initialization
and data stream, so a model trained in a stack is the model trained alone.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from scipy import stats as sps
from torch import nn

from ..core import cache, seeding, stats
from ..core.devices import resolve_device
from . import stacking
from .stacking import device_of

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

    depth: int = 8
    width: int = 16
    kernel: int = 3
    coupling: str = "pack"  # "separate": per-path InstanceNorm, the no-channel control
    head: str = "pool"  # "pool": mean over path A's positions; "centre": path A's centre index

    @property
    def receptive_radius(self) -> int:
        return (self.kernel // 2) * self.depth


@dataclass(frozen=True)
class PackTrainConfig:
    path_len: int = 17  # l' (our choice: 2R + 1)
    steps: int = 1500
    batch_size: int = 64
    lr: float = 1e-3
    device: str = "cpu"  # where it trains and is tested (keyed: results differ by device)


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
) -> tuple[StackedPackNet, np.ndarray]:
    """Train one model per (overlap, seed) pair, all in one stacked pass.

    The per-model binary cross-entropies are summed, so each model gets exactly its own
    gradient, and Adam is elementwise. Returns the net and the loss history (steps, M).
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

    trained = stacking.train(
        net, len(seeds), tc.steps, tc.lr, bce, f"{desc} ({cfg.coupling}, {len(seeds)} models)"
    )
    return net, trained.losses


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
    done = 0
    while done < n_test:
        b = min(batch_size, n_test - done)
        a, bb, y = (t.to(dev) for t in sample_stack(b, path_len, overlaps, gens))
        correct += ((net(a, bb) > 0).float() == y).sum(dim=0).cpu().numpy().astype(np.int64)
        done += b
    return correct


def trained(cfg: PackConfig, tc: PackTrainConfig, overlaps: list[int], seeds: list[int]):
    """The stacked net of every (overlap, seed) pair, overlap-major.

    Each model is cached on its own; the missing ones are trained together in one stack.
    Returns (net, model overlaps, loss history (steps, M), cache hit per model, seconds spent
    training).
    """
    pairs = [(int(o), int(s)) for o in overlaps for s in seeds]
    keys = [{"net": asdict(cfg), "train": asdict(tc), "overlap": o, "seed": s} for o, s in pairs]
    seconds = 0.0

    def train_missing(idx: list[int]):
        nonlocal seconds
        t0 = time.perf_counter()
        net, losses = train_pack(cfg, tc, [pairs[i][0] for i in idx], [pairs[i][1] for i in idx])
        seconds = time.perf_counter() - t0
        for j, i in enumerate(idx):
            yield i, cache.Entry({"loss": losses[:, j]}, tensors=stacking.unstack(net, j, len(idx)))

    entries = PACK_TRAIN.cached_each(keys, train_missing)
    net = stacking.restack(StackedPackNet(cfg, [s for _, s in pairs]), [e.tensors for e in entries])
    return (
        net,
        [o for o, _ in pairs],
        np.stack([e["loss"] for e in entries], axis=1),
        np.array([e.hit for e in entries]),
        seconds,
    )


@dataclass(frozen=True)
class PackSetup:
    """The PackNorm sweep of a chapter's parameters: nets, training, overlaps, test size."""

    net: PackConfig
    control: PackConfig  # per-path InstanceNorm: no channel between the paths
    train: PackTrainConfig
    overlaps: list[int]
    control_overlaps: list[int]
    seeds: list[int]
    n_test: int
    transition_level: float

    @property
    def path_len(self) -> int:
        return self.train.path_len

    @property
    def radius(self) -> int:
        return self.net.receptive_radius


def configs(P) -> PackSetup:
    """From the chapter's ``pack_*`` parameters; ``pack_len = 0`` means l' = 2R + 1."""
    net = PackConfig(
        depth=P.pack_depth,
        width=P.pack_width,
        kernel=P.pack_kernel,
        coupling="pack",
        head=P.pack_head,
    )
    path_len = P.pack_len or 2 * net.receptive_radius + 1
    return PackSetup(
        net=net,
        control=PackConfig(**{**asdict(net), "coupling": "separate"}),
        train=PackTrainConfig(
            path_len=path_len,
            steps=P.pack_steps,
            batch_size=P.pack_batch_size,
            lr=P.pack_lr,
            device=resolve_device(P.device),
        ),
        overlaps=overlap_grid(path_len, P.overlap_fracs),
        control_overlaps=overlap_grid(path_len, P.control_fracs),
        seeds=list(P.pack_seeds),
        n_test=P.n_test,
        transition_level=P.transition_level,
    )


@dataclass
class Accuracy:
    """Test accuracy of one coupling's models: arrays (n_overlaps, n_seeds)."""

    overlaps: list[int]
    seeds: list[int]
    correct: np.ndarray
    n_test: int
    loss: np.ndarray = field(repr=False)  # (steps, n_overlaps, n_seeds)
    train_cache_hits: list[bool] = field(default_factory=list)
    train_seconds: float = 0.0

    @property
    def acc(self) -> np.ndarray:
        return self.correct / self.n_test

    @property
    def ci(self) -> tuple[np.ndarray, np.ndarray]:
        """Wilson 95 % interval per model."""
        return stats.wilson(self.correct, self.n_test)

    @property
    def pooled_acc(self) -> np.ndarray:
        """Accuracy over all seeds' test pairs, per overlap."""
        return self.correct.sum(axis=1) / (self.n_test * len(self.seeds))

    @property
    def pooled_ci(self) -> tuple[np.ndarray, np.ndarray]:
        return stats.wilson(self.correct.sum(axis=1), self.n_test * len(self.seeds))

    def chance_pvalues(self, row: int | None = None) -> list[float]:
        """Exact binomial p-values against 1/2, for one overlap (row) or every model."""
        counts = self.correct[row] if row is not None else self.correct.ravel()
        return [stats.chance_pvalue(k, self.n_test) for k in counts]


@dataclass
class PackResult:
    """Fig. 3: PackNorm and control accuracies, and the statistics the verdicts use."""

    setup: PackSetup
    pack: Accuracy
    control: Accuracy

    @property
    def p_zero(self) -> list[float]:
        """Binomial p-values at o = 0 (empty when the grid has no o = 0)."""
        return self.pack.chance_pvalues(0) if self.pack.overlaps[0] == 0 else []

    @property
    def spearman(self) -> tuple[float, float]:
        """Rank correlation of accuracy with the overlap, over every model."""
        o = np.repeat(self.pack.overlaps, len(self.pack.seeds))
        res = sps.spearmanr(o, self.pack.acc.ravel())
        return float(res.statistic), float(res.pvalue)

    @property
    def transition(self) -> float:
        """Overlap where the mean accuracy over seeds first reaches the transition level."""
        return transition_overlap(
            self.pack.overlaps, self.pack.acc.mean(axis=1), self.setup.transition_level
        )

    @property
    def transition_fraction(self) -> float:
        """The transition as a fraction of the path length (NaN: no transition)."""
        return self.transition / self.setup.path_len

    @property
    def transition_per_seed(self) -> list[float]:
        return [
            transition_overlap(self.pack.overlaps, self.pack.acc[:, j], self.setup.transition_level)
            for j in range(len(self.pack.seeds))
        ]

    @property
    def grid_step(self) -> float:
        """The widest gap of the overlap grid, as a fraction of l'."""
        o = self.pack.overlaps
        return float(np.max(np.diff(o))) / self.setup.path_len if len(o) > 1 else 1.0


def accuracy(
    cfg: PackConfig, tc: PackTrainConfig, overlaps: list[int], seeds: list[int], n_test: int
) -> Accuracy:
    """Train (or load) every (overlap, seed) model and count correct decisions on ``n_test``
    fresh pairs each (cached)."""
    net, model_overlaps, losses, hits, seconds = trained(cfg, tc, overlaps, seeds)

    def compute():
        counts = correct_counts(net.to(tc.device), tc.path_len, model_overlaps, n_test)
        return cache.Entry({"correct": counts.reshape(len(overlaps), len(seeds))})

    config = {
        "net": asdict(cfg),
        "train": asdict(tc),
        "overlaps": [int(o) for o in overlaps],
        "seeds": [int(s) for s in seeds],
        "n_test": int(n_test),
    }
    entry = PACK_EVAL.cached(config, compute)
    return Accuracy(
        overlaps=list(overlaps),
        seeds=list(seeds),
        correct=entry["correct"],
        n_test=int(n_test),
        loss=losses.reshape(tc.steps, len(overlaps), len(seeds)),
        train_cache_hits=hits.tolist(),
        train_seconds=seconds,
    )


def run(setup: PackSetup) -> PackResult:
    """Fig. 3's sweep: PackNorm at every overlap, the control at its overlaps."""
    return PackResult(
        setup=setup,
        pack=accuracy(setup.net, setup.train, setup.overlaps, setup.seeds, setup.n_test),
        control=accuracy(
            setup.control, setup.train, setup.control_overlaps, setup.seeds, setup.n_test
        ),
    )


# ----------------------------------------------------------------------------- statistics


def transition_overlap(overlaps, accuracy, level: float = 0.75) -> float:
    """The overlap at which accuracy first reaches ``level`` (linear interpolation between
    grid points); NaN when it never does, the first overlap when it starts above."""
    o = np.asarray(overlaps, float)
    acc = np.asarray(accuracy, float)
    above = np.flatnonzero(acc >= level)
    if above.size == 0:
        return float("nan")
    k = int(above[0])
    if k == 0:
        return float(o[0])
    o0, o1, a0, a1 = o[k - 1], o[k], acc[k - 1], acc[k]
    return float(o0 + (level - a0) / (a1 - a0) * (o1 - o0))


def overlap_grid(path_len: int, fractions: list[float]) -> list[int]:
    """Overlaps o = round(f * l') for the given fractions of the path length, sorted, unique."""
    return sorted({int(round(f * path_len)) for f in fractions})


CODE = (sys.modules[__name__], stacking, seeding)  # the source that keys the cache
PACK_TRAIN, PACK_EVAL = cache.step("a_pack_train", *CODE), cache.step("a_pack_eval", *CODE)
