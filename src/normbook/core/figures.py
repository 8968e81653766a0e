"""The book's figure theme and canvas, shared by both papers' figure modules.

Every figure of the book is drawn by one named function in ``paper_a.figures``,
``paper_a.diagrams`` or ``paper_b.figures``; those functions return the figure, and the
chapter glues it under a label (:func:`normbook.core.report.figure`).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

# Okabe and Ito's colour-blind-safe palette: every colour of the book's figures is one of these.
OKABE_ITO = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7",
             "#999999", "#000000"]  # fmt: skip
sns.set_theme(context="notebook", style="whitegrid", palette=OKABE_ITO)

# One colour per normalization, used by both papers (paper B's "BN" is "batch").
NORM_COLORS = {
    "none": "#999999",
    "instance": "#D55E00",
    "group": "#0072B2",
    "batch": "#009E73",
    "layer": "#CC79A7",
    "population": "#000000",
}


def canvas(ncols: int = 1, nrows: int = 1, width: float = 6.0, height: float = 3.2, **kw):
    """``(fig, axes)`` with a 2-D array of axes, ``width`` x ``height`` inches per panel."""
    return plt.subplots(
        nrows,
        ncols,
        figsize=(width * ncols, height * nrows),
        squeeze=False,
        constrained_layout=True,
        **kw,
    )


def running_mean(y: np.ndarray, k: int) -> np.ndarray:
    """Mean over a sliding window of ``k`` points (``valid`` part only)."""
    k = max(1, int(k))
    return np.convolve(y, np.ones(k) / k, mode="valid")


# A figure is shown at most this wide in a 1280-px window, and its caption in this font size
# (both measured in Chromium on the built book); figures are PNG at twice their pixels.
COLUMN_PX = 660
CAPTION_PX = 16
RETINA = 2


def smallest_text_px(fig) -> float:
    """The smallest text of ``fig`` in CSS pixels as the page shows it in a 1280-px window: a
    figure wider than the column is scaled down to it."""
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()
    width_in = fig.get_tightbbox(renderer).width  # what savefig(bbox_inches="tight") keeps
    px_per_inch = min(COLUMN_PX / width_in, RETINA * fig.dpi)
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    return min(sizes, default=float("inf")) / 72 * px_per_inch
