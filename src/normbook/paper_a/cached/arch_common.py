"""Two architectures beyond the plain 1-D CNN, put through paper A's localization test.

Both take i.i.d. N(0, 1) noise and regress position; both are stacked, M independent models
(one per seed) in one pass with grouped convolutions, trained with :func:`stacking.train`
(Adam on the summed per-model MSE), cached per seed, and evaluated with per-index moments in
two independent streams, so :func:`detector.summarize` and
:func:`verdicts.localizes_verdict` apply unchanged. Each has its two nulls: the no-norm network
of the same seeds, and the same trained normalized network evaluated with circular padding.

    runs = arch_runs.runs(arch_runs.unet_config(params))  # .norm .none .circular
    runs = arch_runs.runs(arch_runs.grid_config(params))  # idem, per axis too

This module holds what both share: the configs' common fields and validation
(:class:`ArchConfig`, whose subclasses say how to build, feed and read their network),
training, the cache and the streamed evaluation; :mod:`.unet` and :mod:`.grid2d` hold one
architecture each. All three are what the cached steps' keys cover (computation only); the
runs and their summaries are in :mod:`.arch_runs`.

Training follows paper A's :class:`training.TrainConfig` fields (steps, batch_size, lr,
schedule, checkpoints, device) and keeps its states as paper A's networks do
(:func:`training.model_entries`); inputs come from each seed's ``train`` stream, evaluation
from its ``eval`` stream, initial weights from a generator seeded with the seed itself (as
:class:`cnn.StackedCNN`), so a stacked model is the model trained alone.
"""

from __future__ import annotations

import math
import sys
from dataclasses import asdict
from typing import ClassVar

import numpy as np
import torch
from torch import nn

from normbook.grading import stats
from normbook.paper_a.cached import norms, stacking, task, training
from normbook.paper_a.cached.stacking import device_of
from normbook.paper_a.cached.training import TrainConfig, model_entries
from normbook.runtime import cache, seeding
from normbook.runtime.progress import progress
from normbook.runtime.seeding import generators

PADDINGS = ("zeros", "circular")


def positive(name: str, value: int) -> None:
    if not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def one_of(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def check_common(cfg) -> None:
    """Training and evaluation fields both configs share."""
    for name in ("steps", "batch_size", "n_eval", "eval_batch"):
        positive(name, getattr(cfg, name))
    if not cfg.seeds:
        raise ValueError("seeds must name at least one seed")
    if len(set(cfg.seeds)) != len(cfg.seeds):
        raise ValueError(f"seeds must be distinct, got {cfg.seeds}")
    if not cfg.lr > 0:
        raise ValueError(f"lr must be positive, got {cfg.lr}")
    if any(not 0 < f < 1 for f in cfg.checkpoints):
        raise ValueError(f"checkpoints are fractions in (0, 1), got {cfg.checkpoints}")
    if cfg.n_eval < 2 * cfg.eval_batch:
        raise ValueError(
            f"n_eval ({cfg.n_eval}) must give both streams a batch of eval_batch ({cfg.eval_batch})"
        )
    one_of("schedule", cfg.schedule, stacking.SCHEDULES)


class ArchConfig:
    """What the U-Net and the 2-D CNN configs share: the label and paper A's training config
    (its validation applies) over ``train_length`` positions (the U-Net's sequence length, the
    image height for the 2-D CNN: the cache key has the width). A subclass says how its network
    is built, fed and read: ``kind``, ``cache_kind``, ``loss_dims``, ``mean_map`` and
    :meth:`network`, :meth:`draw`, :meth:`target`, :meth:`outputs`, :meth:`views`."""

    kind: ClassVar[str]  # for progress bars and messages
    cache_kind: ClassVar[str]  # the cached steps' prefix
    loss_dims: ClassVar[tuple[int, ...]]  # the MSE's mean over all but the model axis
    mean_map: ClassVar[bool] = False  # also keep the mean prediction map (2-D)

    def network(self) -> type:
        """The stacked network class."""
        raise NotImplementedError

    def draw(self, batch: int, gens) -> torch.Tensor:
        """``batch`` fresh noise inputs per model, one generator per model."""
        raise NotImplementedError

    def target(self) -> torch.Tensor:
        raise NotImplementedError

    def outputs(self, m: int) -> dict[str, tuple[int, ...]]:
        """The evaluation's per-index outputs: name -> shape of one stream's moments."""
        raise NotImplementedError

    def views(self, y: torch.Tensor) -> dict[str, np.ndarray]:
        """A batch of predictions as the outputs of :meth:`outputs`."""
        raise NotImplementedError

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
            checkpoints=self.checkpoints,
            device=self.device,
        )


def _uniform_(t: torch.Tensor, bound: float, g: torch.Generator) -> None:
    with torch.no_grad():
        t.copy_(torch.rand(t.shape, generator=g) * 2 * bound - bound)


def init_per_model(convs: list[nn.Module], seeds: list[int]) -> None:
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


def set_padding(net: nn.Module, mode: str) -> None:
    """Zero or circular padding on every conv with kernel > 1 or stride > 1 (U-Net's strided
    down-sampling included) and on the transposed up-sampling. Circular padding removes the
    boundary: the net becomes exactly equivariant to cyclic shifts (by 2**levels for the
    U-Net), whatever its norms."""
    one_of("padding", mode, PADDINGS)
    for mod in net.modules():
        if hasattr(mod, "wrap"):  # the U-Net's transposed up-sampling wraps its own input
            mod.wrap = mode == "circular"
        elif isinstance(mod, (nn.Conv1d, nn.Conv2d)):
            if max(mod.kernel_size) > 1 or max(mod.stride) > 1:
                mod.padding_mode = mode


