"""What a hash of code covers: its syntax tree, not its text, in one canonical form used by the
cache keys, the chapters' code hashes and the paper-scale records.

A hash must change when the code that computes changes, and only then. So the source of each
module, class or function is parsed and reduced to what runs:

- docstrings, comments and formatting go (the tree has none of the last two);
- every annotation goes (of arguments, returns and variables): none is evaluated to compute.
  In a class or module body a variable annotation stays as a bare marker, since it makes a
  dataclass field (``ClassVar`` and ``InitVar``, which decide whether it does, are kept);
- a name is resolved by scope, as Python resolves it: one that refers to an import is replaced
  by the full name it imports (``np`` -> ``numpy``, ``from ..grading import stats as st`` ->
  ``normbook.grading.stats``), so renaming an alias changes nothing; a parameter or local
  variable that shadows an imported name stays itself;
- imports stay where Python executes them. Only a run of consecutive imports and definitions
  (a ``def``, or a ``class`` whose decorators are all in :data:`ORDER_FREE`), in which no name
  is bound twice, is put in a fixed order: reordering them changes nothing that runs.

Everything else (an operator, a constant, a default, a name of one's own, the order of
statements that execute) is kept, and a change to it changes the hash. The result is a dump of
the tree that leaves out empty fields, so that a Python version that adds one (3.12's
``type_params``) gives the same string; ``tests/core/fixtures/canonical.json`` holds the forms
of a set of snippets, and the tests compare against it.

A function or class keyed on its own (:func:`canonical_of`) covers the module-level definitions
it reads, transitively: the constants, helpers and classes of its module, and the functions and
classes it imports by name from the library.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
import textwrap
from types import ModuleType

LIBRARY = "normbook"
# Decorators that only wrap or mark what they decorate: a run of definitions decorated with
# these (or with none) can be reordered without changing what runs. One that registers the
# definition somewhere (in order) is not among them, so its definitions stay where they are.
ORDER_FREE = frozenset({
    "dataclasses.dataclass", "functools.cache", "functools.lru_cache", "functools.wraps",
    "functools.cached_property", "staticmethod", "classmethod", "property",
    "contextlib.contextmanager", "torch.no_grad", "torch.inference_mode",
})  # fmt: skip
# An annotation that changes what a dataclass makes of the field it annotates.
FIELD_KINDS = frozenset({"ClassVar", "InitVar"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _full(module: str | None, level: int, package: str) -> str:
    """The absolute module of ``from <level dots><module> import ...`` inside ``package``."""
    if level == 0:
        return module or ""
    parts = package.split(".")
    base = parts[: len(parts) - (level - 1)] if level > 1 else parts
    return ".".join([*base, module] if module else base)


def _import_bindings(node: ast.Import | ast.ImportFrom, package: str) -> dict[str, str]:
    """Local name -> full dotted name, for one import statement."""
    if isinstance(node, ast.Import):
        # `import a.b` binds `a`; `import a.b as c` binds `c` to `a.b`
        return {(a.asname or a.name.split(".")[0]): (a.name if a.asname else a.name.split(".")[0])
                for a in node.names}  # fmt: skip
    base = _full(node.module, node.level, package)
    return {(a.asname or a.name): f"{base}.{a.name}" for a in node.names if a.name != "*"}


def _statements(body: list[ast.stmt]):
    """The statements of one scope's body, with those nested in its compound statements (an
    ``if``, ``try``, ``for``, ``with``), but not inside a nested function or class."""
    for s in body:
        yield s
        if not isinstance(s, _SCOPES):
            for name in ("body", "orelse", "finalbody"):
                yield from _statements(getattr(s, name, None) or [])
            for h in getattr(s, "handlers", None) or []:
                yield from _statements(h.body)
            for c in getattr(s, "cases", None) or []:
                yield from _statements(c.body)


def imported_names(tree: ast.Module, package: str) -> dict[str, str]:
    """Local name -> full dotted name, for every import at the top level of a module (also in
    its ``if`` and ``try`` blocks; those inside functions bind local names)."""
    names: dict[str, str] = {}
    for s in _statements(tree.body):
        if isinstance(s, ast.Import | ast.ImportFrom):
            names.update(_import_bindings(s, package))
    return names


class _Bound(ast.NodeVisitor):
    """The names one scope binds (``names``: name -> full name for an import, None otherwise)
    and those it declares ``global`` or ``nonlocal``, without entering nested scopes."""

    def __init__(self, package: str):
        self.package, self.names, self.declared = package, {}, set()

    def bind(self, name: str, full: str | None = None) -> None:
        if full is not None or name not in self.names:
            self.names[name] = full

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.bind(node.id)

    def visit_Import(self, node):
        for local, full in _import_bindings(node, self.package).items():
            self.bind(local, full)

    visit_ImportFrom = visit_Import

    def _definition(self, node):
        # a nested scope binds its name here; its decorators and defaults are evaluated here
        if not isinstance(node, ast.Lambda):
            self.bind(node.name)
            for d in node.decorator_list:
                self.visit(d)
        if isinstance(node, ast.ClassDef):
            for b in [*node.bases, *node.keywords]:
                self.visit(b)
        else:
            for d in [*node.args.defaults, *node.args.kw_defaults]:
                if d is not None:
                    self.visit(d)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _definition

    def _comprehension(self, node):
        # its targets are its own; an assignment expression inside binds in this scope
        self.visit(node.generators[0].iter)
        for n in ast.walk(node):
            if isinstance(n, ast.NamedExpr):
                self.bind(n.target.id)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_Global(self, node):
        self.declared.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_ExceptHandler(self, node):
        if node.name:
            self.bind(node.name)
        self.generic_visit(node)

    def _pattern(self, node):  # a match statement's captures
        for name in (getattr(node, "name", None), getattr(node, "rest", None)):
            if name:
                self.bind(name)
        self.generic_visit(node)

    visit_MatchAs = visit_MatchStar = visit_MatchMapping = _pattern


def _scope(nodes, package: str, params: list[str] = ()) -> dict[str, str | None]:
    found = _Bound(package)
    for p in params:
        found.bind(p)
    for n in nodes:
        found.visit(n)
    return {k: v for k, v in found.names.items() if k not in found.declared}


def _params(args: ast.arguments) -> list[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return [a.arg for a in every if a is not None]


def _is_docstring(s: ast.stmt) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and (
        isinstance(s.value.value, str))  # fmt: skip


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}  # fmt: skip


class _Canonical(ast.NodeTransformer):
    """Strips what runs nothing and resolves names by scope (:mod:`normbook.runtime.code_keys`).
    ``reads``: the names the code reads (or binds) at module level, imported or not."""

    def __init__(self, module_names: dict[str, str], package: str):
        self.package = package
        # the scope chain, innermost last: (kind, bindings); the module's is the outermost
        self.chain: list[tuple[str, dict[str, str | None]]] = [("module", module_names)]
        self.reads: set[str] = set()

    # ---- names

    def _lookup(self, name: str) -> tuple[str, str | None]:
        """(the kind of scope that binds ``name``, 'module' where none does; the full name of
        the import it refers to, or None)."""
        innermost = len(self.chain) - 1
        for i in range(innermost, -1, -1):
            kind, names = self.chain[i]
            if kind == "class" and i != innermost:
                continue  # a class body's names are not visible in the scopes it holds
            if name in names:
                return kind, names[name]
        return "module", None

    def visit_Name(self, node: ast.Name) -> ast.AST:
        kind, full = self._lookup(node.id)
        if kind == "module":
            self.reads.add(node.id)
        if full is not None:
            node.id = full
        return node

    # ---- scopes

    def _in_scope(self, kind: str, bindings: dict, visit) -> None:
        self.chain.append((kind, bindings))
        try:
            visit()
        finally:
            self.chain.pop()

    def _arguments(self, args: ast.arguments) -> None:
        """Annotations dropped; defaults are evaluated in the enclosing scope."""
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if a is not None:
                a.annotation = None
        args.defaults = [self.visit(d) for d in args.defaults]
        args.kw_defaults = [d if d is None else self.visit(d) for d in args.kw_defaults]

    def _function(self, node):
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.returns = None
        self._arguments(node.args)
        body = node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body
        body = body or [ast.Pass()]
        bound = _scope(body, self.package, _params(node.args))
        self._in_scope("function", bound, lambda: setattr(node, "body", self._body(body, False)))
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        self._arguments(node.args)
        bound = _scope([node.body], self.package, _params(node.args))
        self._in_scope("function", bound, lambda: setattr(node, "body", self.visit(node.body)))
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        body = node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body
        body = body or [ast.Pass()]
        bound = _scope(body, self.package)
        self._in_scope("class", bound, lambda: setattr(node, "body", self._body(body, True)))
        return node

    def _comprehension(self, node):
        first = node.generators[0]
        first.iter = self.visit(first.iter)  # evaluated in the enclosing scope
        bound = {n.id: None for g in node.generators for n in ast.walk(g.target)
                 if isinstance(n, ast.Name)}  # fmt: skip

        def inner():
            for i, g in enumerate(node.generators):
                g.target = self.visit(g.target)
                if i:
                    g.iter = self.visit(g.iter)
                g.ifs = [self.visit(c) for c in g.ifs]
            for name in ("elt", "key", "value"):
                if getattr(node, name, None) is not None:
                    setattr(node, name, self.visit(getattr(node, name)))

        self._in_scope("comprehension", bound, inner)
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        """An f-string's parts with empty ones dropped and adjacent text joined (3.12's parser
        splits them otherwise than 3.11's)."""
        self.generic_visit(node)
        parts: list[ast.expr] = []
        for v in node.values:
            if isinstance(v, ast.Constant) and parts and isinstance(parts[-1], ast.Constant):
                parts[-1] = ast.Constant(parts[-1].value + v.value)
            elif not (isinstance(v, ast.Constant) and v.value == ""):
                parts.append(v)
        node.values = parts
        return node

    # ---- statements

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        kind = self.chain[-1][0]
        if kind in ("function", "comprehension"):
            if node.value is None:  # a declaration only: it makes the name local, nothing more
                return self.visit(ast.Expr(ast.Constant(f"local {ast.unparse(node.target)}")))
            return self.visit(ast.Assign(targets=[node.target], value=node.value, lineno=0))
        kept = sorted(FIELD_KINDS & _names_in(node.annotation))
        node.annotation = ast.Constant(kept[0] if kept else "field")
        node.target = self.visit(node.target)
        node.value = None if node.value is None else self.visit(node.value)
        return node

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> ast.AST:
        """An import as the sorted full names it imports (no alias, no relative dots)."""
        if isinstance(node, ast.Import):
            full = sorted(a.name for a in node.names)
        else:
            base = _full(node.module, node.level, self.package)
            full = sorted(f"{base}.{a.name}" for a in node.names)
        for local in _import_bindings(node, self.package):
            self.visit_Name(ast.Name(local, ast.Store()))  # a module-level import is read
        return ast.Expr(ast.Constant("import " + ",".join(full)))

    visit_ImportFrom = visit_Import

    def _body(self, body: list[ast.stmt], order_free: bool) -> list[ast.stmt]:
        binds = [_local_binds(s, self.package) for s in body]  # read before rewriting
        out = [self.visit(s) for s in body]
        return _fixed_order(out, binds) if order_free else out

    def visit_Module(self, node: ast.Module) -> ast.AST:
        body = node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body
        node.body = self._body(body, True)
        return node


