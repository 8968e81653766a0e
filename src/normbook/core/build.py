"""The book pipeline: jupytext source -> papermill (profile + overrides) -> executed .ipynb
-> Jupyter Book (execution off) rendering the executed notebooks.

    python -m normbook.core.build book [--profile cpu] [--strict] [--force]
    python -m normbook.core.build chapter book/a1_localization.py [--profile cpu] [-p NAME VALUE]
    python -m normbook.core.build params [--write]   # parameters cells vs the specs

A chapter whose source, parameters and library code are unchanged is not re-executed. Its
library code is ``normbook.core`` plus the packages its spec names (its own paper's), so an
edit to one paper's code never re-executes the other paper's chapters.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from . import cache, ledger, sphinx_launch
from .params import PROFILES, ParameterError, parameter_names

ROOT = cache.REPO_ROOT
BOOK = ROOT / "book"
PACKAGE = Path(__file__).resolve().parents[1]  # src/normbook
# .py: each chapter's jupytext source, offered for download beside its page
STATIC_SUFFIXES = {".md", ".bib", ".png", ".svg", ".jpg", ".css", ".py"}


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
    from ..chapters import SPECS

    try:
        return SPECS[path.stem]
    except KeyError:
        raise BuildError(
            f"chapter {path.name} has no parameter spec in normbook.chapters"
        ) from None


def library_files(packages: tuple[str, ...]) -> list[Path]:
    """The library source a chapter depends on: ``normbook/__init__.py``, ``core``, and the
    named subpackages or top-level modules (``"paper_a"``, ``"methods"``). The registry
    ``normbook/chapters.py`` is not part of it: what it selects shows in the parameters."""
    files = [PACKAGE / "__init__.py"]
    for name in ("core", *packages):
        if (PACKAGE / name).is_dir():
            files += (PACKAGE / name).rglob("*.py")
        elif (PACKAGE / f"{name}.py").is_file():
            files.append(PACKAGE / f"{name}.py")
        else:
            raise BuildError(f"spec names an unknown library package {name!r}")
    return sorted(set(files))


def library_hash(packages: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for f in library_files(packages):
        h.update(str(f.relative_to(PACKAGE)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def stamp(path: Path, params: dict, packages: tuple[str, ...] = ()) -> str:
    blob = json.dumps(
        {"source": path.read_text(), "params": params, "library": library_hash(packages)},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def chapter_key(path: Path, profile: str, resolved: dict) -> str:
    """What the executed notebook depends on: source, parameters, library code, and for pages
    built from every chapter's results (the claims ledger) those results."""
    spec = spec_for(path)
    key = stamp(path, dict(resolved), spec.packages)
    return key + "-" + ledger.digest(profile) if spec.reads_ledger else key


def parse_overrides(path: Path, pairs: list[list[str]]) -> dict:
    """``-p name value`` pairs, validated against the chapter's spec (one-line errors)."""
    spec = spec_for(path)
    raw = {k: v for k, v in pairs}
    profile = raw.pop("profile", None)
    values = {k: spec.param(k).check(v) for k, v in raw.items()}
    if profile is not None:
        values["profile"] = profile
    return values


