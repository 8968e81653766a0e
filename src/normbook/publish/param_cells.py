"""Each chapter's cell tagged ``parameters``: read it, compare it with the text its spec
generates, and rewrite it.
"""

from __future__ import annotations

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


def rewrite_parameters_cell(path: Path, source: str) -> None:
    """Replace the body of the percent-format cell tagged ``parameters`` by ``source``."""
    lines = path.read_text().splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if ln.startswith("# %%") and "parameters" in ln)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("# %%")), len(lines))
    path.write_text("".join(lines[: start + 1]) + source + "\n\n" + "".join(lines[end:]))