# ============================================================================ training


# plus this module and the architecture's (training: the kept states' steps and entries)
CODE = (task, norms, stacking, seeding, stats, training)
PASS_SAMPLES = 256  # samples per forward pass at evaluation (as the 1-D CNN's)


def declare_steps(config: type, module) -> None:
    """Declare the cached steps of an architecture ("train" and "eval"), keyed by the shared
    code, this module and the architecture's own ``module`` (each calls it once, on import)."""
    for what in ("train", "eval"):
        cache.step(f"{config.cache_kind}_{what}", *CODE, sys.modules[__name__], module)


def _step(cfg, what: str) -> cache.Step:
    return cache.STEPS[f"{cfg.cache_kind}_{what}"]


def train_stack(cfg, seeds: list[int], desc: str = "train"):
    """Train one model per seed in one stacked pass (U-Net or 2-D CNN, by the config's type).
    Returns the net and its :class:`stacking.Trained` record."""
    net = cfg.network()(cfg, seeds).to(cfg.device)
    gens = generators(seeds, "train")
    target = cfg.target().to(cfg.device)

    def mse():
        x = cfg.draw(cfg.batch_size, gens).to(cfg.device)  # drawn on the CPU
        return ((net(x) - target) ** 2).mean(dim=cfg.loss_dims)

    tc = cfg.train
    record = stacking.train(
        net,
        len(seeds),
        tc.steps,
        tc.lr,
        mse,
        f"{desc} ({cfg.kind}, {cfg.label}, {len(seeds)} models)",
        tc.schedule,
        tc.checkpoint_steps,
    )
    return net, record


def _train_key(cfg, seed: int) -> dict:
    return {"arch": cfg.architecture(), "train": asdict(cfg.train), "seed": int(seed)}


def trained(cfg, padding: str = "zeros", at_step: int | None = None):
    """The trained stack for ``cfg.seeds`` (cached per seed, with the states kept at
    ``cfg.train.checkpoint_steps``; missing seeds trained together); ``at_step`` loads the
    states kept at that step instead of the final ones. Returns (net with ``padding``, loss
    history (steps, M), hit per seed)."""
    seeds = list(cfg.seeds)
    keys = [_train_key(cfg, s) for s in seeds]
    if at_step is not None and at_step not in cfg.train.checkpoint_steps:
        raise ValueError(f"no state kept at step {at_step}; kept: {cfg.train.checkpoint_steps}")

    def train_missing(idx: list[int]):
        net, record = train_stack(cfg, [seeds[i] for i in idx])
        yield from model_entries(net, record, idx)

    entries = _step(cfg, "train").cached_each(keys, train_missing)
    states = training.model_states(entries, at_step)
    net = cfg.network().from_model_states(cfg, seeds, states, padding)
    return net, np.stack([e["loss"] for e in entries], axis=1), [e.hit for e in entries]


# ============================================================================ evaluation


@torch.no_grad()
def evaluate(net: nn.Module, cfg) -> dict[str, np.ndarray]:
    """Streaming per-index moments of the predictions on fresh noise, batches of
    ``cfg.eval_batch`` alternating between two streams (as :func:`.evaluation.evaluate`).

    U-Net: ``out_*`` (2, M, L). 2-D CNN: ``rows_*`` (2, M, H), the row channel averaged over
    columns, ``cols_*`` (2, M, W), the column channel averaged over rows, and ``map`` (M, 2, H, W),
    the mean prediction maps over all samples."""
    net.eval()
    dev, m, bs = device_of(net), net.n_models, cfg.eval_batch
    gens = generators(net.seeds, "eval")
    n_batches = max(2, -(-cfg.n_eval // bs))
    per_pass = max(1, PASS_SAMPLES // bs)
    shapes = cfg.outputs(m)
    names = tuple(shapes)
    moms = {n: [stats.RunningMoments(s) for _ in range(2)] for n, s in shapes.items()}
    total = np.zeros((m, 2, cfg.height, cfg.width)) if cfg.mean_map else None
    for first in progress(range(0, n_batches, per_pass), desc="evaluate"):
        k = min(per_pass, n_batches - first)
        y = net(cfg.draw(bs * k, gens).to(dev)).double().cpu()
        if total is not None:
            total += y.sum(dim=0).numpy()
        views = cfg.views(y)
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


def evaluated(cfg, padding: str, at_step: int | None = None):
    """:func:`evaluate` of the trained stack (``at_step``: of the states kept at that step),
    cached. Returns (net, loss history, train hits, the evaluation's entry)."""
    net, losses, hits = trained(cfg, padding, at_step)
    net.to(cfg.device)
    config = {
        "train": [_train_key(cfg, s) for s in cfg.seeds],
        "n_eval": cfg.n_eval,
        "eval_batch": cfg.eval_batch,
        "padding": padding,
        "at_step": at_step,
    }
    entry = _step(cfg, "eval").cached(config, lambda: cache.Entry(evaluate(net, cfg)))
    return net, losses, hits, entry
