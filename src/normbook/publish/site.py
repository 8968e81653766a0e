"""The Jupyter Book source tree of a build (config, TOC, static pages, executed notebooks and
sweep pages) and its rendering to HTML.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from normbook.publish import compute_page, project, sphinx_launch
from normbook.publish.costs import site_config
from normbook.publish.project import BuildError, build_dir, chapters, html_dir, is_executed

# .py: each chapter's jupytext source, offered for download beside its page
STATIC_SUFFIXES = {".md", ".bib", ".png", ".svg", ".jpg", ".css", ".js", ".py"}  # .js: ledger.js


def _copy_if_changed(src: Path, dst: Path, content: bytes | None = None) -> None:
    """Copy (or write ``content``) preserving unchanged files, so Sphinx re-reads only what
    changed."""
    data = src.read_bytes() if content is None else content
    if dst.exists() and dst.read_bytes() == data:
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    if content is None:
        shutil.copy2(src, dst)
    else:
        dst.write_bytes(data)


def repository() -> tuple[str, str] | None:
    """(url, branch) of the published repository from ``_config.yml``; None when unset (then
    the book has no launch buttons)."""
    config = yaml.safe_load((project.ROOT / "_config.yml").read_text()) or {}
    repo = config.get("repository") or {}
    return (repo["url"], repo.get("branch") or "main") if repo.get("url") else None


def site_notebook(nb: Path) -> bytes | None:
    """The page's notebook with a first, hidden cell that installs the library in Colab, when
    launch buttons are on (:mod:`normbook.publish.sphinx_launch`); None: copy as it is."""
    repo = repository()
    if repo is None:
        return None
    notebook = json.loads(nb.read_text())
    notebook["cells"].insert(0, sphinx_launch.colab_cell(*repo))
    return (json.dumps(notebook, indent=1, ensure_ascii=False) + "\n").encode()


def toc_without(missing: set[str], sweeps: list[str] = ()) -> str:
    """The TOC minus chapters that have not been executed (for a one-chapter rebuild), plus a
    part listing the sweep pages (:mod:`normbook.publish.sweep`), if any."""
    toc = yaml.safe_load((project.ROOT / "_toc.yml").read_text())

    def keep(entries):
        return [e for e in entries or [] if e.get("file") not in missing]

    for part in toc.get("parts", []):
        part["chapters"] = keep(part.get("chapters"))
    toc["parts"] = [p for p in toc.get("parts", []) if p["chapters"]]
    if toc["root"] in missing and toc["parts"]:  # the intro is executed too: until it is, the
        toc["root"] = toc["parts"][0]["chapters"].pop(0)["file"]  # first page built opens it
        toc["parts"] = [p for p in toc["parts"] if p["chapters"]]
    if sweeps:
        toc["parts"].append({"caption": "Sweeps", "chapters": [{"file": f} for f in sweeps]})
    return yaml.safe_dump(toc, sort_keys=False)


def assemble_site(profile: str, partial: bool = False) -> Path:
    """A Jupyter Book source tree: config, TOC, static pages, the executed notebooks and the
    *Build and compute* page generated from this build's measured records (:mod:`.compute_page`).

    ``partial`` leaves out chapters not yet executed at this profile instead of failing.
    """
    site = build_dir(profile) / "site"
    missing = set()
    for ch in chapters():
        rel = ch.relative_to(project.ROOT).with_suffix(".ipynb")
        nb = build_dir(profile) / "executed" / rel
        if not is_executed(ch, profile):
            if not partial:
                raise BuildError(
                    f"{ch.relative_to(project.ROOT)} has not been executed for profile {profile}"
                )
            missing.add(str(rel.with_suffix("")))
            (site / rel).unlink(missing_ok=True)
            continue
        _copy_if_changed(nb, site / rel, site_notebook(nb))
    # the configuration carries the pages' measured costs and exercise outcomes (:mod:`.costs`)
    _copy_if_changed(project.ROOT / "_config.yml", site / "_config.yml", site_config(profile))
    if (project.ROOT / "references.bib").exists():
        _copy_if_changed(project.ROOT / "references.bib", site / "references.bib")
    toc = toc_without(missing, [f"sweeps/{p.parent.name}/page" for p in _sweep_pages(profile)])
    if not (site / "_toc.yml").exists() or (site / "_toc.yml").read_text() != toc:
        (site / "_toc.yml").write_text(toc)
    for f in project.BOOK.rglob("*"):
        if f.is_file() and f.suffix in STATIC_SUFFIXES:
            _copy_if_changed(f, site / f.relative_to(project.ROOT))
    # the Build and compute appendix: generated from the measured records, never in git
    page = site / f"{compute_page.PAGE}.md"
    _copy_if_changed(page, page, compute_page.page(profile).encode())
    _copy_sweeps(profile, site)
    return site


def _sweep_pages(profile: str) -> list[Path]:
    return sorted((build_dir(profile) / "sweeps").glob("*/page.md"))


def _copy_sweeps(profile: str, site: Path) -> None:
    """Each sweep's page, figures and point notebooks (for download) into ``site/sweeps``."""
    for page in _sweep_pages(profile):
        dest = site / "sweeps" / page.parent.name
        for f in page.parent.glob("*"):
            if f.suffix in (".md", ".png"):
                _copy_if_changed(f, dest / f.name)
        for nb in page.parent.glob(f"points/*/{profile}/executed/book/*.ipynb"):
            _copy_if_changed(nb, dest / "points" / nb.parents[3].name / nb.name)


def _check_figure_text(profile: str) -> None:
    """Every executed page's figures carry text at least the caption's size (a strict build
    fails otherwise, naming them)."""
    from normbook.grading.ledger import small_figure_text
    from normbook.pages.figures import CAPTION_PX

    names = [c.stem for c in chapters() if is_executed(c, profile)]
    small = small_figure_text(profile, names, CAPTION_PX)
    if small:
        raise BuildError(
            f"figure text smaller than the caption's {CAPTION_PX} px at a 1280-px window "
            f"(draw it with normbook.pages.figures.canvas and the book's text sizes): "
            + "; ".join(small)
        )


def render(profile: str, strict: bool = False, partial: bool = False) -> Path:
    site = assemble_site(profile, partial)
    jb = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(jb if jb.exists() else "jupyter-book"), "build", str(site), "--builder", "html"]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
        _check_figure_text(profile)
    print("[render]", " ".join(cmd[1:]), flush=True)
    if subprocess.run(cmd, cwd=project.ROOT).returncode:
        raise BuildError("jupyter-book build failed (see the messages above)")
    index = html_dir(profile) / "index.html"
    print(f"[html] {index}", flush=True)
    return index
