"""The building blocks of paper A's explorable views (:mod:`normbook.pages.views`): a seed
selector, the rows and layers that draw mean predictions against the target ramp (thinned to
:data:`POINTS_PER_LINE` indices), and a page-wide panel. Each chapter's views are in its
folder's ``views`` module."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from normbook.pages.views import round_floats
from normbook.paper_a.cached.task import ramp

SEED_ALL = "every seed"


def seed_param(seeds) -> alt.Parameter:
    options = [SEED_ALL, *(f"seed {s}" for s in seeds)]
    return alt.param(
        name="seed", value=SEED_ALL, bind=alt.binding_select(options=options, name="show ")
    )


def seed_filter() -> str:
    return f"seed == '{SEED_ALL}' || datum.seed == seed"


POINTS_PER_LINE = 100  # a line of more indices is thinned (at paper A's l = 600: 1.5 MB to 0.3)


def shown_indices(seq_len: int) -> np.ndarray:
    """Every index up to :data:`POINTS_PER_LINE` of them, else every k-th and the last."""
    step = -(-seq_len // POINTS_PER_LINE)
    return np.unique(np.r_[np.arange(0, seq_len, step), seq_len - 1])


def prediction_rows(mean: np.ndarray, seeds, **fields) -> list[dict]:
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


def predictions_layer(data: pd.DataFrame, seq_len: int, color: str, *filters) -> alt.LayerChart:
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


def panel(layers: list, param, title: str) -> alt.LayerChart:
    """One page-wide panel: ``layers`` on shared axes, driven by the control ``param``."""
    return alt.layer(*layers).add_params(param).properties(width=560, height=260, title=title)
