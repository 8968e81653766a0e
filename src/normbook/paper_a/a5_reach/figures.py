"""Chapter A5's figures, one function each (measured results in, a figure out): the band
slopes against distance, and the law fitted to the shares kept."""

from __future__ import annotations

import numpy as np
from scipy import stats as sps

from normbook.grading.claims import CLAIM_CONFIDENCE
from normbook.pages.figures import canvas, shared_legend
from normbook.paper_a import paper_values
from normbook.paper_a.grading.sesoi import SLOPE
from normbook.paper_a.runs.reach import AXES, Law, Reach

LINEAR_BELOW = 0.01  # law_fit's y axis: linear within ± this share (zero and negative shares)


AXIS_TITLES = {"norm layers": "more norm layers (fixed l and R)",
               "length": "longer sequences (fixed R and depth)"}  # fmt: skip


def band_slopes(reaches: list[Reach], alpha: float):
    """Seed-mean band slope against the band's distance from the end (band centres, units of
    R), log scale, one panel per axis of the study; hollow: not above 0 at one-sided level
    ``alpha`` (drawn at that bound, as the significance reach reads them); dotted: the SESOI of
    a slope."""
    fig, axes = canvas(ncols=2, height=3.4, sharey=True)
    z = sps.norm.ppf(1 - alpha)
    colors = {r.family.label: f"C{i}" for i, r in enumerate(reaches)}  # one per family
    for ax, axis in zip(axes[0], AXES):
        for r in (x for x in reaches if axis in x.family.axes):
            mean, se, c = r.mean, r.se, colors[r.family.label]
            solid = mean > z * se
            shown = np.where(solid, mean, z * se)
            ax.plot(r.centres, shown, "-", color=c, lw=1, label=r.family.label)
            ax.plot(r.centres[solid], mean[solid], "o", color=c, ms=5)
            ax.plot(r.centres[~solid], shown[~solid], "o", mfc="none", color=c, ms=5)
        ax.axvline(3, color="0.4", ls="--", lw=0.8, label="one hop (3R)")
        ax.axhline(SLOPE.value, color="0.4", ls=":", lw=0.8, label=f"SESOI {SLOPE.value:g}")
        ax.set_yscale("log")
        ax.set_xlabel("distance from the end (units of R)")
        ax.set_title(AXIS_TITLES[axis])
    axes[0, 0].set_ylabel("band slope (1 = the ramp)")
    shared_legend(fig)
    return fig


def _law_line(ax, law: Law, points, color: str) -> None:
    """The law and its interval along ``points`` ((x, (N, l)) pairs)."""
    xs = np.array([x for x, _ in points])
    est = np.array([law.share(*at, CLAIM_CONFIDENCE) for _, at in points])
    ax.plot(xs, est[:, 0], color=color, lw=1.2, label="fitted law")
    ax.fill_between(xs, est[:, 1], est[:, 2], color=color, alpha=0.15, lw=0,
                    label=f"{CLAIM_CONFIDENCE:.0%} interval")  # fmt: skip


def law_fit(reaches: list[Reach], law: Law):
    """Every model's share kept (second band over first) against the number of normalization
    layers (left) and l (right), log-log, with the fitted power law and its interval, extended
    to paper A's network (the law's value there is a prediction, not a measurement). Every
    model is drawn, as the law keeps every model: the y axis is logarithmic above
    ``LINEAR_BELOW`` and linear around 0, where shares at or below 0 lie."""
    fig, axes = canvas(ncols=2, height=3.4, sharey=True)
    specs = (
        ("norm layers", lambda r: r.family.norm_layers, law.n0, paper_values.NORM_LAYERS,
         lambda x: (x, law.l0), "normalization layers N"),
        ("length", lambda r: r.family.seq_len, law.l0, paper_values.SEQ_LEN,
         lambda x: (law.n0, x), "sequence length l"),
    )  # fmt: skip
    for ax, (axis, x_of, x0, x_paper, args, xlabel) in zip(axes[0], specs):
        on = [r for r in reaches if axis in r.family.axes]
        for r in on:
            keep = np.isfinite(r.kept)
            x = np.full(keep.sum(), x_of(r), dtype=float)
            ax.plot(x, r.kept[keep], "o", color="C0", ms=4, alpha=0.8)
        if law.fitted:
            ends = [x0, x_paper, *[x_of(r) for r in on]]
            xs = np.geomspace(min(ends), max(ends), 40)
            _law_line(ax, law, [(x, args(x)) for x in xs], "C1")
        ax.axvline(x_paper, color="0.4", ls="--", lw=0.8, label="paper A's value")
        ax.set_xscale("log", base=2)
        ax.set_yscale("symlog", linthresh=LINEAR_BELOW)
        ax.axhline(0, color="0.6", lw=0.6)
        ax.set_xlabel(xlabel)
    axes[0, 0].set_ylabel("share of the first band's slope kept")
    shared_legend(fig)
    return fig
