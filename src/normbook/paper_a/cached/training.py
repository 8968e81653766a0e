"""Seeded, deterministic training of stacked localization CNNs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from normbook.paper_a.cached import stacking
from normbook.paper_a.cached.cnn import CNNConfig, StackedCNN
from normbook.paper_a.cached.task import ramp, sample_inputs
from normbook.runtime import cache
from normbook.runtime.seeding import generators
from normbook.runtime.workers import single_thread


@dataclass(frozen=True)
class TrainConfig:
    seq_len: int
    steps: int
    batch_size: int
    lr: float = 1e-3  # the peak, under a schedule (Adam's default; the calibration sets it)
    input_kind: str = "noise"
    schedule: str = "constant"  # see stacking.lr_scheduler
    checkpoints: tuple[float, ...] = ()  # fractions of the steps whose states are kept
    device: str = "cpu"  # where it trains; results differ between devices, so it is keyed
    graphs: bool = True  # on CUDA at a constant lr, each step is a replayed CUDA graph (no effect
    # on the CPU; keyed, since a captured Adam step may round differently)

    def __post_init__(self):
        if self.schedule not in stacking.SCHEDULES:
            raise ValueError(f"schedule must be one of {stacking.SCHEDULES}, got {self.schedule!r}")
        object.__setattr__(self, "checkpoints", stacking.kept_fractions(self.checkpoints))

    @property
    def checkpoint_steps(self) -> list[int]:
        """The steps whose states are kept (the last step is always the trained model)."""
        return stacking.checkpoint_steps(self.steps, self.checkpoints)


def train_stack(
    cnn: CNNConfig,
    tc: TrainConfig,
    seeds: list[int],
    desc: str = "train",
) -> tuple[StackedCNN, stacking.Trained]:
    """Train one model per seed, all in one stacked pass, on one thread (float sums do not
    depend on how many stacks train side by side: :func:`localization.pretrain`).

    The summed per-model MSE gives every model exactly the gradient it would get alone,
    and Adam is elementwise, so each model follows its solo trajectory (up to float
    summation order). Returns the net and its :class:`stacking.Trained` record (loss history
    (steps, n_models), seconds, states at ``tc.checkpoint_steps``).
    """
    net = StackedCNN(cnn, seeds).to(tc.device)
    gens = generators(seeds, "train", tc.device)  # noise drawn where the net runs
    target = ramp(tc.seq_len).to(tc.device)
    mse = stacking.Objective(
        draw=lambda: sample_inputs(tc.batch_size, len(seeds), tc.seq_len, gens, tc.input_kind),
        loss=lambda x: ((net(x) - target) ** 2).mean(dim=(0, 2)),
    )
    with single_thread():
        record = stacking.train(
            net,
            len(seeds),
            tc.steps,
            tc.lr,
            mse,
            f"{desc} ({cnn.norm}, {len(seeds)} models)",
            tc.schedule,
            tc.checkpoint_steps,
            tc.graphs,
        )
    return net, record


def checkpoint_name(step: int, name: str) -> str:
    """The cache entry's name for tensor ``name`` of the state kept at ``step``."""
    return f"step{step}/{name}"


def model_entries(net: StackedCNN, record: stacking.Trained, idx: list[int]):
    """One cache entry per model of a freshly trained stack: final and kept states, losses,
    and the model's share of the stacked pass's wall-clock (the calibration page reads it)."""
    for j, i in enumerate(idx):
        tensors = net.model_state(j)
        for step, states in record.checkpoints.items():
            tensors.update({checkpoint_name(step, k): v for k, v in states[j].items()})
        seconds = np.array([record.seconds / len(idx)])
        yield i, cache.Entry({"loss": record.losses[:, j], "seconds": seconds}, tensors)


def model_states(entries, at_step: int | None = None) -> list[dict]:
    """Each cached model's final weights, or (``at_step``) those kept at that step
    (:func:`.training.model_entries` stores both)."""
    if at_step is None:
        return [{k: v for k, v in e.tensors.items() if "/" not in k} for e in entries]
    prefix = checkpoint_name(at_step, "")
    return [{k[len(prefix) :]: v for k, v in e.tensors.items() if k.startswith(prefix)}
            for e in entries]  # fmt: skip


def late_fraction(fractions) -> tuple[float, ...]:
    """The one state worth keeping for a late gain (:func:`normbook.grading.claims.late_gain`):
    the last of ``fractions`` at or before half the budget (none if there is none)."""
    return tuple(sorted(float(f) for f in fractions if f <= 0.5)[-1:])
