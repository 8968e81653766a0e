"""Training one of paper B's classifiers: its config, its data subsets, and the seeded,
deterministic training loop. This module is computation only: its source keys every trained
model in the experiment cache (:data:`normbook.paper_b.runs.classify.TRAIN`), so nothing here
formats, plots or describes.

**Early-stopping rule** (our reconstruction; the paper states none). Train for at most
``max_epochs`` passes over the training subset, in minibatches drawn without replacement in a
seeded order. ``evals_per_epoch`` times per epoch (at evenly spaced steps) the model is
evaluated in eval mode on the validation split. The weights with the lowest validation
cross-entropy so far are kept; training stops once ``patience`` consecutive evaluations fail
to lower it, or when the epochs run out. The reported model (test accuracy, representations)
is the kept one. The weights at ``checkpoints`` (fractions of ``max_epochs``) are kept too,
for the compute-to-effect curves.

**Determinism.** The initial weights and the minibatch order come from the seed's "init" and
"order" streams (:mod:`normbook.runtime.seeding`), and every model trains with one intra-op
thread, so the result is bit-identical whether models train in this process or in
``workers`` parallel processes (:mod:`normbook.runtime.workers`), and however many there are.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from normbook.paper_b import paper_values as reported
from normbook.paper_b.cached import convnets
from normbook.paper_b.data import datasets
from normbook.runtime import cache, seeding
from normbook.runtime.progress import progress
from normbook.runtime.workers import in_worker, single_thread

DATASETS = {
    # name: (loader, architecture, normalization constants, full training-split size)
    "mnist": (datasets.load_mnist, "standard_cnn", "mnist", datasets.TRAIN_SIZE["mnist"]),
    "cifar10": (datasets.load_cifar10, "vgg16", "cifar10", datasets.TRAIN_SIZE["cifar10"]),
}
N_TEST = datasets.TEST_SIZE


@dataclass(frozen=True)
class ClassifierConfig:
    """Everything that determines a trained model, except its seed. Every field is required:
    a chapter's values come from its parameters (:func:`.classify.configs`), never from here."""

    dataset: str  # "mnist" (standard CNN) or "cifar10" (VGG-16)
    batchnorm: bool  # BatchNorm2d after every conv, or Identity
    width: float  # standard CNN: channels k of conv1; VGG-16: width multiplier
    optimizer: str  # "sgd" or "adam"
    lr: float
    momentum: float  # SGD only (0 for Adam)
    batch_size: int
    max_epochs: int
    patience: int  # evaluations without a lower validation loss before stopping
    evals_per_epoch: int
    n_train: int  # images from the official training split used for training
    n_val: int  # further images from the training split, for early stopping
    n_test: int  # images of the official test split used for test accuracy
    split_seed: int  # which images go to train / val / test subsets
    init: str  # He init as torchvision's VGG ("kaiming"), or "pytorch" (layer defaults)
    device: str  # "cpu" or "cuda" (results differ between them, so it is keyed)
    checkpoints: tuple[float, ...]  # fractions of max_epochs whose weights are kept too

    def __post_init__(self):
        if self.dataset not in DATASETS:
            raise ValueError(f"dataset must be one of {sorted(DATASETS)}, got {self.dataset!r}")
        if self.init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {self.init!r}")
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"device must be 'cpu' or 'cuda', got {self.device!r}")
        if self.optimizer not in ("sgd", "adam"):
            raise ValueError(f"optimizer must be 'sgd' or 'adam', got {self.optimizer!r}")
        full = DATASETS[self.dataset][3]
        if self.n_train < 1 or self.n_val < 1 or self.n_train + self.n_val > full:
            raise ValueError(
                f"{self.dataset}: n_train + n_val = {self.n_train + self.n_val} must "
                f"be between 2 and {full} (the training split)"
            )
        if not 1 <= self.n_test <= N_TEST:
            raise ValueError(f"n_test must be between 1 and {N_TEST}, got {self.n_test}")
        if any(not 0 < f < 1 for f in self.checkpoints):
            raise ValueError(f"checkpoints are fractions in (0, 1), got {self.checkpoints}")

    @property
    def arch(self) -> str:
        return DATASETS[self.dataset][1]

    @property
    def label(self) -> str:
        return bn_label(self.batchnorm)

    @property
    def in_channels(self) -> int:
        return 1 if self.dataset == "mnist" else 3

    @property
    def variant(self) -> Variant:
        return Variant(self.dataset, self.batchnorm)

    def at_paper_width(self) -> ClassifierConfig:
        """The same config at the paper's width (k = 64, or the full VGG-16)."""
        return replace(self, width=reported.WIDTH[self.dataset])

    def model_kwargs(self) -> dict:
        if self.arch == "standard_cnn":
            return {"width": int(self.width), "batchnorm": self.batchnorm}
        return {"width_mult": float(self.width), "batchnorm": self.batchnorm}

    def build(self, seed: int) -> nn.Module:
        model = convnets.build(self.arch, seed=seed, **self.model_kwargs())
        if self.init == "kaiming":
            kaiming_init(model, seed)
        return model


