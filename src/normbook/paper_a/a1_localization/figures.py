"""Chapter A1's figures, one function each (the task, Fig. 1a and Fig. 1b; the panels, loss
and compute-to-effect figures it shares with chapter A3 are in :mod:`normbook.paper_a.plots`).
Each takes measured results, draws, and returns the figure; the chapter glues it under a label
and captions it with the function's name."""

from __future__ import annotations

from normbook.pages.figures import canvas, shared_legend
from normbook.paper_a.cached.task import ramp, sample_inputs
from normbook.paper_a.plots import (
    depth_map_panel,
    map_colorbar,
    mean_predictions_panel,
    receptive_bands,
)
from normbook.runtime.seeding import generators


def task_example(seq_len: int, radius: int):
    """One training example of the localization task: noise in, ramp out, with the bands
    within R of the ends where a convolution can see the padding."""
    x = sample_inputs(1, 1, seq_len, generators([0], "check"))[0, 0].numpy()
    fig, axes = canvas(height=2.6)
    ax = axes[0, 0]
    receptive_bands(ax, seq_len, radius)
    ax.plot(x, lw=0.8, color="0.3", label="input $x_i$ (noise)")
    ax.plot(ramp(seq_len).numpy(), color="k", lw=1.5, ls="--", label="target $y_i = i/(\\ell-1)$")
    ax.set_xlim(0, seq_len - 1)
    ax.set_xlabel("index i")
    shared_legend(fig)
    return fig


def mean_predictions(runs):
    """Fig. 1a: mean prediction per index, one panel per run (shared y axis)."""
    fig, axes = canvas(ncols=len(runs), height=3.4, sharey=True)
    for ax, run in zip(axes[0], runs):
        mean_predictions_panel(ax, run, f"norm = {run.name}")
    axes[0, 0].set_ylabel("prediction")
    shared_legend(fig)
    return fig


def depth_maps(runs):
    """Fig. 1b: where in depth the probes localize, one panel per run."""
    fig, axes = canvas(ncols=len(runs), height=3.6, sharey=True)
    for ax, run in zip(axes[0], runs):
        im = depth_map_panel(ax, run, f"norm = {run.name}")
    map_colorbar(fig, im, axes[0, :2])  # beside the first line of panels
    shared_legend(fig)
    return fig