def execute(
    path: Path, profile: str, overrides: dict, force: bool = False
) -> tuple[Path, float | None]:
    """Execute one chapter with papermill unless its stamp is current.

    Returns (executed notebook, seconds; None when it was up to date)."""
    import jupytext
    import nbformat
    import papermill as pm

    spec = spec_for(path)
    overrides = dict(overrides)
    profile = overrides.pop("profile", profile)
    resolved = spec.resolve(profile, **overrides)  # fail before any compute
    out_dir = build_dir(profile) / "executed" / path.parent.relative_to(ROOT)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{path.stem}.ipynb"
    stamp_file = out.with_suffix(".stamp")
    key = chapter_key(path, profile, resolved)
    if not force and out.exists() and stamp_file.exists() and stamp_file.read_text() == key:
        print(f"[up to date] {path.relative_to(ROOT)} ({profile})", flush=True)
        return out, None
    stamp_file.unlink(missing_ok=True)
    nb = jupytext.read(path)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    src = out_dir / f".{path.stem}.source.ipynb"
    running = out_dir / f".{path.stem}.running.ipynb"  # renamed to `out` once it has finished
    nbformat.write(nb, src)
    params = {"profile": profile, **overrides}
    print(f"[execute] {path.relative_to(ROOT)} profile={profile} overrides={overrides}", flush=True)
    t0 = time.perf_counter()
    try:
        pm.execute_notebook(
            str(src),
            str(running),
            parameters=params,
            kernel_name="python3",
            cwd=str(path.parent),
            progress_bar=False,
            log_output=True,
        )
    except pm.PapermillExecutionError as exc:
        os.replace(running, out)  # for the reader of the error below; it has no stamp
        tb = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(exc.traceback[-6:]))
        raise BuildError(
            f"{path.relative_to(ROOT)} failed in cell {exc.exec_count}: "
            f"{exc.ename}: {exc.evalue}\n--- cell source ---\n{exc.source}\n"
            f"--- traceback (end) ---\n{tb}\n"
            f"(executed notebook with the error: {out})"
        ) from None
    finally:
        src.unlink(missing_ok=True)
    seconds = time.perf_counter() - t0
    os.replace(running, out)
    _write_atomic(stamp_file, key)
    print(f"[done] {path.relative_to(ROOT)} in {seconds:.1f} s", flush=True)
    return out, seconds


def glued_values(notebook: Path) -> dict[str, str]:
    """The text of every value an executed notebook glues (myst-nb ``glue``), figures left
    out: {name: text}."""
    out = {}
    for cell in json.loads(Path(notebook).read_text())["cells"]:
        for o in cell.get("outputs", []):
            meta = o.get("metadata", {}).get("scrapbook")
            data = o.get("data", {})
            if not meta or any("image" in k for k in data):
                continue
            text = data.get(meta.get("mime_prefix", "") + "text/plain", data.get("text/plain"))
            if text is not None:
                text = "".join(text) if isinstance(text, list) else text
                out[meta["name"]] = text.strip().strip("'\"")
    return out


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _executed(path: Path, profile: str) -> bool:
    """Whether the chapter has a finished execution at ``profile`` (notebook and stamp: a run
    that was killed or failed leaves no stamp)."""
    nb = build_dir(profile) / "executed" / path.relative_to(ROOT).with_suffix(".ipynb")
    return nb.exists() and nb.with_suffix(".stamp").exists()


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
    repo = (yaml.safe_load((ROOT / "_config.yml").read_text()) or {}).get("repository") or {}
    return (repo["url"], repo.get("branch") or "main") if repo.get("url") else None


def site_notebook(nb: Path) -> bytes | None:
    """The page's notebook with a first, hidden cell that installs the library in Colab, when
    launch buttons are on (:mod:`normbook.core.sphinx_launch`); None: copy as it is."""
    repo = repository()
    if repo is None:
        return None
    notebook = json.loads(nb.read_text())
    notebook["cells"].insert(0, sphinx_launch.colab_cell(*repo))
    return (json.dumps(notebook, indent=1, ensure_ascii=False) + "\n").encode()


