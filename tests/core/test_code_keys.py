"""Cache keys hash what computes: a docstring, a comment, a reformat or a renamed import alias in
any keyed module leaves every key as it is; an operator or a constant changes the keys of the
steps that cover it and no others."""

import ast
import importlib
import io
import json
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path
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


# ---- the holes of a text-free key, closed both ways ----------------------------------------


def _same(a: str, b: str, package: str = "normbook.x") -> bool:
    return code_keys.canonical(a, package) == code_keys.canonical(b, package)


def test_every_annotation_is_dropped_but_a_dataclass_field_stays_a_field():
    local = "def f():\n    kept: dict[str, int] = {}\n    return kept\n"
    assert _same(local, local.replace("dict[str, int]", "dict"))
    assert _same(local, local.replace(": dict[str, int]", ""))
    args = "def f(x: int, *a: str, k: float = 1.0, **kw: object) -> int:\n    return x\n"
    assert _same(args, "def f(x, *a, k=1.0, **kw):\n    return x\n")
    field = "@dataclass\nclass A:\n    x: int = 1\n"
    assert _same(field, field.replace("int", "float"))
    assert not _same(field, field.replace("x: int = 1", "x = 1"))  # no longer a field
    assert not _same(field, field.replace("int", "ClassVar[int]"))  # no longer a field either


def test_reordering_definitions_changes_nothing_unless_a_name_is_bound_twice():
    a = "import numpy as np\n\n\ndef g():\n    return np.ones(1)\n\n\ndef h():\n    return g()\n"
    b = "def h():\n    return g()\n\n\nimport numpy as np\n\n\ndef g():\n    return np.ones(1)\n"
    assert _same(a, b)
    twice = "def g():\n    return 1\n\n\ndef g():\n    return 2\n"
    assert not _same(twice, "def g():\n    return 2\n\n\ndef g():\n    return 1\n")
    # an import and a definition of the same local name: the later one is the name
    imp = "from math import pi\n\n\ndef pi():\n    return 3\n\n\nx = pi()\n"
    assert not _same(imp, "def pi():\n    return 3\n\n\nfrom math import pi\n\n\nx = pi()\n")
    # two imports binding one local name
    assert not _same("import numpy as np\nimport numpy.linalg as np\n",
                     "import numpy.linalg as np\nimport numpy as np\n")  # fmt: skip
    assert _same("import sys\nimport os\n", "import os\nimport sys\n")
    # an order-dependent decorator (one that registers) keeps its definitions in place
    reg = "@register\ndef g():\n    return 1\n\n\n@register\ndef h():\n    return 2\n"
    assert not _same(
        reg, "@register\ndef h():\n    return 2\n\n\n@register\ndef g():\n    return 1\n"
    )


def test_a_parameter_or_local_that_shadows_an_import_is_not_the_import():
    shadowed = "import numpy as np\n\n\ndef f(x, np):\n    return np.sum(x)\n"
    module = "import numpy as np\n\n\ndef f(x, np):\n    return numpy.sum(x)\n"
    assert not _same(shadowed, module)
    comp = "import numpy as np\n\n\ndef f(xs):\n    return [np for np in xs]\n"
    assert not _same(comp, comp.replace("[np for np in xs]", "[numpy for np in xs]"))
    method = "import numpy as np\n\n\nclass A:\n    np = 1\n\n    def f(self):\n        return np\n"
    assert _same(method, method.replace("return np", "return numpy"))  # a class body is no scope


def test_paper_bs_models_parameter_is_the_argument_not_the_module():
    """``analysis.py`` imports the module ``models`` and has functions whose parameter
    ``models`` shadows it: their key reads the parameter."""
    from normbook.paper_b.cached import analysis

    text = code_keys.canonical_of(analysis.bookkeeping)
    assert "Name(id='models'" in text and "normbook.paper_b.cached.models" not in text


def test_imports_stay_where_python_executes_them():
    assert not _same("from math import pi\npi = 3\n", "pi = 3\nfrom math import pi\n")
    assert _same("import os\nimport sys\nX = 1\n", "import sys\nimport os\nX = 1\n")
    assert not _same("import os\nX = os.sep\n", "X = os.sep\nimport os\n")


def test_a_function_key_covers_the_module_definitions_and_library_helpers_it_reads(
    tmp_path, monkeypatch
):
    pkg = tmp_path / "plantedpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text(
        "SCALE = 2.0\n\n\ndef helper(x):\n    return x * SCALE\n\n\n"
        "def f(x):\n    return helper(x) + 1\n\n\ndef g(x):\n    return x - 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("plantedpkg.mod")
    before = code_keys.canonical_of(mod.f)
    for old, new, moves in (("SCALE = 2.0", "SCALE = 3.0", True),
                            ("x * SCALE", "x / SCALE", True),
                            ("return x - 1", "return x - 2", False)):  # fmt: skip
        _planted(monkeypatch, {mod: lambda s, o=old, n=new: s.replace(o, n)})
        assert (code_keys.canonical_of(mod.f) != before) is moves, (old, new)
        monkeypatch.undo()
        monkeypatch.syspath_prepend(str(tmp_path))


