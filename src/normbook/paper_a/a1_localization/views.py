"""Chapter A1's explorable view: Fig. 1a over training (:mod:`normbook.pages.views`), drawn
from the kept states the chapter already evaluated."""

from __future__ import annotations

import altair as alt
import pandas as pd

from normbook.pages.views import View, view
from normbook.paper_a.view_parts import prediction_rows, predictions_layer, seed_filter, seed_param


def training_states(curves) -> View:
    """Fig. 1a over training: every kept state's mean predictions, a slider over the states
    and a seed selector; one panel per network (``curves``: :class:`localization.Curve`)."""
    rows = []
    for curve in curves:
        name = curve.runs[-1].name
        for k, (step, r) in enumerate(zip(curve.steps, curve.runs)):
            rows += prediction_rows(
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
    seed = seed_param(curves[0].runs[-1].seeds)
    panels = []
    for curve, color in zip(curves, ("#0072B2", "#D55E00", "#009E73")):
        name = curve.runs[-1].name
        sub = data[data.network == name]
        layer = predictions_layer(sub, seq_len, color, alt.datum.state == state, seed_filter())
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
