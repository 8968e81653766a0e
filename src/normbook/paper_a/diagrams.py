"""Fig. 2 of paper A, redrawn from the text: the hypothesized message passing (matplotlib only).

Panel (a) is a schematic of one hop at one depth; panel (b) draws the reach that hopping can
explain, per depth, from :mod:`normbook.paper_a.multihop` for the chapter's kernel and depth.
"""

from __future__ import annotations

import matplotlib.patches as mpatches
import numpy as np

from ..core.figures import canvas
from .figures import hop_curves

_NOISE, _PAD, _SHARED = "0.55", "white", "#E69F00"


def one_hop(
    ax, n_cells: int = 26, radius: int = 4, i: int = 3, gap: int = 6, seed: int = 0
) -> None:
    """Schematic of one hop: index i sees the padding; index j's receptive field overlaps i's;
    the normalization statistics pool every position and are broadcast back to every position."""
    rng = np.random.default_rng(seed)
    j = i + gap
    y_in, y_act, y_stat = 0.0, 3.0, 5.2
    pad = 2
    # input row: padding cells then noise cells
    for c in range(-pad, n_cells):
        if c < 0:
            ax.add_patch(
                mpatches.Rectangle((c, y_in), 0.9, 0.9, fc=_PAD, ec="0.3", hatch="///", lw=0.6)
            )
            continue
        shade = float(np.clip(0.5 + 0.18 * rng.standard_normal(), 0.15, 0.85))
        shared = max(i, j) - radius <= c <= min(i, j) + radius
        ax.add_patch(
            mpatches.Rectangle(
                (c, y_in),
                0.9,
                0.9,
                fc=str(shade),
                ec=_SHARED if shared else "0.3",
                lw=2.0 if shared else 0.6,
            )
        )
    ax.text(-pad - 0.3, y_in + 0.45, "input\n(noise)", ha="right", va="center", fontsize=8)
    ax.text(-1.1, y_in - 0.45, "zero\npadding", ha="center", va="top", fontsize=7)
    # activation row at depth d
    for c in range(n_cells):
        col = "#D55E00" if c == i else "#0072B2" if c == j else "0.9"
        ax.add_patch(mpatches.Rectangle((c, y_act), 0.9, 0.9, fc=col, ec="0.3", lw=0.6))
    ax.text(-pad - 0.3, y_act + 0.45, "depth d", ha="right", va="center", fontsize=8)
    # receptive fields of i and j
    for idx, col in ((i, "#D55E00"), (j, "#0072B2")):
        lo, hi = idx - radius, idx + radius + 0.9
        ax.fill(
            [idx + 0.45, lo, hi], [y_act, y_in + 0.95, y_in + 0.95], color=col, alpha=0.13, lw=0
        )
        ax.plot([idx + 0.45, lo], [y_act, y_in + 0.95], color=col, lw=1)
        ax.plot([idx + 0.45, hi], [y_act, y_in + 0.95], color=col, lw=1)
    ax.text(i + 0.45, y_act + 1.05, "i", color="#D55E00", ha="center", fontsize=10, weight="bold")
    ax.text(j + 0.45, y_act + 1.05, "j", color="#0072B2", ha="center", fontsize=10, weight="bold")
    lo_shared, hi_shared = j - radius, i + radius + 0.9
    ax.annotate(
        "shared noise patch",
        xy=((lo_shared + hi_shared) / 2, y_in - 0.05),
        xytext=((lo_shared + hi_shared) / 2 + 5, y_in - 1.1),
        fontsize=8,
        color=_SHARED,
        arrowprops=dict(arrowstyle="->", color=_SHARED),
        ha="left",
        va="center",
    )
    # normalization statistics: gather from every position, broadcast to every position
    box_x0, box_x1 = n_cells * 0.24, n_cells * 0.8
    ax.add_patch(
        mpatches.FancyBboxPatch(
            (box_x0, y_stat),
            box_x1 - box_x0,
            0.9,
            boxstyle="round,pad=0.15",
            fc="#fff2cc",
            ec="0.3",
        )
    )
    ax.text(
        (box_x0 + box_x1) / 2,
        y_stat + 0.45,
        r"norm statistics $\mu_c,\ \sigma_c$ (pooled over all positions)",
        ha="center",
        va="center",
        fontsize=8,
    )
    for c in range(0, n_cells, 3):
        ax.annotate(
            "",
            xy=((box_x0 + box_x1) / 2 + (c - n_cells / 2) * 0.25, y_stat - 0.05),
            xytext=(c + 0.45, y_act + 0.95),
            arrowprops=dict(arrowstyle="->", color="0.6", lw=0.6, shrinkA=0, shrinkB=0),
        )
    ax.annotate(
        "",
        xy=(n_cells - 1, y_act + 0.95),
        xytext=(box_x1, y_stat + 0.45),
        arrowprops=dict(arrowstyle="->", color="k", lw=1.2, connectionstyle="arc3,rad=-0.3"),
    )
    ax.text(n_cells - 0.5, y_stat + 0.2, "broadcast back\nto every index", fontsize=8, ha="right")
    ax.text(
        -pad - 3.3,
        y_in - 2.0,
        "i sees the padding, so it knows where it is; its activation shifts the pooled "
        "statistics.\nj shares part of i's input, so after normalization j can read i's "
        "shift back out:\nposition travels R + 2R = 3R from the end in one hop.",
        fontsize=8,
        va="top",
    )
    ax.set_xlim(-pad - 3.5, n_cells + 0.5)
    ax.set_ylim(y_in - 4.4, y_stat + 1.3)
    ax.set_aspect("equal")
    ax.axis("off")


def hop_reach(ax, kernel: int, depth: int, seq_len: int, factor: float = 3.0) -> None:
    """Per depth: the receptive field R(d), one hop factor*R(d), and iterated hops (one per
    normalization layer), from both ends of a sequence of length ``seq_len``."""
    d = np.arange(1, depth + 1)
    for r, label, col, ls in hop_curves(kernel, depth, seq_len, factor):
        ax.plot(r, d, color=col, ls=ls, lw=1.8, label=label)
        ax.plot(seq_len - 1 - r, d, color=col, ls=ls, lw=1.8)
    ax.axvline((seq_len - 1) / 2, color="0.5", lw=0.8, ls=":")
    ax.set_xlim(0, seq_len - 1)
    ax.set_ylim(0.5, depth + 0.5)
    ax.set_xlabel("index i")
    ax.set_ylabel("depth")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=8, ncols=1)


def mechanism(kernel: int, depth: int, seq_len: int, factor: float = 3.0):
    """Fig. 2: (a) one hop through the normalization statistics; (b) the reach per depth."""
    fig, axes = canvas(ncols=2, width=6, height=4.4, gridspec_kw=dict(width_ratios=[1.6, 1]))
    one_hop(axes[0, 0])
    hop_reach(axes[0, 1], kernel, depth, seq_len, factor)
    axes[0, 0].set_title("(a) one hop through the normalization statistics")
    axes[0, 1].set_title(f"(b) reach per depth (k = {kernel}, l = {seq_len})")
    return fig
