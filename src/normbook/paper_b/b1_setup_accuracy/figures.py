"""Chapter B1's figures, one function each: the sample images and the training curves. Each
takes measured results, draws, and returns the figure; the chapter glues it under a label and
captions it with the function's name. No computation happens here.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullFormatter, ScalarFormatter

from normbook.pages.figures import canvas, shared_legend
from normbook.paper_b import paper_values
from normbook.paper_b.data.datasets import CIFAR10_CLASSES
from normbook.paper_b.plots import COLORS, DATASET_TITLES, LABELS
from normbook.paper_b.runs.classify import DATASETS, Models, Splits


def _curves(ax_loss, ax_acc, curves: dict[str, list[dict[str, np.ndarray]]]) -> None:
    """Training loss (solid) and validation loss (dashed) on ``ax_loss``; validation accuracy
    on ``ax_acc``; one line per seed. ``curves``: label -> per-seed curve dicts."""
    for label, per_seed in curves.items():
        c = COLORS[label]
        for s, cv in enumerate(per_seed):
            first = s == 0
            ax_loss.plot(
                cv["epoch"],
                cv["train_loss"],
                color=c,
                lw=1.2,
                label=f"{label}, train" if first else None,
            )
            ax_loss.plot(
                cv["epoch"],
                cv["val_loss"],
                color=c,
                lw=1.2,
                ls="--",
                label=f"{label}, validation" if first else None,
            )
            ax_acc.plot(cv["epoch"], cv["val_acc"], color=c, lw=1.2, marker=".")
    ax_loss.set_xlabel("epoch")
    ax_loss.set_ylabel("cross-entropy")
    ax_loss.set_yscale("log")
    ax_loss.yaxis.set_major_formatter(ScalarFormatter())
    ax_loss.yaxis.set_minor_formatter(NullFormatter())
    ax_acc.set_xlabel("epoch")
    ax_acc.set_ylabel("validation accuracy")


def sample_images(splits: dict[str, Splits]):
    """The first training image of every class, one row per dataset."""
    fig, axes = canvas(ncols=10, nrows=2, height=1.6, max_cols=5)
    for row, (ds, sp) in enumerate(splits.items()):
        for c in range(paper_values.N_CLASSES):
            img = sp.x_train[int(np.flatnonzero(sp.y_train == c)[0])]
            ax = axes[row, c]
            ax.imshow(
                img if img.ndim == 2 else img.transpose(1, 2, 0),
                cmap="gray" if img.ndim == 2 else None,
            )
            ax.set_axis_off()
            ax.set_title(str(c) if ds == "mnist" else CIFAR10_CLASSES[c])
    return fig


def training_curves(models: Models):
    """Per dataset (column): training and validation loss (top), validation accuracy
    (bottom), one line per seed, BN and no BN."""
    fig, axes = canvas(ncols=2, nrows=2, height=3.0)
    for col, ds in enumerate(DATASETS):
        curves = {LABELS[bn]: [t.curves for t in models.trained[ds, bn]] for bn in (True, False)}
        _curves(axes[0, col], axes[1, col], curves)
        axes[0, col].set_title(DATASET_TITLES[ds])
    shared_legend(fig)
    return fig
