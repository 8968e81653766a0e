"""Figures shared by the Part A chapters (seaborn/matplotlib; no computation here)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

sns.set_theme(context="notebook", style="whitegrid")
PALETTE = {"none": "#7f7f7f", "instance": "#d62728", "group": "#1f77b4", "batch": "#2ca02c",
           "layer": "#9467bd"}


def shade_receptive_band(ax, seq_len: int, radius: int) -> None:
    """Shade the two boundary bands a receptive field of radius R can reach."""
    for lo, hi in ((0, radius), (seq_len - 1 - radius, seq_len - 1)):
        ax.axvspan(lo, hi, color="0.85", zorder=0, lw=0)


def mean_predictions(ax, mean: np.ndarray, std: np.ndarray, target: np.ndarray, radius: int,
                     label: str, color: str, localized: np.ndarray | None = None) -> None:
    """Mean prediction per index for every seed (thin lines), +- 1 sd band of the first,
    the target ramp, the receptive-field bands, and the localized indices as a rug."""
    seq_len = mean.shape[-1]
    idx = np.arange(seq_len)
    shade_receptive_band(ax, seq_len, radius)
    ax.plot(idx, target, color="k", lw=1, ls="--", label="target ramp")
    ax.fill_between(idx, mean[0] - std[0], mean[0] + std[0], color=color, alpha=0.12, lw=0,
                    label="± 1 sd of predictions (seed 0)")
    for s in range(mean.shape[0]):
        ax.plot(idx, mean[s], color=color, lw=1.2, alpha=0.9, label=label if s == 0 else None)
    if localized is not None:
        lo = ax.get_ylim()[0]
        for s, loc in enumerate(localized):
            ax.plot(idx[loc], np.full(loc.sum(), lo + 0.02 * (s + 1)), "|", color=color, ms=6)
    ax.set_xlabel("index i")
    ax.set_xlim(0, seq_len - 1)


def depth_map(ax, localized: np.ndarray, radius_per_depth: np.ndarray, title: str) -> None:
    """Depth x index map: fraction of seeds localizing each index at each depth,
    with the receptive-field reach R(depth) from both boundaries."""
    depth, seq_len = localized.shape[0], localized.shape[-1]
    frac = localized.mean(axis=1) if localized.ndim == 3 else localized
    im = ax.imshow(frac, aspect="auto", origin="lower", cmap="rocket_r", vmin=0, vmax=1,
                   extent=(-0.5, seq_len - 0.5, 0.5, depth + 0.5), interpolation="nearest")
    ax.grid(False)
    ax.figure.colorbar(im, ax=ax, label="fraction of seeds localized", shrink=0.85)
    d = np.arange(1, depth + 1)
    ax.plot(np.minimum(radius_per_depth, seq_len - 1), d, color="c", lw=1.5, label="R(depth)")
    ax.plot(np.maximum(seq_len - 1 - radius_per_depth, 0), d, color="c", lw=1.5)
    ax.set_xlabel("index i")
    ax.set_ylabel("depth")
    ax.set_title(title)


def loss_curves(ax, losses: dict[str, np.ndarray], smooth: int = 50) -> None:
    """Training loss per model (running mean over ``smooth`` steps)."""
    for label, hist in losses.items():
        color = PALETTE.get(label.split()[0], None)
        k = max(1, min(smooth, hist.shape[0] // 4 or 1))
        kernel = np.ones(k) / k
        for s in range(hist.shape[1]):
            y = np.convolve(hist[:, s], kernel, mode="valid")
            ax.plot(np.arange(y.size) + k, y, color=color, lw=1, label=label if s == 0 else None)
    ax.set_xlabel("step")
    ax.set_ylabel("MSE")
    ax.set_yscale("log")
    ax.legend()


def figure(ncols: int = 1, nrows: int = 1, width: float = 6.0, height: float = 3.2, **kw):
    return plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False,
                        constrained_layout=True, **kw)
