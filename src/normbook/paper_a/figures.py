"""Every data figure of chapters A1-A3, one function each (Fig. 2 is in :mod:`.diagrams`,
chapter A4's in :mod:`.stress_figures`, A5's in :mod:`.reach_figures`).

Each function takes measured results, draws, and returns the figure; the chapter glues it
under a label and captions it with the function's name. No computation happens here.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from normbook.grading import stats
from normbook.pages.figures import NORM_COLORS, canvas, running_mean, shared_legend
from normbook.paper_a import paper_values as reported
from normbook.paper_a.cached.packnet import generator, sample_pair
from normbook.paper_a.cached.task import ramp, sample_inputs
from normbook.paper_a.measures import multihop
from normbook.paper_a.runs.packnorm import PackResult
from normbook.paper_a.runs.which_norms import METRICS, EvalBatchSweep, GroupSweep, NullLevel
from normbook.runtime.seeding import generators


def color(run) -> str:
    """A run's colour: by normalization, population statistics apart."""
    if run.cnn.norm == "batch" and run.cnn.batch_eval == "population":
        return NORM_COLORS["population"]
    return NORM_COLORS[run.cnn.norm]


def receptive_bands(ax, seq_len: int, radius: int) -> None:
    """Shade the two boundary bands a receptive field of radius R can reach."""
    for lo, hi in ((0, radius), (seq_len - 1 - radius, seq_len - 1)):
        ax.axvspan(lo, hi, color="0.85", zorder=0, lw=0)


def _mean_predictions(ax, run, title: str) -> None:
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


def _depth_map(ax, run, title: str):
    """Depth x index map: fraction of seeds localizing each index at each depth, with the
    receptive-field reach R(depth) from both boundaries. Returns the image, for the one colour
    bar of the figure's maps (:func:`_map_colorbar`)."""
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


def _map_colorbar(fig, im, axes) -> None:
    """One colour bar beside the depth maps ``axes`` (every map has the same scale, 0 to 1)."""
    fig.colorbar(im, ax=list(axes), label="fraction of seeds localized", shrink=0.9, aspect=25)


def task_example(seq_len: int, radius: int):
    """One training example of the localization task: noise in, ramp out, with the bands
    within R of the ends where a convolution can see the padding."""
    x = sample_inputs(1, 1, seq_len, generators([0], "check"))[0, 0].numpy()
    fig, axes = canvas(height=2.6)
    ax = axes[0, 0]
    receptive_bands(ax, seq_len, radius)
    ax.plot(x, lw=0.8, color="0.3", label="input $x_i$ (noise)")
    ax.plot(ramp(seq_len).numpy(), color="k", lw=1.5, ls="--", label="target $y_i = i/(\\ell-1)$")
    ax.set_xlim(0, seq_len - 1)
    ax.set_xlabel("index i")
    shared_legend(fig)
    return fig


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


def mean_predictions(runs):
    """Fig. 1a: mean prediction per index, one panel per run (shared y axis)."""
    fig, axes = canvas(ncols=len(runs), height=3.4, sharey=True)
    for ax, run in zip(axes[0], runs):
        _mean_predictions(ax, run, f"norm = {run.name}")
    axes[0, 0].set_ylabel("prediction")
    shared_legend(fig)
    return fig


def depth_maps(runs):
    """Fig. 1b: where in depth the probes localize, one panel per run."""
    fig, axes = canvas(ncols=len(runs), height=3.6, sharey=True)
    for ax, run in zip(axes[0], runs):
        im = _depth_map(ax, run, f"norm = {run.name}")
    _map_colorbar(fig, im, axes[0, :2])  # beside the first line of panels
    shared_legend(fig)
    return fig


def predictions_and_maps(runs, title: str):
    """Figs. 5-6: per run (column), mean predictions (top) and depth-probe maps (bottom, one
    colour bar beside them); the legend under the panels."""
    fig, axes = canvas(ncols=len(runs), nrows=2, height=3.0)
    for col, run in enumerate(runs):
        _mean_predictions(axes[0, col], run, f"{run.name}: mean prediction")
        im = _depth_map(axes[1, col], run, f"{run.name}: localized by depth probes")
    _map_colorbar(fig, im, axes[1])
    axes[0, 0].set_ylabel("prediction")
    fig.suptitle(title)
    shared_legend(fig)
    return fig


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
    lo_f, hi_f = reported.pack_transition_fraction()
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


