"""The trade for the ceiling (normbook.tools.trade): the seconds each cut's cache entries
recorded, before and after; a record refused while a cut's parameter still has its value
before; and the Build and compute page's table of cuts and touched rows, read from it."""

import json

import numpy as np
import pytest

from normbook.publish import compute_page, project
from normbook.tools import trade

CPU = "AMD EPYC (cpu family 25, model 1)"


def _entry(root, kind, key, config, seconds=None, compute_seconds=0.0):
    d = root / kind / key
    d.mkdir(parents=True)
    (d / "meta.json").write_text(json.dumps({"config": config, "compute_seconds": compute_seconds}))
    if seconds is not None:
        np.savez(d / "arrays.npz", seconds=np.asarray(seconds))


def test_cost_sums_the_seconds_of_the_entries_a_cut_picks(tmp_path):
    clusters = {"analysis": {"n_images": 2000, "kmeans": True}}
    _entry(tmp_path, "b_clusters", "a", clusters, seconds=12.5)
    _entry(tmp_path, "b_clusters", "b", {"analysis": {"n_images": 500}}, seconds=99.0)  # not it
    _entry(tmp_path, "b_silhouette", "c", {"analysis": {"clusters": {"n_images": 2000}}}, 3.0)
    _entry(tmp_path, "a_train", "d", {"train": {"seq_len": 125}}, seconds=[10.0, 20.0])
    _entry(tmp_path, "a_pack_eval", "e", {"net": {"head": "centre"}}, compute_seconds=7.5)
    cut = {c.name: c for c in trade.CUTS}
    got = trade.cost(tmp_path, ("b_clusters", "b_silhouette"),
                     cut["paper B's clusters on 1,000 images"].before)  # fmt: skip
    assert got == {"entries": 2, "seconds": 15.5}
    a5 = cut["A5's length axis"]
    assert trade.cost(tmp_path, a5.kinds, a5.before) == {"entries": 1, "seconds": 30.0}
    assert trade.cost(tmp_path, a5.kinds, a5.after) == {"entries": 0, "seconds": 0.0}
    centre = cut["A4's centre head"]
    assert trade.cost(tmp_path, centre.kinds, centre.before) == {"entries": 1, "seconds": 7.5}


def test_every_cut_has_left_its_value_before_at_cpu_and_a_stale_one_is_refused(monkeypatch):
    trade.check_profile("cpu")  # the committed profile: every cut made
    stale = trade.Cut("stale", "b4_stress", {"cluster_images": 1000}, ("b_clusters",),
                      lambda c: True, lambda c: False, (), "a cut not made")  # fmt: skip
    monkeypatch.setattr(trade, "CUTS", [stale])
    with pytest.raises(SystemExit, match="cluster_images is still 1000 at cpu"):
        trade.check_profile("cpu")


def _row(verdict, effect=0.1, low=0.05, high=0.15):
    return {"verdict": verdict, "effect": effect, "low": low, "high": high, "sesoi": 0.05,
            "n": 5, "near_line": False}  # fmt: skip


def _record():
    build = {"seconds": 4373.0, "cpu_s": 8060.0, "cpu": CPU, "measured": "2026-12-07 12:19:00"}
    return {
        "format": 1, "profile": "cpu", "ceiling_min": 60, "commit": "f" * 40,
        "measured": "2026-12-07T15:00:00+00:00", "reference_before": "21f676d",
        "machine": {"cpu": CPU, "isa": "Intel AVX2", "threads": 1},
        "builds": {"before": build, "after": {**build, "seconds": 3300.0, "cpu_s": 6100.0}},
        "cuts": [
            {"name": "A5's length axis", "chapter": "a5_reach", "trade": True, "why": "two lengths",
             "answers": "none graded before",
             "params": {"reach_lens": {"before": [75, 100, 125], "now": [75],
                                       "paper": [600, 900, 1200]}},
             "before": {"entries": 16, "seconds": 1147.0}, "after": {"entries": 0, "seconds": 0.0},
             "rows": {"a5_falls_with_length": {"before": _row("not shown at this budget"),
                                               "after": None}}},
            {"name": "clusters", "chapter": "b4_stress", "trade": True, "why": "k-means sweeps",
             "answers": "see the rows", "params": {"cluster_images": {
                 "before": 2000, "now": 1000, "paper": 5000}},
             "before": {"entries": 75, "seconds": 927.9},
             "after": {"entries": 75, "seconds": 460.0},
             "rows": {"b3_purer_classes_cifar10": {"before": _row("reproduced"),
                                                   "after": _row("reproduced", 0.2, 0.1, 0.3)}}},
        ],
    }  # fmt: skip


def test_the_page_tables_each_cut_and_the_rows_it_touched(tmp_path, monkeypatch):
    monkeypatch.setattr(project, "ROOT", tmp_path)
    assert "No trade is recorded" in compute_page.trade_section("cpu")[0]
    (tmp_path / "results" / "cpu").mkdir(parents=True)
    (tmp_path / "results" / "cpu" / "trade.json").write_text(json.dumps(_record()))
    text, gaps = compute_page.trade_section("cpu")
    assert not gaps and "ceiling of 60 minutes" in text
    assert "4,373 s (1 h 13 min)" in text or "4,373 s" in text
    assert "8,060 CPU s" in text and "6,100 CPU s" in text
    cut = next(ln for ln in text.splitlines() if ln.startswith("| A5's length axis"))
    assert "`reach_lens` 75, 100, 125 → 75 (`paper`: 600, 900, 1200)" in cut
    assert "1,147 s in 16 → 0 s in 0" in cut
    row = next(ln for ln in text.splitlines() if ln.startswith("| a5_falls_with_length"))
    assert "not shown at this budget: 0.1 [0.05, 0.15]" in row and "no row at this profile" in row
    assert "(1 of 2 with another verdict" in text  # the dropped row moved; the kept one did not
    rec = _record()
    rec["builds"]["after"]["note"] = "measured with four seeds"
    (tmp_path / "results" / "cpu" / "trade.json").write_text(json.dumps(rec))
    assert (
        "6,100 CPU s in its chapters; measured with four seeds)"
        in (compute_page.trade_section("cpu")[0])
    )


def test_a_networks_training_seconds_are_read_and_a_pick_selects(tmp_path):
    _entry(tmp_path, "a_eval", "e5", {"seeds": [0, 1, 2, 3, 4]}, compute_seconds=50.0)
    _entry(tmp_path, "a_eval", "e4", {"seeds": [0, 1, 2, 3]}, compute_seconds=40.0)  # not it
    (tmp_path / "b_train" / "b4").mkdir(parents=True)
    (tmp_path / "b_train" / "b4" / "meta.json").write_text(
        json.dumps({"config": {"seed": 4}, "compute_seconds": 0.0, "train_seconds": 120.0})
    )
    fifth = lambda c: 4 in c.get("seeds", ()) or c.get("seed") == 4  # noqa: E731
    assert trade.cost(tmp_path, ("a_eval", "b_train"), fifth) == {"entries": 2, "seconds": 170.0}


def test_a_build_still_over_the_ceiling_says_so_with_what_it_would_take():
    over = compute_page.over_ceiling({"seconds": 4000.0, "cpu_s": 7600.0}, 60)
    assert "still over the ceiling**, by 6.7 min" in over
    assert "need 63.3 min on 2 cores even fully used (95% used here)" in over
    assert "about 760 CPU seconds less" in over  # 7,600 x (1 - 3,600 / 4,000)
    assert compute_page.over_ceiling({"seconds": 3500.0, "cpu_s": 6600.0}, 60) == ""
