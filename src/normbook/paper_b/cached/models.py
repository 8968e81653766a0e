"""Paper B's trained models as the analyses and chapters read them: one cached training entry
(:class:`TrainedModel`, whose :meth:`~TrainedModel.key` starts every analysis key) and a
chapter's models (:class:`Models`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from normbook.paper_b.cached import training
from normbook.paper_b.cached.training import (
    ClassifierConfig,
    Splits,
    Variant,
    model_from_state,
    model_key,
)
from normbook.paper_b.data import provenance
from normbook.runtime import cache


@dataclass
class TrainedModel:
    """A cached trained model: config, seed, weights, curves and test metrics. ``stage`` is
    empty for the config's kept model and says how other weights of the same run were taken
    (``{"until_val_acc": a, "check_every": n, "window": (start, end)}``: the check closest to
    accuracy ``a`` in that window, :func:`train_one`)."""

    cfg: ClassifierConfig
    seed: int
    entry: cache.Entry
    stage: dict = field(default_factory=dict)

    def key(self, data_id: str) -> dict:
        """The model's cache key (also the start of its analyses' keys)."""
        key = model_key(self.cfg, self.seed, data_id)
        return key | {"stage": self.stage} if self.stage else key

    @property
    def state(self) -> dict[str, torch.Tensor]:
        """The kept weights."""
        return {k: v for k, v in self.entry.tensors.items() if not k.startswith("checkpoint")}

    def checkpoint(self, i: int) -> dict[str, torch.Tensor] | None:
        """The weights at ``cfg.checkpoints[i]`` of the epoch budget; None when the run
        stopped before it (its kept weights are then its last word)."""
        prefix = training.CHECKPOINT.format(i)
        state = {k[len(prefix) :]: v for k, v in self.entry.tensors.items()
                 if k.startswith(prefix)}  # fmt: skip
        return state or None

    @property
    def curves(self) -> dict[str, np.ndarray]:
        return {k[len("curve_") :]: v for k, v in self.entry.items() if k.startswith("curve_")}

    @property
    def test_acc(self) -> float:
        return float(self.entry.meta["test_acc"])

    @property
    def best_epoch(self) -> float:
        return float(self.entry.meta["best_epoch"])

    @property
    def stopped_epoch(self) -> float:
        return float(self.entry.meta["stopped_epoch"])

    @property
    def early_stopped(self) -> bool:
        return bool(self.entry.meta["early_stopped"])

    @property
    def ended_by(self) -> str:
        """What ended the run: "early stopping" (its stopping rule: patience, or a diverged
        loss), "the cap" (the epoch budget ran out first) or "the accuracy check" (a run
        taken at a target accuracy, :func:`train_one`'s ``until_val_acc``)."""
        if self.reached is not None:
            return "the accuracy check"
        return "early stopping" if self.early_stopped else "the cap"

    @property
    def capped(self) -> bool:
        """Whether the epoch cap cut the run short of its stopping rule."""
        return self.ended_by == "the cap"

    @property
    def train_seconds(self) -> float:
        return float(self.entry.meta["train_seconds"])

    @property
    def hit(self) -> bool:
        return self.entry.hit

    @property
    def kept_val_acc(self) -> float:
        """Validation accuracy of the kept weights (at ``best_epoch``)."""
        c = self.curves
        return float(c["val_acc"][np.flatnonzero(c["epoch"] == self.best_epoch)[0]])

    @property
    def reached(self) -> tuple[float, float] | None:
        """With a target accuracy: (epoch, validation accuracy) of the kept check; None for a
        kept model."""
        m = self.entry.meta
        if "reached_epoch" not in m:
            return None
        return float(m["reached_epoch"]), float(m["reached_val_acc"])

    def model(self) -> nn.Module:
        return model_from_state(self.cfg, self.state)


@dataclass
class Models:
    """Every trained model of a chapter's parameters, one per (dataset, BatchNorm) variant and
    seed, with the full datasets they were cut from."""

    trained: dict[Variant, list[TrainedModel]]  # per variant, one per seed (in seed order)
    splits: dict[str, Splits]  # dataset -> full train and test splits

    @property
    def variants(self) -> list[Variant]:
        return [Variant(*v) for v in self.trained]

    @property
    def configs(self) -> dict[Variant, ClassifierConfig]:
        return {v: ts[0].cfg for v, ts in self.trained.items()}

    @property
    def seeds(self) -> list[int]:
        return [t.seed for t in next(iter(self.trained.values()))]

    @property
    def all(self) -> list[TrainedModel]:
        return [t for ts in self.trained.values() for t in ts]

    @property
    def accuracy(self) -> dict[Variant, np.ndarray]:
        """Test accuracy per variant, one value per seed."""
        return {v: np.array([t.test_acc for t in ts]) for v, ts in self.trained.items()}

    @property
    def n_models(self) -> int:
        return len(self.all)

    @property
    def cache_hits(self) -> int:
        """Models loaded from the experiment cache rather than trained by this run."""
        return sum(t.hit for t in self.all)

    @property
    def train_seconds(self) -> float:
        """Single-thread training time of every model, when it was trained."""
        return sum(t.train_seconds for t in self.all)

    @property
    def provenance(self) -> list[str]:
        """Run-record lines of the data files used."""
        return provenance.provenance_lines(self.splits)
