"""Figures of the Part B chapters (seaborn/matplotlib; no computation here)."""
from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullFormatter, ScalarFormatter

from .plots import PALETTE, figure  # noqa: F401  (figure re-exported for the chapters)

COLORS = {"BN": PALETTE["batch"], "no BN": PALETTE["none"]}
DATASET_TITLES = {"mnist": "MNIST, standard CNN", "cifar10": "CIFAR-10, VGG-16"}


def training_curves(ax_loss, ax_acc, curves: dict[str, list[dict[str, np.ndarray]]]) -> None:
    """Training loss (solid) and validation loss (dashed) on ``ax_loss``; validation accuracy
    on ``ax_acc``; one line per seed. ``curves``: label ("BN"/"no BN") -> list of per-seed
    curve dicts from :class:`normbook.classify.Trained`."""
    for label, per_seed in curves.items():
        c = COLORS.get(label)
        for s, cv in enumerate(per_seed):
            first = s == 0
            ax_loss.plot(cv["epoch"], cv["train_loss"], color=c, lw=1.2,
                         label=f"{label}, train" if first else None)
            ax_loss.plot(cv["epoch"], cv["val_loss"], color=c, lw=1.2, ls="--",
                         label=f"{label}, validation" if first else None)
            ax_acc.plot(cv["epoch"], cv["val_acc"], color=c, lw=1.2, marker=".",
                        label=label if first else None)
    ax_loss.set_xlabel("epoch")
    ax_loss.set_ylabel("cross-entropy")
    ax_loss.set_yscale("log")
    ax_loss.yaxis.set_major_formatter(ScalarFormatter())
    ax_loss.yaxis.set_minor_formatter(NullFormatter())
    ax_acc.set_xlabel("epoch")
    ax_acc.set_ylabel("validation accuracy")
    ax_loss.legend(fontsize=8)
    ax_acc.legend(fontsize=8)


def layer_profile(ax, values: dict[str, np.ndarray], ylabel: str, layer_names=None,
                  points: bool = True) -> None:
    """Mean ± sd over seeds per layer (band), seeds as dots. ``values``: label -> [seeds, L]."""
    for i, (label, v) in enumerate(values.items()):
        v = np.asarray(v, float)
        x = np.arange(1, v.shape[1] + 1)
        c = COLORS.get(label)
        m = v.mean(axis=0)
        sd = v.std(axis=0, ddof=1) if v.shape[0] > 1 else np.zeros_like(m)
        ax.plot(x, m, color=c, lw=1.8, marker="o", ms=4, label=f"{label} (mean ± sd)")
        ax.fill_between(x, m - sd, m + sd, color=c, alpha=0.2, lw=0)
        if points:
            off = (i - (len(values) - 1) / 2) * 0.12
            for row in v:
                ax.plot(x + off, row, ".", color=c, ms=3, alpha=0.6)
    n = np.asarray(next(iter(values.values()))).shape[1]
    ax.set_xticks(np.arange(1, n + 1))
    if layer_names is not None:
        ax.set_xticklabels([str(s).replace("conv", "") for s in layer_names])
    ax.set_xlabel("conv layer")
    ax.set_ylabel(ylabel)


def k_star_profile(ax, values: dict[str, np.ndarray], n_classes: int, k_range: tuple[int, int]
                   ) -> None:
    """k* per layer: mean over seeds (line) and every seed (jittered dots); the number of
    classes as a reference line."""
    layer_profile(ax, values, "k* = argmin DBI", points=True)
    ax.axhline(n_classes, color="k", lw=0.8, ls=":", label=f"{n_classes} classes")
    ax.set_ylim(k_range[0] - 0.5, k_range[1] + 0.5)
    ax.legend(fontsize=8)


def dbi_over_k(ax, ks: np.ndarray, curves: dict[str, np.ndarray], layer: str) -> None:
    """DBI against k for one layer, mean over seeds. ``curves``: label -> [seeds, len(ks)]."""
    for label, v in curves.items():
        v = np.asarray(v, float)
        ax.plot(ks, v.mean(axis=0), color=COLORS.get(label), marker=".", label=label)
    ax.set_xlabel("k (k-means)")
    ax.set_ylabel("DBI")
    ax.set_title(layer, fontsize=10)
