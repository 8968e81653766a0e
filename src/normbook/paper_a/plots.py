"""Plot helpers and figures several of paper A's chapters draw: a run's colour, the
receptive-field bands, the mean-prediction and depth-map panels, training loss and the
compute-to-effect curves. Each figure function takes measured results, draws, and returns the
figure; no computation happens here."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from normbook.pages.figures import NORM_COLORS, canvas, running_mean, shared_legend
from normbook.paper_a.cached.task import ramp


def color(run) -> str:
    """A run's colour: by normalization, population statistics apart."""
    if run.cnn.norm == "batch" and run.cnn.batch_eval == "population":
        return NORM_COLORS["population"]
    return NORM_COLORS[run.cnn.norm]


def receptive_bands(ax, seq_len: int, radius: int) -> None:
    """Shade the two boundary bands a receptive field of radius R can reach."""
    for lo, hi in ((0, radius), (seq_len - 1 - radius, seq_len - 1)):
        ax.axvspan(lo, hi, color="0.85", zorder=0, lw=0)


def mean_predictions_panel(ax, run, title: str) -> None:
    """Mean prediction per index for every seed (thin lines), +- 1 sd band of the first seed's
    single predictions, the target ramp, the receptive-field bands, localized indices as a rug."""
    mean, std = run.out.mean.mean(axis=0), run.out.std[0]
    seq_len = run.seq_len
    idx, c = np.arange(seq_len), color(run)
    receptive_bands(ax, seq_len, run.radius)
    ax.plot(idx, ramp(seq_len).numpy(), color="k", lw=1, ls="--", label="target ramp")
    ax.fill_between(
        idx,
        mean[0] - std[0],
        mean[0] + std[0],
        color=c,
        alpha=0.12,
        lw=0,
        label="± 1 sd of predictions (seed 0)",
    )
    for s in range(mean.shape[0]):
        ax.plot(idx, mean[s], color=c, lw=1.2, alpha=0.9, label=run.name if s == 0 else None)
    lo = ax.get_ylim()[0]
    for s, loc in enumerate(p.localized for p in run.per_seed):
        ax.plot(idx[loc], np.full(loc.sum(), lo + 0.02 * (s + 1)), "|", color=c, ms=6)
    ax.set_xlabel("index i")
    ax.set_xlim(0, seq_len - 1)
    ax.set_title(title)


def depth_map_panel(ax, run, title: str):
    """Depth x index map: fraction of seeds localizing each index at each depth, with the
    receptive-field reach R(depth) from both boundaries. Returns the image, for the one colour
    bar of the figure's maps (:func:`map_colorbar`)."""
    maps = run.depth_maps
    depth, seq_len = maps.shape[0], maps.shape[-1]
    im = ax.imshow(
        maps.mean(axis=1),
        aspect="auto",
        origin="lower",
        cmap="rocket_r",
        vmin=0,
        vmax=1,
        extent=(-0.5, seq_len - 0.5, 0.5, depth + 0.5),
        interpolation="nearest",
    )
    ax.grid(False)
    d = np.arange(1, depth + 1)
    r = run.radius_per_depth
    ax.plot(np.minimum(r, seq_len - 1), d, color="c", lw=1.5, label="R(depth)")
    ax.plot(np.maximum(seq_len - 1 - r, 0), d, color="c", lw=1.5)
    ax.set_xlabel("index i")
    ax.set_ylabel("depth")
    ax.set_yticks(d)
    ax.set_title(title)
    return im


def map_colorbar(fig, im, axes) -> None:
    """One colour bar beside the depth maps ``axes`` (every map has the same scale, 0 to 1)."""
    fig.colorbar(im, ax=list(axes), label="fraction of seeds localized", shrink=0.9, aspect=25)


def loss_curves(runs, title: str = "training loss (running mean)", smooth: int = 50):
    """Training loss per model (running mean over ``smooth`` steps), coloured by norm."""
    fig, axes = canvas(height=3)
    ax = axes[0, 0]
    for run in runs:
        hist = run.loss
        k = max(1, min(smooth, hist.shape[0] // 4 or 1))
        for s in range(hist.shape[1]):
            y = running_mean(hist[:, s], k)
            ax.plot(
                np.arange(y.size) + k, y, color=color(run), lw=1, label=run.name if s == 0 else None
            )
    ax.set_xlabel("step")
    ax.set_ylabel("MSE")
    ax.set_yscale("log")
    ax.set_title(title)
    shared_legend(fig)
    return fig


def compute_to_effect(curves, alpha: float):
    """Each network's effect through training: interior slope (left) and the fraction of the
    tested interior the detector localizes (right) at every kept step, mean over seeds with one
    thin line per seed; ``alpha`` marks the detector's calibrated false-positive level."""
    fig, axes = canvas(ncols=2, height=3.2)
    norms = [c.cnn.norm for c in curves]
    shades = plt.cm.viridis(np.linspace(0.1, 0.85, len(curves)))
    for i, c in enumerate(curves):
        col = color(c) if norms.count(c.cnn.norm) == 1 else shades[i]
        x = c.fractions
        for ax, y in zip(axes[0], (c.slope, c.frac)):
            ax.plot(x, y, color=col, lw=0.6, alpha=0.35)
            ax.plot(x, y.mean(axis=1), "o-", color=col, lw=1.6, ms=3, label=c.name)
    axes[0, 1].axhline(alpha, color="0.4", ls=":", lw=1, label=f"α = {alpha:g}")
    axes[0, 0].axhline(0, color="0.4", lw=0.6)
    for ax, label in zip(axes[0], ("interior slope", "fraction of interior localized")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("fraction of the training budget")
        ax.set_ylabel(label)
    shared_legend(fig)
    return fig
