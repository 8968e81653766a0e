import io
import os

import pytest
import yaml

from normbook.publish import build, execution, param_cells, project, site
from normbook.runtime import progress


@pytest.fixture
def chapter(tmp_path, monkeypatch):
    """A copy of chapter A1 inside a throw-away project root."""
    (tmp_path / "book").mkdir()
    src = project.ROOT / "book" / "a1_localization.py"
    path = tmp_path / "book" / "a1_localization.py"
    path.write_text(src.read_text())
    monkeypatch.setattr(project, "ROOT", tmp_path)
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / "_build"))
    return path


def _empty_notebook(path) -> None:
    import nbformat

    nbformat.write(nbformat.v4.new_notebook(), path)


def test_stamp_changes_with_source_and_parameters(chapter):
    base = project.stamp(chapter, {"seq_len": 150})
    assert project.stamp(chapter, {"seq_len": 150}) == base
    assert project.stamp(chapter, {"seq_len": 200}) != base
    chapter.write_text(chapter.read_text() + "\n# edited\n")
    assert project.stamp(chapter, {"seq_len": 150}) != base


def test_up_to_date_chapter_is_not_reexecuted(chapter, monkeypatch):
    import papermill

    calls = []
    monkeypatch.setattr(
        papermill,
        "execute_notebook",
        lambda src, out, **kw: calls.append(kw["parameters"]) or _empty_notebook(out),
    )
    _, secs = execution.execute(chapter, "smoke", {})
    assert secs is not None and calls == [{"profile": "smoke"}]
    _, secs = execution.execute(chapter, "smoke", {})
    assert secs is None and len(calls) == 1  # stamp current: skipped
    execution.execute(chapter, "smoke", {"seq_len": 64})
    assert calls[-1] == {"profile": "smoke", "seq_len": 64}  # new parameters: executed


def test_failed_execution_names_the_cell_and_leaves_no_stamp(chapter, monkeypatch):
    import papermill

    def fail(src, out, **kw):
        open(out, "w").write("{}")
        raise papermill.PapermillExecutionError(
            3,
            7,
            "x = 1 / 0",
            "ZeroDivisionError",
            "division by zero",
            ["\x1b[31mZeroDivisionError\x1b[0m: division by zero"],
        )

    monkeypatch.setattr(papermill, "execute_notebook", fail)
    with pytest.raises(project.BuildError, match="failed in cell 7: ZeroDivisionError") as err:
        execution.execute(chapter, "smoke", {})
    assert "x = 1 / 0" in str(err.value) and "\x1b" not in str(err.value)
    assert not list(chapter.parent.parent.rglob("*.stamp"))


def test_partial_toc_drops_unexecuted_chapters():
    toc = yaml.safe_load(site.toc_without({"book/a1_localization"}))
    files = [c["file"] for p in toc.get("parts", []) for c in p["chapters"]]
    assert "book/a1_localization" not in files and toc["root"] == "book/intro"
    # the intro is an executed page too: a build of other chapters opens on the first of them
    toc = yaml.safe_load(site.toc_without({"book/intro", "book/a1_localization"}))
    files = [c["file"] for p in toc.get("parts", []) for c in p["chapters"]]
    assert toc["root"] == "book/a2_mechanism" and "book/a2_mechanism" not in files


def test_progress_lines_are_readable_outside_a_terminal(capsys):
    out = io.StringIO()
    lines = progress._Lines(out)
    lines.write("\rtrain:  10%|#         | 1/10\r")
    lines.write("\rtrain: 100%|##########| 10/10\n")
    assert out.getvalue().splitlines() == [
        "train:  10%|#         | 1/10",
        "train: 100%|##########| 10/10",
    ]


def _package(tmp_path):
    """A library of four modules: a chapter-level module importing a cached one, which imports
    the run-time layer; the other paper's module stands apart."""
    pkg = tmp_path / "src" / "normbook"
    files = {
        "__init__.py": "",
        "runtime/__init__.py": "",
        "runtime/cache.py": "# cache\n",
        "paper_a/__init__.py": "",
        "paper_a/cached/__init__.py": "",
        "paper_a/cached/cnn.py": "from normbook.runtime import cache\n",
        "paper_a/a5_reach/__init__.py": "",
        "paper_a/a5_reach/figures.py": "from ..cached.cnn import Net\n",
        "paper_b/__init__.py": "",
        "paper_b/convnets.py": "from normbook.runtime.cache import step\n",
    }
    for rel, text in files.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    return pkg