def _toc_without(missing: set[str], sweeps: list[str] = ()) -> str:
    """The TOC minus chapters that have not been executed (for a one-chapter rebuild), plus a
    part listing the sweep pages (:mod:`normbook.core.sweep`), if any."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())

    def keep(entries):
        return [e for e in entries or [] if e.get("file") not in missing]

    for part in toc.get("parts", []):
        part["chapters"] = keep(part.get("chapters"))
    toc["parts"] = [p for p in toc.get("parts", []) if p["chapters"]]
    if sweeps:
        toc["parts"].append({"caption": "Sweeps", "chapters": [{"file": f} for f in sweeps]})
    return yaml.safe_dump(toc, sort_keys=False)


def assemble_site(profile: str, partial: bool = False) -> Path:
    """A Jupyter Book source tree: config, TOC, static pages and the executed notebooks.

    ``partial`` leaves out chapters not yet executed at this profile instead of failing.
    """
    site = build_dir(profile) / "site"
    missing = set()
    for ch in chapters():
        rel = ch.relative_to(ROOT).with_suffix(".ipynb")
        nb = build_dir(profile) / "executed" / rel
        if not _executed(ch, profile):
            if not partial:
                raise BuildError(
                    f"{ch.relative_to(ROOT)} has not been executed for profile {profile}"
                )
            missing.add(str(rel.with_suffix("")))
            (site / rel).unlink(missing_ok=True)
            continue
        _copy_if_changed(nb, site / rel, site_notebook(nb))
    for name in ("_config.yml", "references.bib"):
        if (ROOT / name).exists():
            _copy_if_changed(ROOT / name, site / name)
    toc = _toc_without(missing, [f"sweeps/{p.parent.name}/page" for p in _sweep_pages(profile)])
    if not (site / "_toc.yml").exists() or (site / "_toc.yml").read_text() != toc:
        (site / "_toc.yml").write_text(toc)
    for f in BOOK.rglob("*"):
        if f.is_file() and f.suffix in STATIC_SUFFIXES:
            _copy_if_changed(f, site / f.relative_to(ROOT))
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


def render(profile: str, strict: bool = False, partial: bool = False) -> Path:
    site = assemble_site(profile, partial)
    jb = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(jb if jb.exists() else "jupyter-book"), "build", str(site), "--builder", "html"]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    print("[render]", " ".join(cmd[1:]), flush=True)
    if subprocess.run(cmd, cwd=ROOT).returncode:
        raise BuildError("jupyter-book build failed (see the messages above)")
    index = html_dir(profile) / "index.html"
    print(f"[html] {index}", flush=True)
    return index


def dry_run(resolved: dict) -> None:
    """Print the planned compute of the resolved chapters ({stem: Params}); run nothing."""
    from .. import plan

    print(plan.report(resolved), flush=True)


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


def cmd_book(args) -> None:
    chs = selected(args.chapters)
    resolved = {ch.stem: spec_for(ch).resolve(args.profile) for ch in chs}  # before any compute
    if args.dry_run:
        return dry_run(resolved)
    with build_lock(args.profile):
        for ch in chs:
            _, secs = execute(ch, args.profile, {}, force=args.force)
            record_timing(args.profile, ch.stem, secs)
        render(args.profile, strict=args.strict, partial=bool(args.chapters))
        print(timings_table(args.profile, [c.stem for c in chs]), flush=True)


def _timings_file(profile: str) -> Path:
    return build_dir(profile) / "timings.json"


def load_timings(profile: str) -> dict:
    """{chapter: {"seconds", "measured", "cpu"}}: each chapter's last measured execution (a
    chapter that was up to date keeps the time of the run that made it)."""
    f = _timings_file(profile)
    try:
        data = json.loads(f.read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict) and "seconds" in v}


def record_timing(profile: str, chapter: str, seconds: float | None) -> None:
    """Keep ``chapter``'s execution time when it executed (``seconds`` not None)."""
    if seconds is None:
        return
    from .devices import cpu_model

    timings = load_timings(profile)
    _timings_file(profile).parent.mkdir(parents=True, exist_ok=True)
    timings[chapter] = {"seconds": round(seconds, 1), "cpu": cpu_model(), "cores": os.cpu_count(),
                        "measured": time.strftime("%Y-%m-%d %H:%M:%S")}  # fmt: skip
    _write_atomic(_timings_file(profile), json.dumps(timings, indent=1))


def timings_table(profile: str, stems: list[str]) -> str:
    """The chapters' last measured execution times, with the machine and when."""
    timings = load_timings(profile)
    rows = [f"[timings] last measured execution per chapter ({profile}):"]
    total = 0.0
    for stem in stems:
        t = timings.get(stem)
        if t is None:
            rows.append(f"  {stem:<22} never measured here")
            continue
        total += t["seconds"]
        rows.append(f"  {stem:<22} {t['seconds']:>8.1f} s  {t['measured']}  {t['cpu']}, "
                    f"{t['cores']} cores")  # fmt: skip
    rows.append(f"  {'total':<22} {total:>8.1f} s ({total / 60:.1f} min)")
    return "\n".join(rows)


