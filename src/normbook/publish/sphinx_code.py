"""Sphinx extension: the library's code in the book, read from the library at build time.

- ``{code-of} normbook.paper_a.measures.bands.interior_slope`` shows one definition (a
  function, a class, a method or a module-level constant) where the prose explains it, read
  from ``src/`` as the build finds it, never copied into the chapter. A name that no longer
  resolves (a renamed or moved definition) stops the build with an error that names it, so a
  page cannot show stale code. Definitions over ``FOLD_LINES`` lines start folded
  (sphinx-togglebutton).
- Every module that a page links to or includes gets a highlighted source page,
  ``_code/normbook/paper_a/measures/bands.html`` (the module's dotted name as folders), with
  an anchor at each definition (its qualified name) and at each line (``L-<n>``): the pages
  a verdict's links open (:func:`normbook.grading.verdicts.code_href`).
"""

from __future__ import annotations

import ast
import html
import re
from functools import cache
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

from normbook.grading.verdicts import CODE_PAGES as PAGES
from normbook.grading.verdicts import code_href

SRC = Path(__file__).resolve().parents[2]  # the folder that holds the package ``normbook``
FOLD_LINES = 25  # a definition longer than this starts folded
_LINK = re.compile(PAGES + r"/(normbook(?:/\w+)+)\.html")


def module_file(module: str) -> Path | None:
    """The source file of a ``normbook`` module, or None."""
    base = SRC.joinpath(*module.split("."))
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if module.split(".")[0] == "normbook" and f.is_file():
            return f
    return None


def split_name(name: str) -> tuple[str, str]:
    """``module.qual.name`` -> (the longest prefix that is a module, the rest)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        if module_file(".".join(parts[:i])):
            return ".".join(parts[:i]), ".".join(parts[i:])
    raise ExtensionError(f"code-of: {name!r} is in no module of normbook (moved or renamed?)")


@cache
def definitions(path: Path, mtime: float) -> dict[str, tuple[int, int]]:
    """Every definition of a module file: qualified name -> (first line with its decorators,
    last line); classes' methods as ``Class.method``, module constants by their name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, tuple[int, int]] = {}

    def visit(body, prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                out[prefix + node.name] = (first, node.end_lineno)
                if isinstance(node, ast.ClassDef):
                    visit(node.body, prefix + node.name + ".")
            elif not prefix and isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        out[t.id] = (node.lineno, node.end_lineno)

    visit(tree.body, "")
    return out


def locate(name: str) -> tuple[str, str, Path, int, int]:
    """(module, qualified name, file, first line, last line) of a dotted name; an error that
    names it when it does not resolve."""
    module, qual = split_name(name)
    path = module_file(module)
    found = definitions(path, path.stat().st_mtime).get(qual)
    if not qual or found is None:
        raise ExtensionError(
            f"code-of: {name!r}: no definition {qual!r} in {path.relative_to(SRC.parent)} "
            "(renamed or moved? the page would show stale code)"
        )
    return module, qual, path, *found


class CodeOf(SphinxDirective):
    """``code-of``: one definition of the library, its source shown with its line numbers."""

    required_arguments = 1

    def run(self):
        module, qual, path, first, last = locate(self.arguments[0].strip())
        lines = path.read_text(encoding="utf-8").splitlines()[first - 1 : last]
        self.env.note_dependency(str(path))
        _note(self.env, self.env.docname, module)
        code = "\n".join(lines)
        block = nodes.literal_block(code, code, language="python", linenos=True)
        block["highlight_args"] = {"linenostart": first}
        depth = self.env.docname.count("/")
        href = code_href(module, qual, depth)
        head = nodes.paragraph(classes=["code-of"])
        head += nodes.reference("", "", nodes.literal(text=f"{module}.{qual}"), refuri=href)
        head += nodes.Text(f" ({path.relative_to(SRC.parent)}, lines {first}–{last})")
        box = nodes.container(classes=["code-of-box"])
        if len(lines) > FOLD_LINES:
            box["classes"].append("toggle")
        box += [head, block]
        return [box]


def _note(env, docname: str, module: str) -> None:
    if not hasattr(env, "normbook_code"):
        env.normbook_code = {}
    env.normbook_code.setdefault(docname, set()).add(module)


def note_links(app, docname: str, source: list[str]) -> None:
    """Remember the modules a page links to (a verdict's links are in its executed outputs)."""
    for path in _LINK.findall(source[0]):
        _note(app.env, docname, path.replace("/", "."))


def purge(app, env, docname: str) -> None:
    getattr(env, "normbook_code", {}).pop(docname, None)


def merge(app, env, docnames, other) -> None:
    if not hasattr(env, "normbook_code"):
        env.normbook_code = {}
    for doc in docnames:
        if doc in getattr(other, "normbook_code", {}):
            env.normbook_code[doc] = set(other.normbook_code[doc])


def source_page(module: str) -> str:
    """A module's source, highlighted, with an anchor per line and per definition."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    path = module_file(module)
    text = path.read_text(encoding="utf-8")
    body = highlight(text, PythonLexer(), HtmlFormatter(linenos="inline", linespans="L",
                                                        cssclass="highlight"))  # fmt: skip
    for qual, (first, _) in sorted(definitions(path, path.stat().st_mtime).items()):
        tag = f'<span id="L-{first}">'
        body = body.replace(tag, f'<span id="{html.escape(qual)}"></span>' + tag, 1)
    where = html.escape(str(path.relative_to(SRC.parent)))
    return (
        f'<div class="code-page"><h1>{html.escape(module)}</h1>\n'
        f"<p>Source: <code>{where}</code></p>\n{body}</div>"
    )


def collect_pages(app):
    modules = sorted({m for ms in getattr(app.env, "normbook_code", {}).values() for m in ms
                      if m and module_file(m)})  # fmt: skip
    for module in modules:
        ctx = {"title": module, "body": source_page(module), "parents": [], "display_toc": False}
        yield f"{PAGES}/{module.replace('.', '/')}", ctx, "page.html"


def setup(app):
    app.add_directive("code-of", CodeOf)
    app.connect("source-read", note_links)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    app.connect("html-collect-pages", collect_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
