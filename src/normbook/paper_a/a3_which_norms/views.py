"""Chapter A3's explorable view: Fig. 4 by group count (:mod:`normbook.pages.views`), drawn
from the networks the chapter already evaluated."""

from __future__ import annotations

import altair as alt
import pandas as pd

from normbook.pages.views import View, view
from normbook.paper_a.view_parts import panel, prediction_rows, predictions_layer


def group_predictions(groups) -> View:
    """Fig. 4 by group count: the mean predictions of the networks with G groups (selector),
    with their localization distance and interior slope."""
    rows = []
    for g in groups.group_counts:
        r = groups.runs[g]
        rows += prediction_rows(r.out.pooled_mean, r.seeds, groups=int(g))
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
    chart = panel(
        [predictions_layer(data, seq_len, "#009E73", alt.datum.groups == g_param), text],
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