def test_a_chapter_depends_on_the_modules_it_imports_only(tmp_path, monkeypatch):
    pkg = _package(tmp_path)
    monkeypatch.setattr(project, "PACKAGE", pkg)
    a5, b1, a1 = (tmp_path / f"{n}.py" for n in ("a5", "b1", "a1"))
    a5.write_text("from normbook.paper_a.a5_reach import figures\n")
    b1.write_text("from normbook.paper_b import convnets\n")
    a1.write_text("from normbook.paper_a.cached.cnn import Net\n")
    assert [f.relative_to(pkg).as_posix() for f in project.library_files(a5)] == [
        "__init__.py", "paper_a/a5_reach/figures.py", "paper_a/cached/cnn.py",
        "runtime/cache.py",
    ]  # fmt: skip
    assert project.papers(a5) == ("paper_a",) and project.papers(b1) == ("paper_b",)
    before = {c: project.library_hash(c) for c in (a5, b1, a1)}
    (pkg / "paper_a/a5_reach/figures.py").write_text("from ..cached.cnn import Net  # edited\n")
    after = {c: project.library_hash(c) for c in (a5, b1, a1)}
    assert after[a5] != before[a5] and after[a1] == before[a1] and after[b1] == before[b1]
    (pkg / "runtime/cache.py").write_text("# edited the cache\n")
    assert all(project.library_hash(c) != after[c] for c in (a5, b1, a1))
    a1.write_text("from normbook.paper_c import x\n")
    with pytest.raises(project.BuildError, match="not in the library"):
        project.library_hash(a1)


def test_every_chapter_reaches_its_own_paper_only():
    """A paper's chapter imports its paper's package, never the other's; editing A5's figures
    re-executes A5 alone."""
    for chapter in project.chapters():
        if chapter.stem[0] in "ab":
            assert project.papers(chapter) == (f"paper_{chapter.stem[0]}",), chapter
    a5_figures = project.PACKAGE / "paper_a" / "a5_reach" / "figures.py"
    readers = [c.stem for c in project.chapters() if a5_figures in project.library_files(c)]
    assert readers == ["a5_reach"]


def test_parameters_cells_match_their_specs():
    assert [param_cells.parameter_drift(c) for c in project.chapters()] == [None] * len(
        project.chapters()
    )


def test_a_drifted_parameters_cell_is_reported_and_rewritten(chapter, monkeypatch):
    text = chapter.read_text().replace("seq_len = None", "seq_length = None")
    chapter.write_text(text)
    monkeypatch.setattr(build, "chapters", lambda: [chapter])
    problem = param_cells.parameter_drift(chapter)
    assert "seq_length" in problem and "'seq_len'" in problem
    with pytest.raises(project.BuildError, match="params --write"):
        build.cmd_params(type("Args", (), {"write": False})())
    build.cmd_params(type("Args", (), {"write": True})())
    assert (
        param_cells.parameter_drift(chapter) is None and "seq_len = None  #" in chapter.read_text()
    )


def test_book_and_chapter_rewrite_drifted_cells_first_with_write_params(chapter, monkeypatch):
    """``make book`` and ``make chapter`` regenerate the cells in their own process (one import
    of the library, not two), before anything else; without the flag they do not."""
    chapter.write_text(chapter.read_text().replace("seq_len = None", "seq_length = None"))
    monkeypatch.setattr(build, "chapters", lambda: [chapter])

    class Stop(Exception):
        pass

    def stop(*a, **k):
        raise Stop

    monkeypatch.setattr(build, "selected", stop)  # book's first step after the cells
    with pytest.raises(Stop):
        build.main(["book", "--profile", "smoke"])
    assert param_cells.parameter_drift(chapter) is not None  # no flag: left as it was
    with pytest.raises(Stop):
        build.main(["book", "--profile", "smoke", "--write-params"])
    assert param_cells.parameter_drift(chapter) is None
    chapter.write_text(chapter.read_text().replace("seq_len = None", "seq_length = None"))
    assert build.main(["chapter", "nowhere.py", "--write-params"]) == 2  # not a chapter ...
    assert param_cells.parameter_drift(chapter) is None  # ... but its cells were rewritten first


