"""Chapter A5's explorable view: the band slopes against distance
(:mod:`normbook.pages.views`), drawn from the study the chapter already measured."""

from __future__ import annotations

import altair as alt
import pandas as pd

from normbook.pages.views import View, view
from normbook.paper_a.grading.sesoi import SLOPE
from normbook.paper_a.view_parts import panel


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
    chart = panel([seeds, mean, hop, sesoi], fam, "Band slope against distance")
    return view(
        "a5-band-slopes",
        chart,
        "a selector over the network families (normalization layers and sequence length)",
        "Band slope against the band's distance from the end, log scale, for the chosen "
        "family: its seed mean and one point per seed; dashed, one hop (3R); dotted, the "
        "smallest slope of interest.",
    )