def groups(sweep: GroupSweep, null: NullLevel, radius: int):
    """Fig. 4: localization distance, interior fraction and interior slope against G; seeds as
    dots, their mean as a line, the null networks' largest value dashed."""
    fig, axes = canvas(ncols=3, height=3.2)
    gs, c = sweep.group_counts, NORM_COLORS["group"]
    for ax, (label, metric) in zip(axes[0], METRICS.items()):
        vals = sweep.values(metric)
        for j in range(vals.shape[1]):
            ax.plot(
                gs, vals[:, j], "o", color=c, alpha=0.6, ms=5, label="seeds" if j == 0 else None
            )
        ax.plot(gs, vals.mean(axis=1), "-", color=c, lw=1.5, label="mean over seeds")
        ax.axhline(
            null.level(label),
            color=NORM_COLORS["none"],
            ls="--",
            lw=1,
            label="null level (max over the null networks)",
        )
        if label == "localization distance":
            ax.axhline(radius, color="c", ls=":", lw=1.2, label="R")
        ax.set_xscale("log", base=2)
        ax.set_xticks(gs, [str(g) for g in gs])
        ax.set_xlabel(f"GroupNorm groups G (C = {sweep.width})")
        ax.set_title(label)
    shared_legend(fig)
    fig.suptitle("Fig. 4: GroupNorm, localization vs the number of groups")
    return fig


def eval_batch_size(sweep: EvalBatchSweep):
    """BatchNorm with minibatch statistics against the evaluation batch size: interior fraction
    and distance under both tests, interior slope; population statistics as a reference."""
    fig, axes = canvas(ncols=3, height=3.2)
    bs, c = sweep.sizes, NORM_COLORS["batch"]
    for ax, label in zip(
        axes[0],
        ("interior fraction localized", "localization distance", "interior slope (effect size)"),
    ):
        metric = METRICS[label]
        for test, ls in (("per_seed", "-"), ("batch_mean", "--")):
            if label.startswith("interior slope") and test == "batch_mean":
                continue  # the mean predictions, hence the slope, are the same for both tests
            vals = np.array(
                [[metric(s) for s in getattr(sweep.runs[b], test)] for b in bs], dtype=float
            )
            for j in range(vals.shape[1]):
                ax.plot(bs, vals[:, j], "o", color=c, alpha=0.5, ms=4)
            name = "per-sample test" if test == "per_seed" else "batch-mean test"
            ax.plot(bs, vals.mean(axis=1), ls=ls, color=c, lw=1.5, label=f"minibatch, {name}")
        ax.axhline(
            np.mean([metric(s) for s in sweep.population.batch_mean]),
            color=NORM_COLORS["population"],
            ls=":",
            lw=1.5,
            label="population statistics",
        )
        ax.axvline(sweep.train_batch, color="0.6", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xticks(bs, [str(b) for b in bs])
        ax.set_xlabel("evaluation batch size b")
        ax.set_title(label)
    shared_legend(fig)
    fig.suptitle(
        "BatchNorm with minibatch statistics: the evaluation batch size\n"
        f"(grey line: training batch {sweep.train_batch})"
    )
    return fig


TEST_NAMES = {
    "span": "span test (primary)",
    "neighbour": "neighbour test (before)",
    "definition": "Definition 2.3 (reference)",
}


def operating_characteristic(oc, alpha: float):
    """Detection rate per index against the per-index step (in standard errors), one panel per
    noise correlation length, one line per localization test; dotted, the level alpha."""
    corr_lens = sorted(oc.corr_len.unique())
    fig, axes = canvas(len(corr_lens), height=3.0, sharey=True)
    for ax, corr_len in zip(axes[0], corr_lens):
        for test, name in TEST_NAMES.items():
            g = oc[(oc.test == test) & (oc.corr_len == corr_len)].sort_values("step")
            ax.plot(g.step, g.rate, marker="o", ms=3, label=name)
        ax.axhline(alpha, color="k", ls=":", lw=1, label=f"α = {alpha:g}")
        ax.set_yscale("log")
        ax.set_ylim(1e-4, 1.05)
        ax.set_title(f"noise correlated over {corr_len} indices")
        ax.set_xlabel("step per index (standard errors)")
    axes[0, 0].set_ylabel("fraction of indices localized")
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
