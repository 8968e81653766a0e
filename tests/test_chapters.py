"""The chapters stay thin: short cells, no functions, every figure glued, labelled and
captioned with the library function that drew it."""

import ast
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


def _plumbing(source: str) -> bool:
    """A cell a reader need not see: it starts the run (``report.start``, with the imports and
    setup around it), or it only imports or glues numbers for the prose."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        f = getattr(node, "func", None)
        if (
            isinstance(f, ast.Attribute)
            and f.attr == "start"
            and getattr(f.value, "id", "") == "report"
        ):
            return True
    glue = lambda st: (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)
                       and getattr(st.value.func, "attr", "") in ("glue", "glue_all"))  # fmt: skip
    return bool(tree.body) and all(
        isinstance(st, (ast.Import, ast.ImportFrom)) or glue(st) for st in tree.body
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_visible_code_cell_is_science(path):
    """Plumbing cells are removed from the page (kept in the source and the downloaded
    notebook): every code cell a reader sees does something the prose explains."""
    for cell in _code_cells(path):
        tags = cell.metadata.get("tags", [])
        if _plumbing(cell.source):
            assert {"remove-input", "remove-cell"} & set(tags), (
                f"{path.name}: a plumbing cell is visible; tag it remove-input:\n"
                f"{cell.source[:160]}"
            )


def test_the_plumbing_rule_can_fail():
    assert _plumbing("from a import b\nrun.glue('x', 1)\nrun.glue_all('y', {})")
    assert _plumbing("import x\nparams, run = report.start(spec, globals())\nsetup = f(params)")
    assert not _plumbing("run.glue('x', 1)\nreport.figure('fig', figures.task(params))")


# the chapters that show their science's code (issue: the network, the training step, the
# measured quantity and the test, each included from the library)
SHOWS_CODE = {"a1_localization": 4, "a2_mechanism": 4, "a3_which_norms": 4, "b2_sparsity": 4,
              "b3_clusters": 4}  # fmt: skip


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_included_code_resolves_and_covers_the_science(path):
    """Every ``{code-of}`` in a chapter names a definition the library has (the build would
    stop otherwise), and the chapters above show the network (``cached``), the training, the
    measured quantity and the test (``grading``)."""
    from normbook.publish import sphinx_code

    names = re.findall(r"```\{code-of\} (\S+)", _markdown(path))
    for name in names:
        sphinx_code.locate(name)
    if path.stem in SHOWS_CODE:
        assert len(names) >= SHOWS_CODE[path.stem], names
        assert any(".cached." in n for n in names), names
        assert any(".grading." in n or ".claims." in n for n in names), names
