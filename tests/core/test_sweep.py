"""Sweeps: grids from the command line or a file, points validated before any compute, and a
real 2 x 2 smoke sweep on a local Dask cluster with two workers."""

import json
import re

import pytest
import torch

from normbook.publish import site, sweep
from normbook.runtime.params import ParameterError

A1 = "book/a1_localization.py"


def test_cli_grid_axes_fixed_values_and_lists():
    g = sweep.grid_from_cli(A1, "smoke", [["norm", "group"], ["groups", "1,2"],
                                          ["seeds", "0,0+1"]])  # fmt: skip
    assert g.fixed == {"norm": "group"} and g.axes == {"groups": ["1", "2"],
                                                       "seeds": [["0"], ["0", "1"]]}  # fmt: skip
    assert [p["seeds"] for p in g.points()] == [["0"], ["0", "1"]] * 2
    assert g.name == "a1_localization--groups-seeds"


def test_bad_grids_fail_before_any_compute(tmp_path):
    with pytest.raises(ParameterError, match="did you mean 'seeds'"):
        sweep.grid_from_cli(A1, "smoke", [["seed", "0,1"]])
    with pytest.raises(sweep.SweepError, match="no axis"):
        sweep.grid_from_cli(A1, "smoke", [["seeds", "0"]])
    with pytest.raises(sweep.SweepError, match="not an executable chapter"):
        sweep.grid_from_cli("book/nothing.py", "smoke", [["seeds", "0,1"]])
    bad = tmp_path / "grid.yml"
    bad.write_text("chapter: book/a1_localization.py\naxes: {seeds: [[0], [1]]}\n")
    with pytest.raises(sweep.SweepError, match="needs 'chapter' and a 'grid'"):
        sweep.grid_from_file(bad)


def test_file_grid_and_invalid_points_are_reported_not_run(tmp_path):
    f = tmp_path / "grid.yml"
    f.write_text("chapter: book/a1_localization.py\nprofile: smoke\nfixed: {norm: group}\n"
                 "grid: {groups: [1, 3], alpha: [0.1]}\n")  # fmt: skip
    grid = sweep.grid_from_file(f)
    points, todo = sweep.plan(grid)
    assert [p.status for p in points] == ["pending", "invalid"]
    assert "must divide width=8" in points[1].error
    assert [o["groups"] for _, o in todo] == [1]  # checked values, ready for papermill


def _hits(nb_path):
    """A1's line 'Trained models loaded from the cache: 1 of 4 (none: 1 of 2; instance: 1 of
    2)' of an executed notebook, as {network: models loaded}."""
    text = "".join("".join(o.get("text", "")) for c in json.loads(nb_path.read_text())["cells"]
                   for o in c.get("outputs", []))  # fmt: skip
    line = next(ln for ln in text.splitlines() if ln.startswith("Trained models loaded"))
    return {net: int(k) for net, k in re.findall(r"(\w+): (\d+) of \d+", line)}


@pytest.mark.skipif(
    torch.cuda.is_available(), reason="the failing points need a machine without CUDA"
)
def test_a_two_by_two_smoke_sweep_on_two_dask_workers(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / "build"))
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path / "cache"))
    grid = sweep.grid_from_cli(A1, "smoke", [["seeds", "0+1,0+2"], ["device", "cpu,cuda"]])
    points = sweep.run(grid, workers=2)
    assert [p.status for p in points] == ["done", "failed", "done", "failed"]
    assert "CUDA is not available" in points[1].error  # a run that fails is reported ...
    assert points[0].numbers and points[2].numbers  # ... and does not stop the others
    # seed 0's networks are shared by points 0 and 2: trained by one of them, loaded by the other
    first, second = (_hits(sweep._notebook(grid, i)) for i in (0, 2))
    for net in ("none", "instance"):  # of two seeds each, one loaded by the second point
        assert sorted([first[net], second[net]]) == [0, 1], (first, second)
    page = sweep.write_page(grid, points).read_text()
    assert page.count("\n| ") == 5  # header and one row per point
    assert "{download}`notebook <points/000/a1_localization.ipynb>`" in page
    assert "CUDA is not available" in page and "```{figure} fig-00.png" in page
    assert (sweep.sweep_dir(grid) / "fig-00.png").exists()
    # the chapter's explorable view, one per finished point, behind one slider
    assert page.count('<div class="nb-sweep-view" data-view="a1-training-states"') == 1
    assert page.count('class="nb-sweep-point" data-label="seeds = ') == 2
    tree = site.assemble_site("smoke", partial=True)
    assert (tree / "sweeps" / grid.name / "points" / "002" / "a1_localization.ipynb").exists()
    assert f"sweeps/{grid.name}/page" in (tree / "_toc.yml").read_text()
    # a rerun re-executes only the failed points
    again = sweep.run(grid, workers=2)
    assert [p.status for p in again] == ["up to date", "failed", "up to date", "failed"]
