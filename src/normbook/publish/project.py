"""The project as the build sees it: where it lives, its chapters in TOC order, each chapter's
parameter spec, and the stamp that says whether an executed chapter is current (its source, its
parameters and its library code).

Tests point ``ROOT`` at a throw-away copy of the project; every build module reads it from here.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from normbook.grading import ledger
from normbook.runtime import cache, code_keys

ROOT = cache.REPO_ROOT
BOOK = ROOT / "book"
PACKAGE = Path(__file__).resolve().parents[1]  # src/normbook


class BuildError(RuntimeError):
    pass


def build_dir(profile: str) -> Path:
    return cache.build_root() / profile


@contextmanager
def build_lock(profile: str) -> Iterator[None]:
    """One build per profile at a time: a second run waits (and says so), then finds the first
    one's chapters up to date. An OS file lock, released when its process dies."""
    folder = build_dir(profile)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a") as f:
        cache.lock_or_wait(f, f"[wait] another build of profile {profile} is running in "
                              f"{folder}; waiting for it to finish")  # fmt: skip
        yield


def html_dir(profile: str) -> Path:
    return build_dir(profile) / "site" / "_build" / "html"


def toc_files() -> list[str]:
    """Every file the table of contents names, in order (without suffix)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries):
        for e in entries or []:
            if "file" in e:
                files.append(e["file"])
            walk(e.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return files


def chapters() -> list[Path]:
    """The executable chapters (jupytext percent-format .py files) in TOC order."""
    return [ROOT / f"{f}.py" for f in toc_files() if (ROOT / f"{f}.py").exists()]


def spec_for(path: Path):
    from normbook.publish.chapters import SPECS

    try:
        return SPECS[path.stem]
    except KeyError:
        raise BuildError(
            f"chapter {path.name} has no parameter spec in normbook.publish.chapters"
        ) from None


def selected(names: str | None) -> list[Path]:
    """The chapters named (comma-separated stems, in TOC order), or all of them."""
    chs = chapters()
    if not names:
        return chs
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    unknown = sorted(set(wanted) - {c.stem for c in chs})
    if unknown:
        raise BuildError(
            f"unknown chapter {unknown[0]!r}; chapters: {', '.join(c.stem for c in chs)}"
        )
    return [c for c in chs if c.stem in wanted]


def module_file(name: str) -> Path | None:
    """The source file of library module ``name`` (``normbook.paper_a.params``), or None when
    ``name`` is not a module (a function or class imported from one)."""
    base = PACKAGE.parent / name.replace(".", "/")
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if f.is_file():
            return f
    return None


def direct_imports(path: Path) -> set[Path]:
    """The library files one source file imports (every ``normbook`` import, at its top or
    inside a function; relative ones resolved)."""
    return set(_imports_of_text(path, path.read_text()))


@functools.lru_cache(maxsize=2048)  # one parse per file text: every chapter's stamp walks them
def _imports_of_text(path: Path, text: str) -> frozenset[Path]:
    tree = ast.parse(text)
    rel = path.relative_to(PACKAGE.parent).with_suffix("") if path.is_relative_to(PACKAGE) else None
    package = (
        ".".join(rel.parts[:-1] if rel and rel.name != "__init__" else rel.parts) if rel else ""
    )
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            names = [f"{base}.{a.name}" for a in node.names] if base.startswith("normbook") else []
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            if not name.startswith("normbook"):
                continue
            f = module_file(name) or module_file(name.rpartition(".")[0])
            if f is None:
                raise BuildError(f"{path.name} imports {name!r}, which is not in the library")
            found.add(f)
    return frozenset(found)


def library_files(path: Path) -> list[Path]:
    """The library source a chapter depends on: every module it imports, directly or through
    each other, and ``normbook/__init__.py`` (the version). Editing a module no chapter
    imports re-executes nothing; editing a chapter's own figures re-executes that chapter."""
    seen, todo = {PACKAGE / "__init__.py"}, [path]
    while todo:
        for f in direct_imports(todo.pop()) - seen:
            seen.add(f)
            todo.append(f)
    return sorted(seen)


