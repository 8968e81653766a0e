"""Seeded, deterministic training of the Part B classifiers (PROTOCOL B.1), cached per seed.

One :class:`ClassifierConfig` fixes everything that determines a trained model except its
seed: dataset, architecture width, BatchNorm or Identity, optimizer, learning rate, batch
size, the early-stopping rule and the data subsets. :func:`train_all` trains (or loads from
the experiment cache) one model per (config, seed), several at once in worker processes.

**Early-stopping rule.** Train for at most ``max_epochs`` passes over the training subset,
in minibatches drawn without replacement in a seeded order. ``evals_per_epoch`` times per
epoch (at evenly spaced steps) the model is evaluated in eval mode on the validation split.
The weights with the lowest validation cross-entropy so far are kept; training stops once
``patience`` consecutive evaluations fail to lower it, or when the epochs run out. The
reported model (test accuracy, representations) is the kept one.

**Determinism.** The initial weights come from ``convnets.build(seed=...)``, the minibatch
order from a generator derived from the seed, and every model is trained with one intra-op
thread (set and restored around training), so the result is bit-identical whether models
train in this process or in ``workers`` parallel processes, and however many there are.

**Data identity.** The cache key includes the SHA-256 of the data files, so a model trained
on the rebuilt (JPEG) CIFAR-10 copy is never reused for the original archive, or vice versa.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np
import torch
from torch import nn

from . import cache, convnets, data
from .progress import progress

__all__ = ["ClassifierConfig", "Splits", "TrainResult", "Trained", "DATASETS", "VARIANTS",
           "load_full", "load_splits", "split_indices", "kaiming_init", "train_one", "train_all",
           "model_from_state", "evaluate", "single_thread", "provenance_lines", "allow_flag",
           "configs", "resolve_device", "train_from_params", "TRAIN_CODE"]

DATASETS = {
    # name: (loader, architecture, normalization constants, full training-split size)
    "mnist": (data.load_mnist, "standard_cnn", "mnist", 60_000),
    "cifar10": (data.load_cifar10, "vgg16", "cifar10", 50_000),
}
N_TEST = 10_000
_STREAM_ORDER = 11  # generator stream for the minibatch order
_STREAM_INIT = 12   # generator stream for kaiming_init


@dataclass(frozen=True)
class ClassifierConfig:
    """Everything that determines a trained model, except its seed."""

    dataset: str             # "mnist" (standard CNN) or "cifar10" (VGG-16)
    batchnorm: bool          # BatchNorm2d after every conv, or Identity
    width: float             # standard CNN: channels k of conv1; VGG-16: width multiplier
    optimizer: str           # "sgd" or "adam"
    lr: float
    momentum: float = 0.0    # SGD only
    batch_size: int = 128
    max_epochs: int = 10
    patience: int = 3        # evaluations without a lower validation loss before stopping
    evals_per_epoch: int = 1
    n_train: int = 10_000    # images from the official training split used for training
    n_val: int = 2_000       # further images from the training split, for early stopping
    n_test: int = N_TEST     # images of the official test split used for test accuracy
    split_seed: int = 0      # which images go to train / val / test subsets
    init: str = "kaiming"    # He init as torchvision's VGG, or "pytorch" (layer defaults)
    device: str = "cpu"      # "cpu" or "cuda" (results differ between them, so it is keyed)

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
            raise ValueError(f"{self.dataset}: n_train + n_val = {self.n_train + self.n_val} must "
                             f"be between 2 and {full} (the training split)")
        if not 1 <= self.n_test <= N_TEST:
            raise ValueError(f"n_test must be between 1 and {N_TEST}, got {self.n_test}")

    @property
    def arch(self) -> str:
        return DATASETS[self.dataset][1]

    @property
    def label(self) -> str:
        return "BN" if self.batchnorm else "no BN"

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


@torch.no_grad()
def kaiming_init(model: nn.Module, seed: int) -> nn.Module:
    """torchvision's VGG initialisation, seeded: conv weights He-normal (fan_out, ReLU),
    linear weights N(0, 0.01), biases 0, BatchNorm weight 1 / bias 0. PyTorch's layer
    defaults shrink the signal layer after layer, which leaves a 13-layer VGG without
    BatchNorm nearly untrainable at lr 1e-4 within a short budget."""
    gen = torch.Generator().manual_seed(int(seed) * 1_000_003 + _STREAM_INIT)
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
    data_id: str                      # identifies the data files (SHA-256); part of cache keys
    provenance: tuple = ()            # data.Provenance of the train and test files

    @property
    def normalize(self) -> str:
        return DATASETS[self.dataset][2]

    def tensors(self, part: str) -> tuple[torch.Tensor, torch.Tensor]:
        """Normalized float images (MNIST zero-padded to 32x32) and int64 labels."""
        x, y = getattr(self, f"x_{part}"), getattr(self, f"y_{part}")
        return data.to_tensors(x, y, pad_to=32, normalize=self.normalize)

    def subset(self, n_train: int, n_val: int, n_test: int, split_seed: int) -> "Splits":
        """The subsets a config uses (see :func:`split_indices`)."""
        return _subset(self, n_train, n_val, n_test, split_seed)


def split_indices(n_full: int, n_train: int, n_val: int, seed: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint (train, val) indices into the official training split: one seeded random
    permutation, the first ``n_val`` for validation, the next ``n_train`` for training.
    Uniformly random (not class-balanced), so the full split works for MNIST's unequal
    class counts too."""
    if n_train + n_val > n_full:
        raise ValueError(f"n_train + n_val = {n_train + n_val} exceeds the {n_full} images")
    perm = np.random.default_rng(seed).permutation(n_full)
    return np.sort(perm[n_val:n_val + n_train]), np.sort(perm[:n_val])