INITS = ("kaiming", "pytorch")


class Variant(NamedTuple):
    """A (dataset, BatchNorm) pair; equal to the plain tuple, so ``d["mnist", True]`` works."""

    dataset: str
    batchnorm: bool

    @property
    def label(self) -> str:
        return bn_label(self.batchnorm)


def bn_label(batchnorm: bool) -> str:
    """How the book names the two variants: "BN" and "no BN"."""
    return "BN" if batchnorm else "no BN"


VARIANTS = tuple(Variant(ds, bn) for ds in ("mnist", "cifar10") for bn in (True, False))


@torch.no_grad()
def kaiming_init(model: nn.Module, seed: int) -> nn.Module:
    """torchvision's VGG initialisation, seeded: conv weights He-normal (fan_out, ReLU),
    linear weights N(0, 0.01), biases 0, BatchNorm weight 1 / bias 0. PyTorch's layer
    defaults shrink the signal layer after layer, which leaves a 13-layer VGG without
    BatchNorm nearly untrainable at lr 1e-4 within a short budget."""
    gen = seeding.generator(seed, "init")
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu", generator=gen)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0.0, 0.01, generator=gen)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
    return model


# --------------------------------------------------------------------------- data


@dataclass
class Splits:
    """uint8 images of one dataset, split into train / val / test subsets."""

    dataset: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    data_id: str  # identifies the data files (SHA-256); part of cache keys
    provenance: tuple = ()  # datasets.Provenance of the train and test files

    @property
    def normalize(self) -> str:
        return DATASETS[self.dataset][2]

    def tensors(self, part: str) -> tuple[torch.Tensor, torch.Tensor]:
        """Normalized float images (MNIST zero-padded to 32x32) and int64 labels."""
        x, y = getattr(self, f"x_{part}"), getattr(self, f"y_{part}")
        return datasets.to_tensors(x, y, pad_to=32, normalize=self.normalize)

    def subset(self, n_train: int, n_val: int, n_test: int, split_seed: int) -> Splits:
        """The subsets a config uses (see :func:`split_indices`)."""
        tr, va = split_indices(len(self.y_train), n_train, n_val, split_seed)
        te = test_indices(len(self.y_test), n_test, split_seed)
        return Splits(
            self.dataset,
            self.x_train[tr],
            self.y_train[tr],
            self.x_train[va],
            self.y_train[va],
            self.x_test[te],
            self.y_test[te],
            self.data_id,
            self.provenance,
        )

    def of(self, cfg: ClassifierConfig) -> Splits:
        """The subsets ``cfg`` trains, validates and tests on."""
        return self.subset(cfg.n_train, cfg.n_val, cfg.n_test, cfg.split_seed)