def test_a_function_keyed_step_covers_the_library_helpers_it_calls(steps, monkeypatch):
    """B4's analyses are keyed by single functions; the one that computes runs them inside
    ``workers.single_thread``: a change to its thread count moves their keys."""
    from normbook.runtime import workers

    before = _hashes(steps)
    one = "torch.set_num_threads(1)\n    computing_on"
    two = "torch.set_num_threads(2)\n    computing_on"
    _planted(monkeypatch, {workers: lambda s: s.replace(one, two)})
    after = _hashes(steps)
    assert {"b_threshold", "b_silhouette"} <= {k for k in steps if after[k] != before[k]}


def _annotations_changed(src: str) -> str:
    """Every annotation of an argument, a return or a local variable becomes ``object``, and
    every local ``x: T = v`` loses its annotation (a class body's fields keep theirs)."""

    class Edit(ast.NodeTransformer):
        def visit_FunctionDef(self, node):
            for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                a.annotation = ast.Name("object") if a.annotation is not None else None
            node.returns = ast.Name("object") if node.returns is not None else None
            for n in ast.walk(node):
                if isinstance(n, ast.AnnAssign) and n.simple:
                    n.annotation = ast.Name("object")
            return self.generic_visit(node)

        visit_AsyncFunctionDef = visit_FunctionDef

    return ast.unparse(Edit().visit(ast.parse(src)))


def _definitions_reversed(src: str) -> str:
    """Each run of consecutive undecorated top-level functions in reverse order."""
    tree = ast.parse(src)
    body, run = [], []
    for s in [*tree.body, None]:
        if isinstance(s, ast.FunctionDef) and not s.decorator_list:
            run.append(s)
            continue
        body.extend(reversed(run))
        run = []
        if s is not None:
            body.append(s)
    tree.body = body
    return ast.unparse(tree)


@pytest.mark.parametrize("edit", [_annotations_changed, _definitions_reversed],
                         ids=["annotations", "reordered"])  # fmt: skip
def test_more_edits_that_compute_nothing_change_no_key(steps, monkeypatch, edit):
    before = _hashes(steps)
    mods = _keyed_modules(steps)
    changed = [m for m in mods if ast.dump(ast.parse(edit(code_keys.source_of(m))))
               != ast.dump(ast.parse(code_keys.source_of(m)))]  # fmt: skip
    assert len(changed) >= len(mods) // 3, len(changed)  # the edit reaches many keyed modules
    _planted(monkeypatch, {m: edit for m in mods})
    assert _hashes(steps) == before


# ---- the same form on every Python ----------------------------------------------------------

FIXTURE = Path(__file__).parent / "fixtures" / "canonical.json"
OTHER_PYTHONS = ["python3.11", "python3.12", "python3.13"]


def test_the_canonical_forms_match_the_committed_fixture():
    """A Python whose tree differs in layout (3.12 adds ``type_params``; its f-strings split
    otherwise) gives the forms committed from 3.11: keys made on a GPU machine's 3.12 match."""
    cases = json.loads(FIXTURE.read_text())
    assert len(cases) >= 10
    for name, c in cases.items():
        assert code_keys.canonical(c["source"], c["package"]) == c["canonical"], name


def _interpreters() -> list[str]:
    found = [shutil.which(p) for p in OTHER_PYTHONS]
    found += sorted(str(p) for p in Path.home().glob(".pyenv/versions/3.1[123]*/bin/python3"))
    # a pyenv shim for a version that is not selected answers with an error: left out
    return sorted({f for f in found if f and _version(f) not in (None, sys.version_info[:2])})


def _version(python: str):
    out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                         capture_output=True, text=True)  # fmt: skip
    return tuple(map(int, out.stdout.split())) if out.returncode == 0 else None


def test_other_pythons_give_the_fixtures_forms():
    """Where other interpreters are installed, each computes the fixture's forms with this
    checkout's code_keys (standard library only) and gets the committed strings."""
    pythons = _interpreters()
    if not pythons:
        pytest.skip("no other Python 3.11-3.13 on this machine")
    script = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location('ck', {str(Path(code_keys.__file__))!r})\n"
        "ck = importlib.util.module_from_spec(spec); spec.loader.exec_module(ck)\n"
        f"cases = json.load(open({str(FIXTURE)!r}))\n"
        "forms = {n: ck.canonical(c['source'], c['package']) for n, c in cases.items()}\n"
        "print(json.dumps(forms))\n"
    )
    cases = json.loads(FIXTURE.read_text())
    for python in pythons:
        out = subprocess.run([python, "-c", script], capture_output=True, text=True, check=True)
        got = json.loads(out.stdout)
        assert got == {n: c["canonical"] for n, c in cases.items()}, python