def test_indices(n_full: int, n_test: int, seed: int) -> np.ndarray:
    if n_test >= n_full:
        return np.arange(n_full)
    return np.sort(np.random.default_rng(seed + 7919).permutation(n_full)[:n_test])


def _subset(full: Splits, n_train, n_val, n_test, seed) -> Splits:
    tr, va = split_indices(len(full.y_train), n_train, n_val, seed)
    te = test_indices(len(full.y_test), n_test, seed)
    return Splits(full.dataset, full.x_train[tr], full.y_train[tr], full.x_train[va],
                  full.y_train[va], full.x_test[te], full.y_test[te], full.data_id,
                  full.provenance)


@lru_cache(maxsize=4)
def _load_full_cached(dataset: str, allow_unverified: bool) -> Splits:
    loader = DATASETS[dataset][0]
    x_tr, y_tr, p_tr = loader("train", allow_unverified=allow_unverified)
    x_te, y_te, p_te = loader("test", allow_unverified=allow_unverified)
    data_id = "+".join(sorted(set(p_tr.sha256 + p_te.sha256)))
    empty = x_tr[:0]
    return Splits(dataset, x_tr, y_tr, empty, y_tr[:0], x_te, y_te, data_id, (p_tr, p_te))


def _load_full(dataset: str, allow_unverified: bool | None) -> Splits:
    return _load_full_cached(dataset, data._resolve_allow(allow_unverified))


def load_splits(cfg: ClassifierConfig, allow_unverified: bool | None = None) -> Splits:
    """Load ``cfg.dataset`` (verified, or unverified when allowed; ``None`` follows
    ``NORMBOOK_ALLOW_UNVERIFIED``) and cut the config's train / val / test subsets."""
    return _load_full(cfg.dataset, allow_unverified).subset(cfg.n_train, cfg.n_val, cfg.n_test,
                                                           cfg.split_seed)


def provenance_lines(splits: Splits) -> list[str]:
    """One run-record line per loaded file set."""
    out = []
    for p in splits.provenance:
        status = "verified" if p.verified else "UNVERIFIED copy"
        files = ", ".join(f"`{os.path.basename(f)}`" for f in p.files)
        out.append(f"{p.dataset} {p.split}: {files} ({status}; SHA-256 "
                   f"{', '.join(s[:16] + '…' for s in p.sha256)})")
    return out