def papers(path: Path) -> tuple[str, ...]:
    """The paper packages (``paper_a``, ``paper_b``) a chapter's code reaches."""
    found = {f.relative_to(PACKAGE).parts[0] for f in library_files(path)}
    return tuple(sorted(found & {"paper_a", "paper_b"}))


def library_hash(path: Path) -> str:
    """A hash of the bytes of the library a chapter imports (what its page shows: the code
    included beside its claims, docstrings and comments with it)."""
    h = hashlib.sha256()
    for f in library_files(path):
        h.update(str(f.relative_to(PACKAGE)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def source_text(f: Path) -> str:
    """A source file's text (one place, so tests can plant an edit)."""
    return f.read_text()


def _package_of(f: Path) -> str:
    rel = f.relative_to(PACKAGE.parent).with_suffix("")
    return ".".join(rel.parts[:-1])


def code_hash(path: Path) -> str:
    """A hash of the code a chapter runs, without its parameters: the canonical form
    (:func:`normbook.runtime.code_keys.canonical`) of its code cells and of every library
    module it imports. The chapter's prose (its markdown cells are comments to Python), a
    comment, a docstring or a reformat changes nothing; two builds whose chapter has the same
    code hash and parameters differ only by the machines that computed them."""
    h = hashlib.sha256(code_keys.canonical(source_text(path), "").encode())
    for f in library_files(path):
        h.update(str(f.relative_to(PACKAGE)).encode())
        h.update(code_keys.canonical(source_text(f), _package_of(f)).encode())
    return h.hexdigest()[:16]


def stamp(path: Path, params: dict) -> str:
    blob = json.dumps(
        {"source": path.read_text(), "params": params, "library": library_hash(path)},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def records_digest(spec, resolved: dict) -> str:
    """A hash of the recorded runs a chapter reads (its ``records`` parameters name their JSON
    files, each with an ``.npz`` beside it); an absent one hashes as absent."""
    h = hashlib.sha256()
    for name in spec.records:
        json_file = ROOT / resolved[name]
        for f in (json_file, json_file.with_suffix(".npz")):
            h.update(f.read_bytes() if f.is_file() else b"absent")
    return h.hexdigest()[:16]


def reference_digest(profile: str) -> str:
    """A hash of the committed ledgers at ``profile`` (``results/<profile>/ledger*.json``, the
    reference, and ``isa/*/*.json``, the builds of one commit on other instruction sets), which
    the pages that read every record compare this build with."""
    h = hashlib.sha256()
    folder = ROOT / "results" / profile
    for f in sorted([*folder.glob("ledger*.json"), *folder.glob("isa/*/*.json")]):
        h.update(str(f.relative_to(folder)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def chapter_key(path: Path, profile: str, resolved: dict) -> str:
    """What the executed notebook depends on: source, parameters, library code, the recorded
    runs it reads, and for pages built from every chapter's results (the claims ledger) those
    results and the reference ledgers they are compared with."""
    spec = spec_for(path)
    key = stamp(path, dict(resolved))
    if spec.records:
        key += "-" + records_digest(spec, resolved)
    if not spec.reads_ledger:
        return key
    return f"{key}-{ledger.digest(profile)}-{reference_digest(profile)}-{bundle_digest(profile)}"


def bundle_digest(profile: str) -> str:
    """A hash of what `make book BUNDLE=` imported (``bundle.json``), which the intro names."""
    f = build_dir(profile) / "bundle.json"
    return hashlib.sha256(f.read_bytes() if f.is_file() else b"absent").hexdigest()[:16]


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (its folder made, as a fresh clone's
    ``_build`` is not there yet)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def is_executed(path: Path, profile: str) -> bool:
    """Whether the chapter has a finished execution at ``profile`` (notebook and stamp: a run
    that was killed or failed leaves no stamp)."""
    nb = build_dir(profile) / "executed" / path.relative_to(ROOT).with_suffix(".ipynb")
    return nb.exists() and nb.with_suffix(".stamp").exists()
