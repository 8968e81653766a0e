"""Plot helpers chapters B1-B4 share: the BN / no-BN colours and labels, the dataset titles, the
per-layer profile (mean ± sd over seeds, seeds as dots), and the BN-vs-no-BN effect through
training (chapters B2 and B3). Each chapter's ``figures`` module draws its figures with them.
"""

from __future__ import annotations

import numpy as np

from normbook.pages.figures import NORM_COLORS, canvas, shared_legend
from normbook.paper_b.grading.rules import signed
from normbook.paper_b.runs.classify import DATASETS, bn_label

COLORS = {"BN": NORM_COLORS["batch"], "no BN": NORM_COLORS["none"]}
DATASET_TITLES = {"mnist": "MNIST, standard CNN", "cifar10": "CIFAR-10, VGG-16"}
LABELS = {bn: bn_label(bn) for bn in (True, False)}


def by_label(values: dict, dataset: str) -> dict[str, np.ndarray]:
    """``{"BN": values[dataset, True], "no BN": values[dataset, False]}``."""
    return {LABELS[bn]: values[dataset, bn] for bn in (True, False)}


def layer_profile(ax, values: dict[str, np.ndarray], ylabel: str, layer_names=None) -> None:
    """Mean ± sd over seeds per layer (band), seeds as dots. ``values``: label -> [seeds, L]."""
    for i, (label, v) in enumerate(values.items()):
        v = np.asarray(v, float)
        x = np.arange(1, v.shape[1] + 1)
        c = COLORS[label]
        m = v.mean(axis=0)
        sd = v.std(axis=0, ddof=1) if v.shape[0] > 1 else np.zeros_like(m)
        ax.plot(x, m, color=c, lw=1.8, marker="o", ms=4, label=f"{label} (mean ± sd)")
        ax.fill_between(x, m - sd, m + sd, color=c, alpha=0.2, lw=0)
        off = (i - (len(values) - 1) / 2) * 0.12
        for row in v:
            ax.plot(x + off, row, ".", color=c, ms=3, alpha=0.6)
    n = np.asarray(next(iter(values.values()))).shape[1]
    layer_ticks(ax, n, layer_names)
    ax.set_xlabel("conv layer")
    ax.set_ylabel(ylabel)


def layer_ticks(ax, n: int, layer_names=None) -> None:
    """A tick per conv layer; past 8 layers every other one labelled (13 labels at the book's
    text size do not fit half the column)."""
    names = [str(s).replace("conv", "") for s in layer_names] if layer_names is not None else None
    names = names or [str(i) for i in range(1, n + 1)]
    ax.set_xticks(
        np.arange(1, n + 1), [s if n <= 8 or i % 2 == 0 else "" for i, s in enumerate(names)]
    )


def difference_through_training(curves, expect: dict[str, str], contrast, sesoi,
                                ylabel: str):  # fmt: skip
    """Per dataset (column): the BN-vs-no-BN effect of a :class:`.analysis.TrainingCurves`
    metric, per seed ``contrast`` over layers, signed the way the paper says (``expect`` per
    dataset; relative to no BN for the Davies-Bouldin index), against the fraction of the epoch
    budget; one thin line per seed, the mean thick; dotted, the smallest effect of interest."""
    values, metric = curves.values, curves.metric
    fig, axes = canvas(ncols=2, height=2.8)
    for col, ds in enumerate(DATASETS):
        ax = axes[0, col]
        bn, nobn = (np.asarray(values[ds, b], float) for b in (True, False))
        effect = np.array(
            [
                signed(contrast(bn[k]), contrast(nobn[k]), expect[ds], metric == "class_dbi")
                for k in range(len(curves.fractions))
            ]
        )
        ax.plot(curves.fractions, effect, color="0.55", lw=0.8)
        ax.plot(curves.fractions, effect.mean(axis=1), "o-", color=COLORS["BN"], lw=1.8, ms=4,
                label="mean over seeds")  # fmt: skip
        ax.axhline(sesoi.value, color="0.3", ls=":", lw=1, label="SESOI")
        ax.axhline(0, color="0.7", lw=0.8)
        ax.set_xlabel("fraction of the epoch budget (1: kept model)")
        ax.set_title(f"{DATASET_TITLES[ds]} ({'BN ' + expect[ds]})")
        if col == 0:
            ax.set_ylabel(ylabel)
    shared_legend(fig)
    return fig