# --------------------------------------------------------------------------- training

@contextmanager
def single_thread():
    """One intra-op thread (bit-reproducible results; two processes share two cores)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@torch.no_grad()
def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch_size: int = 500
             ) -> tuple[float, float]:
    """(mean cross-entropy, accuracy) in eval mode; the model's mode is restored."""
    was = model.training
    model.eval()
    dev = next(model.parameters()).device
    loss, correct = 0.0, 0
    for i in range(0, len(x), batch_size):
        xb, yb = x[i:i + batch_size].to(dev), y[i:i + batch_size].to(dev)
        out = model(xb)
        loss += float(nn.functional.cross_entropy(out, yb, reduction="sum"))
        correct += int((out.argmax(1) == yb).sum())
    model.train(was)
    return loss / len(x), correct / len(x)


@dataclass
class TrainResult:
    state: dict[str, np.ndarray]   # the kept (lowest validation loss) weights
    curves: dict[str, np.ndarray]  # per evaluation: epoch, train/val loss and accuracy
    test_loss: float
    test_acc: float
    best_epoch: float              # when the kept weights were reached (in epochs)
    stopped_epoch: float           # when training ended
    early_stopped: bool
    seconds: float


def _eval_steps(steps_per_epoch: int, evals_per_epoch: int) -> set[int]:
    k = max(1, min(evals_per_epoch, steps_per_epoch))
    return {int(round(steps_per_epoch * (j + 1) / k)) for j in range(k)}


def train_one(cfg: ClassifierConfig, seed: int, splits: Splits, desc: str | None = None,
              show_progress: bool = True) -> TrainResult:
    """Train one model per the early-stopping rule of this module's docstring."""
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
        model = cfg.build(seed).to(dev)
        model.train()
        if cfg.optimizer == "sgd":
            opt = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum)
        else:
            opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        gen = torch.Generator().manual_seed(int(seed) * 1_000_003 + _STREAM_ORDER)
        n = len(x_tr)
        bs = min(cfg.batch_size, n)
        steps_per_epoch = n // bs  # the last incomplete batch is dropped (BN needs > 1 sample)
        evals = _eval_steps(steps_per_epoch, cfg.evals_per_epoch)
        curves = {k: [] for k in ("epoch", "train_loss", "train_acc", "val_loss", "val_acc")}
        best_loss, best_state, best_epoch, bad = np.inf, None, 0.0, 0
        run_loss, run_correct, run_n = 0.0, 0, 0
        stop = False
        total = cfg.max_epochs * steps_per_epoch
        bar = progress(total=total, desc=desc or f"{cfg.dataset} {cfg.label} seed {seed}") \
            if show_progress else None
        for epoch in range(cfg.max_epochs):
            order = torch.randperm(n, generator=gen).to(dev)
            for step in range(1, steps_per_epoch + 1):
                idx = order[(step - 1) * bs: step * bs]
                xb, yb = x_tr[idx], y_tr[idx]
                out = model(xb)
                loss = nn.functional.cross_entropy(out, yb)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
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
                if stop:
                    break
            if stop:
                break
        if bar is not None:
            bar.close()
        if best_state is None:  # diverged before the first evaluation
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        model.load_state_dict(best_state)
        test_loss, test_acc = evaluate(model, x_te, y_te)
    return TrainResult(
        state={k: v.cpu().numpy().copy() for k, v in best_state.items()},
        curves={k: np.asarray(v, dtype=np.float64) for k, v in curves.items()},
        test_loss=test_loss, test_acc=test_acc, best_epoch=best_epoch,
        stopped_epoch=curves["epoch"][-1] if curves["epoch"] else 0.0,
        early_stopped=bool(stop), seconds=time.perf_counter() - t0)


def model_from_state(cfg: ClassifierConfig, state: dict) -> nn.Module:
    """A model of ``cfg``'s architecture with the given weights, in eval mode."""
    model = cfg.build(0)
    model.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in state.items()})
    return model.eval()


