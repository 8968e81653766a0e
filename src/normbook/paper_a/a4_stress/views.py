"""Chapter A4's explorable view: the receptive-field test of PackNorm
(:mod:`normbook.pages.views`), drawn from the sweeps the chapter already ran."""

from __future__ import annotations

import altair as alt
import pandas as pd

from normbook.pages.views import View, view
from normbook.paper_a.view_parts import panel


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
    chart = panel([band, per_seed, pooled, chance], net, "PackNorm: accuracy against overlap")
    return view(
        "a4-packnorm-kernels",
        chart,
        f"a toggle between chapter A2's network and the kernel-{kernel} networks",
        "Test accuracy against the overlap of the two paths for the chosen network, pooled "
        "over seeds with its interval and one dashed line per seed; chance is 0.5.",
    )
