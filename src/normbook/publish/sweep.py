"""A chapter over a grid of parameters: one papermill run per grid point, dispatched on Dask,
and a sweep page in the book that puts the points side by side.

    python -m normbook.publish.sweep book/a1_localization.py --profile smoke \\
        -p norm group -p groups 1,2 -p seeds 0,1 [--workers 2 | --scheduler ADDRESS]
    python -m normbook.publish.sweep --grid grid.yml          # the same, from a file

``-p NAME v1,v2,…`` is an axis of the grid; ``-p NAME v`` (one value) is fixed for every point.
A list-valued parameter takes one list per grid value, its items joined by ``+``: ``-p seeds
0,1`` sweeps seeds = [0] and [1]; ``-p seeds 0+1`` fixes seeds = [0, 1]. A grid file (YAML)::

    chapter: book/a1_localization.py
    profile: smoke
    fixed: {norm: group}
    grid: {groups: [1, 2], seeds: [[0], [1]]}

Each point executes the chapter into its own folder (``_build/<profile>/sweeps/<name>/points/
<n>/``, the point's own executed notebook, stamp and claims record, so the book's chapters are
untouched); every point shares the experiment cache, whose entry locks make two points that
need one trained model train it once. A point whose parameters are invalid, or whose run fails,
is reported on the page with its error and does not stop the others; a rerun re-executes only
failed and stale points (the build's stamps).
"""

from __future__ import annotations

import argparse
import html
import itertools
import json
import math
import os
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from normbook.publish import execution, project, site
from normbook.runtime import cache
from normbook.runtime.params import PROFILES, ParameterError


class SweepError(RuntimeError):
    """A sweep that cannot start (unknown chapter or parameter, a malformed grid)."""


@dataclass
class Grid:
    chapter: Path
    profile: str
    fixed: dict[str, Any]
    axes: dict[str, list[Any]]

    @property
    def name(self) -> str:
        return f"{self.chapter.stem}--{'-'.join(self.axes)}"

    def points(self) -> list[dict[str, Any]]:
        """Every combination of the axes' values (the first axis varies slowest)."""
        names = list(self.axes)
        return [dict(zip(names, combo)) for combo in itertools.product(*self.axes.values())]


@dataclass
class Point:
    index: int
    values: dict[str, Any]  # the swept parameters' values at this point
    status: str = "pending"  # done, up to date, failed, invalid
    error: str = ""
    seconds: float | None = None
    numbers: dict[str, float] = field(default_factory=dict)  # the point's recorded numbers
    verdicts: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status in ("done", "up to date")


def _cli_value(spec, name: str, raw: str) -> list[Any]:
    """The values of one ``-p NAME raw`` (several: an axis)."""
    param = spec.param(name)  # an unknown name is a one-line error naming the closest one
    items = [s for s in raw.split(",") if s.strip()]
    if param.type is list:
        return [[x for x in item.split("+") if x.strip()] for item in items]
    return items


def grid_from_cli(chapter: str, profile: str, pairs: list[list[str]]) -> Grid:
    path = _chapter(chapter)
    spec = project.spec_for(path)
    fixed, axes = {}, {}
    for name, raw in pairs:
        values = _cli_value(spec, name, raw)
        if len(values) == 1:
            fixed[name] = values[0]
        else:
            axes[name] = values
    return _checked(Grid(path, profile, fixed, axes))


def grid_from_file(path: Path) -> Grid:
    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise SweepError(f"grid file {path}: {exc}") from None
    unknown = set(data) - {"chapter", "profile", "fixed", "grid"}
    if unknown or "chapter" not in data or not isinstance(data.get("grid"), dict):
        raise SweepError(f"grid file {path}: needs 'chapter' and a 'grid' mapping (and may "
                         f"have 'profile' and 'fixed'); got keys {sorted(data)}")  # fmt: skip
    grid = Grid(
        _chapter(data["chapter"]),
        data.get("profile", "cpu"),
        dict(data.get("fixed") or {}),
        {k: list(v) if isinstance(v, list) else [v] for k, v in data["grid"].items()},
    )
    return _checked(grid)


def _chapter(chapter: str) -> Path:
    path = (project.ROOT / chapter).resolve() if not Path(chapter).is_absolute() else Path(chapter)
    if path not in project.chapters():
        raise SweepError(
            f"{chapter} is not an executable chapter; chapters: "
            + ", ".join(str(c.relative_to(project.ROOT)) for c in project.chapters())
        )
    return path


