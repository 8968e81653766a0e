"""Chapter A5's figures and tables, one function each (measured results in, a figure or a
markdown table out)."""

from __future__ import annotations

import numpy as np
from scipy import stats as sps

from normbook.grading.claims import CLAIM_CONFIDENCE
from normbook.pages.figures import canvas, shared_legend
from normbook.pages.fmt import bracket, interval, mean_sd, table
from normbook.paper_a import paper_values as reported
from normbook.paper_a.grading.sesoi import SLOPE
from normbook.paper_a.runs import reach
from normbook.paper_a.runs.reach import AXES, Law, Reach
from normbook.paper_a.specs import A1, shares_a1_models

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
        ("norm layers", lambda r: r.family.norm_layers, law.n0, reported.NORM_LAYERS,
         lambda x: (x, law.l0), "normalization layers N"),
        ("length", lambda r: r.family.seq_len, law.l0, reported.SEQ_LEN,
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


def reach_table(reaches: list[Reach], sesoi: float, alpha: float, paper_n: int) -> str:
    """Per family: geometry, budget, band slopes (seed mean ± SE), the share kept, and the
    reaches (units of R)."""
    rows = []
    for r in reaches:
        f = r.family
        rows.append({
            "family": f.label,
            "k, d, kernel-1 blocks": f"{f.cnn.kernel}, {f.cnn.depth}, {f.cnn.mix}",
            "R": r.bands.radius,
            "steps": f"{f.setup.train.steps:,}",
            "training s per model": f"{r.train_seconds:.0f}",
            "seeds": len(r.kept),
            "band slopes (mean ± SE)": "; ".join(
                f"{m:.4f} ± {s:.4f}" for m, s in zip(r.mean, r.se)),
            "share kept": mean_sd(r.kept, ".3f") if r.kept.size and np.isfinite(r.kept).any()
            else "– (no model kept a first-band slope to share)",
            f"effect reach (slope < {sesoi:g})": f"{r.effect_reach(sesoi):.1f}",
            "significance reach": f"{r.significance_reach(alpha):.1f}",
            f"at {paper_n:,} per index": f"{r.significance_reach(alpha, paper_n):.1f}",
        })  # fmt: skip
    return table(rows)


def prediction_table(share_law: Law, slope_row, flags_row) -> str:
    """The laws' predictions for paper A's network beside what the paper reports."""
    share = share_law.share(reported.NORM_LAYERS, reported.SEQ_LEN, CLAIM_CONFIDENCE)
    rows = [
        {"quantity": "share of the first band's slope kept beyond 3R",
         "predicted": bracket(*share, ".3f", why="the law could not be fitted"),
         "paper A": "not reported"},
        {"quantity": "slope beyond 3R (units of the ramp's)",
         "predicted": _interval(slope_row.test, ".3g"), "paper A": "not reported"},
        {"quantity": f"indices beyond 3R flagged at {reported.SAMPLES_PER_INDEX:,} per index",
         "predicted": _interval(flags_row.test, ".3f"),
         "paper A": "all of them (Fig. 1a: the whole sequence localized)"},
    ]  # fmt: skip
    return table(rows)


def law_text(law: Law) -> str:
    """The fitted law in words, with each coefficient's interval."""
    if not law.fitted:
        return "too few models to fit it"
    parts = [f"log2 E[share kept] = {law.coef[0]:.2f}"]
    for i, name in ((1, f"log2(N / {law.n0})"), (2, f"log2(l / {law.l0})")):
        if law.cov[i, i] > 0:
            lo, hi = law.interval(i, CLAIM_CONFIDENCE)
            parts.append(f"{law.coef[i]:+.2f} [{lo:.2f}, {hi:.2f}] × {name}")
    p, d_lof, d_pe = law.lack_of_fit
    fit = (f"lack of fit F test p = {p:.3g} on {d_lof} and {d_pe} degrees of freedom" if p == p
           else "lack of fit not testable (as many families as terms)")  # fmt: skip
    return (" ".join(parts) + f" ({CLAIM_CONFIDENCE:.0%} intervals, sandwich standard errors; "
            f"every one of {law.n_models} models kept, a multiplicative spread between models of "
            f"{law.tau:.2f}; {law.dof} residual degrees of freedom; {fit})")  # fmt: skip


def exponents_text(law: Law) -> str:
    """The fitted exponents held against the symmetry argument's b1 = 1 and b2 = -1."""
    if not law.fitted:
        return "no law was fitted"
    out = []
    for i, name, predicted in ((1, "b1", 1.0), (2, "b2", -1.0)):
        if law.cov[i, i] <= 0:
            out.append(f"{name} is not measured (its axis has one value)")
            continue
        lo, hi = law.interval(i, CLAIM_CONFIDENCE)
        where = "contains" if lo <= predicted <= hi else "excludes"
        out.append(f"{name}'s interval [{lo:.2f}, {hi:.2f}] {where} the predicted {predicted:g}")
    return "; ".join(out)


def _interval(test, spec: str) -> str:
    return interval(test, spec, unit="family")


def band_text(study) -> str:
    """The band beyond one hop, for prose."""
    lo, hi = (x / study.reaches[0].bands.radius for x in reach.beyond_band(study.families))
    return f"distances {lo:.3g}R to {hi:.3g}R from the nearer end"


def control_table(controls) -> str:
    """Every family's positive controls."""
    return table([{"family": c.family, "control": c.check, "passed": "yes" if c.passed else "no",
                   "values": c.evidence} for c in controls])  # fmt: skip


def length_note(n_lens: int) -> str:
    """What the number of lengths lets the length axis say, for the chapter's prose."""
    if n_lens >= 3:
        return f"{n_lens} lengths give the length exponent and the rank trend over l room to show"
    if n_lens == 1:
        return (
            "with one length at this profile there is no length axis: the length row is not "
            "testable here, and the law has no length term, so its predictions for paper A's "
            "network are not testable either; the `paper` profile trains three lengths"
        )
    return (f"with {n_lens} lengths the length exponent rests on them alone and a rank trend over "
            "lengths is weak evidence (two lengths bound Spearman's ρ over every model well "
            "below 1); a third length needs more training than the `cpu` budget holds, so the "
            "`paper` profile trains three")  # fmt: skip


def base_note(params) -> str:
    """Whether the base family is chapter A1's InstanceNorm networks, for prose."""
    if shares_a1_models(params):
        return "chapter A1's networks at this profile, loaded from the cache when A1 has run"
    a1 = A1.resolve(params.profile)
    return (f"its own networks: chapter A1 uses l = {a1.seq_len}, d = {a1.depth} and "
            f"{a1.steps:,} steps at this profile")  # fmt: skip
