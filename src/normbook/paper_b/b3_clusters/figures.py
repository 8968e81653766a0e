"""Chapter B3's figures, one function each: class-based DBI, the k-means profiles and DBI
against k (the effect through training is
:func:`normbook.paper_b.plots.difference_through_training`). No computation happens here.
"""

from __future__ import annotations

import numpy as np

from normbook.pages.figures import canvas, shared_legend
from normbook.paper_b import paper_values
from normbook.paper_b.cached.analysis import Clusters
from normbook.paper_b.plots import COLORS, DATASET_TITLES, by_label, layer_profile
from normbook.paper_b.runs.classify import DATASETS


def class_dbi(clusters: Clusters):
    """Class-based DBI per conv layer, one panel per dataset."""
    fig, axes = canvas(ncols=2, height=3.0)
    for col, ds in enumerate(DATASETS):
        layer_profile(
            axes[0, col],
            by_label(clusters.class_dbi, ds),
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
        layer_profile(ax, by_label(clusters.k_star, ds), "k* = argmin DBI")
        ax.axhline(
            paper_values.N_CLASSES,
            color="k",
            lw=0.8,
            ls=":",
            label=f"{paper_values.N_CLASSES} classes",
        )
        ax.set_ylim(cfg.k_min - 0.5, cfg.k_max + 0.5)
        ax.set_title(DATASET_TITLES[ds])
        layer_profile(axes[1, col], by_label(clusters.dbi_k_star, ds), "DBI(k*)", names)
        layer_profile(
            axes[2, col], by_label(clusters.dbi_fixed_k, ds), f"DBI at k = {cfg.fixed_k}", names
        )
    shared_legend(fig)
    return fig


def dbi_over_k(clusters: Clusters):
    """DBI against k for the last conv layer, mean over seeds, one panel per dataset."""
    fig, axes = canvas(ncols=2, height=2.8)
    for col, ds in enumerate(DATASETS):
        ax = axes[0, col]
        for label, v in by_label(clusters.dbi_curve, ds).items():
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