def _checked(grid: Grid) -> Grid:
    if grid.profile not in PROFILES:
        raise SweepError(f"profile must be one of {', '.join(PROFILES)}, got {grid.profile!r}")
    if not grid.axes:
        raise SweepError("no axis: give at least one parameter several values (-p NAME a,b)")
    spec = project.spec_for(grid.chapter)
    for name in [*grid.fixed, *grid.axes]:
        spec.param(name)  # unknown names fail the whole sweep, before any compute
    return grid


# ----------------------------------------------------------------------------- running


def sweep_dir(grid: Grid) -> Path:
    return project.build_dir(grid.profile) / "sweeps" / grid.name


def point_dir(grid: Grid, index: int) -> Path:
    return sweep_dir(grid) / "points" / f"{index:03d}"


def run_point(
    chapter: str, profile: str, overrides: dict, folder: str, cache_dir: str, cores: int = 1
) -> dict:
    """(On a Dask worker.) Execute the chapter for one grid point into ``folder``, sharing the
    experiment cache ``cache_dir``. Returns its status, error and seconds."""
    os.environ["NORMBOOK_BUILD_DIR"] = folder  # read when the point runs; kernels inherit it
    os.environ["NORMBOOK_CACHE"] = cache_dir
    os.environ["NORMBOOK_CORES"] = str(cores)  # a chapter's workers=0: its share of the cores
    try:
        _, seconds = execution.execute(Path(chapter), profile, overrides)
    except (project.BuildError, ParameterError, cache.CacheError) as exc:
        return {"status": "failed", "error": str(exc).split("\n--- cell source")[0]}
    return {"status": "done" if seconds is not None else "up to date", "seconds": seconds}


@contextmanager
def _client(workers: int, scheduler: str | None) -> Iterator:
    """A Dask client of the cluster at ``scheduler``, or of a local cluster (closed after)."""
    from distributed import Client, LocalCluster

    if scheduler:
        with Client(scheduler) as client:
            yield client
        return
    with (
        LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                     dashboard_address=":0") as cluster,  # one point at a time per worker
        Client(cluster) as client,
    ):  # fmt: skip
        yield client


def plan(grid: Grid) -> tuple[list[Point], list[tuple[Point, dict]]]:
    """Every point, validated before any compute: invalid ones are marked so (with their
    one-line error); the others come with their checked parameter values, to run."""
    spec = project.spec_for(grid.chapter)
    points = [Point(i, values) for i, values in enumerate(grid.points())]
    todo = []
    for p in points:
        try:
            overrides = {k: spec.param(k).check(v) for k, v in {**grid.fixed, **p.values}.items()}
            spec.resolve(grid.profile, **overrides)
        except ParameterError as exc:
            p.status, p.error = "invalid", str(exc)
            continue
        todo.append((p, overrides))
    return points, todo