# --------------------------------------------------------------------------- cache + pool

def _key(cfg: ClassifierConfig, seed: int, data_id: str) -> dict:
    return {"config": asdict(cfg), "seed": int(seed), "data": data_id}


def _entry(res: TrainResult) -> cache.Entry:
    arrays = {f"curve_{k}": v for k, v in res.curves.items()}
    # np.array (not ascontiguousarray) keeps 0-d entries such as num_batches_tracked 0-d
    tensors = {k: torch.from_numpy(np.array(v, copy=True)) for k, v in res.state.items()}
    meta = {"test_loss": res.test_loss, "test_acc": res.test_acc, "best_epoch": res.best_epoch,
            "stopped_epoch": res.stopped_epoch, "early_stopped": res.early_stopped,
            "train_seconds": round(res.seconds, 2)}
    return cache.Entry(arrays, tensors=tensors, meta=meta)


@dataclass
class Trained:
    """A cached trained model: config, seed, weights, curves and test metrics."""

    cfg: ClassifierConfig
    seed: int
    entry: cache.Entry

    @property
    def state(self) -> dict[str, torch.Tensor]:
        return self.entry.tensors

    @property
    def curves(self) -> dict[str, np.ndarray]:
        return {k[len("curve_"):]: v for k, v in self.entry.items() if k.startswith("curve_")}

    @property
    def test_acc(self) -> float:
        return float(self.entry.meta["test_acc"])

    @property
    def hit(self) -> bool:
        return self.entry.hit

    def model(self) -> nn.Module:
        return model_from_state(self.cfg, self.state)


_WORKER_SPLITS: dict = {}


def _init_worker(splits_by_key: dict) -> None:
    _WORKER_SPLITS.update(splits_by_key)


def _train_job(cfg: ClassifierConfig, seed: int, split_key) -> TrainResult:
    return train_one(cfg, seed, _WORKER_SPLITS[split_key], show_progress=False)


def _split_key(cfg: ClassifierConfig) -> tuple:
    return (cfg.dataset, cfg.n_train, cfg.n_val, cfg.n_test, cfg.split_seed)


