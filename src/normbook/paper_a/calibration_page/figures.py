"""The budget calibration page's figure: each candidate's effect against minutes of training."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from normbook.pages.figures import canvas, shared_legend


def effect_per_minute(results):
    """The budget calibration: each candidate's interior slope (mean over seeds, thin lines per
    seed) against minutes of training per model."""
    fig, axes = canvas(height=3.4)
    ax = axes[0, 0]
    shades = plt.cm.viridis(np.linspace(0.05, 0.85, len(results)))
    for r, col in zip(results, shades):
        ax.plot(r.minutes, r.curve.slope, color=col, lw=0.6, alpha=0.35)
        ax.plot(r.minutes, r.curve.slope.mean(axis=1), "o-", color=col, lw=1.6, ms=3, label=r.name)
    ax.axhline(0, color="0.4", lw=0.6)
    ax.set_xlabel("training minutes per model (this machine)")
    ax.set_ylabel("interior slope")
    shared_legend(fig)
    return fig