def test_progress_outside_a_terminal_logs_to_stderr_and_summarizes_once(capsys):
    for _ in progress.progress(range(5), desc="train models", every=0.0):
        pass
    out, err = capsys.readouterr()
    assert out == ""  # stdout is what a built page shows: no progress there
    assert "5/5" in err and "\r" not in err
    assert err.splitlines()[-1] == "train models: 5 in 00:00"
    bar = progress.progress(total=4, desc="evaluate")
    bar.update(3)
    bar.close()
    bar.close()  # closing twice (tqdm's __del__ does) prints nothing more
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines().count("evaluate: 3 of 4 in 00:00") == 1


def test_progress_without_tqdm_summarizes_on_stderr(capsys, monkeypatch):
    monkeypatch.setattr(progress, "tqdm", None)
    assert list(progress.progress(range(3), desc="train")) == [0, 1, 2]
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == ["train: 3 in 0 s"]


def test_an_inner_loop_leaves_the_summary_to_the_enclosing_loop(capsys):
    for _ in progress.progress(range(2), desc="train models", every=0.0):
        for _ in progress.progress(range(3), desc="one model", every=0.0, summary=False):
            pass
    out, err = capsys.readouterr()
    summaries = [line for line in err.splitlines() if " in 00:00" in line]
    assert out == "" and summaries == ["train models: 2 in 00:00"] and "one model" in err