def cmd_chapter(args) -> None:
    path = Path(args.path).resolve()
    if path not in chapters():
        raise BuildError(
            f"{args.path} is not an executable chapter; chapters: "
            + ", ".join(str(c.relative_to(ROOT)) for c in chapters())
        )
    overrides = parse_overrides(path, args.p or [])
    profile = overrides.pop("profile", args.profile)
    P = spec_for(path).resolve(profile, **overrides)  # cross-checks too, before any compute
    if args.dry_run:
        return dry_run({path.stem: P})
    with build_lock(profile):
        nb, _ = execute(path, profile, overrides, force=True)
        print(f"[notebook] {nb}", flush=True)
        for other in chapters():  # pages built from every chapter's results (the claims ledger)
            if other != path and spec_for(other).reads_ledger and _executed(other, profile):
                execute(other, profile, {})
        render(profile, partial=True)  # chapters never executed at this profile are left out


def parameters_cell(path: Path):
    """The chapter's cell tagged ``parameters`` (a jupytext cell), or a BuildError."""
    import jupytext

    nb = jupytext.read(path)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise BuildError(
            f"{path.relative_to(ROOT)} must have exactly one cell tagged "
            f"'parameters', found {len(cells)}"
        )
    return nb, cells[0]


def parameter_drift(path: Path) -> str | None:
    """How the chapter's parameters cell differs from its spec (None: it does not)."""
    spec = spec_for(path)
    _, cell = parameters_cell(path)
    if cell.source.strip() == spec.parameters_cell():
        return None
    have, want = parameter_names(cell.source), ["profile", *spec.names]
    if have != want:
        missing = [n for n in want if n not in have]
        extra = [n for n in have if n not in want]
        return (
            f"{path.relative_to(ROOT)}: parameters cell names {have} but the spec has "
            f"{want} (missing {missing}, not in the spec {extra})"
        )
    return f"{path.relative_to(ROOT)}: parameters cell text differs from the spec's"


def rewrite_parameters_cell(path: Path, source: str) -> None:
    """Replace the body of the percent-format cell tagged ``parameters`` by ``source``."""
    lines = path.read_text().splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if ln.startswith("# %%") and "parameters" in ln)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("# %%")), len(lines))
    path.write_text("".join(lines[: start + 1]) + source + "\n\n" + "".join(lines[end:]))


def cmd_params(args) -> None:
    """Check every parameters cell against its spec; ``--write`` regenerates the cells."""
    drift = []
    for ch in chapters():
        problem = parameter_drift(ch)
        if problem is None:
            continue
        if args.write:
            rewrite_parameters_cell(ch, spec_for(ch).parameters_cell())
            print(f"[rewritten] {ch.relative_to(ROOT)}")
        else:
            drift.append(problem)
    if drift:
        raise BuildError("\n".join(drift) + "\n(fix: python -m normbook.core.build params --write)")
    print("[params] every parameters cell matches its spec")


def _show_papermill_log() -> None:
    """Stream the chapters' own output (progress bars included) to the console."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("    | %(message)s"))
    log = logging.getLogger("papermill")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m normbook.core.build")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("book", help="execute stale chapters and build the HTML")
    b.add_argument("--profile", default="cpu", choices=PROFILES)
    b.add_argument("--strict", action="store_true", help="warnings are errors (-W)")
    b.add_argument("--force", action="store_true", help="re-execute every chapter")
    b.add_argument("--chapters", help="only these chapters (comma-separated, e.g. a1_localization)")
    dry = "print each chapter's planned FLOPs and estimated GPU time; run nothing"
    b.add_argument("--dry-run", action="store_true", help=dry)
    c = sub.add_parser("chapter", help="re-execute one chapter with new parameters")
    c.add_argument("path")
    c.add_argument("--profile", default="cpu", choices=PROFILES)
    c.add_argument("-p", nargs=2, action="append", metavar=("NAME", "VALUE"))
    c.add_argument("--dry-run", action="store_true", help=dry)
    m = sub.add_parser("params", help="check the parameters cells against the specs")
    m.add_argument("--write", action="store_true", help="regenerate drifted cells from the specs")
    args = ap.parse_args(argv)
    _show_papermill_log()
    try:
        {"book": cmd_book, "chapter": cmd_chapter, "params": cmd_params}[args.cmd](args)
    except (ParameterError, BuildError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