def _import_marker(s: ast.stmt) -> str | None:
    """The full names of a canonical import (:meth:`_Canonical.visit_Import`), else None."""
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
        text = s.value.value
        if isinstance(text, str) and text.startswith("import "):
            return text.removeprefix("import ")
    return None


def _local_binds(s: ast.stmt, package: str) -> set[str]:
    """The local names a statement binds as written: an import's, a definition's, any other
    statement's stores and nested definitions."""
    if isinstance(s, ast.Import | ast.ImportFrom):
        return set(_import_bindings(s, package))
    named = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    if isinstance(s, named):
        return {s.name}
    return {n.id for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            } | {n.name for n in ast.walk(s) if isinstance(n, named)}  # fmt: skip


def _movable(s: ast.stmt) -> bool:
    if _import_marker(s) is not None:
        return True
    if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        # decorators are canonical already: full names (``functools.lru_cache(maxsize=8)``)
        heads = [d.func if isinstance(d, ast.Call) else d for d in s.decorator_list]
        return all(ast.unparse(h) in ORDER_FREE for h in heads)
    return False


def _fixed_order(body: list[ast.stmt], binds: list[set[str]]) -> list[ast.stmt]:
    """Runs of movable statements sorted by dump where no local name is bound twice."""
    out, run, seen = [], [], set()

    def flush():
        names = [n for _, b in run for n in b]
        clash = len(set(names)) < len(names) or seen & set(names)
        out.extend(s for s, _ in (run if clash else sorted(run, key=lambda r: dump(r[0]))))
        seen.update(names)
        run.clear()

    for s, b in zip(body, binds, strict=True):
        if _movable(s):
            run.append((s, b))
            continue
        flush()
        out.append(s)
        seen.update(b)
    flush()
    return out


