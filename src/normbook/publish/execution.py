"""Executing one chapter: ``-p`` overrides checked against its spec, papermill run with the
profile and overrides unless the chapter's stamp is current, and the values it glued.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import tempfile
import time
import uuid
from pathlib import Path

from normbook.grading import ledger
from normbook.publish import project
from normbook.publish.param_cells import papermill_parameters
from normbook.publish.project import BuildError, build_dir, chapter_key, spec_for, write_atomic


def kernel_manager():
    """The kernel manager class papermill starts chapters with: on POSIX, kernels talk over
    Unix sockets named after the kernel (``ipc``), not TCP ports. With TCP, jupyter_client
    picks free ports, releases them and lets the kernel bind them later, so two chapters
    started at once can pick the same port and one kernel dies before it answers (seen in
    ``make test``: "ZMQError: Address already in use"; papermill issue 511)."""
    from jupyter_client.manager import AsyncKernelManager

    if os.name != "posix":
        return AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            # sockets named after this kernel alone (jupyter_client's default, "kernel-ipc" in
            # the working directory, is shared by every chapter started there: crossed messages)
            name = Path(tempfile.gettempdir()) / f"normbook-kernel-{uuid.uuid4().hex[:12]}"
            super().__init__(transport="ipc", ip=str(name), **kwargs)

        async def _async_post_start_kernel(self, **kwargs):
            await super()._async_post_start_kernel(**kwargs)
            keep_priority(getattr(self.provisioner, "pid", None))

    return IPCKernelManager


def keep_priority(pid: int | None) -> None:
    """Give a kernel's session the niceness of this process. jupyter_client starts a kernel in
    a session of its own, and Linux's autogroup scheduler shares the cores between sessions
    whatever their processes' niceness: a chapter the build runs at lower priority
    (:data:`.chapter_jobs.NICE_OTHERS`) would still take half the cores from the one on the
    critical path (measured: 50 % each, 2026-12-07). An unprivileged process may only lower a
    session's priority, which is all this does; without autogroup there is nothing to do."""
    nice = os.nice(0)
    group = Path(f"/proc/{pid}/autogroup")
    if pid and nice > 0 and group.exists():
        try:
            group.write_text(str(nice))
        except OSError:  # not permitted here: the kernel keeps the default share
            pass


def parse_overrides(path: Path, pairs: list[list[str]]) -> dict:
    """``-p name value`` pairs, validated against the chapter's spec (one-line errors)."""
    spec = spec_for(path)
    raw = {k: v for k, v in pairs}
    profile = raw.pop("profile", None)
    values = {k: spec.param(k).check(v) for k, v in raw.items()}
    if profile is not None:
        values["profile"] = profile
    return values


def is_current(path: Path, profile: str) -> bool:
    """Whether the chapter's executed notebook at ``profile`` (no overrides) is up to date:
    checked here, without starting a process for it (a cached rebuild then takes seconds)."""
    resolved = spec_for(path).resolve(profile)
    out = build_dir(profile) / "executed" / path.relative_to(project.ROOT).with_suffix(".ipynb")
    stamp_file = out.with_suffix(".stamp")
    return (out.exists() and stamp_file.exists()
            and stamp_file.read_text() == chapter_key(path, profile, resolved))  # fmt: skip


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
    out_dir = build_dir(profile) / "executed" / path.parent.relative_to(project.ROOT)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{path.stem}.ipynb"
    stamp_file = out.with_suffix(".stamp")
    key = chapter_key(path, profile, resolved)
    if not force and out.exists() and stamp_file.exists() and stamp_file.read_text() == key:
        print(f"[up to date] {path.relative_to(project.ROOT)} ({profile})", flush=True)
        return out, None
    nb = jupytext.read(path)
    params = {"profile": profile, **overrides}
    unknown = unknown_parameters(nb, params)
    if unknown:  # papermill itself only logs "Passed unknown parameter" and goes on
        raise BuildError(
            f"{path.relative_to(project.ROOT)}: papermill does not read parameter(s) "
            f"{', '.join(unknown)} in the cell tagged 'parameters' (its \"Passed unknown "
            f'parameter"); regenerate the cell: python -m normbook.publish.build params --write'
        )
    stamp_file.unlink(missing_ok=True)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    src = out_dir / f".{path.stem}.source.ipynb"
    running = out_dir / f".{path.stem}.running.ipynb"  # renamed to `out` once it has finished
    nbformat.write(nb, src)
    rel = path.relative_to(project.ROOT)
    print(f"[execute] {rel} profile={profile} overrides={overrides}", flush=True)
    # the cache entries it reads or computes, noted by its kernel and workers (`make bundle`)
    from normbook.runtime import cache  # torch: only once a chapter runs

    log = build_dir(profile) / "entries_read" / f"{path.stem}.txt"
    noting = log.with_suffix(".running")
    noting.parent.mkdir(parents=True, exist_ok=True)
    noting.write_text("")
    before = os.environ.get(cache.READ_LOG)
    os.environ[cache.READ_LOG] = str(noting)
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
            kernel_manager_class=kernel_manager(),
        )
    except pm.PapermillExecutionError as exc:
        os.replace(running, out)  # for the reader of the error below; it has no stamp
        tb = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(exc.traceback[-6:]))
        raise BuildError(
            f"{path.relative_to(project.ROOT)} failed in cell {exc.exec_count}: "
            f"{exc.ename}: {exc.evalue}\n--- cell source ---\n{exc.source}\n"
            f"--- traceback (end) ---\n{tb}\n"
            f"(executed notebook with the error: {out})"
        ) from None
    finally:
        src.unlink(missing_ok=True)
        if before is None:
            os.environ.pop(cache.READ_LOG, None)
        else:
            os.environ[cache.READ_LOG] = before
    seconds = time.perf_counter() - t0
    fold_injected_parameters(running)
    from normbook.runtime import devices  # torch, for the machine: only once a chapter ran

    # before the stamp: a chapter stamped current always has its code and machine recorded
    ledger.stamp_build(path.stem, profile, project.code_hash(path), devices.machine())
    os.replace(running, out)
    os.replace(noting, log)  # before the stamp: a current chapter has its entries noted
    write_atomic(stamp_file, key)
    print(f"[done] {path.relative_to(project.ROOT)} in {seconds:.1f} s", flush=True)
    return out, seconds


def unknown_parameters(nb, params: dict) -> list[str]:
    """The parameters papermill would call unknown in the notebook (its own inspection of the
    first cell tagged ``parameters``, :func:`.param_cells.papermill_parameters`)."""
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    found = papermill_parameters(cells[0])[0] if cells else []
    return [name for name in params if name not in found]


def fold_injected_parameters(notebook: Path) -> None:
    """Fold the source of the cell papermill injects (the run's parameters) in the built page,
    as the chapters fold their parameters cell: a reader meets prose and figures first, the
    code one click away (myst-nb's ``hide-input``), or removed where the chapter removes its
    parameters cell's source (``remove-input``: a page that opens with its findings)."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    fold = "remove-input" if any("remove-input" in c.metadata["tags"] for c in params) else (
        "hide-input")  # fmt: skip
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "injected-parameters" in tags and fold not in tags:
            tags.append(fold)
    nbformat.write(nb, notebook)


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


def show_papermill_log() -> None:
    """Stream the chapters' own output (progress bars included) to the console."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("    | %(message)s"))
    log = logging.getLogger("papermill")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
