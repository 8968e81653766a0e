"""Chapter A2's figures, one function each: Fig. 2 redrawn from the text (the hypothesized
message passing: a schematic of one hop, and the reach hopping can explain per depth, from
:mod:`normbook.paper_a.measures.multihop` for the chapter's kernel and depth), PackNorm's pair
of paths and Fig. 3, and the probes' reach against the hop bounds. Each takes measured results
or the chapter's geometry, draws, and returns the figure."""

from __future__ import annotations

import matplotlib.patches as mpatches
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from normbook.grading import stats
from normbook.pages.figures import COLUMN_IN, TEXT_PT, canvas, running_mean, shared_legend
from normbook.paper_a import paper_values
from normbook.paper_a.cached.packnet import generator, sample_pair
from normbook.paper_a.measures import multihop
from normbook.paper_a.plots import color
from normbook.paper_a.runs.packnorm import PackResult


def packnorm_example(path_len: int, overlap: int):
    """One overlapping and one independent pair of paths (PackNorm's two classes)."""
    a, b, y = sample_pair(64, path_len, overlap, generator(0, overlap, "check"))
    pos, neg = int(np.flatnonzero(y.numpy() > 0)[0]), int(np.flatnonzero(y.numpy() == 0)[0])
    fig, axes = canvas(ncols=2, height=2.4, sharey=True)
    for ax, k, title in (
        (axes[0, 0], pos, f"overlapping (o = {overlap})"),
        (axes[0, 1], neg, "independent"),
    ):
        ax.plot(np.arange(path_len), a[k].numpy(), "o-", ms=3, color="#D55E00", label="path A")
        ax.plot(
            np.arange(path_len - overlap, 2 * path_len - overlap),
            b[k].numpy(),
            "s-",
            ms=3,
            color="#0072B2",
            label="path B",
        )
        if k == pos:
            ax.axvspan(
                path_len - overlap - 0.5,
                path_len - 0.5,
                color="#E69F00",
                alpha=0.15,
                lw=0,
                label="shared samples",
            )
        ax.set_title(title)
        ax.set_xlabel("position in z")
    shared_legend(fig)
    return fig