def test_the_command_line_runs_as_a_module():
    """``python -m normbook.publish.build`` (what the Makefile calls) parses its arguments."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "normbook.publish.build", "params"],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0 and "[params]" in out.stdout, out.stderr


def test_pages_that_read_every_record_execute_last():
    order = [c.stem for c in build.execution_order(project.chapters())]
    readers = [c.stem for c in project.chapters() if project.spec_for(c).reads_ledger]
    assert readers and order[-len(readers) :] == readers
    assert order.index("calibration") < order.index("ledger")  # it writes a record too


def test_chapters_of_different_papers_alternate_in_the_side_by_side_queue():
    from normbook.publish import chapter_jobs

    chs = [c for c in project.chapters() if not project.spec_for(c).reads_ledger]
    order = chapter_jobs.interleaved(chs)
    assert sorted(order) == sorted(chs)
    papers = [project.papers(c) for c in order]
    assert papers[0] != papers[1]  # the first two to start share no networks
    for paper in set(papers):  # each paper's chapters keep their TOC order
        assert [c for c in order if project.papers(c) == paper] == [
            c for c in chs if project.papers(c) == paper
        ]


def test_the_queue_starts_the_largest_planned_chapters_first():
    from normbook.publish import chapter_jobs

    chs = [c for c in project.chapters() if not project.spec_for(c).reads_ledger]
    order = chapter_jobs.queue(chs, "cpu")
    cost = [chapter_jobs.planned_flops(c, "cpu") for c in order]
    rest = [cost[0], *cost[2:]]  # the second slot goes to another paper, the rest by cost
    assert sorted(order) == sorted(chs) and rest == sorted(rest, reverse=True)
    assert cost[0] == max(cost) > 0 and cost[-1] == 0  # analyses of others' networks go last
    first_two = [project.papers(c) for c in order[:2]]
    assert first_two[0] != first_two[1]  # the two started first share no networks
    other = [c for c, x in zip(order, cost) if project.papers(c) != first_two[0]]
    assert order[1] == other[0]  # the largest of the other paper's chapters


def test_side_by_side_chapters_report_seconds_and_a_failure(tmp_path, monkeypatch, capsys):
    """Children run at once, their lines prefixed; a failed child fails the build after the
    running ones finish, with its last lines in the error."""
    import sys

    import pytest as _pytest

    from normbook.publish import chapter_jobs

    script = tmp_path / "child.py"
    script.write_text(
        "import sys\n"
        "name = sys.argv[1]\n"
        "import os\n"
        "print('working on', name, 'at nice', os.nice(0), flush=True)\n"
        "if name == 'bad': print('Boom', flush=True); sys.exit(2)\n"
        f"print({chapter_jobs.RESULT!r}, 'none' if name == 'cached' else '1.5')\n"
    )
    child = lambda ch, profile, force: [sys.executable, str(script), ch.stem]  # noqa: E731
    monkeypatch.setattr(chapter_jobs, "_child_command", child)
    monkeypatch.setattr(chapter_jobs, "queue", lambda chs, profile: chs)
    monkeypatch.setattr(project, "ROOT", tmp_path)
    good = [tmp_path / "a.py", tmp_path / "cached.py"]
    runs = list(chapter_jobs.run_side_by_side(good, "smoke", False, jobs=2))
    assert {ch: secs for ch, secs, _ in runs} == {good[0]: 1.5, good[1]: None}
    assert all(cpu > 0 for _, _, cpu in runs)  # each child's own CPU seconds, measured
    out = capsys.readouterr().out
    # the first in the queue (the critical path) at the build's own priority, the other below
    base = os.nice(0)
    assert f"[a] working on a at nice {base}" in out
    assert f"[cached] working on cached at nice {min(base + chapter_jobs.NICE_OTHERS, 19)}" in out
    with _pytest.raises(project.BuildError, match="(?s)bad.py failed:.*Boom"):
        list(chapter_jobs.run_side_by_side([tmp_path / "bad.py", good[0]], "smoke", False, 2))


def test_the_injected_parameters_cell_is_folded_like_the_parameters_cell(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["injected-parameters"]}),
                nbformat.v4.new_code_cell("plot()")]  # fmt: skip
    nbformat.write(nb, tmp_path / "n.ipynb")
    execution.fold_injected_parameters(tmp_path / "n.ipynb")
    cells = nbformat.read(tmp_path / "n.ipynb", as_version=4).cells
    assert cells[0].metadata.tags == ["injected-parameters", "hide-input"]
    assert "hide-input" not in cells[1].metadata.get("tags", [])
    for path in project.chapters():  # every chapter folds its parameters cell too (the intro,
        # which opens with its findings, removes it)
        folded = "remove-input" if path.stem == "intro" else "hide-input"
        assert f'tags=["parameters", "{folded}"]' in path.read_text(), path.name
    # a removed parameters cell removes the injected one too
    nb.cells.insert(
        0, nbformat.v4.new_code_cell("p = 0", metadata={"tags": ["parameters", "remove-input"]})
    )
    nbformat.write(nb, tmp_path / "n.ipynb")
    execution.fold_injected_parameters(tmp_path / "n.ipynb")
    assert (
        "remove-input" in nbformat.read(tmp_path / "n.ipynb", as_version=4).cells[1].metadata.tags
    )


def test_chapter_kernels_use_unix_sockets_not_ports():
    """Two chapters started at once cannot race for a TCP port (their kernels use sockets
    named after the kernel)."""
    import os

    from normbook.publish import execution

    make = execution.kernel_manager()
    a, b = make(kernel_name="python3"), make(kernel_name="python3")
    assert a.transport == ("ipc" if os.name == "posix" else "tcp")
    if os.name == "posix":  # each kernel its own sockets, wherever it runs
        assert a.ip != b.ip and len(a.ip) < 90


def test_a_kernels_session_takes_the_niceness_of_the_chapter_that_starts_it(tmp_path):
    """A chapter run at lower priority gives its kernel's session (a new autogroup) its
    niceness, so that the scheduler's share between sessions follows it."""
    import subprocess
    import sys
    from pathlib import Path

    if not Path("/proc/self/autogroup").exists():
        pytest.skip("no autogroup scheduler here: niceness alone decides")
    script = (
        "import os, subprocess, sys\n"
        "from normbook.publish.execution import keep_priority\n"
        "os.nice(7)\n"
        "kernel = subprocess.Popen([sys.executable, '-c', 'import sys; sys.stdin.read()'],\n"
        "                          stdin=subprocess.PIPE, start_new_session=True)\n"
        "keep_priority(kernel.pid)\n"
        "print(os.nice(0), open(f'/proc/{kernel.pid}/autogroup').read().split()[-1])\n"
        "kernel.stdin.close(); kernel.wait()\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    mine, its = out.stdout.split()
    assert int(mine) >= 7 and its == mine