def dump(node) -> str:
    """A tree as text, without positions and without empty fields (None, []), so that a field
    a newer Python adds and leaves empty (3.12's ``type_params``) changes nothing."""
    if isinstance(node, ast.AST):
        fields = [(f, getattr(node, f, None)) for f in node._fields]
        inner = ", ".join(f"{f}={dump(v)}" for f, v in fields if v is not None and v != [])
        return f"{type(node).__name__}({inner})"
    if isinstance(node, list):
        return "[" + ", ".join(dump(v) for v in node) + "]"
    return repr(node)


@functools.lru_cache(maxsize=64)
def _parsed(source: str) -> ast.Module:
    return ast.parse(source)


def _canonical_tree(source: str, package: str, module_source: str | None):
    tree = ast.parse(textwrap.dedent(source))
    module_names = imported_names(_parsed(module_source or source), package)
    canon = _Canonical(module_names, package)
    return canon.visit(tree), canon.reads


@functools.lru_cache(maxsize=1024)  # parsed once per text: keys are asked for often
def canonical(source: str, package: str, module_source: str | None = None) -> str:
    """The computation in ``source`` (a module, class or function inside ``package``), as a
    string that no docstring, comment, format, annotation, import alias or order of
    definitions changes. ``module_source``: the whole module's text, whose imports name what a
    class or function uses (a module's own source by default)."""
    return dump(_canonical_tree(source, package, module_source)[0])


