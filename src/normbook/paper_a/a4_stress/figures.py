"""Chapter A4's figures, one function each. Each takes measured results, draws, and returns
the figure."""

from __future__ import annotations

import numpy as np

from normbook.grading import stats
from normbook.pages.figures import NORM_COLORS, canvas, shared_legend
from normbook.paper_a.cached.interventions import MODES
from normbook.paper_a.cached.task import ramp
from normbook.paper_a.plots import color, receptive_bands

MODE_COLORS = {"population": "#000000", "shuffled": "#CC79A7", "interior": "#56B4E9"}


def constant_input(results, noise_runs):
    """Per network: the output for each constant input (one line per constant, first seed)
    beside the mean prediction on noise; grey bands: within R of an end."""
    fig, axes = canvas(ncols=len(results), height=3.2, sharey=True)
    for ax, c, run in zip(axes[0], results, noise_runs):
        L = c.out.shape[-1]
        idx = np.arange(L)
        receptive_bands(ax, L, c.radius)
        ax.plot(idx, ramp(L).numpy(), color="k", lw=1, ls="--", label="target ramp")
        ax.plot(idx, run.out.pooled_mean[0], color=color(run), lw=1.6, label="noise input (mean)")
        for v, out in zip(c.values, c.out[:, 0]):
            ax.plot(idx, out, lw=1, alpha=0.8, label=f"constant {v:g}")
        ax.set_xlabel("index i")
        ax.set_title(f"{c.name} (seed {run.seeds[0]})")
        ax.set_xlim(0, L - 1)
    axes[0, 0].set_ylabel("output")
    shared_legend(fig)
    return fig


def interventions(sweep, none):
    """Interior slope per seed when the statistics of every layer ("all") or of one layer are
    replaced, per kind of replacement; the unchanged networks and the no-norm networks as
    horizontal bands (mean over seeds +- sd)."""
    fig, axes = canvas(ncols=1, height=3.4)
    ax = axes[0, 0]
    x = np.arange(len(sweep.conditions))
    for band, c, label in (
        (sweep.baseline_slopes, NORM_COLORS["instance"], f"{sweep.name}, own statistics"),
        (np.asarray(none.slope_interior), NORM_COLORS["none"], "no normalization"),
    ):
        m, s = np.mean(band), np.std(band)
        ax.axhspan(m - s, m + s, color=c, alpha=0.15, lw=0)
        ax.axhline(m, color=c, lw=1.2, label=label)
    width = 0.8 / len(MODES)
    for k, mode in enumerate(MODES):
        for j, cond in enumerate(sweep.conditions):
            y = sweep.slopes(mode, cond)
            xs = np.full(len(y), x[j] - 0.4 + width * (k + 0.5))
            ax.plot(xs, y, "o", ms=4, color=MODE_COLORS[mode], alpha=0.85,
                    label=f"{mode} statistics" if j == 0 else None)  # fmt: skip
    ax.set_xticks(x, ["all layers", *[f"layer {c}" for c in sweep.conditions[1:]]])
    ax.set_ylabel("interior slope (1 = the ramp)")
    ax.set_title("replacing the normalization statistics at evaluation")
    shared_legend(fig)
    return fig


def receptive_field_test(heads: dict, a2, kernel: int):
    """PackNorm accuracy against the overlap (pooled over seeds, Wilson intervals): chapter A2's
    network (``a2``, a PackResult) beside the same sweep with kernel ``kernel`` and each head."""
    fig, axes = canvas(ncols=1, height=3.4)
    ax = axes[0, 0]
    transition_level = a2.setup.transition_level
    series = {f"A2's network (k = {a2.setup.net.kernel}), {a2.setup.net.head} head": a2.pack}
    series.update({f"k = {kernel}, {h} head": a for h, a in heads.items()})
    for (label, acc), marker in zip(series.items(), "osD^v"):
        lo, hi = acc.pooled_ci
        p = acc.pooled_acc
        ax.errorbar(acc.overlaps, p, yerr=[p - lo, hi - p], fmt=f"-{marker}", ms=4, capsize=2,
                    label=label)  # fmt: skip
    ax.axhline(0.5, color="0.5", ls=":", lw=1)
    ax.axhline(transition_level, color="#E69F00", ls="--", lw=0.8,
               label=f"transition level {transition_level:g}")  # fmt: skip
    ax.set_xlabel("overlap o (samples)")
    ax.set_ylabel(f"accuracy, pooled (Wilson {stats.CONFIDENCE:.0%})")
    shared_legend(fig)
    return fig


def _style(run) -> str:
    """Solid lines; dash-dotted for the circular-padding null (dashed lines mark R)."""
    return "-" if run.padding == "zeros" else "-."


def _radius_lines(ax, n: int, radius: int, orient: str = "v", color: str = "0.35") -> None:
    """The receptive-field boundaries R and n-1-R as dashed lines."""
    for pos in (radius, n - 1 - radius):
        (ax.axvline if orient == "v" else ax.axhline)(pos, color=color, ls="--", lw=0.9)


def unet_predictions(runs):
    """Mean U-Net prediction per index, one panel per run: every seed's mean (lines), the target
    ramp, and the receptive radius R from both ends (dashed); localized indices as a rug."""
    fig, axes = canvas(ncols=len(runs), height=3.4, sharey=True)
    for ax, run in zip(axes[0], runs):
        n, c = run.seq_len, color(run)
        idx = np.arange(n)
        ax.plot(idx, ramp(n).numpy(), color="k", lw=1, ls=":", label="target ramp")
        for s, mean in enumerate(run.mean):
            label = run.name if s == 0 else None
            ax.plot(idx, mean, color=c, ls=_style(run), lw=1.2, alpha=0.9, label=label)
        _radius_lines(ax, n, run.radius)
        lo = ax.get_ylim()[0]
        for s, p in enumerate(run.per_seed):
            ax.plot(
                idx[p.localized],
                np.full(p.localized.sum(), lo + 0.02 * (s + 1)),
                "|",
                color=c,
                ms=6,
            )
        ax.set_xlim(0, n - 1)
        ax.set_xlabel("index i")
        ax.set_title(f"U-Net, {run.name} (R = {run.radius})")
    axes[0, 0].set_ylabel("mean prediction")
    shared_legend(fig)
    return fig


def grid_predictions(runs):
    """2-D CNN: what each axis test grades, the row profile (the row-coordinate channel
    averaged over columns) and the column profile of every seed of every run against the ramp,
    the normalized networks (the first run, thin) over both nulls (wide, pale: a null the
    normalized networks do not beat lies under them); dashed, R from each end."""
    fig, axes = canvas(ncols=2, height=3.0, sharey=True)
    for ax, axis in zip(axes[0], ("rows", "cols")):
        first = getattr(runs[0], axis)
        n = first.seq_len
        ax.plot(np.arange(n), ramp(n).numpy(), color="k", lw=1, ls=":", label="target ramp")
        for r, run in enumerate(runs):
            kw = dict(lw=1.2, alpha=0.9, zorder=3) if r == 0 else dict(lw=3, alpha=0.45)
            for s, mean in enumerate(getattr(run, axis).mean):
                ax.plot(np.arange(n), mean, color=color(run), ls=_style(run),
                        label=run.name if s == 0 else None, **kw)  # fmt: skip
        _radius_lines(ax, n, first.radius)
        ax.set_xlim(-0.5, n - 0.5)
        ax.set_xlabel("row index i" if axis == "rows" else "column index j")
        ax.set_title("row profile" if axis == "rows" else "column profile")
    axes[0, 0].set_ylabel("mean prediction")
    shared_legend(fig)
    return fig
