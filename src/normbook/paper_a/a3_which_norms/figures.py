"""Chapter A3's figures, one function each: Fig. 4 (GroupNorm against the number of groups),
Figs. 5-6 (BatchNorm's predictions and depth maps) and BatchNorm against the evaluation batch
size. Each takes measured results, draws, and returns the figure."""

from __future__ import annotations

import numpy as np

from normbook.pages.figures import NORM_COLORS, canvas, shared_legend
from normbook.paper_a.plots import depth_map_panel, map_colorbar, mean_predictions_panel
from normbook.paper_a.runs.which_norms import METRICS, EvalBatchSweep, GroupSweep, NullLevel


def predictions_and_maps(runs, title: str):
    """Figs. 5-6: per run (column), mean predictions (top) and depth-probe maps (bottom, one
    colour bar beside them); the legend under the panels."""
    fig, axes = canvas(ncols=len(runs), nrows=2, height=3.0)
    for col, run in enumerate(runs):
        mean_predictions_panel(axes[0, col], run, f"{run.name}: mean prediction")
        im = depth_map_panel(axes[1, col], run, f"{run.name}: localized by depth probes")
    map_colorbar(fig, im, axes[1])
    axes[0, 0].set_ylabel("prediction")
    fig.suptitle(title)
    shared_legend(fig)
    return fig


def groups(sweep: GroupSweep, null: NullLevel, radius: int):
    """Fig. 4: localization distance, interior fraction and interior slope against G; seeds as
    dots, their mean as a line, the null networks' largest value dashed."""
    fig, axes = canvas(ncols=3, height=3.2)
    gs, c = sweep.group_counts, NORM_COLORS["group"]
    for ax, (label, metric) in zip(axes[0], METRICS.items()):
        vals = sweep.values(metric)
        for j in range(vals.shape[1]):
            ax.plot(
                gs, vals[:, j], "o", color=c, alpha=0.6, ms=5, label="seeds" if j == 0 else None
            )
        ax.plot(gs, vals.mean(axis=1), "-", color=c, lw=1.5, label="mean over seeds")
        ax.axhline(
            null.level(label),
            color=NORM_COLORS["none"],
            ls="--",
            lw=1,
            label="null level (max over the null networks)",
        )
        if label == "localization distance":
            ax.axhline(radius, color="c", ls=":", lw=1.2, label="R")
        ax.set_xscale("log", base=2)
        ax.set_xticks(gs, [str(g) for g in gs])
        ax.set_xlabel(f"GroupNorm groups G (C = {sweep.width})")
        ax.set_title(label)
    shared_legend(fig)
    fig.suptitle("Fig. 4: GroupNorm, localization vs the number of groups")
    return fig


def eval_batch_size(sweep: EvalBatchSweep):
    """BatchNorm with minibatch statistics against the evaluation batch size: interior fraction
    and distance under both tests, interior slope; population statistics as a reference."""
    fig, axes = canvas(ncols=3, height=3.2)
    bs, c = sweep.sizes, NORM_COLORS["batch"]
    for ax, label in zip(
        axes[0],
        ("interior fraction localized", "localization distance", "interior slope (effect size)"),
    ):
        metric = METRICS[label]
        for test, ls in (("per_seed", "-"), ("batch_mean", "--")):
            if label.startswith("interior slope") and test == "batch_mean":
                continue  # the mean predictions, hence the slope, are the same for both tests
            vals = np.array(
                [[metric(s) for s in getattr(sweep.runs[b], test)] for b in bs], dtype=float
            )
            for j in range(vals.shape[1]):
                ax.plot(bs, vals[:, j], "o", color=c, alpha=0.5, ms=4)
            name = "per-sample test" if test == "per_seed" else "batch-mean test"
            ax.plot(bs, vals.mean(axis=1), ls=ls, color=c, lw=1.5, label=f"minibatch, {name}")
        ax.axhline(
            np.mean([metric(s) for s in sweep.population.batch_mean]),
            color=NORM_COLORS["population"],
            ls=":",
            lw=1.5,
            label="population statistics",
        )
        ax.axvline(sweep.train_batch, color="0.6", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xticks(bs, [str(b) for b in bs])
        ax.set_xlabel("evaluation batch size b")
        ax.set_title(label)
    shared_legend(fig)
    fig.suptitle(
        "BatchNorm with minibatch statistics: the evaluation batch size\n"
        f"(grey line: training batch {sweep.train_batch})"
    )
    return fig
