"""Every figure of chapters B1-B3, one function each.

Each function takes measured results, draws, and returns the figure; the chapter glues it
under a label and captions it with the function's name. No computation happens here.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullFormatter, ScalarFormatter

from normbook.pages.figures import NORM_COLORS, canvas, shared_legend
from normbook.paper_b import paper_values as reported
from normbook.paper_b.b4_stress.factorial import METRICS, is_paper_cell, metric_values
from normbook.paper_b.cached.analysis import Clusters, Sparsity
from normbook.paper_b.data.datasets import CIFAR10_CLASSES
from normbook.paper_b.grading.rules import signed
from normbook.paper_b.runs.classify import DATASETS, Models, Splits, bn_label

COLORS = {"BN": NORM_COLORS["batch"], "no BN": NORM_COLORS["none"]}
DATASET_TITLES = {"mnist": "MNIST, standard CNN", "cifar10": "CIFAR-10, VGG-16"}
LABELS = {bn: bn_label(bn) for bn in (True, False)}


def _by_label(values: dict, dataset: str) -> dict[str, np.ndarray]:
    """``{"BN": values[dataset, True], "no BN": values[dataset, False]}``."""
    return {LABELS[bn]: values[dataset, bn] for bn in (True, False)}


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


def _layer_profile(ax, values: dict[str, np.ndarray], ylabel: str, layer_names=None) -> None:
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
    _layer_ticks(ax, n, layer_names)
    ax.set_xlabel("conv layer")
    ax.set_ylabel(ylabel)


def _layer_ticks(ax, n: int, layer_names=None) -> None:
    """A tick per conv layer; past 8 layers every other one labelled (13 labels at the book's
    text size do not fit half the column)."""
    names = [str(s).replace("conv", "") for s in layer_names] if layer_names is not None else None
    names = names or [str(i) for i in range(1, n + 1)]
    ax.set_xticks(
        np.arange(1, n + 1), [s if n <= 8 or i % 2 == 0 else "" for i, s in enumerate(names)]
    )


def sample_images(splits: dict[str, Splits]):
    """The first training image of every class, one row per dataset."""
    fig, axes = canvas(ncols=10, nrows=2, height=1.6, max_cols=5)
    for row, (ds, sp) in enumerate(splits.items()):
        for c in range(reported.N_CLASSES):
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


def sparsity_profiles(sparsity: Sparsity):
    """Per dataset (column): layer sparsity (top) and average channel sparsity (bottom) per
    conv layer, mean ± sd over seeds and single seeds."""
    fig, axes = canvas(ncols=2, nrows=2, height=3.0)
    for col, ds in enumerate(DATASETS):
        names = sparsity.layer_names[ds]
        _layer_profile(axes[0, col], _by_label(sparsity.layer, ds), "layer sparsity", names)
        _layer_profile(
            axes[1, col], _by_label(sparsity.channel, ds), "average channel sparsity", names
        )
        axes[0, col].set_title(DATASET_TITLES[ds])
    shared_legend(fig)
    return fig


def class_dbi(clusters: Clusters):
    """Class-based DBI per conv layer, one panel per dataset."""
    fig, axes = canvas(ncols=2, height=3.0)
    for col, ds in enumerate(DATASETS):
        _layer_profile(
            axes[0, col],
            _by_label(clusters.class_dbi, ds),
            "class-based DBI (lower = purer)",
            clusters.layer_names[ds],
        )
        axes[0, col].set_title(DATASET_TITLES[ds])
    shared_legend(fig)
    return fig


def k_means_profiles(clusters: Clusters):
    """Per dataset (column): k* per layer with the number of classes (top), DBI(k*)
    (middle) and DBI at the fixed k (bottom)."""
    cfg = clusters.config
    fig, axes = canvas(ncols=2, nrows=3, height=2.8)
    for col, ds in enumerate(DATASETS):
        names = clusters.layer_names[ds]
        ax = axes[0, col]
        _layer_profile(ax, _by_label(clusters.k_star, ds), "k* = argmin DBI")
        ax.axhline(
            reported.N_CLASSES, color="k", lw=0.8, ls=":", label=f"{reported.N_CLASSES} classes"
        )
        ax.set_ylim(cfg.k_min - 0.5, cfg.k_max + 0.5)
        ax.set_title(DATASET_TITLES[ds])
        _layer_profile(axes[1, col], _by_label(clusters.dbi_k_star, ds), "DBI(k*)", names)
        _layer_profile(
            axes[2, col], _by_label(clusters.dbi_fixed_k, ds), f"DBI at k = {cfg.fixed_k}", names
        )
    shared_legend(fig)
    return fig


def dbi_over_k(clusters: Clusters):
    """DBI against k for the last conv layer, mean over seeds, one panel per dataset."""
    fig, axes = canvas(ncols=2, height=2.8)
    for col, ds in enumerate(DATASETS):
        ax = axes[0, col]
        for label, v in _by_label(clusters.dbi_curve, ds).items():
            ax.plot(
                clusters.ks,
                np.asarray(v, float)[:, -1].mean(axis=0),
                color=COLORS[label],
                marker=".",
                label=label,
            )
        ax.set_xlabel("k (k-means)")
        ax.set_ylabel("DBI")
        ax.set_title(f"{DATASET_TITLES[ds]}: last conv layer ({clusters.layer_names[ds][-1]})")
    shared_legend(fig)
    return fig


# ----------------------------------------------------------------------------- chapter B4


def factorial_cells(factorial):
    """The BN x learning-rate 2 x 2: per dataset and metric, each cell's per-seed value (dots)
    and mean (line) against the learning rate, BN and no BN; the cells the paper trains
    ringed. Panels wrap two to a row (page width), one block of rows per dataset."""
    dsets, per_row = factorial.datasets, 2
    rows_per = -(-len(METRICS) // per_row)
    fig, axes = canvas(ncols=per_row, nrows=rows_per * len(dsets), height=2.6)
    for d, ds in enumerate(dsets):
        lrs = factorial.lrs[ds]
        for i, m in enumerate(METRICS):
            ax, y = (
                axes[d * rows_per + i // per_row, i % per_row],
                metric_values(factorial, m.key, ds),
            )
            for bn in (True, False):
                c = COLORS[LABELS[bn]]
                ax.plot(lrs, [y[bn, j].mean() for j in (0, 1)], color=c, lw=1.8, label=LABELS[bn])
                for j in (0, 1):
                    ax.plot([lrs[j]] * len(y[bn, j]), y[bn, j], ".", color=c, alpha=0.6)
            cells = [(bn, j) for bn in (True, False) for j in (0, 1) if is_paper_cell((ds, bn, j))]
            for bn, j in cells:  # ringed after the lines: their legend entry comes last
                ax.plot(lrs[j], y[bn, j].mean(), "o", ms=11, mfc="none", mec="k", mew=1.2,
                        label="a cell the paper trains")  # fmt: skip
            ax.set_xscale("log")
            ax.set_xticks(sorted(lrs), [f"{v:g}" for v in sorted(lrs)])
            ax.minorticks_off()
            ax.set_xlabel("learning rate")
            ax.set_title(f"{DATASET_TITLES[ds].split(',')[0]}: {m.label}")
        for i in range(len(METRICS), rows_per * per_row):  # the block's empty slots
            spare = axes[d * rows_per + i // per_row, i % per_row]  # the first holds the legend
            spare.set_axis_off()
            fig.spare_axes.append(spare)
    shared_legend(fig)
    return fig


def cluster_count(silhouettes, clusters: Clusters):
    """Per dataset (column), per conv layer: DBI(k*), DBI at the fixed k, the silhouette of
    the k-means partition at the fixed k, and the class-based silhouette, BN and no BN."""
    k = clusters.config.fixed_k
    rows = (
        (clusters.dbi_k_star, "DBI(k*) (lower = purer)"),
        (clusters.dbi_fixed_k, f"DBI at k = {k}"),
        (silhouettes.kmeans_silhouette, f"silhouette, k-means k = {k}"),
        (silhouettes.class_silhouette, "class silhouette (higher = purer)"),
    )
    fig, axes = canvas(ncols=2, nrows=len(rows), height=2.5)
    for col, ds in enumerate(DATASETS):
        for r, (values, label) in enumerate(rows):
            _layer_profile(axes[r, col], _by_label(values, ds), label, clusters.layer_names[ds])
        axes[0, col].set_title(DATASET_TITLES[ds])
    shared_legend(fig)
    return fig


def threshold_sweep(thresholds):
    """Layer-mean sparsity against the relative threshold t (|a| <= t x the layer's scale
    counts as zero; t = 0: exact zeros), mean ± sd over seeds and single seeds."""
    t = thresholds.thresholds
    fig, axes = canvas(ncols=2, height=3.0)
    for col, ds in enumerate(DATASETS):
        ax = axes[0, col]
        for bn in (True, False):
            v, c = thresholds.layer_mean(ds, bn), COLORS[LABELS[bn]]
            m = v.mean(axis=0)
            sd = v.std(axis=0, ddof=1) if len(v) > 1 else np.zeros_like(m)
            ax.plot(t, m, color=c, marker="o", ms=4, label=f"{LABELS[bn]} (mean ± sd)")
            ax.fill_between(t, m - sd, m + sd, color=c, alpha=0.2, lw=0)
            for row in v:
                ax.plot(t, row, ".", color=c, ms=3, alpha=0.6)
        ax.set_xscale("symlog", linthresh=max(min(t[t > 0], default=0.01), 1e-6))
        ax.set_xticks(t, [f"{v:g}" for v in t])
        ax.minorticks_off()
        ax.set_xlabel(f"relative threshold t (× layer {thresholds.config.scale})")
        ax.set_ylabel("layer sparsity, mean over layers")
        ax.set_title(DATASET_TITLES[ds])
    shared_legend(fig)
    return fig


def _layer_pairs(axes, dss, rows, styles: tuple[str, str]) -> None:
    """Per dataset (column) and metric (row): two per-layer versions of the metric, solid and
    dashed, mean over seeds, BN and no BN. ``rows``: (values a, values b, y label)."""
    for col, ds in enumerate(dss):
        for r, (a, b, label) in enumerate(rows):
            ax = axes[r, col]
            for bn in (True, False):
                x = np.arange(1, np.shape(a[ds, bn])[1] + 1)
                c = COLORS[LABELS[bn]]
                ax.plot(x, np.mean(a[ds, bn], 0), color=c, marker="o", ms=3,
                        label=f"{LABELS[bn]}, {styles[0]}")  # fmt: skip
                ax.plot(x, np.mean(b[ds, bn], 0), color=c, ls="--", marker="s", ms=3,
                        label=f"{LABELS[bn]}, {styles[1]}")  # fmt: skip
            _layer_ticks(ax, len(x))
            ax.set_xlabel("conv layer")
            ax.set_ylabel(label)


def train_vs_test(sparsity_train: Sparsity, sparsity_test: Sparsity, clusters_train: Clusters,
                  clusters_test: Clusters):  # fmt: skip
    """Per dataset (column): layer sparsity (top) and class-based DBI (bottom) per conv layer
    on training images (solid) and test images (dashed), mean over seeds, BN and no BN."""
    fig, axes = canvas(ncols=2, nrows=2, height=2.8)
    rows = ((sparsity_train.layer, sparsity_test.layer, "layer sparsity"),
            (clusters_train.class_dbi, clusters_test.class_dbi, "class-based DBI"))  # fmt: skip
    _layer_pairs(axes, list(DATASETS), rows, ("train", "test"))
    for col, ds in enumerate(DATASETS):
        axes[0, col].set_title(DATASET_TITLES[ds])
    shared_legend(fig)
    return fig


def accuracy_matched(matched, sparsity: Sparsity, clusters: Clusters):
    """Per matched dataset (column): validation accuracy against epochs of chapter B1's runs
    (one line per seed) with each network's matched point (dot: stopped there; ring: its
    kept weights); then layer sparsity and class-based DBI per conv layer at the
    early-stopping point (solid, ``sparsity``/``clusters``: chapters B2-B3) and at matched
    accuracy (dashed), mean over seeds."""
    dss = matched.datasets
    fig, axes = canvas(ncols=len(dss), nrows=3, height=2.6)
    acc = matched.val_acc()
    for col, ds in enumerate(dss):
        ax = axes[0, col]
        for bn in (True, False):
            c = COLORS[LABELS[bn]]
            for s, (k, t) in enumerate(zip(matched.kept.trained[ds, bn],
                                           matched.models.trained[ds, bn])):  # fmt: skip
                ax.plot(k.curves["epoch"], k.curves["val_acc"], color=c, lw=0.8, alpha=0.6,
                        label=LABELS[bn] if s == 0 else None)  # fmt: skip
                x = t.reached[0] if t.reached else t.best_epoch
                ax.plot(x, acc[ds, bn][s], "o", color=c, ms=5,
                        mfc=c if t.stage else "none")  # fmt: skip
        ax.set_xlabel("epoch")
        ax.set_ylabel("validation accuracy")
    rows = ((sparsity.layer, matched.sparsity.layer, "layer sparsity"),
            (clusters.class_dbi, matched.clusters.class_dbi, "class-based DBI"))  # fmt: skip
    _layer_pairs(axes[1:], dss, rows, ("early stopping", "matched accuracy"))
    for col, ds in enumerate(dss):
        axes[0, col].set_title(DATASET_TITLES[ds])
    shared_legend(fig)
    return fig


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
