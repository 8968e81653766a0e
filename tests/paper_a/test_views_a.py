"""Paper A's explorable views, built from small synthetic results shaped like the chapters'."""

from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np

from normbook.paper_a import view_parts
from normbook.paper_a.a1_localization import views as a1_views
from normbook.paper_a.a3_which_norms import views as a3_views
from normbook.paper_a.a4_stress import views as a4_views
from normbook.paper_a.a5_reach import views as a5_views
from normbook.paper_a.measures.detector import Moments


def _run(name, m=2, length=12, shift=0.0):
    mean = np.tile(np.linspace(0, 1, length), (2, m, 1)) + shift
    out = Moments(mean, np.ones_like(mean), np.array([10, 10]))
    loc = NS(distance=3, effect_interior=NS(slope=0.5))
    return NS(name=name, seeds=list(range(m)), out=out, per_seed=[loc] * m)


def _params(v):
    return {p["name"]: p for p in v.spec["params"]}


def test_training_states_view_has_a_state_slider_and_seed_selector():
    curves = [NS(steps=np.array([5, 10, 20]), runs=[_run(n, shift=s) for s in (0, 0.1, 0.2)])
              for n in ("none", "instance")]  # fmt: skip
    p = _params(a1_views.training_states(curves))
    assert p["state"]["bind"]["max"] == 2 and p["state"]["value"] == 2
    assert p["seed"]["bind"]["options"] == ["every seed", "seed 0", "seed 1"]


def test_group_view_selects_among_the_swept_group_counts():
    groups = NS(group_counts=[1, 4, 8], runs={g: _run(f"G={g}") for g in (1, 4, 8)})
    p = _params(a3_views.group_predictions(groups))
    assert p["groups"]["bind"]["options"] == [1, 4, 8]


def test_packnorm_view_toggles_between_networks():
    acc = NS(overlaps=[0, 2, 4], seeds=[0, 1], acc=np.full((3, 2), 0.6),
             pooled_acc=np.full(3, 0.6), pooled_ci=(np.full(3, 0.5), np.full(3, 0.7)))  # fmt: skip
    a2 = NS(setup=NS(net=NS(kernel=3, head="pool")), pack=acc)
    p = _params(a4_views.packnorm_kernels({"pool": acc, "centre": acc}, a2, 1))
    assert p["network"]["bind"]["input"] == "radio"
    assert len(p["network"]["bind"]["options"]) == 3


def test_band_view_leaves_out_slopes_a_log_axis_cannot_show():
    bands = NS(slope=np.array([[0.5, 0.01, -0.001], [0.4, 0.02, 0.003]]))
    r = NS(family=NS(label="4 norm layers"), centres=np.array([2.0, 4.0, 6.0]), bands=bands,
           mean=bands.slope.mean(axis=0), se=np.full(3, 0.001))  # fmt: skip
    v = a5_views.band_slopes([r])
    rows = next(iter(v.spec["datasets"].values()))
    assert all(row["slope"] > 0 for row in rows)
    assert len(rows) == 3 + 6 - 1  # three means and six seeds' slopes, one of them negative


def test_a_paper_length_line_is_thinned_to_fit_the_page():
    idx = view_parts.shown_indices(600)
    assert len(idx) <= view_parts.POINTS_PER_LINE + 1 and idx[0] == 0 and idx[-1] == 599
    assert list(view_parts.shown_indices(75)) == list(range(75))  # the cpu length: every index
    curves = [NS(steps=np.array([5, 10, 20, 40]), runs=[_run(n, m=5, length=600)] * 4)
              for n in ("none", "instance")]  # fmt: skip
    v = a1_views.training_states(curves)
    assert len(v.spec_json()) < 500_000  # paper A: l = 600, five seeds, four states
