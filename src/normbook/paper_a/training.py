"""Seeded, deterministic training of stacked localization CNNs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..core.seeding import generators
from . import stacking
from .cnn import CNNConfig, StackedCNN
from .task import ramp, sample_inputs


@dataclass(frozen=True)
class TrainConfig:
    seq_len: int = 300
    steps: int = 1500
    batch_size: int = 32
    lr: float = 1e-3
    input_kind: str = "noise"


def train_stack(
    cnn: CNNConfig,
    tc: TrainConfig,
    seeds: list[int],
    desc: str = "train",
    threads: int | None = None,
) -> tuple[StackedCNN, np.ndarray]:
    """Train one model per seed, all in one stacked pass.

    The summed per-model MSE gives every model exactly the gradient it would get alone,
    and Adam is elementwise, so each model follows its solo trajectory (up to float
    summation order). Returns the net and the loss history, shape (steps, n_models).
    """
    if threads:
        torch.set_num_threads(threads)
    net = StackedCNN(cnn, seeds)
    gens = generators(seeds, "train")
    target = ramp(tc.seq_len)

    def mse():
        x = sample_inputs(tc.batch_size, len(seeds), tc.seq_len, gens, tc.input_kind)
        return ((net(x) - target) ** 2).mean(dim=(0, 2))

    losses = stacking.train(
        net, len(seeds), tc.steps, tc.lr, mse, f"{desc} ({cnn.norm}, {len(seeds)} models)"
    )
    return net, losses