def split_indices(
    n_full: int, n_train: int, n_val: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint (train, val) indices into the official training split: one seeded random
    permutation, the first ``n_val`` for validation, the next ``n_train`` for training.
    Uniformly random (not class-balanced), so the full split works for MNIST's unequal
    class counts too."""
    if n_train + n_val > n_full:
        raise ValueError(f"n_train + n_val = {n_train + n_val} exceeds the {n_full} images")
    perm = np.random.default_rng(seed).permutation(n_full)
    return np.sort(perm[n_val : n_val + n_train]), np.sort(perm[:n_val])


def test_indices(n_full: int, n_test: int, seed: int) -> np.ndarray:
    """Sorted indices of ``n_test`` images of the official test split (all of them if
    ``n_test`` covers it), drawn with a stream of ``seed`` apart from :func:`split_indices`."""
    if n_test >= n_full:
        return np.arange(n_full)
    return np.sort(np.random.default_rng(seed + 7919).permutation(n_full)[:n_test])


@lru_cache(maxsize=4)
def _load_full_cached(dataset: str, allow_unverified: bool) -> Splits:
    loader = DATASETS[dataset][0]
    x_tr, y_tr, p_tr = loader("train", allow_unverified=allow_unverified)
    x_te, y_te, p_te = loader("test", allow_unverified=allow_unverified)
    data_id = "+".join(sorted(set(p_tr.sha256 + p_te.sha256)))
    empty = x_tr[:0]
    return Splits(dataset, x_tr, y_tr, empty, y_tr[:0], x_te, y_te, data_id, (p_tr, p_te))


def load_full(dataset: str, allow_unverified: bool | None = None) -> Splits:
    """The whole dataset (train and test splits) with its provenance, loaded once per process.
    ``allow_unverified=None`` follows ``NORMBOOK_ALLOW_UNVERIFIED``."""
    if dataset not in DATASETS:
        raise ValueError(f"dataset must be one of {sorted(DATASETS)}, got {dataset!r}")
    return _load_full_cached(dataset, datasets.resolve_allow(allow_unverified))


# --------------------------------------------------------------------------- training


def _batch(x: torch.Tensor, dev: torch.device) -> torch.Tensor:
    """Images in channels-last memory order: 1.2-1.5x faster convolutions on CPU (measured
    on both networks, one thread), the same numbers for the same seed."""
    return x.to(dev).contiguous(memory_format=torch.channels_last)


@torch.no_grad()
def evaluate(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch_size: int = 250
) -> tuple[float, float]:
    """(mean cross-entropy, accuracy) in eval mode; the model's mode is restored. Batches of
    250 run 1.4-1.6x faster than 500 on one thread with BN (measured: 10,000 test images,
    1.5 s vs 2.1 s for VGG/8, 1.2 s vs 1.9 s for the MNIST CNN)."""
    was = model.training
    model.eval()
    dev = next(model.parameters()).device
    loss, correct = 0.0, 0
    for i in range(0, len(x), batch_size):
        xb, yb = _batch(x[i : i + batch_size], dev), y[i : i + batch_size].to(dev)
        out = model(xb)
        loss += float(nn.functional.cross_entropy(out, yb, reduction="sum"))
        correct += int((out.argmax(1) == yb).sum())
    model.train(was)
    return loss / len(x), correct / len(x)


@dataclass
class TrainResult:
    state: dict[str, np.ndarray]  # the kept (lowest validation loss) weights
    curves: dict[str, np.ndarray]  # per evaluation: epoch, train/val loss and accuracy
    test_loss: float
    test_acc: float
    best_epoch: float  # when the kept weights were reached (in epochs)
    stopped_epoch: float  # when training ended
    early_stopped: bool
    seconds: float
    reached_epoch: float | None = None  # with a target: when the validation accuracy reached it
    reached_val_acc: float | None = None
    checkpoints: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)  # i -> weights


def _eval_steps(steps_per_epoch: int, evals_per_epoch: int) -> set[int]:
    k = max(1, min(evals_per_epoch, steps_per_epoch))
    return {int(round(steps_per_epoch * (j + 1) / k)) for j in range(k)}


def optimizer(cfg: ClassifierConfig, params) -> torch.optim.Optimizer:
    """The config's optimizer, fused: one kernel updates every parameter, where the default
    loops over them (1.08x per training step of B1's VGG-16 on one Zen 3 thread, best of 6
    interleaved rounds of ``tools/speed.py``, "unfused optimizer"; the last bits differ)."""
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum, fused=True)
    return torch.optim.Adam(params, lr=cfg.lr, fused=True)


def train_one(
    cfg: ClassifierConfig,
    seed: int,
    splits: Splits,
    desc: str | None = None,
    show_progress: bool = True,
    until_val_acc: float | None = None,
    check_every: int = 0,
    window: tuple[float, float] | None = None,
) -> TrainResult:
    """Train one model per the early-stopping rule of this module's docstring. A worker
    process shows no progress bar of its own (the pool shows one for all models).

    With ``until_val_acc`` and ``window`` = (start, end) in epochs (two of the rule's
    evaluation points), the validation accuracy is also checked every ``check_every`` steps
    after ``start``; training stops at ``end``, and the result is the weights of the check,
    from after ``start`` up to ``end``, whose accuracy is closest to the target (ties: the
    earliest). Extra evaluations run in eval mode and draw no random numbers, so up to
    ``end`` the run is the full run, bit for bit."""
    t0 = time.perf_counter()
    dev = torch.device(cfg.device)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("device 'cuda' requested but CUDA is not available")
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = True, False
    with single_thread():
        x_tr, y_tr = (t.to(dev) for t in splits.tensors("train"))
        x_va, y_va = (t.to(dev) for t in splits.tensors("val"))
        x_te, y_te = (t.to(dev) for t in splits.tensors("test"))
        model = cfg.build(seed).to(dev, memory_format=torch.channels_last)
        model.train()
        opt = optimizer(cfg, model.parameters())
        gen = seeding.generator(seed, "order")
        n = len(x_tr)
        bs = min(cfg.batch_size, n)
        steps_per_epoch = n // bs  # the last incomplete batch is dropped (BN needs > 1 sample)
        evals = _eval_steps(steps_per_epoch, cfg.evals_per_epoch)
        curves = {k: [] for k in ("epoch", "train_loss", "train_acc", "val_loss", "val_acc")}
        best_loss, best_state, best_epoch, bad = np.inf, None, 0.0, 0
        run_loss, run_correct, run_n = 0.0, 0, 0
        stop, reached, matched_state = False, None, None
        if until_val_acc is not None:
            if window is None or check_every < 1:
                raise ValueError("until_val_acc needs a window and check_every >= 1")
            lo, hi = (int(round(e * steps_per_epoch)) for e in window)
        total = cfg.max_epochs * steps_per_epoch
        keep_at = {max(1, int(round(f * total))): i for i, f in enumerate(cfg.checkpoints)}
        kept: dict[int, dict[str, np.ndarray]] = {}
        bar = (
            progress(
                total=total, desc=desc or f"{cfg.dataset} {cfg.label} seed {seed}", summary=False
            )  # the models' loop reports
            if show_progress and not in_worker()
            else None
        )
        for epoch in range(cfg.max_epochs):
            order = torch.randperm(n, generator=gen).to(dev)
            for step in range(1, steps_per_epoch + 1):
                idx = order[(step - 1) * bs : step * bs]
                xb, yb = _batch(x_tr[idx], dev), y_tr[idx]
                out = model(xb)
                loss = nn.functional.cross_entropy(out, yb)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                at = epoch * steps_per_epoch + step
                if at in keep_at:
                    kept[keep_at[at]] = _numpy_state(model)
                run_loss += float(loss.detach()) * len(yb)
                run_correct += int((out.argmax(1) == yb).sum())
                run_n += len(yb)
                if bar is not None:
                    bar.update(1)
                if not np.isfinite(float(loss.detach())):
                    stop = True  # diverged: keep the best weights so far
                if step in evals or stop:
                    vl, va = evaluate(model, x_va, y_va)
                    curves["epoch"].append(epoch + step / steps_per_epoch)
                    curves["train_loss"].append(run_loss / max(run_n, 1))
                    curves["train_acc"].append(run_correct / max(run_n, 1))
                    curves["val_loss"].append(vl)
                    curves["val_acc"].append(va)
                    run_loss, run_correct, run_n = 0.0, 0, 0
                    if vl < best_loss:
                        best_loss, bad, best_epoch = vl, 0, curves["epoch"][-1]
                        best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
                    else:
                        bad += 1
                        stop = stop or bad >= cfg.patience
                if until_val_acc is not None and lo < at <= hi:
                    if step in evals or at % check_every == 0 or at == hi:
                        va = (curves["val_acc"][-1] if step in evals
                              else evaluate(model, x_va, y_va)[1])  # fmt: skip
                        off = abs(va - until_val_acc)
                        if reached is None or off < abs(reached[1] - until_val_acc):
                            reached = (epoch + step / steps_per_epoch, va)
                            matched_state = {k: v.detach().clone()
                                             for k, v in model.state_dict().items()}  # fmt: skip
                    stop = stop or at == hi
                if stop:
                    break
            if stop:
                break
        if bar is not None:
            bar.close()
        if matched_state is not None:
            best_state = matched_state
        if best_state is None:  # diverged before the first evaluation
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        model.load_state_dict(best_state)
        test_loss, test_acc = evaluate(model, x_te, y_te)
    return TrainResult(
        state={k: v.cpu().contiguous().numpy().copy() for k, v in best_state.items()},
        curves={k: np.asarray(v, dtype=np.float64) for k, v in curves.items()},
        test_loss=test_loss,
        test_acc=test_acc,
        best_epoch=best_epoch,
        stopped_epoch=curves["epoch"][-1] if curves["epoch"] else 0.0,
        early_stopped=bool(stop) and reached is None,
        seconds=time.perf_counter() - t0,
        reached_epoch=None if reached is None else reached[0],
        reached_val_acc=None if reached is None else reached[1],
        checkpoints=kept,
    )


def _numpy_state(model: nn.Module) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().contiguous().numpy().copy() for k, v in model.state_dict().items()}


CHECKPOINT = "checkpoint{}."  # tensor-name prefix of kept state i in a trained model's entry


def model_from_state(cfg: ClassifierConfig, state: dict) -> nn.Module:
    """A model of ``cfg``'s architecture with the given weights, in eval mode."""
    model = cfg.build(0)
    model.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in state.items()})
    return model.eval()


