"""Seeded, deterministic training of stacked localization CNNs (PROTOCOL A.1)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .models import CNNConfig, StackedCNN
from .progress import progress
from .tasks import ramp, sample_inputs

# Separate random streams per purpose, so that evaluation noise never repeats training noise.
STREAMS = {"train": 0, "probe_fit": 1, "eval": 2, "check": 3}


@dataclass(frozen=True)
class TrainConfig:
    seq_len: int = 300
    steps: int = 1500
    batch_size: int = 32
    lr: float = 1e-3
    input_kind: str = "noise"


def generators(seeds: list[int], stream: str) -> list[torch.Generator]:
    """One generator per model, derived from the model's seed and the purpose."""
    return [torch.Generator().manual_seed(int(s) * 1_000_003 + STREAMS[stream]) for s in seeds]


def train_stack(cnn: CNNConfig, tc: TrainConfig, seeds: list[int], desc: str = "train",
                threads: int | None = None) -> tuple[StackedCNN, np.ndarray]:
    """Train one model per seed, all in one stacked pass.

    The summed per-model MSE gives every model exactly the gradient it would get alone,
    and Adam is elementwise, so each model follows its solo trajectory (up to float
    summation order). Returns the net and the loss history, shape (steps, n_models).
    """
    if threads:
        torch.set_num_threads(threads)
    net = StackedCNN(cnn, seeds)
    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=tc.lr)
    gens = generators(seeds, "train")
    target = ramp(tc.seq_len)
    losses = np.empty((tc.steps, len(seeds)), dtype=np.float32)
    for step in progress(range(tc.steps), desc=f"{desc} ({cnn.norm}, {len(seeds)} models)"):
        x = sample_inputs(tc.batch_size, len(seeds), tc.seq_len, gens, tc.input_kind)
        per_model = ((net(x) - target) ** 2).mean(dim=(0, 2))
        opt.zero_grad(set_to_none=True)
        per_model.sum().backward()
        opt.step()
        losses[step] = per_model.detach().numpy()
    net.eval()
    return net, losses
