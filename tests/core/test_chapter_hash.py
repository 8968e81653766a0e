"""A chapter's code hash (what the reference comparison calls "the same code") covers its code
cells and the library it imports as code, not text: a prose edit to any chapter and a comment
edit to any library module keep every chapter at "same code"; an edit to what runs does not."""

import ast
import re

import pytest

from normbook.book_pages import reference
from normbook.publish import project

CHAPTERS = project.chapters()


def _planted(monkeypatch, edit_chapter=None, edit_library=None):
    """``project.source_text`` passes each chapter through ``edit_chapter`` and each library
    module through ``edit_library``."""
    real = project.source_text

    def text(f):
        src = real(f)
        if f.is_relative_to(project.PACKAGE):
            return edit_library(src) if edit_library else src
        return edit_chapter(src) if edit_chapter else src

    monkeypatch.setattr(project, "source_text", text)


def _prose_edited(src: str) -> str:
    """Every markdown line of the chapter gets a word more, and a new markdown cell ends it."""
    out, in_markdown = [], False
    for line in src.splitlines(keepends=True):
        if line.startswith("# %%"):
            in_markdown = "[markdown]" in line
        elif in_markdown and line.startswith("# ") and line.strip() != "#":
            line = line.rstrip("\n") + " Indeed.\n"
        out.append(line)
    return "".join(out) + "\n# %% [markdown]\n# A sentence the chapter did not have.\n"


def _comments_edited(src: str) -> str:
    """A comment above every top-level definition, a docstring edited, code reformatted."""
    src = re.sub(r"^(def |class )", r"# a comment that changes nothing\n\1", src, flags=re.M)
    return src.replace('"""', '"""An edit. ', 1) + "\n# the end\n"


def _first_constant_changed(src: str) -> str:
    """The first number (other than 0 and 1) plus one, or else the first string longer."""
    tree = ast.parse(src)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    for n in found:
        if type(n.value) in (int, float) and n.value not in (0, 1):
            n.value += 1
            return ast.unparse(tree)
    for n in found:
        if isinstance(n.value, str):
            n.value += " changed"
            return ast.unparse(tree)
    raise AssertionError("no constant to change")


def _hashes() -> dict[str, str]:
    return {c.stem: project.code_hash(c) for c in CHAPTERS}


def test_every_chapter_has_prose_and_code():
    assert len(CHAPTERS) >= 10
    for c in CHAPTERS:
        text = c.read_text()
        assert "# %% [markdown]" in text and _prose_edited(text) != text, c.name


def test_a_prose_or_comment_edit_keeps_every_chapter_at_same_code(monkeypatch):
    before = _hashes()
    _planted(monkeypatch, _prose_edited, _comments_edited)
    after = _hashes()
    assert after == before
    for c in CHAPTERS:  # and so the comparison with a reference of the unedited code agrees
        rec = {"chapter": c.stem, "params": {"seed": 0}, "code": after[c.stem]}
        assert reference.chapter_cause(rec, {"params": {"seed": 0}, "code": before[c.stem]}) is None


@pytest.mark.parametrize("chapter", [c.stem for c in CHAPTERS])
def test_a_change_to_a_code_cell_changes_that_chapters_hash_only(monkeypatch, chapter):
    before = _hashes()
    target = next(c for c in CHAPTERS if c.stem == chapter)
    real = project.source_text
    edit = _first_constant_changed
    monkeypatch.setattr(project, "source_text", lambda f: edit(real(f)) if f == target else real(f))
    after = _hashes()
    assert {k for k in after if after[k] != before[k]} == {chapter}
    rec = {"chapter": chapter, "params": {}, "code": after[chapter]}
    assert reference.chapter_cause(rec, {"params": {}, "code": before[chapter]}) == (
        reference.EARLIER_CODE)  # fmt: skip


def test_a_change_to_a_library_module_changes_the_chapters_that_import_it(monkeypatch):
    module = project.PACKAGE / "paper_b" / "cached" / "representations.py"
    importing = {c.stem for c in CHAPTERS if module in project.library_files(c)}
    assert importing and len(importing) < len(CHAPTERS)
    before = _hashes()
    real = project.source_text
    edit = _first_constant_changed
    monkeypatch.setattr(project, "source_text", lambda f: edit(real(f)) if f == module else real(f))
    after = _hashes()
    assert {k for k in after if after[k] != before[k]} == importing