@functools.lru_cache(maxsize=1024)
def module_reads(source: str, package: str, module_source: str) -> frozenset[str]:
    """The names the code in ``source`` reads at module level (its module's globals, imported
    or not, and builtins)."""
    return frozenset(_canonical_tree(source, package, module_source)[1])


@functools.lru_cache(maxsize=64)
def _top_level(module_source: str) -> dict[str, tuple[str, ...]]:
    """Each name a module binds at its top level other than by import -> the source of the
    statements binding it."""
    out: dict[str, list[str]] = {}
    for s in _statements(_parsed(module_source).body):
        if isinstance(s, ast.Import | ast.ImportFrom | ast.If | ast.Try):
            continue  # an if or try's own statements come one by one
        if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [s.name]
        else:
            names = [n.id for n in ast.walk(s)
                     if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]  # fmt: skip
        for name in names:
            out.setdefault(name, []).append(ast.unparse(s))  # decorators included
    return {k: tuple(v) for k, v in out.items()}


def canonical_of(obj) -> str:
    """:func:`canonical` of a live module, class or function. A class or function comes with
    the module-level definitions it reads (transitively): its module's constants, helpers and
    classes, and the library functions and classes its module imports by name."""
    if isinstance(obj, ModuleType):
        return canonical(source_of(obj), obj.__package__ or "")
    return "\n".join(_with_dependencies(obj, set()))


def _with_dependencies(obj, seen: set) -> list[str]:
    """The canonical forms of ``obj`` and of what it reads at module level, transitively."""
    module = sys.modules[obj.__module__]
    if (module.__name__, obj.__qualname__) in seen:
        return []
    seen.add((module.__name__, obj.__qualname__))
    package, module_source = module.__package__ or "", source_of(module)
    top, imported = _top_level(module_source), imported_names(_parsed(module_source), package)
    texts, names, out = [source_of(obj)], set(), []
    for text in texts:  # grows as definitions are found
        out.append(canonical(text, package, module_source))
        for name in sorted(module_reads(text, package, module_source) - names):
            names.add(name)
            texts.extend(t for t in top.get(name, ()) if t not in texts)
    for name in sorted(names & imported.keys()):
        target = getattr(module, name, None)
        library = imported[name].startswith(LIBRARY + ".")
        if library and (inspect.isfunction(target) or inspect.isclass(target)):
            out.extend(_with_dependencies(target, seen))
    return out


def source_of(obj) -> str:
    """The source text of ``obj`` (one place, so tests can plant an edit): a module's file, a
    class's or function's definition cut from its module's text, decorators included (so an
    edit planted in a module reaches the definitions keyed from it)."""
    if isinstance(obj, ModuleType):
        return inspect.getsource(obj)
    text = source_of(sys.modules[obj.__module__])
    node = _definition(_parsed(text), obj.__qualname__)
    if node is None:
        raise ValueError(f"no definition of {obj.__qualname__} in module {obj.__module__}")
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    return "".join(text.splitlines(keepends=True)[first - 1 : node.end_lineno])


def _definition(tree: ast.Module, qualname: str):
    """The ``def`` or ``class`` statement of ``qualname`` in a module's tree (None: not there)."""
    node, body = None, tree.body
    for name in qualname.split("."):
        found = [s for s in _statements(body) if isinstance(s, _SCOPES[:2] + (ast.ClassDef,))
                 and s.name == name]  # fmt: skip
        if not found:
            return None
        node, body = found[-1], found[-1].body  # the last one binds the name
    return node
