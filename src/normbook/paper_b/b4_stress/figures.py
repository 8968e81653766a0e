"""Chapter B4's figures, one function each: the BN x learning-rate 2 x 2, the cluster indices,
the threshold sweep, training against test images, and the accuracy-matched comparison. No
computation happens here.
"""

from __future__ import annotations

import numpy as np

from normbook.pages.figures import canvas, shared_legend
from normbook.paper_b.b4_stress.factorial import METRICS, is_paper_cell, metric_values
from normbook.paper_b.cached.analysis import Clusters, Sparsity
from normbook.paper_b.plots import (
    COLORS,
    DATASET_TITLES,
    LABELS,
    by_label,
    layer_profile,
    layer_ticks,
)
from normbook.paper_b.runs.classify import DATASETS


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
            layer_profile(axes[r, col], by_label(values, ds), label, clusters.layer_names[ds])
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
            layer_ticks(ax, len(x))
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
