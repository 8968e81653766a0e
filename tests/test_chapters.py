"""The chapters stay thin: short cells, no functions, every figure glued, labelled and
captioned with the library function that drew it."""

import importlib
import re

import jupytext
import pytest

from normbook.publish import project

CHAPTERS = project.chapters()
MAX_CELL_LINES = 32  # the parameters cell of the largest chapter is generated: exempt


def _code_cells(path):
    nb = jupytext.read(path)
    return [
        c
        for c in nb.cells
        if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])
    ]


def _markdown(path):
    return "\n".join(c.source for c in jupytext.read(path).cells if c.cell_type == "markdown")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_cells_are_short_and_define_nothing(path):
    for cell in _code_cells(path):
        assert len(cell.source.splitlines()) <= MAX_CELL_LINES, cell.source[:80]
        assert not re.search(r"^\s*(def|class) ", cell.source, re.M), cell.source[:80]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_figure_is_glued_labelled_and_names_its_function(path):
    code = "\n".join(c.source for c in _code_cells(path))
    glued = re.findall(r'report\.figure\(\s*"([^"]+)"', code)
    text = _markdown(path)
    # options as `:name:` lines, or as a YAML block (`---`) where the alt text runs over lines
    directives = re.findall(
        r"```\{glue:figure\} (\S+)\n(?::name: |---\nname: )(\S+)\n(.*?)```", text, re.S
    )
    assert sorted(glued) == sorted(key for key, _, _ in directives)
    for key, name, body in directives:
        assert name == key, key
        drawn = re.findall(r"Drawn by\s+`((?:\w+\.)*?(\w+))\.(\w+)`", body)
        assert len(drawn) == 1, f"{key}: caption must name the drawing function"
        path_, module, func = drawn[0]
        assert callable(getattr(importlib.import_module(f"normbook.{path_}"), func))
        assert f"{module}.{func}(" in code, f"{key}: the named function is not the one called"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_sections_are_labelled_and_nothing_cites_private_documents(path):
    text = _markdown(path)
    headings = re.findall(r"^#{1,3} .*$", text, re.M)
    labels = re.findall(r"^\(([\w-]+)\)=\n#{1,3} ", text, re.M)
    assert len(labels) == len(headings), f"{path.stem}: a heading without a label"
    assert "protocol" not in path.read_text().lower()  # a private file readers cannot open
    cited = [ln for ln in text.splitlines() if "review" in ln and "on Pith" not in ln]
    for line in cited:  # the public reviews are cited through the Methods page's sources
        assert line.count("review") == line.count("review <methods-sources>`"), line