def make_pool(workers: int, initargs: tuple, initializer=_init_worker) -> ProcessPoolExecutor:
    """Worker processes started with 'spawn' (safe after torch/OpenMP initialised)."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"),
                               initializer=initializer, initargs=initargs)


def _cost(cfg: ClassifierConfig) -> float:
    """Rough relative cost, to start the longest jobs first."""
    w = float(cfg.width)
    per_img = 64.0 * w ** 2 if cfg.arch == "vgg16" else (w / 8) ** 2  # ~1 for VGG/8, CNN k=8
    return per_img * cfg.n_train * cfg.max_epochs


def train_all(jobs: list[tuple[ClassifierConfig, int]], splits: dict[str, Splits],
              workers: int = 1) -> list[Trained]:
    """Train or load every (config, seed) in ``jobs``; ``splits`` maps dataset -> the full
    :class:`Splits` (from :func:`load_full`). Missing models are trained ``workers`` at a time
    (1: in this process); each is written to the cache as soon as it finishes."""
    subsets = {}
    for cfg, _ in jobs:
        k = _split_key(cfg)
        if k not in subsets:
            subsets[k] = splits[cfg.dataset].subset(cfg.n_train, cfg.n_val, cfg.n_test,
                                                    cfg.split_seed)
    keyed = {(cfg, s): _key(cfg, s, splits[cfg.dataset].data_id) for cfg, s in jobs}
    missing = [(cfg, s) for cfg, s in jobs
               if not cache.is_cached("b_train", keyed[cfg, s], TRAIN_CODE)]
    missing.sort(key=lambda j: -_cost(j[0]))
    fresh: dict = {}

    def store(job, res: TrainResult) -> None:
        fresh[job] = cache.cached("b_train", keyed[job], lambda: _entry(res), TRAIN_CODE)
        fresh[job].hit = False
        cfg, s = job
        print(f"trained {cfg.dataset} {cfg.label} seed {s}: test accuracy {res.test_acc:.4f}, "
              f"stopped at epoch {res.stopped_epoch:.2f} (best {res.best_epoch:.2f}), "
              f"{res.seconds:.1f} s", flush=True)

    if len(missing) > 1 and workers > 1:
        needed = {_split_key(c): subsets[_split_key(c)] for c, _ in missing}
        with make_pool(min(workers, len(missing)), (needed,)) as pool:
            futs = {pool.submit(_train_job, c, s, _split_key(c)): (c, s) for c, s in missing}
            for fut in progress(as_completed(futs), total=len(futs), desc="train models"):
                store(futs[fut], fut.result())
    else:
        for c, s in missing:
            store((c, s), train_one(c, s, subsets[_split_key(c)]))
    out = []
    for cfg, s in jobs:
        entry = (fresh[cfg, s] if (cfg, s) in fresh
                 else cache.cached("b_train", keyed[cfg, s], _never, TRAIN_CODE))
        out.append(Trained(cfg, s, entry))
    return out


def _never():
    raise RuntimeError("cache entry vanished between check and read")


def load_full(dataset: str, allow_unverified: bool | None = None) -> Splits:
    """The whole dataset (train and test splits) with its provenance, loaded once per process."""
    if dataset not in DATASETS:
        raise ValueError(f"dataset must be one of {sorted(DATASETS)}, got {dataset!r}")
    return _load_full(dataset, allow_unverified)


# The library code that determines a trained model: its cache entries are keyed by its hash.
TRAIN_CODE = (convnets, data, sys.modules[__name__])


# --------------------------------------------------------------------------- chapter helpers

VARIANTS = (("mnist", True), ("mnist", False), ("cifar10", True), ("cifar10", False))


def allow_flag(value: str) -> bool | None:
    """The chapters' ``allow_unverified`` parameter: 'yes' / 'no', or 'env' (None: follow
    ``NORMBOOK_ALLOW_UNVERIFIED``)."""
    return {"env": None, "yes": True, "no": False}[value]


def resolve_device(value: str) -> str:
    """The chapters' ``device`` parameter: 'auto' is 'cuda' when available, else 'cpu'."""
    if value == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return value


def configs(P) -> dict[tuple[str, bool], ClassifierConfig]:
    """The four (dataset, batchnorm) configs of PROTOCOL B.1 from a chapter's parameters."""
    out = {}
    for ds, bn in VARIANTS:
        common = dict(dataset=ds, batchnorm=bn, batch_size=P.batch_size, patience=P.patience,
                      evals_per_epoch=P.evals_per_epoch, n_val=P.n_val, n_test=P.n_test,
                      split_seed=P.split_seed, init=P.init, device=resolve_device(P.device))
        if ds == "mnist":
            out[ds, bn] = ClassifierConfig(width=P.mnist_width, optimizer="sgd", lr=P.mnist_lr,
                                           momentum=P.mnist_momentum, max_epochs=P.mnist_epochs,
                                           n_train=P.mnist_train, **common)
        else:
            out[ds, bn] = ClassifierConfig(width=P.vgg_width, optimizer="adam",
                                           lr=P.cifar_lr_bn if bn else P.cifar_lr_nobn,
                                           max_epochs=P.cifar_epochs, n_train=P.cifar_train,
                                           **common)
    return out


def train_from_params(P) -> tuple[dict[tuple[str, bool], list[Trained]], dict[str, Splits]]:
    """Load both datasets and train (or load) every variant and seed of a chapter's
    parameters. Returns ({(dataset, batchnorm): [Trained per seed]}, {dataset: Splits})."""
    cfgs = configs(P)
    allow = allow_flag(P.allow_unverified)
    splits = {ds: load_full(ds, allow) for ds in ("mnist", "cifar10")}
    jobs = [(cfgs[v], s) for v in VARIANTS for s in P.seeds]
    done = train_all(jobs, splits, workers=P.workers)
    models = {v: [t for t in done if t.cfg == cfgs[v]] for v in VARIANTS}
    return models, splits
