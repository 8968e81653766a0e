"""Paper B's trained classifiers, cached per seed: which models a chapter trains, the cached
step that trains them (:data:`TRAIN`, keyed by the config, the seed, the data files and the
code of :mod:`.training`), and the trained models as the chapters read them.

One :class:`ClassifierConfig` fixes everything that determines a trained model except its
seed. :meth:`Setup.from_params` gives the four (dataset, BatchNorm) variants of a chapter's
parameters and :func:`trained_models` trains (or loads from the experiment cache) one model
per variant and seed:

    setup = classify.Setup.from_params(params)    # one config per variant, seeds, workers
    models = classify.trained_models(setup)  # Models: trained models, splits, accuracies

**Data identity.** The cache key includes the SHA-256 of the data files, so a model trained
on the rebuilt (JPEG) CIFAR-10 copy is never reused for the original archive, or vice versa.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from normbook.paper_b.cached import training
from normbook.paper_b.cached.cache_keys import TRAIN
from normbook.paper_b.cached.models import Models, TrainedModel  # noqa: F401  (read through classify)
from normbook.paper_b.cached.training import (  # noqa: F401  (the names chapters and analyses use, from one place)
    DATASETS,
    N_TEST,
    VARIANTS,
    ClassifierConfig,
    Splits,
    Variant,
    bn_label,
    load_full,
    model_from_state,
    model_key,
    split_key,
    train_one,
)
from normbook.runtime import cache
from normbook.runtime.devices import resolve_device
from normbook.runtime.workers import run_jobs


def _train_job(subsets: dict, cfg: ClassifierConfig, seed: int, key: tuple, stage: dict):
    return train_one(cfg, seed, subsets[key], **stage)


def _cost(cfg: ClassifierConfig) -> float:
    """Rough relative cost, to start the longest jobs first."""
    w = float(cfg.width)
    per_img = 64.0 * w**2 if cfg.arch == "vgg16" else (w / 8) ** 2  # ~1 for VGG/8, CNN k=8
    return per_img * cfg.n_train * cfg.max_epochs


def train_all(
    jobs: list[tuple[ClassifierConfig, int]],
    splits: dict[str, Splits],
    workers: int = 1,
    stages: list[dict] | None = None,
) -> list[TrainedModel]:
    """Train or load every (config, seed) in ``jobs``; ``splits`` maps dataset -> the full
    :class:`Splits` (from :func:`load_full`). Missing models are trained ``workers`` at a time
    (1: in this process); each is written to the cache as soon as it finishes. ``stages``
    (one per job; see :class:`TrainedModel`) stops runs early at a target accuracy."""
    stages = stages or [{} for _ in jobs]
    done = [TrainedModel(cfg, s, cache.Entry(), st) for (cfg, s), st in zip(jobs, stages)]
    keys = [t.key(splits[t.cfg.dataset].data_id) for t in done]

    def train_missing(idx: list[int]):
        idx = sorted(idx, key=lambda i: -_cost(jobs[i][0]))  # the longest jobs first
        subsets = {split_key(jobs[i][0]): splits[jobs[i][0].dataset].of(jobs[i][0]) for i in idx}
        work = [(*jobs[i], split_key(jobs[i][0]), stages[i]) for i in idx]
        for j, res in run_jobs(_train_job, work, subsets, workers, desc="train models"):
            cfg, s = jobs[idx[j]]
            ended = (f"stopped at epoch {res.stopped_epoch:.2f} (best {res.best_epoch:.2f})"
                     if res.reached_epoch is None else f"kept the check at epoch "
                     f"{res.reached_epoch:.2f} (validation accuracy "
                     f"{res.reached_val_acc:.4f})")  # fmt: skip
            print(f"trained {cfg.dataset} {cfg.label} seed {s}: test accuracy {res.test_acc:.4f}, "
                  f"{ended}, {res.seconds:.1f} s", file=sys.stderr, flush=True)  # fmt: skip
            yield idx[j], training.entry(res)

    entries = TRAIN.cached_each(keys, train_missing)
    return [TrainedModel(t.cfg, t.seed, e, t.stage) for t, e in zip(done, entries)]


# --------------------------------------------------------------------------- chapter runner


def allow_flag(value: str) -> bool | None:
    """The chapters' ``allow_unverified`` parameter: 'yes' / 'no', or 'env' (None: follow
    ``NORMBOOK_ALLOW_UNVERIFIED``)."""
    return {"env": None, "yes": True, "no": False}[value]


@dataclass(frozen=True)
class Setup:
    """What a chapter trains: one config per (dataset, BatchNorm) variant, the seeds, how many
    worker processes, and whether an unverified data copy may be used."""

    configs: dict[Variant, ClassifierConfig]
    seeds: tuple[int, ...]
    workers: int = 1
    allow_unverified: bool | None = None  # None: follow NORMBOOK_ALLOW_UNVERIFIED

    @classmethod
    def from_params(cls, params) -> Setup:
        """The four (dataset, batchnorm) configs of a chapter's parameters: MNIST with SGD at one
        learning rate, CIFAR-10 with Adam at the paper's two learning rates (BN / no BN)."""
        out = {}
        for v in VARIANTS:
            ds, bn = v
            common = dict(
                dataset=ds,
                batchnorm=bn,
                batch_size=params.batch_size,
                patience=params.patience,
                evals_per_epoch=params.evals_per_epoch,
                n_val=params.n_val,
                n_test=params.n_test,
                split_seed=params.split_seed,
                init=params.init,
                device=resolve_device(params.device),
                checkpoints=tuple(params.curve_fractions),
            )
            if ds == "mnist":
                out[v] = ClassifierConfig(
                    width=params.mnist_width,
                    optimizer="sgd",
                    lr=params.mnist_lr,
                    momentum=params.mnist_momentum,
                    max_epochs=params.mnist_epochs,
                    n_train=params.mnist_train,
                    **common,
                )
            else:
                out[v] = ClassifierConfig(
                    width=params.vgg_width,
                    optimizer="adam",
                    lr=params.cifar_lr_bn if bn else params.cifar_lr_nobn,
                    momentum=0.0,  # Adam has none
                    max_epochs=params.cifar_epochs,
                    n_train=params.cifar_train,
                    **common,
                )
        return cls(out, tuple(params.seeds), params.workers, allow_flag(params.allow_unverified))


def load_data(setup: Setup) -> dict[str, Splits]:
    """Both full datasets (verified, or unverified copies when the setup allows them)."""
    return {ds: load_full(ds, setup.allow_unverified) for ds in DATASETS}


def trained_models(setup: Setup, splits: dict[str, Splits] | None = None) -> Models:
    """Train (or load) every variant and seed of the setup, ``setup.workers`` models at a
    time, on ``splits`` (both datasets, loaded here when not given)."""
    splits = splits or load_data(setup)
    cfgs = setup.configs
    done = train_all([(cfgs[v], s) for v in VARIANTS for s in setup.seeds], splits, setup.workers)
    return Models({v: [t for t in done if t.cfg == cfgs[v]] for v in VARIANTS}, splits)