def packnorm_accuracy(res: PackResult):
    """Fig. 3: test accuracy against the overlap, per seed with Wilson intervals, the control,
    the paper's transition band scaled to our path length (legend under the panels); training
    loss per overlap (colour bar: the overlap)."""
    pack, ctrl, setup = res.pack, res.control, res.setup
    fig, axes = canvas(ncols=2, height=3.4, max_cols=1)
    ax = axes[0, 0]
    span = (pack.overlaps[-1] - pack.overlaps[0] + 1) / 10
    offsets = np.linspace(-0.12, 0.12, len(pack.seeds)) * span
    for acc, (lo, hi), o, marker, label in (
        (pack.acc, pack.ci, pack.overlaps, "o", "PackNorm"),
        (ctrl.acc, ctrl.ci, ctrl.overlaps, "x", None),
    ):
        for j, seed in enumerate(pack.seeds):
            kw = (
                dict(ms=4, alpha=0.8, label=f"PackNorm, seed {seed}")
                if label
                else dict(ms=6, color="0.4", label="control (per-path)" if j == 0 else None)
            )
            ax.errorbar(
                np.array(o) + offsets[j],
                acc[:, j],
                yerr=[acc[:, j] - lo[:, j], hi[:, j] - acc[:, j]],
                fmt=marker,
                capsize=2,
                **kw,
            )
    ax.plot(
        pack.overlaps, pack.acc.mean(axis=1), color="k", lw=1.5, label="PackNorm, mean over seeds"
    )
    ax.axhline(0.5, color="0.5", ls=":", lw=1)
    ax.axhline(
        setup.transition_level,
        color="#E69F00",
        ls="--",
        lw=0.8,
        label=f"transition level {setup.transition_level:g}",
    )
    lo_f, hi_f = paper_values.pack_transition_fraction()
    ax.axvspan(
        lo_f * setup.path_len,
        hi_f * setup.path_len,
        color="#009E73",
        alpha=0.12,
        lw=0,
        label="paper's transition, scaled to l'",
    )
    ax.set_xlabel("overlap o (samples)")
    ax.set_ylabel(f"test accuracy (Wilson {stats.CONFIDENCE:.0%} CI)")
    ax.set_title(f"Fig. 3: telling overlapping from independent (l' = {setup.path_len})")
    ax = axes[0, 1]
    k = max(1, setup.train.steps // 30)
    n = len(pack.overlaps)
    colors = plt.cm.viridis(np.linspace(0, 1, n))
    for i in range(n):
        ax.plot(running_mean(pack.loss[:, i, :].mean(axis=1), k), lw=1, color=colors[i])
    ax.axhline(np.log(2), color="0.5", ls=":", lw=1)
    ax.set_xlabel("step")
    ax.set_ylabel("BCE (running mean, mean over seeds)")
    ax.set_title("training loss per overlap")
    _category_colorbar(fig, ax, colors, pack.overlaps, "overlap o")
    shared_legend(fig)
    return fig


def _category_colorbar(fig, ax, colors, values, label: str) -> None:
    """A colour bar beside ``ax`` naming the value of each line colour (one step per value,
    every other one labelled past 12)."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import BoundaryNorm, ListedColormap

    n = len(values)
    norm = BoundaryNorm(np.arange(n + 1) - 0.5, n)
    bar = fig.colorbar(ScalarMappable(norm, ListedColormap(colors)), ax=ax, label=label)
    step = 1 if n <= 12 else 2
    bar.set_ticks(np.arange(0, n, step), labels=[f"{v:g}" for v in values[::step]])
    bar.ax.minorticks_off()


def hop_curves(kernel: int, depth: int, seq_len: int, factor: float):
    """(reach per depth, label, colour, line style) of the three hop bounds of
    :func:`multihop.capped_bounds`: shared by Fig. 2b and the probe-reach figure."""
    bounds = multihop.capped_bounds(kernel, depth, seq_len, factor)
    styles = (("receptive field R(d)", "#56B4E9", "-"),
              (f"one hop {factor:g}R(d)", "#E69F00", "--"),
              ("one hop per norm layer", "#D55E00", "-."))  # fmt: skip
    return [(b, *style) for b, style in zip(bounds, styles)]


def probe_reach(runs, hop_factor: float):
    """Probe localization distance per depth and seed against the three hop bounds."""
    first = runs[0]
    seq_len, kernel = first.seq_len, first.cnn.kernel
    depth = first.probe_distances.shape[0]
    d = np.arange(1, depth + 1)
    fig, axes = canvas(height=3.6)
    ax = axes[0, 0]
    for reach, label, col, ls in hop_curves(kernel, depth, seq_len, hop_factor):
        ax.plot(d, reach, color=col, ls=ls, lw=1.8, label=label)
    for run, marker in zip(runs, "so^v"):
        n = len(run.seeds)
        for s in range(n):
            ax.plot(
                d + (s - (n - 1) / 2) * 0.08,
                run.probe_distances[:, s],
                marker,
                ms=5,
                color=color(run),
                alpha=0.8,
                label=f"probe, {run.name}" if s == 0 else None,
            )
    ax.axhline((seq_len - 1) // 2, color="0.5", ls=":", lw=1, label="middle of the sequence")
    ax.set_xlabel("depth d")
    ax.set_ylabel("localization distance from the end")
    ax.set_title("probe localization distance vs the hop bounds\n(chapter A1's networks)")
    shared_legend(fig)
    return fig


# ----------------------------------------------------------------------------- Fig. 2

_NOISE, _PAD, _SHARED = "0.55", "white", "#E69F00"


# The schematic's text at the book's figure text size (the caption's, at the column's width)
_FS = TEXT_PT


def one_hop(
    ax, n_cells: int = 18, radius: int = 3, i: int = 2, gap: int = 4, seed: int = 0
) -> None:
    """Schematic of one hop: index i sees the padding; index j's receptive field overlaps i's;
    the normalization statistics pool every position and are broadcast back to every position."""
    rng = np.random.default_rng(seed)
    j = i + gap
    y_in, y_act, y_stat = 0.0, 3.6, 6.0
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
    ax.text(-pad - 0.4, y_in + 0.45, "input", ha="right", va="center", fontsize=_FS)
    ax.text(-pad, y_in - 0.3, "zero padding", ha="left", va="top", fontsize=_FS)
    # activation row at depth d
    for c in range(n_cells):
        col = "#D55E00" if c == i else "#0072B2" if c == j else "0.9"
        ax.add_patch(mpatches.Rectangle((c, y_act), 0.9, 0.9, fc=col, ec="0.3", lw=0.6))
    ax.text(-pad - 0.4, y_act + 0.45, "depth d", ha="right", va="center", fontsize=_FS)
    # receptive fields of i and j
    for idx, col in ((i, "#D55E00"), (j, "#0072B2")):
        lo, hi = idx - radius, idx + radius + 0.9
        ax.fill(
            [idx + 0.45, lo, hi], [y_act, y_in + 0.95, y_in + 0.95], color=col, alpha=0.13, lw=0
        )
        ax.plot([idx + 0.45, lo], [y_act, y_in + 0.95], color=col, lw=1)
        ax.plot([idx + 0.45, hi], [y_act, y_in + 0.95], color=col, lw=1)
    for idx, name, col in ((i, "i", "#D55E00"), (j, "j", "#0072B2")):
        ax.text(idx + 0.45, y_act + 1.1, name, color=col, ha="center", fontsize=_FS + 2,
                weight="bold")  # fmt: skip
    lo_shared, hi_shared = j - radius, i + radius + 0.9
    ax.annotate(
        "shared noise patch",
        xy=((lo_shared + hi_shared) / 2, y_in - 0.05),
        xytext=(hi_shared + 2.5, y_in - 1.0),
        fontsize=_FS,
        color="#B07800",  # the patch's orange, darkened to be legible as text
        arrowprops=dict(arrowstyle="->", color=_SHARED),
        ha="left",
        va="center",
    )
    # normalization statistics: gather from every position, broadcast to every position
    box_x0, box_x1 = n_cells * 0.04, n_cells * 0.64
    ax.add_patch(
        mpatches.FancyBboxPatch(
            (box_x0, y_stat),
            box_x1 - box_x0,
            1.5,
            boxstyle="round,pad=0.15",
            fc="#fff2cc",
            ec="0.3",
        )  # fmt: skip
    )
    ax.text(
        (box_x0 + box_x1) / 2,
        y_stat + 0.75,
        "norm statistics $\\mu_c,\\ \\sigma_c$,\npooled over all positions",
        ha="center",
        va="center",
        fontsize=_FS,
    )
    for c in range(0, n_cells, 2):
        ax.annotate(
            "",
            xy=((box_x0 + box_x1) / 2 + (c - n_cells / 2) * 0.3, y_stat - 0.05),
            xytext=(c + 0.45, y_act + 0.95),
            arrowprops=dict(arrowstyle="->", color="0.6", lw=0.6, shrinkA=0, shrinkB=0),
        )
    ax.annotate(
        "",
        xy=(n_cells - 1, y_act + 0.95),
        xytext=(box_x1 + 0.2, y_stat + 0.75),
        arrowprops=dict(arrowstyle="->", color="k", lw=1.2, connectionstyle="arc3,rad=-0.3"),
    )
    ax.text(n_cells + 0.5, y_stat + 0.75, "broadcast\nback to\nevery index", fontsize=_FS,
            ha="right", va="bottom")  # fmt: skip
    ax.set_xlim(-pad - 5.5, n_cells + 0.5)
    ax.set_ylim(y_in - 1.8, y_stat + 2.0)
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
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("index i")
    ax.set_ylabel("depth")
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=_FS, ncols=1)


def mechanism(kernel: int, depth: int, seq_len: int, factor: float = 3.0):
    """Fig. 2: (a) one hop through the normalization statistics; (b) the reach per depth.
    The panels are stacked, so the figure is as wide as the text column and its text is read at
    body-text size."""
    fig = plt.figure(figsize=(COLUMN_IN, 6.2), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=[1, 1])  # laid out independently
    a, b = top.subplots(), bottom.subplots()
    one_hop(a)
    hop_reach(b, kernel, depth, seq_len, factor)
    a.set_title("(a) one hop through the normalization statistics", fontsize=_FS + 1)
    b.set_title(f"(b) reach per depth (k = {kernel}, l = {seq_len})", fontsize=_FS + 1)
    return fig