# --------------------------------------------------------------------------- cache + workers


def model_key(cfg: ClassifierConfig, seed: int, data_id: str) -> dict:
    """The cache key of one trained model (also the start of its analyses' keys)."""
    return {"config": asdict(cfg), "seed": int(seed), "data": data_id}


def split_key(cfg: ClassifierConfig) -> tuple:
    """Configs with equal split keys train, validate and test on the same images."""
    return (cfg.dataset, cfg.n_train, cfg.n_val, cfg.n_test, cfg.split_seed)


def entry(res: TrainResult) -> cache.Entry:
    arrays = {f"curve_{k}": v for k, v in res.curves.items()}
    # np.array (not ascontiguousarray) keeps 0-d entries such as num_batches_tracked 0-d
    tensors = {k: torch.from_numpy(np.array(v, copy=True)) for k, v in res.state.items()}
    for i, state in res.checkpoints.items():
        tensors |= {CHECKPOINT.format(i) + k: torch.from_numpy(np.array(v, copy=True))
                    for k, v in state.items()}  # fmt: skip
    meta = {
        "test_loss": res.test_loss,
        "test_acc": res.test_acc,
        "best_epoch": res.best_epoch,
        "stopped_epoch": res.stopped_epoch,
        "early_stopped": res.early_stopped,
        "train_seconds": round(res.seconds, 2),
    }
    if res.reached_epoch is not None:
        meta |= {"reached_epoch": res.reached_epoch, "reached_val_acc": res.reached_val_acc}
    return cache.Entry(arrays, tensors=tensors, meta=meta)
