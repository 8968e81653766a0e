"""The book's figure theme and canvas, shared by both papers' figure modules.

Every figure of the book is drawn by one named function in a figure module of paper A (a
chapter folder's ``figures``, ``paper_a.plots``) or of paper B (a chapter folder's ``figures``,
``paper_b.plots``); those functions return the figure, and the chapter glues it under a label
(:func:`normbook.pages.report.figure`).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

# Okabe and Ito's colour-blind-safe palette: every colour of the book's figures is one of these.
OKABE_ITO = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7",
             "#999999", "#000000"]  # fmt: skip

# A figure is shown at most this wide in a 1280-px window, and its caption in this font size
# (both measured in Chromium on the built book). A figure is a retina PNG (twice the pixels)
# whose <img> width is its width in inches times FIGURE_DPI CSS pixels.
COLUMN_PX = 660
CAPTION_PX = 16
FIGURE_DPI = 100
COLUMN_IN = COLUMN_PX / FIGURE_DPI  # every figure is this wide: one inch is FIGURE_DPI px
# The smallest text a figure may carry: the caption's size on a figure as wide as the column.
TEXT_PT = 12.0
assert TEXT_PT / 72 * FIGURE_DPI >= CAPTION_PX

sns.set_theme(
    context="notebook",
    style="whitegrid",
    palette=OKABE_ITO,
    rc={
        "figure.dpi": FIGURE_DPI,
        **dict.fromkeys(
            ("font.size", "axes.labelsize", "axes.titlesize", "xtick.labelsize",
             "ytick.labelsize", "legend.fontsize", "legend.title_fontsize"),
            TEXT_PT,
        ),
        "figure.titlesize": TEXT_PT + 1,
    },
)  # fmt: skip

# One colour per normalization, used by both papers (paper B's "BN" is "batch").
NORM_COLORS = {
    "none": "#999999",
    "instance": "#D55E00",
    "group": "#0072B2",
    "batch": "#009E73",
    "layer": "#CC79A7",
    "population": "#000000",
}


def canvas(ncols: int = 1, nrows: int = 1, height: float = 3.2, max_cols: int = 2, **kw):
    """``(fig, axes)``: a figure as wide as the text column, ``axes`` a 2-D array of ``nrows``
    x ``ncols`` panels ``height`` inches high. Rows of more than ``max_cols`` panels wrap onto
    further lines, so that every panel keeps text at the caption's size (``axes[r, j]`` is still
    panel j of row r; unused places of the last line stay empty, kept for :func:`shared_legend`)."""
    per_line = min(ncols, max_cols)
    lines = -(-ncols // per_line)
    fig, grid = plt.subplots(
        nrows * lines,
        per_line,
        figsize=(COLUMN_IN, height * nrows * lines),
        squeeze=False,
        constrained_layout=True,
        **kw,
    )
    axes = np.empty((nrows, ncols), dtype=object)
    for r in range(nrows):
        for j in range(ncols):
            axes[r, j] = grid[r * lines + j // per_line, j % per_line]
    fig.spare_axes = [ax for ax in grid.flat if ax not in set(axes.flat)]
    for ax in fig.spare_axes:
        ax.set_axis_off()
    return fig, axes


def shared_legend(fig, ncols: int | None = None, title: str | None = None) -> None:
    """One legend for the whole figure, never over its data: every distinct label of every
    panel (each panel's own legend removed), in the first empty place of a wrapped
    :func:`canvas`, or else under the panels, in as many columns as the figure's width holds
    (at most ``ncols``), its rows evenly filled. The figure grows by the legend's height, so the
    panels keep theirs. Every figure with a legend ends with this call."""
    entries: dict[str, object] = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if not entries:
        return
    spare = getattr(fig, "spare_axes", [])
    if spare:
        spare[0].legend(entries.values(), entries.keys(), loc="center", frameon=False, title=title)
        return
    renderer = fig.canvas.get_renderer()
    n = min(ncols or len(entries), len(entries))
    while True:
        rows = -(-len(entries) // n)
        n = -(-len(entries) // rows)  # as few columns as the rows need: rows evenly filled
        legend = fig.legend(entries.values(), entries.keys(), loc="outside lower center",
                            ncols=n, frameon=False, title=title)  # fmt: skip
        box = legend.get_window_extent(renderer)
        if n == 1 or box.width <= fig.bbox.width:
            break
        legend.remove()
        n -= 1
    fig.set_figheight(fig.get_figheight() + box.height / fig.dpi)


def running_mean(y: np.ndarray, k: int) -> np.ndarray:
    """Mean over a sliding window of ``k`` points (``valid`` part only)."""
    k = max(1, int(k))
    return np.convolve(y, np.ones(k) / k, mode="valid")


def wrap_labels(fig) -> None:
    """Break every panel title and axis label longer than its panel (and a figure title wider
    than the figure) onto further lines, so that no text runs into its neighbour or off the
    page."""
    import textwrap

    renderer = fig.canvas.get_renderer()
    texts = []
    for ax in fig.axes:
        if ax.axison:
            box = ax.get_window_extent(renderer)
            texts += [(ax.title, box.width, "width"), (ax.xaxis.label, box.width, "width"),
                      (ax.yaxis.label, box.height, "height")]  # fmt: skip
    if getattr(fig, "_suptitle", None) is not None:
        texts.append((fig._suptitle, fig.bbox.width, "width"))
    for text, room, along in texts:
        label = text.get_text()
        length = getattr(text.get_window_extent(renderer), along)
        if label and length > room:
            chars = max(8, int(len(label) * room / length))
            text.set_text("\n".join(textwrap.fill(line, chars, break_long_words=False)
                                     for line in label.split("\n")))  # fmt: skip


def smallest_text_px(fig) -> float:
    """The smallest text of ``fig`` in CSS pixels as the page shows it in a 1280-px window: the
    figure is FIGURE_DPI px per inch wide, scaled down to the column when wider."""
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()
    # what savefig(bbox_inches="tight") keeps, with its padding on both sides
    width_in = fig.get_tightbbox(renderer).width + 2 * plt.rcParams["savefig.pad_inches"]
    px_per_inch = min(COLUMN_PX / width_in, fig.dpi)
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    return min(sizes, default=float("inf")) / 72 * px_per_inch
