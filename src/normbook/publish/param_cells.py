"""Each chapter's cell tagged ``parameters``: read it, compare it with the text its spec
generates, check that papermill reads every parameter in it, and rewrite it.
"""

from __future__ import annotations

import logging
from pathlib import Path

from normbook.publish import project
from normbook.publish.project import BuildError, spec_for
from normbook.runtime.params import parameter_names


def parameters_cell(path: Path):
    """The chapter's cell tagged ``parameters`` (a jupytext cell), or a BuildError."""
    import jupytext

    nb = jupytext.read(path)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise BuildError(
            f"{path.relative_to(project.ROOT)} must have exactly one cell tagged "
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
            f"{path.relative_to(project.ROOT)}: parameters cell names {have} but the spec has "
            f"{want} (missing {missing}, not in the spec {extra})"
        )
    return f"{path.relative_to(project.ROOT)}: parameters cell text differs from the spec's"


class _Caught(logging.Handler):
    """The warnings a logger emits meanwhile (papermill logs what it cannot parse)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def papermill_parameters(cell) -> tuple[list[str], list[str]]:
    """The names papermill's own inspection finds in a cell tagged ``parameters`` (the one
    ``execute_notebook`` checks the parameters it is given against; a name it misses is
    "Passed unknown parameter" and still injected), and the warnings it logged meanwhile."""
    from papermill.translators import papermill_translators

    caught = _Caught()
    log = logging.getLogger("papermill")
    log.addHandler(caught)
    try:
        found = papermill_translators.find_translator("python3", "python").inspect(cell)
    finally:
        log.removeHandler(caught)
    return [p.name for p in found], caught.messages


def papermill_drift(path: Path) -> str | None:
    """How papermill's reading of the chapter's parameters cell differs from its spec's names
    (None: it finds exactly those and warns of nothing)."""
    _, cell = parameters_cell(path)
    names, warnings = papermill_parameters(cell)
    want = ["profile", *spec_for(path).names]
    if names == want and not warnings:
        return None
    said = "; ".join(warnings) or f"it finds {names}"
    return (
        f"{path.relative_to(project.ROOT)}: papermill does not read the parameters cell as the "
        f"spec's {want}: {said}"
    )


def rewrite_parameters_cell(path: Path, source: str) -> None:
    """Replace the body of the percent-format cell tagged ``parameters`` by ``source``."""
    lines = path.read_text().splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if ln.startswith("# %%") and "parameters" in ln)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("# %%")), len(lines))
    path.write_text("".join(lines[: start + 1]) + source + "\n\n" + "".join(lines[end:]))
