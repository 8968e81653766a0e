"""What a chapter shows: its parameters, glued numbers and figures, tables, verdicts, run record."""

from __future__ import annotations

import platform
import subprocess
import time
from dataclasses import dataclass, field

import torch
from IPython.display import Markdown, display

from .. import __version__
from . import cache, ledger
from .fmt import table
from .params import Params, Spec


def md(text: str) -> None:
    """Render MyST markdown (admonitions included) as a cell output."""
    display(Markdown(text))


def glue(name: str, value) -> None:
    """Store a number for the prose (``{glue:text}`name```)."""
    from myst_nb import glue as _glue

    _glue(name, value, display=False)


def glue_all(prefix: str, values: dict) -> None:
    """Glue every value as ``{prefix}_{name}``."""
    for name, value in values.items():
        glue(f"{prefix}_{name}", value)


def figure(name: str, fig) -> None:
    """Glue a figure under ``name`` for a ``{glue:figure}`` directive (numbered, captioned)
    and close it, so it appears once, where the prose places it."""
    import matplotlib.pyplot as plt

    glue(name, fig)
    plt.close(fig)


def show_verdicts(prefix: str, claims: list, section: str | None = None) -> None:
    """Glue each verdict as ``{prefix}_verdict_{i}`` and the intervals' level as
    ``{prefix}_claim_conf`` for the prose, show the claims table, and record the claims for the
    claims ledger under ``section`` (a label; default ``{prefix}-verdict``)."""
    from .claims import CLAIM_CONFIDENCE

    glue(f"{prefix}_claim_conf", f"{CLAIM_CONFIDENCE:.0%}")
    for i, v in enumerate(claims):
        glue(f"{prefix}_verdict_{i}", v.verdict)
    md(table([v.row() for v in claims]))
    _record(section or f"{prefix}-verdict", claims=claims)


def show_checks(prefix: str, checks: list, section: str | None = None) -> None:
    """Glue how many checks hold as ``{prefix}_checks``, show the checks table, and record them
    for the claims ledger."""
    glue(f"{prefix}_checks", f"{sum(c.holds for c in checks)} of {len(checks)}")
    md(table([c.row() for c in checks]))
    _record(section or f"{prefix}-verdict", checks=checks)


def _record(section: str, claims=(), checks=()) -> None:
    """Add to the executing chapter's ledger record (rewritten whole at every call, so the
    record holds exactly what this execution graded)."""
    if _CURRENT is None:
        return  # not inside a chapter (a test, a console): nothing to record
    _CURRENT.claims += [ledger.claim_record(v, section) for v in claims]
    _CURRENT.checks += [ledger.check_record(c, section) for c in checks]
    ledger.write(
        _CURRENT.spec.chapter,
        _CURRENT.params.profile,
        dict(_CURRENT.params),
        _CURRENT.claims,
        _CURRENT.checks,
    )


def _git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=cache.REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=5,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cache.REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return out.stdout.strip() + ("+changes" if dirty.stdout.strip() else "") or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


@dataclass
class Run:
    """One execution of a chapter: its parameters, start time and what it used."""

    spec: Spec
    params: Params
    t0: float = field(default_factory=time.perf_counter)
    provenance: list[str] = field(default_factory=list)
    claims: list[dict] = field(default_factory=list)  # recorded for the claims ledger
    checks: list[dict] = field(default_factory=list)

    def show_parameters(self) -> None:
        rows = [
            {
                "parameter": "`profile`",
                "value": f"`{self.params.profile}`",
                "meaning": "parameter profile",
                "source": "",
            }
        ]
        for p in self.spec.params:
            rows.append(
                {
                    "parameter": f"`{p.name}`",
                    "value": f"`{self.params[p.name]}`",
                    "meaning": p.doc,
                    "source": "reconstruction" if p.reconstruction else "",
                }
            )
        defaults = self.spec.profiles[self.params.profile]
        changed = [p.name for p in self.spec.params
                   if str(defaults.get(p.name)) != str(self.params[p.name])]  # fmt: skip
        title = f"Parameters of this run: profile `{self.params.profile}`" + (
            f", changed: {', '.join(f'`{n}`' for n in changed)}" if changed else ""
        )
        # collapsed: a reader opens it when needed, the chapter's content comes first
        md(f":::{{admonition}} {title}\n:class: dropdown\n\n{table(rows)}\n:::")

    def finish(self) -> None:
        """The run's footer: profile, versions, data provenance and wall time."""
        wall = time.perf_counter() - self.t0
        glue(f"{self.spec.chapter}_wall_s", wall)
        lines = [
            f"- chapter `{self.spec.chapter}`, profile `{self.params.profile}`",
            f"- normbook {__version__} (commit {_git_commit()}), torch {torch.__version__}, "
            f"Python {platform.python_version()}, {torch.get_num_threads()} threads",
            f"- experiment cache: `{cache.cache_root()}`",
            *[
                f"- cached step `{st.kind}`: {hits} loaded, {new} computed; keyed by the "
                f"code of {', '.join(f'`{n}`' for n in st.code_names)} (hash `{st.code_hash}`)"
                for st, hits, new in cache.steps_used()
            ],
            *([f"- data: {p}" for p in self.provenance] or ["- data: none (synthetic inputs)"]),
            f"- wall time of this execution: **{wall:.1f} s**",
            # both files sit beside the page in the built site (normbook.core.build)
            f"- download: {{download}}`the jupytext source <{self.spec.chapter}.py>` (open in "
            f"Jupyter with jupytext, or run with `make chapter`), {{download}}`the executed "
            f"notebook <{self.spec.chapter}.ipynb>` (with these outputs)",
        ]
        md("**Run record**\n\n" + "\n".join(lines))


def start(spec: Spec, namespace: dict) -> tuple[Params, Run]:
    """Validate the parameters cell (and papermill's injection) before any compute."""
    global _CURRENT
    params = spec.from_namespace(namespace)
    cache.check_writable()  # a read-only or missing cache directory fails now, not after training
    _sharp_figures()
    run = _CURRENT = Run(spec, params)
    ledger.forget(spec.chapter, params.profile)  # a failed run must not leave old verdicts
    run.show_parameters()
    return params, run


_CURRENT: Run | None = None  # the chapter executing in this kernel


def _sharp_figures() -> None:
    """Figures as PNG at twice the pixels of their displayed size (sharp on high-DPI screens)."""
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # not in a notebook kernel
        return
    set_matplotlib_formats("retina")
