"""Paper A's explorable figures (:mod:`normbook.pages.views`): each is drawn from results a
chapter already computed, and sits under the static figure it explores."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from normbook.pages.views import View, round_floats, view
from normbook.paper_a.cached.task import ramp
from normbook.paper_a.grading.sesoi import SLOPE

_SEED_ALL = "every seed"


def _seed_param(seeds) -> alt.Parameter:
    options = [_SEED_ALL, *(f"seed {s}" for s in seeds)]
    return alt.param(
        name="seed", value=_SEED_ALL, bind=alt.binding_select(options=options, name="show ")
    )


def _seed_filter() -> str:
    return f"seed == '{_SEED_ALL}' || datum.seed == seed"


POINTS_PER_LINE = 100  # a line of more indices is thinned (at paper A's l = 600: 1.5 MB to 0.3)


def shown_indices(seq_len: int) -> np.ndarray:
    """Every index up to :data:`POINTS_PER_LINE` of them, else every k-th and the last."""
    step = -(-seq_len // POINTS_PER_LINE)
    return np.unique(np.r_[np.arange(0, seq_len, step), seq_len - 1])


def _prediction_rows(mean: np.ndarray, seeds, **fields) -> list[dict]:
    """One row per (seed, shown index) of seed-wise mean predictions ``mean`` (M, L)."""
    idx = shown_indices(mean.shape[-1])
    rows = []
    for s, m in zip(seeds, mean):
        rows += [
            {**fields, "seed": f"seed {s}", "index": int(i), "mean": v}
            for i, v in zip(idx, round_floats(m[idx]))
        ]
    return rows


def _domain(data: pd.DataFrame) -> list[float]:
    """Every state's and seed's predictions and the ramp in one fixed y range, so that moving
    a control moves the lines, not the axis."""
    return [min(-0.05, float(data["mean"].min())), max(1.05, float(data["mean"].max()))]


def _index_scale(seq_len: int) -> alt.Scale:
    return alt.Scale(domain=[0, seq_len - 1], nice=False)


def _predictions_layer(data: pd.DataFrame, seq_len: int, color: str, *filters) -> alt.LayerChart:
    """Target ramp (dashed) and one line per seed of the mean prediction, of the rows that
    pass every filter (a layer's own data do not inherit its parent's transforms)."""
    idx = shown_indices(seq_len)
    target = pd.DataFrame({"index": idx, "target": round_floats(ramp(seq_len)[idx])})
    ramp_line = (
        alt.Chart(target)
        .mark_line(color="black", strokeDash=[4, 3], strokeWidth=1)
        .encode(x="index:Q", y="target:Q")
    )
    lines = alt.Chart(data)
    for f in filters:
        lines = lines.transform_filter(f)
    lines = lines.mark_line(strokeWidth=1.3, color=color).encode(
        x=alt.X("index:Q", title="index i", scale=alt.Scale(domain=[0, seq_len - 1], nice=False)),
        y=alt.Y("mean:Q", title="mean prediction", scale=alt.Scale(domain=_domain(data))),
        detail="seed:N",
        tooltip=["seed:N", "index:Q", alt.Tooltip("mean:Q", format=".3f")],
    )
    return alt.layer(ramp_line, lines)


def _panel(layers: list, param, title: str) -> alt.LayerChart:
    """One page-wide panel: ``layers`` on shared axes, driven by the control ``param``."""
    return alt.layer(*layers).add_params(param).properties(width=560, height=260, title=title)


def training_states(curves) -> View:
    """Fig. 1a over training: every kept state's mean predictions, a slider over the states
    and a seed selector; one panel per network (``curves``: :class:`localization.Curve`)."""
    rows = []
    for curve in curves:
        name = curve.runs[-1].name
        for k, (step, r) in enumerate(zip(curve.steps, curve.runs)):
            rows += _prediction_rows(
                r.out.pooled_mean, r.seeds, network=name, state=k, step=int(step)
            )
    data = pd.DataFrame(rows)
    seq_len = int(data["index"].max()) + 1
    n_states = len(curves[0].steps)
    state = alt.param(
        name="state",
        value=n_states - 1,
        bind=alt.binding_range(min=0, max=n_states - 1, step=1, name="kept training state "),
    )
    seed = _seed_param(curves[0].runs[-1].seeds)
    panels = []
    for curve, color in zip(curves, ("#0072B2", "#D55E00", "#009E73")):
        name = curve.runs[-1].name
        sub = data[data.network == name]
        layer = _predictions_layer(sub, seq_len, color, alt.datum.state == state, _seed_filter())
        label = (
            alt.Chart(sub)
            .transform_filter(alt.datum.state == state)
            .transform_aggregate(step="max(step)")
            .transform_calculate(text="'after ' + format(datum.step, ',') + ' steps'")
            .mark_text(align="left", baseline="top", x=5, y=5, fontSize=12)
            .encode(text="text:N")
        )
        panel = alt.layer(layer, label).properties(width=260, height=230, title=f"norm = {name}")
        panels.append(panel)
    chart = alt.hconcat(*panels).add_params(state, seed).resolve_scale(y="shared")
    return view(
        "a1-training-states",
        chart,
        "a slider over the training states kept during training, and a seed selector",
        "Mean prediction against index at each kept training state, without and with "
        "normalization, with the target ramp dashed.",
    )


def group_predictions(groups) -> View:
    """Fig. 4 by group count: the mean predictions of the networks with G groups (selector),
    with their localization distance and interior slope."""
    rows = []
    for g in groups.group_counts:
        r = groups.runs[g]
        rows += _prediction_rows(r.out.pooled_mean, r.seeds, groups=int(g))
    data = pd.DataFrame(rows)
    seq_len = int(data["index"].max()) + 1
    summary = pd.DataFrame(
        [
            {
                "groups": int(g),
                "text": "distance "
                + ", ".join(str(s.distance) for s in groups.runs[g].per_seed)
                + "; interior slope "
                + ", ".join(f"{s.effect_interior.slope:.3f}" for s in groups.runs[g].per_seed),
            }
            for g in groups.group_counts
        ]
    )
    g_param = alt.param(
        name="groups",
        value=int(groups.group_counts[-1]),
        bind=alt.binding_select(
            options=[int(g) for g in groups.group_counts], name="GroupNorm groups G "
        ),
    )
    text = (
        alt.Chart(summary)
        .transform_filter(alt.datum.groups == g_param)
        .mark_text(align="left", baseline="top", x=5, y=5, fontSize=11)
        .encode(text="text:N")
    )
    chart = _panel(
        [_predictions_layer(data, seq_len, "#009E73", alt.datum.groups == g_param), text],
        g_param,
        "GroupNorm: mean prediction per index",
    )
    return view(
        "a3-group-predictions",
        chart,
        "a selector over the group count G (G = 1 is LayerNorm-like, G = C InstanceNorm)",
        "Mean prediction against index of the GroupNorm networks with the chosen group "
        "count, with the target ramp dashed.",
    )


def packnorm_kernels(heads: dict, a2, kernel: int) -> View:
    """The receptive-field test of PackNorm: accuracy against overlap, a toggle between A2's
    network and the kernel-``kernel`` networks, one line per seed and the pooled accuracy."""
    series = {f"A2's network (k = {a2.setup.net.kernel}), {a2.setup.net.head} head": a2.pack}
    series.update({f"k = {kernel}, {h} head": acc for h, acc in heads.items()})
    rows = []
    for label, acc in series.items():
        lo, hi = acc.pooled_ci
        for i, o in enumerate(acc.overlaps):
            rows.append(
                dict(network=label, overlap=int(o), seed="pooled", acc=float(acc.pooled_acc[i]),
                     lo=float(lo[i]), hi=float(hi[i]))
            )  # fmt: skip
            for j, s in enumerate(acc.seeds):
                rows.append(dict(network=label, overlap=int(o), seed=f"seed {s}",
                                 acc=float(acc.acc[i, j])))  # fmt: skip
    data = pd.DataFrame(rows)
    names = list(series)
    net = alt.param(
        name="network", value=names[-1], bind=alt.binding_radio(options=names, name="network ")
    )
    base = alt.Chart(data).transform_filter(alt.datum.network == net)
    x = alt.X("overlap:Q", title="overlap o (samples)")
    band = (
        base.transform_filter(alt.datum.seed == "pooled")
        .mark_area(opacity=0.2, color="#0072B2")
        .encode(x=x, y="lo:Q", y2="hi:Q")
    )
    pooled = (
        base.transform_filter(alt.datum.seed == "pooled")
        .mark_line(point=True, color="#0072B2")
        .encode(
            x=x,
            y=alt.Y("acc:Q", title="test accuracy", scale=alt.Scale(domain=[0.3, 1.0])),
            tooltip=["overlap:Q", alt.Tooltip("acc:Q", format=".3f")],
        )
    )
    per_seed = (
        base.transform_filter(alt.datum.seed != "pooled")
        .mark_line(strokeWidth=0.8, strokeDash=[2, 2], color="#555")
        .encode(x=x, y="acc:Q", detail="seed:N", tooltip=["seed:N", "overlap:Q", "acc:Q"])
    )
    chance = alt.Chart(pd.DataFrame({"y": [0.5]})).mark_rule(color="#999").encode(y="y:Q")
    chart = _panel([band, per_seed, pooled, chance], net, "PackNorm: accuracy against overlap")
    return view(
        "a4-packnorm-kernels",
        chart,
        f"a toggle between chapter A2's network and the kernel-{kernel} networks",
        "Test accuracy against the overlap of the two paths for the chosen network, pooled "
        "over seeds with its interval and one dashed line per seed; chance is 0.5.",
    )


def band_slopes(reaches) -> View:
    """The reach study's band slopes against distance (log scale), a selector over the
    families (normalization layers, sequence length); one point per seed, the seed mean."""
    rows = []
    for r in reaches:
        label = r.family.label
        for h, c in enumerate(r.centres):
            rows.append(dict(family=label, distance=float(c), seed="mean",
                             slope=float(r.mean[h]), se=float(r.se[h])))  # fmt: skip
            for j, s in enumerate(r.bands.slope[:, h]):
                rows.append(dict(family=label, distance=float(c), seed=f"seed {j}",
                                 slope=float(s)))  # fmt: skip
    data = pd.DataFrame(rows)
    data = data[data.slope > 0]  # a log axis cannot show the others (the table lists them)
    names = [r.family.label for r in reaches]
    fam = alt.param(
        name="family", value=names[0], bind=alt.binding_select(options=names, name="family ")
    )
    base = alt.Chart(data).transform_filter(alt.datum.family == fam)
    x = alt.X("distance:Q", title="distance from the end (units of R)")
    y = alt.Y("slope:Q", title="band slope (1 = the ramp)", scale=alt.Scale(type="log"))
    mean = (
        base.transform_filter(alt.datum.seed == "mean")
        .mark_line(point=True, color="#0072B2")
        .encode(x=x, y=y, tooltip=["distance:Q", alt.Tooltip("slope:Q", format=".2g")])
    )
    seeds = (
        base.transform_filter(alt.datum.seed != "mean")
        .mark_point(color="#555", size=20)
        .encode(x=x, y=y, tooltip=["seed:N", "distance:Q", alt.Tooltip("slope:Q", format=".2g")])
    )
    rules = pd.DataFrame({"x": [3.0]})
    hop = alt.Chart(rules).mark_rule(strokeDash=[4, 3], color="#666").encode(x="x:Q")
    sesoi = (
        alt.Chart(pd.DataFrame({"y": [SLOPE.value]}))
        .mark_rule(strokeDash=[1, 2], color="#666")
        .encode(y="y:Q")
    )
    chart = _panel([seeds, mean, hop, sesoi], fam, "Band slope against distance")
    return view(
        "a5-band-slopes",
        chart,
        "a selector over the network families (normalization layers and sequence length)",
        "Band slope against the band's distance from the end, log scale, for the chosen "
        "family: its seed mean and one point per seed; dashed, one hop (3R); dotted, the "
        "smallest slope of interest.",
    )
