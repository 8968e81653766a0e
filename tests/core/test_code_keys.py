"""Cache keys hash what computes: a docstring, a comment, a reformat or a renamed import alias in
any keyed module leaves every key as it is; an operator or a constant changes the keys of the
steps that cover it and no others."""

import ast
import importlib
import io
import tokenize
from types import ModuleType

import pytest

from normbook.runtime import cache, code_keys

from .test_cache_keys import LIBRARIES


@pytest.fixture(scope="module")
def steps():
    for name in LIBRARIES:
        importlib.import_module(name)
    return dict(cache.STEPS)


def _keyed_modules(steps) -> list[ModuleType]:
    mods = {c for s in steps.values() for c in s.code if isinstance(c, ModuleType)}
    return sorted(mods, key=lambda m: m.__name__)


def _hashes(steps):
    return {k: s.code_hash for k, s in steps.items()}


def _planted(monkeypatch, edits: dict):
    """The cache sees each module in ``edits`` with its source passed through its edit."""
    real = code_keys.source_of
    monkeypatch.setattr(code_keys, "source_of", lambda o: edits.get(o, str)(real(o)))


# ---- edits that change nothing that runs --------------------------------------------------


def _docstrings_edited(src: str) -> str:
    """Every docstring gets a sentence more."""
    lines = src.splitlines(keepends=True)
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = node.body[0] if node.body else None
            if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant):
                if isinstance(doc.value.value, str):
                    i, col = doc.lineno - 1, doc.col_offset
                    quote = lines[i][col : col + 3]
                    assert quote in ('"""', "'''"), lines[i]
                    lines[i] = lines[i][: col + 3] + "An edit. " + lines[i][col + 3 :]
    return "".join(lines)


def _commented(src: str) -> str:
    """A comment line above every top-level definition and at the end."""
    out = []
    for line in src.splitlines(keepends=True):
        if line.startswith(("def ", "class ")):
            out.append("# a comment that changes nothing\n")
        out.append(line)
    return "".join(out) + "# the end\n"


def _reformatted(src: str) -> str:
    """Another layout of the same tree (quotes, wrapping, blank lines; comments dropped)."""
    return ast.unparse(ast.parse(src)) + "\n\n\n"


def _aliases(src: str) -> set[str]:
    return {
        a.asname
        for n in ast.walk(ast.parse(src))
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
        if a.asname
    }


def _aliases_renamed(src: str) -> str:
    """Every ``import x as y`` / ``from m import x as y`` binds ``y_renamed`` instead, and every
    use of ``y`` follows it."""
    aliases = _aliases(src)
    toks, prev = [], None
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.NAME and tok.string in aliases and prev != ".":
            tok = tok._replace(string=tok.string + "_renamed")
        toks.append(tok)
        prev = tok.string
    return tokenize.untokenize(toks)


def test_the_alias_edit_reaches_keyed_code(steps):
    """The alias test below is not empty: most keyed modules import under an alias."""
    with_alias = [m for m in _keyed_modules(steps) if _aliases(code_keys.source_of(m))]
    assert len(with_alias) >= 5, [m.__name__ for m in with_alias]
    src = code_keys.source_of(with_alias[0])
    assert _aliases_renamed(src) != src


@pytest.mark.parametrize(
    "edit", [_docstrings_edited, _commented, _reformatted, _aliases_renamed],
    ids=["docstring", "comment", "reformat", "alias"],
)  # fmt: skip
def test_an_edit_that_computes_nothing_changes_no_key(steps, monkeypatch, edit):
    before = _hashes(steps)
    mods = _keyed_modules(steps)
    changed = [m for m in mods if edit(code_keys.source_of(m)) != code_keys.source_of(m)]
    assert len(changed) >= len(mods) // 2  # the edit touches the text of most keyed modules
    _planted(monkeypatch, {m: edit for m in mods})
    assert _hashes(steps) == before


# ---- edits that change what runs ----------------------------------------------------------


class _FirstOperator(ast.NodeTransformer):
    """The first arithmetic operator swapped (``+`` <-> ``-``, ``*`` <-> ``/``), or, in code
    without one, the first comparison turned around (``|`` is left: it is mostly in
    annotations, which run nothing)."""

    done = False
    SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}
    TURN = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Eq: ast.NotEq}

    def visit_Module(self, node):
        for n in ast.walk(node):
            if isinstance(n, ast.BinOp) and type(n.op) in self.SWAP:
                n.op = self.SWAP[type(n.op)]()
                self.done = True
                return node
        for n in ast.walk(node):
            if isinstance(n, ast.Compare) and type(n.ops[0]) in self.TURN:
                n.ops[0] = self.TURN[type(n.ops[0])]()
                self.done = True
                return node
        return node


class _FirstConstant(ast.NodeTransformer):
    """The first float constant, plus 1.5."""

    done = False

    def visit_Constant(self, node):
        if not self.done and type(node.value) is float:
            self.done = True
            return ast.copy_location(ast.Constant(node.value + 1.5), node)
        return node


def _transformed(transformer):
    def edit(src: str) -> str:
        t = transformer()
        out = ast.unparse(t.visit(ast.parse(src)))
        assert t.done, "nothing to change"
        return out

    return edit


@pytest.mark.parametrize(
    "transformer", [_FirstOperator, _FirstConstant], ids=["operator", "constant"]
)
@pytest.mark.parametrize(
    "module",
    ["normbook.paper_a.cached.training", "normbook.paper_a.cached.evaluation",
     "normbook.paper_b.cached.training", "normbook.paper_b.cached.representations"],
)  # fmt: skip
def test_a_change_to_what_runs_changes_the_keys_that_cover_it_and_no_others(
    steps, monkeypatch, transformer, module
):
    mod = importlib.import_module(module)
    before = _hashes(steps)
    _planted(monkeypatch, {mod: _transformed(transformer)})
    after = _hashes(steps)
    covering = {k for k, s in steps.items() if mod in s.code}
    assert covering, module
    assert {k for k in steps if after[k] != before[k]} == covering


def test_a_renamed_function_of_ones_own_is_a_change():
    a = "def f(x):\n    return x + 1\n"
    assert code_keys.canonical(a, "p") != code_keys.canonical(a.replace("f(", "g("), "p")


def test_relative_imports_resolve_to_the_module_they_name():
    one = "from ..grading import stats as st\n\ndef f(x):\n    return st.mean(x)\n"
    two = "from normbook.grading import stats\n\ndef f(x):\n    return stats.mean(x)\n"
    assert code_keys.canonical(one, "normbook.paper_a") == code_keys.canonical(two, "normbook")
    other = "from ..measures import stats as st\n\ndef f(x):\n    return st.mean(x)\n"
    assert code_keys.canonical(one, "normbook.paper_a") != code_keys.canonical(
        other, "normbook.paper_a"
    )
