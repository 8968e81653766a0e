"""Chapter B3's explorable figures (:mod:`normbook.pages.views`), drawn from results it
computed."""

from __future__ import annotations

import altair as alt
import pandas as pd

from normbook.pages.views import View, round_floats, view
from normbook.paper_b.cached.training import bn_label


def layer_projections(projs, class_dbi: dict, dataset: str) -> View:
    """Each layer's representations of ``dataset`` in 2-D (PCA), with BatchNorm beside
    without, coloured by class, a slider over the layers; each panel's title gives that
    network's class DBI at the layer (``class_dbi``: variant -> [seeds, layers])."""
    projs = [p for p in projs if p.variant.dataset == dataset]
    rows, titles = [], []
    for p in projs:
        label = bn_label(p.variant.batchnorm)
        dbi = class_dbi[p.variant][p.seed_index]
        for j, name in enumerate(p.layers):
            xs, ys = round_floats(p.coords[j, :, 0], 3), round_floats(p.coords[j, :, 1], 3)
            rows += [dict(v=label, l=j + 1, x=a, y=b, c=str(int(c)))
                     for a, b, c in zip(xs, ys, p.labels)]  # fmt: skip
            titles.append(dict(v=label, l=j + 1, t=f"{name}: class DBI {dbi[j]:.2f} "
                               f"(PCA keeps {p.explained[j].sum():.0%})"))  # fmt: skip
    data, text = pd.DataFrame(rows), pd.DataFrame(titles)
    n_layers = int(data["l"].max())
    layer = alt.param(
        name="layer", value=1,
        bind=alt.binding_range(min=1, max=n_layers, step=1, name="conv layer "),
    )  # fmt: skip
    panels = []
    for p in projs:
        label = bn_label(p.variant.batchnorm)
        points = (
            alt.Chart(data)
            .transform_filter((alt.datum.v == label) & (alt.datum.l == layer))
            .mark_circle(size=14, opacity=0.7)
            .encode(
                x=alt.X("x:Q", title="PC 1", axis=alt.Axis(labels=False, ticks=False)),
                y=alt.Y("y:Q", title="PC 2", axis=alt.Axis(labels=False, ticks=False)),
                color=alt.Color("c:N", title="class", scale=alt.Scale(scheme="tableau10")),
                tooltip=[alt.Tooltip("c:N", title="class")],
            )
        )
        caption = (
            alt.Chart(text)
            .transform_filter((alt.datum.v == label) & (alt.datum.l == layer))
            .mark_text(align="left", baseline="top", x=4, y=4, fontSize=11)
            .encode(text="t:N")
        )
        panels.append(alt.layer(points, caption).properties(width=240, height=240, title=label))
    chart = alt.hconcat(*panels).add_params(layer).resolve_scale(x="independent", y="independent")
    return view(
        f"b3-projections-{dataset}",
        chart,
        f"a slider over the conv layers of the {dataset} networks, BatchNorm beside no BatchNorm",
        f"Two-dimensional PCA projection of one layer's representations of {dataset} test "
        "images, coloured by class, with and without BatchNorm.",
    )