def run(grid: Grid, workers: int = 1, scheduler: str | None = None) -> list[Point]:
    """Execute every valid point (stale or failed ones only), ``workers`` at a time on a local
    Dask cluster or on the cluster at ``scheduler``; invalid points are reported, not run."""
    from distributed import as_completed

    from normbook.runtime.progress import progress

    points, todo = plan(grid)
    cache_dir = str(cache.cache_root().resolve())
    if not todo:
        return points
    cores = 1 if scheduler else max(1, (os.cpu_count() or 1) // workers)  # per point
    with _client(workers, scheduler) as client:
        futures = {
            client.submit(run_point, str(grid.chapter), grid.profile, overrides,
                          str(point_dir(grid, p.index).resolve()), cache_dir, cores,
                          pure=False): p
            for p, overrides in todo
        }  # fmt: skip
        failed = len(points) - len(todo)  # the invalid ones
        bar = progress(total=len(points), desc=f"sweep {grid.name}")
        bar.update(len(points) - len(todo))
        for fut in as_completed(futures):
            p = futures[fut]
            try:
                p.__dict__.update(fut.result())
            except Exception as exc:  # noqa: BLE001 - a lost worker: the point failed
                p.status, p.error = "failed", f"{type(exc).__name__}: {exc}"
            failed += not p.ok
            bar.set_postfix_str(f"running {sum(not f.done() for f in futures)}, failed {failed}")
            bar.update(1)
        bar.close()
    for p in points:
        if p.ok:
            p.numbers, p.verdicts = _results(grid, p.index)
    return points


def _notebook(grid: Grid, index: int) -> Path:
    rel = grid.chapter.relative_to(project.ROOT).with_suffix(".ipynb")
    return point_dir(grid, index) / grid.profile / "executed" / rel


def _results(grid: Grid, index: int) -> tuple[dict[str, float], dict[str, str]]:
    """A point's recorded numbers (the raw values of its glued numbers, :meth:`.report.Run.glue`,
    and each graded claim's effect size) and its claims' verdicts, from its result record."""
    record = point_dir(grid, index) / grid.profile / "ledger" / f"{grid.chapter.stem}.json"
    if not record.exists():
        return {}, {}
    rec = json.loads(record.read_text())
    numbers, per_section = dict(rec.get("numbers", {})), {}
    for c in rec.get("claims", []):  # every graded effect is a number too
        j = per_section[c["section"]] = per_section.get(c["section"], -1) + 1
        if isinstance(c.get("effect"), (int, float)) and math.isfinite(c["effect"]):
            numbers[f"{c['section']} effect {j}"] = float(c["effect"])
    return numbers, {c["claim"]: c["verdict"] for c in rec.get("claims", [])}


# ----------------------------------------------------------------------------- the page

VIEW = re.compile(r'<details class="nb-view" data-view="([^"]+)">.*?</details>', re.S)


def point_views(grid: Grid, index: int) -> dict[str, str]:
    """A point's explorable views (:mod:`.views`) as its executed notebook shows them:
    {view name: its HTML}."""
    nb = _notebook(grid, index)
    if not nb.exists():
        return {}
    found = {}
    for cell in json.loads(nb.read_text()).get("cells", []):
        for out in cell.get("outputs", []):
            html = out.get("data", {}).get("text/html")
            text = "".join(html) if isinstance(html, list) else (html or "")
            for m in VIEW.finditer(text):
                found[m.group(1)] = m.group(0)
    return found


def sweep_views(grid: Grid, points: list[Point]) -> list[str]:
    """One block per view every finished point has: the points' views, one shown at a time,
    with a slider over the points (``_static/views.js``); without JavaScript, every point's
    view is listed."""
    done = [p for p in points if p.ok]
    per_point = {p.index: point_views(grid, p.index) for p in done}
    names = sorted(set.intersection(*(set(v) for v in per_point.values()))) if done else []
    blocks = []
    for name in names if len(done) > 1 else []:
        labels = [", ".join(f"{a} = {_label(p.values[a])}" for a in grid.axes) for p in done]
        inner = "".join(
            f'<div class="nb-sweep-point" data-label="{html.escape(lab)}">'
            f"<p><strong>{html.escape(lab)}</strong></p>{per_point[p.index][name]}</div>"
            for p, lab in zip(done, labels)
        )
        blocks.append(f'<div class="nb-sweep-view" data-view="{html.escape(name)}" '
                      f'data-axis="{html.escape(", ".join(grid.axes))}">{inner}</div>')  # fmt: skip
    return blocks


def _number_cell(v: float | None) -> str:
    return "" if v is None else f"{v:.4g}"


def _label(v: Any) -> str:
    return "+".join(map(str, v)) if isinstance(v, list) else str(v)


def varying(points: list[Point], table: str) -> list[str]:
    """Names whose value differs between the finished points (numbers or verdicts)."""
    done = [getattr(p, table) for p in points if p.ok]
    names = sorted({n for d in done for n in d})
    return [n for n in names if len({d.get(n) for d in done}) > 1]


def figure(grid: Grid, points: list[Point], name: str):
    """One numeric result against the first axis, one line per combination of the others."""
    import matplotlib.pyplot as plt

    from normbook.pages.figures import canvas

    first, others = list(grid.axes)[0], list(grid.axes)[1:]
    xs = [_label(v) for v in grid.axes[first]]
    fig, axes = canvas(height=2.8)
    ax = axes[0, 0]
    combos = itertools.product(*(grid.axes[o] for o in others)) if others else [()]
    for combo in combos:
        sel = dict(zip(others, combo))
        ys = []
        for v in grid.axes[first]:
            p = next(q for q in points if q.values[first] == v and
                     all(q.values[o] == sel[o] for o in others))  # fmt: skip
            ys.append(p.numbers.get(name) if p.ok else None)
        y = [math.nan if v is None else v for v in ys]
        label = ", ".join(f"{o} = {_label(sel[o])}" for o in others) or None
        ax.plot(range(len(xs)), y, marker="o", label=label)
    ax.set_xticks(range(len(xs)), xs)
    ax.set_xlabel(first)
    ax.set_ylabel(name)
    if others:
        ax.legend()
    plt.close(fig)
    return fig


def write_page(grid: Grid, points: list[Point]) -> Path:
    """The sweep page (MyST markdown), its figures and a sweep record, in the sweep's folder."""
    folder = sweep_dir(grid)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("fig-*.png"):
        old.unlink()
    changed = varying(points, "numbers")
    verdicts = varying(points, "verdicts")
    chapter = grid.chapter.relative_to(project.ROOT)
    lines = [
        f"({_anchor(grid)})=",
        f"# Sweep: {grid.chapter.stem} over {', '.join(grid.axes)}",
        "",
        f"Chapter `{chapter}` executed once per grid point at the `{grid.profile}` profile "
        f"({len(points)} points; {sum(p.ok for p in points)} finished, "
        f"{sum(not p.ok for p in points)} failed or invalid), by `normbook.publish.sweep`. "
        + (f"Fixed for every point: {_pairs(grid.fixed)}. " if grid.fixed else "")
        + "The table shows each point's recorded numbers that differ between points and its "
        "claims' verdicts that differ; each point's executed notebook is linked.",
        "",
    ]
    head = ["point", *grid.axes, "status", *changed, *verdicts, "notebook"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in points:
        nb = _notebook(grid, p.index)
        link = (f"{{download}}`notebook <points/{p.index:03d}/{nb.name}>`"
                if p.ok else _cell(p.error))  # fmt: skip
        row = [str(p.index), *(_label(p.values[a]) for a in grid.axes), p.status,
               *(_number_cell(p.numbers.get(n)) for n in changed),
               *(_cell(p.verdicts.get(v, "")) for v in verdicts), link]  # fmt: skip
        lines.append("| " + " | ".join(row) + " |")
    for i, name in enumerate(changed):
        fig = figure(grid, points, name)
        fig.savefig(folder / f"fig-{i:02d}.png", dpi=100)
        lines += ["", f"```{{figure}} fig-{i:02d}.png", f":name: {_anchor(grid)}-fig-{i:02d}",
                  f":alt: {name} against {list(grid.axes)[0]}.", "",
                  f"`{name}` against `{list(grid.axes)[0]}` (drawn by "
                  "`normbook.publish.sweep.figure`).", "```"]  # fmt: skip
    views = sweep_views(grid, points)
    if views:
        lines += ["", "## The chapter's explorable views across the sweep", "",
                  "Each view below is the chapter's own, drawn from one point's results; the "
                  f"slider moves between the points ({', '.join(grid.axes)}).", ""]  # fmt: skip
        for block in views:
            lines += [block, ""]
    page = folder / "page.md"
    page.write_text("\n".join(lines) + "\n")
    record = {"grid": {**asdict(grid), "chapter": str(chapter)},
              "points": [asdict(p) for p in points]}  # fmt: skip
    (folder / "sweep.json").write_text(json.dumps(record, indent=1, default=str))
    return page


def _anchor(grid: Grid) -> str:
    return "sweep-" + re.sub(r"[^a-z0-9]+", "-", grid.name.lower()).strip("-")


def _pairs(values: dict) -> str:
    return ", ".join(f"`{k}` = {_label(v)}" for k, v in values.items())


def _cell(text: str) -> str:
    one_line = " ".join(str(text).split())
    return (one_line[:200] + "…" if len(one_line) > 200 else one_line).replace("|", "\\|")


# ----------------------------------------------------------------------------- command line


def parser() -> argparse.ArgumentParser:
    """The command line (``make -n sweep ...`` shows one, :mod:`normbook.tools.doc_commands`)."""
    ap = argparse.ArgumentParser(
        prog="python -m normbook.publish.sweep",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("chapter", nargs="?", help="the chapter (book/<chapter>.py)")
    ap.add_argument("--grid", help="a YAML grid file (instead of the chapter and -p)")
    ap.add_argument("--profile", default="cpu", choices=PROFILES)
    ap.add_argument("-p", nargs=2, action="append", metavar=("NAME", "VALUES"))
    ap.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="local Dask workers (default: one per core)",
    )
    ap.add_argument("--scheduler", help="address of a running Dask scheduler (tcp://host:8786)")
    ap.add_argument("--no-render", action="store_true", help="do not rebuild the book's HTML")
    return ap


def grid_from_args(args) -> Grid:
    """The grid a parsed command line names (a grid file, or a chapter and its ``-p``)."""
    if args.grid:
        return grid_from_file(Path(args.grid))
    if args.chapter:
        return grid_from_cli(args.chapter, args.profile, args.p or [])
    raise SweepError("give a chapter and -p NAME VALUES, or --grid FILE")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        grid = grid_from_args(args)
        t0 = time.perf_counter()
        points = run(grid, args.workers, args.scheduler)
        page = write_page(grid, points)
        print(
            f"[sweep] {grid.name}: {sum(p.ok for p in points)} of {len(points)} points "
            f"finished in {time.perf_counter() - t0:.1f} s; page {page}",
            flush=True,
        )
        for p in points:
            if not p.ok:
                print(f"[sweep] point {p.index} {p.values}: {p.status}: {p.error}", file=sys.stderr)
        if not args.no_render:
            site.render(grid.profile, partial=True)
    except (SweepError, ParameterError, project.BuildError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0 if all(p.ok for p in points) else 1


if __name__ == "__main__":
    raise SystemExit(main())
