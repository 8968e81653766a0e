"""What a cache key hashes of the code: its syntax tree, not its text.

A key must change when the code that computes changes, and only then. So the source of each
keyed module, class or function is parsed and reduced to what runs:

- docstrings, comments and formatting go (the tree has none of the last two);
- annotations of arguments and returns go (``from __future__ import annotations`` never
  evaluates them); a dataclass field's annotation stays, since it makes the field;
- every imported name is replaced by the full name it refers to (``np`` -> ``numpy``,
  ``from ..grading import stats as st`` -> ``normbook.grading.stats``), so renaming an alias
  changes nothing, and the module's imports are kept as a sorted set, so reordering them
  changes nothing either.

Everything else (an operator, a constant, a default, a name of one's own) is kept, and a
change to it changes the key.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
import textwrap
from types import ModuleType


def _full(module: str | None, level: int, package: str) -> str:
    """The absolute module of ``from <level dots><module> import ...`` inside ``package``."""
    if level == 0:
        return module or ""
    parts = package.split(".")
    base = parts[: len(parts) - (level - 1)] if level > 1 else parts
    return ".".join([*base, module] if module else base)


def imported_names(tree: ast.AST, package: str) -> dict[str, str]:
    """Local name -> full dotted name, for every import in ``tree``."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                # `import a.b` binds `a`; `import a.b as c` binds `c` to `a.b`
                local = a.asname or a.name.split(".")[0]
                names[local] = a.name if a.asname else local
        elif isinstance(node, ast.ImportFrom):
            base = _full(node.module, node.level, package)
            for a in node.names:
                if a.name != "*":
                    names[a.asname or a.name] = f"{base}.{a.name}"
    return names


class _Canonical(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.names:
            node.id = self.names[node.id]
        return node

    def _body(self, node):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            if isinstance(body[0].value.value, str):
                body = body[1:] or [ast.Pass()]
        imports = sorted(
            {self._import(s) for s in body if isinstance(s, ast.Import | ast.ImportFrom)}
        )
        rest = [s for s in body if not isinstance(s, ast.Import | ast.ImportFrom)]
        node.body = [ast.Expr(ast.Constant(i)) for i in imports] + rest
        self.generic_visit(node)
        return node

    def _import(self, node: ast.Import | ast.ImportFrom) -> str:
        """An import as the sorted full names it binds."""
        if isinstance(node, ast.Import):
            full = [a.name for a in node.names]
        else:
            full = [self.names.get(a.asname or a.name, a.name) for a in node.names]
        return "import " + ",".join(sorted(full))

    def _function(self, node):
        node.returns = None
        for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                  node.args.vararg, node.args.kwarg]:  # fmt: skip
            if a is not None:
                a.annotation = None
        return self._body(node)

    visit_Module = _body
    visit_ClassDef = _body
    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function


@functools.lru_cache(maxsize=512)  # parsed once per text: keys are asked for often
def canonical(source: str, package: str, module_source: str | None = None) -> str:
    """The computation in ``source`` (a module, class or function inside ``package``), as a
    string that no docstring, comment, format, annotation or import alias changes.
    ``module_source``: the whole module's text, whose imports name what a class or function
    uses (a module's own source by default)."""
    tree = ast.parse(textwrap.dedent(source))
    names = imported_names(ast.parse(module_source or source), package)
    tree = _Canonical(names).visit(tree)
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


def canonical_of(obj) -> str:
    """:func:`canonical` of a live module, class or function."""
    if isinstance(obj, ModuleType):
        return canonical(source_of(obj), obj.__package__ or "")
    module = sys.modules[obj.__module__]
    return canonical(source_of(obj), module.__package__ or "", source_of(module))


def source_of(obj) -> str:
    """The source text of ``obj`` (one place, so tests can plant an edit)."""
    return inspect.getsource(obj)
