"""Papermill reads every parameter of every chapter: its own inspection of each parameters cell
finds exactly the spec's names and warns of nothing, and a parameter it cannot read stops the
build before any compute."""

import logging

import pytest

from normbook.publish import execution, param_cells, project
from normbook.runtime.params import Param, Spec


@pytest.fixture
def papermill_warnings(caplog):
    """Papermill's warnings (the build's log handler stops them reaching the root logger)."""
    log = logging.getLogger("papermill")
    log.addHandler(caplog.handler)
    caplog.handler.setLevel(logging.WARNING)
    yield caplog
    log.removeHandler(caplog.handler)


@pytest.mark.parametrize("chapter", project.chapters(), ids=lambda c: c.stem)
def test_papermill_reads_every_parameter_of_every_chapter(chapter, tmp_path, papermill_warnings):
    import jupytext
    import papermill

    notebook = tmp_path / f"{chapter.stem}.ipynb"
    jupytext.write(jupytext.read(chapter), notebook)
    found = papermill.inspect_notebook(str(notebook))
    assert list(found) == ["profile", *project.spec_for(chapter).names]
    assert [r.getMessage() for r in papermill_warnings.records] == []


def test_a_meaning_with_an_equals_sign_stays_off_the_assignment_line(papermill_warnings):
    spec = Spec(
        chapter="demo",
        params=[
            Param("groups", int, "GroupNorm groups G (norm='group')"),
            Param("low", float, "|a| <= low counts as zero"),
            Param("steps", int, "Adam steps"),
        ],
        profiles={p: dict(groups=1, low=0.0, steps=40) for p in ("smoke", "cpu", "paper")},
    )
    cell = spec.parameters_cell()
    assert "groups = None\n#   GroupNorm groups G (norm='group') [every profile: 1]" in cell
    assert "steps = None  # Adam steps [every profile: 40]" in cell
    names, warnings = param_cells.papermill_parameters({"source": cell})
    assert names == ["profile", "groups", "low", "steps"] and warnings == []


@pytest.fixture
def chapter(tmp_path, monkeypatch):
    """A copy of chapter A1 inside a throw-away project root."""
    (tmp_path / "book").mkdir()
    path = tmp_path / "book" / "a1_localization.py"
    path.write_text((project.ROOT / "book" / "a1_localization.py").read_text())
    monkeypatch.setattr(project, "ROOT", tmp_path)
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / "_build"))
    return path


def test_a_parameter_papermill_cannot_read_stops_the_build_before_any_compute(
    chapter, monkeypatch, papermill_warnings
):
    import papermill

    text = chapter.read_text()
    assert "\nseq_len = None  #" in text
    chapter.write_text(text.replace("\nseq_len = None  #", "\nseq_len = None  # l = 2R+1,"))
    problem = param_cells.papermill_drift(chapter)
    assert "Unable to parse line" in problem and "seq_len" in problem
    calls = []
    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **kw: calls.append(kw))
    with pytest.raises(project.BuildError) as err:
        execution.execute(chapter, "smoke", {"seq_len": 64})
    message = str(err.value)
    assert "\n" not in message and "parameter(s) seq_len " in message and "--write" in message
    assert calls == [] and not list(chapter.parent.parent.rglob("*.stamp"))
