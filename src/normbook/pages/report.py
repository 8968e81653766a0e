"""What a chapter shows: its parameters, glued numbers and figures, tables, verdicts, run record."""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from IPython.display import Markdown, display

from normbook import __version__
from normbook.grading import ledger
from normbook.pages.fmt import table
from normbook.runtime import cache
from normbook.runtime.devices import git_commit, origin_text
from normbook.runtime.params import Params, Spec
from normbook.runtime.workers import single_threaded_kernel


def md(text: str) -> None:
    """Render MyST markdown (admonitions included) as a cell output (nothing for no text: an
    empty table, where nothing was graded, would show as a bare object's name)."""
    if text:
        display(Markdown(text))


def glue(name: str, value) -> None:
    """Store a number for the prose (``{glue:text}`name```)."""
    from myst_nb import glue as _glue

    _glue(name, value, display=False)


LEGIBILITY: dict[str, float] = {}  # figure name -> smallest text in page pixels (this kernel)


def figure(name: str, fig) -> None:
    """Glue a figure under ``name`` for a ``{glue:figure}`` directive (numbered, captioned)
    and close it, so it appears once, where the prose places it. Its smallest text, as the page
    will show it, is measured (:func:`.figures.smallest_text_px`) for the run record. A string
    instead of a figure is a note saying why there is nothing to draw (a recorded run that does
    not exist yet), shown in the figure's place."""
    import matplotlib.pyplot as plt

    from normbook.pages.figures import smallest_text_px, wrap_labels

    if isinstance(fig, str):
        glue(name, Markdown(fig))
        return
    wrap_labels(fig)
    glue(name, fig)
    LEGIBILITY[name] = smallest_text_px(fig)
    plt.close(fig)


def show_view(view) -> None:
    """Show an explorable view (:mod:`normbook.pages.views`) where the cell is, under the
    static figure it explores, or a live view (:mod:`normbook.pages.live`)."""
    from normbook.pages.views import show

    show(view)


def in_words(claims: list) -> str:
    """The claims in plain words, one line each, made from the rows themselves (a list in the
    prose could miss a new row): the claim as tested (which names its dataset; two rows can
    share the paper's wording), its verdict and why."""
    return "\n".join(f"- {v.claim}: **{v.verdict}** ({v.grade.why})" for v in claims)


def show_verdicts(prefix: str, claims: list, words: bool = False) -> None:
    """Glue each verdict under its claim's key (``a1_side_channel``; the prose names a claim,
    never its position) and the intervals' level as ``{prefix}_claim_conf``, and show the
    claims table (display only: the chapter records the claims with :meth:`Run.record`);
    ``words``: first the claims in plain words (:func:`in_words`)."""
    from normbook.grading.claims import CLAIM_CONFIDENCE

    glue(f"{prefix}_claim_conf", f"{CLAIM_CONFIDENCE:.0%}")
    for v in claims:
        if v.key:
            glue(v.key, v.verdict)
    if words:
        md("In plain words, at this profile:\n\n" + in_words(claims))
    md(f":::{{container}} verdict-table\n\n{table([v.row() for v in claims])}\n:::")
    md("*Graded at each claim's own level; the {ref}`ledger` gives the final verdict, after "
       "the false-discovery adjustment over the paper's claims.*")  # fmt: skip


def show_checks(prefix: str, checks: list) -> None:
    """Glue how many checks hold as ``{prefix}_checks`` and show the checks table (display
    only, as :func:`show_verdicts`)."""
    glue(f"{prefix}_checks", f"{sum(c.holds for c in checks)} of {len(checks)}")
    md(f":::{{container}} verdict-table\n\n{table([c.row() for c in checks])}\n:::")


def _raw_number(value) -> float | None:
    """``value`` as a float when it is one finite real number (not a bool, not text)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return None
    v = float(value)
    return v if np.isfinite(v) else None


@dataclass
class Run:
    """One execution of a chapter: its parameters, start time and what it used."""

    spec: Spec
    params: Params
    t0: float = field(default_factory=time.perf_counter)
    provenance: list[str] = field(default_factory=list)
    claims: list[dict] = field(default_factory=list)  # recorded for the claims ledger
    checks: list[dict] = field(default_factory=list)
    numbers: dict[str, float] = field(default_factory=dict)  # raw values of the glued numbers

    def record(self, section: str, claims=(), checks=(), scale: str = ledger.PROFILE_SCALE):
        """Record graded claims and checks under ``section`` (a label) in this execution's
        result record, which the claims ledger and sweeps read (rewritten whole at every call,
        so it holds exactly what this execution graded). ``scale``: the profile's run, or a
        recorded paper-scale run the chapter read."""
        self.claims += [ledger.claim_record(v, section, scale) for v in claims]
        self.checks += [ledger.check_record(c, section) for c in checks]
        self._write()

    def glue(self, name: str, value) -> None:
        """Glue ``value`` for the prose (:func:`glue`) and, when it is a number, record its raw
        value (what a sweep over this chapter compares between points)."""
        glue(name, value)
        raw = _raw_number(value)
        if raw is not None:
            self.numbers[name] = raw

    def glue_all(self, prefix: str, values: dict) -> None:
        """:meth:`glue` every value as ``{prefix}_{name}``."""
        for name, value in values.items():
            self.glue(f"{prefix}_{name}", value)

    def _write(self) -> None:
        ledger.write(self.spec.chapter, self.params.profile, dict(self.params), self.claims,
                     self.checks, self.numbers, self.provenance, self.overrides())  # fmt: skip

    def overrides(self) -> dict:
        """The parameters this run set to other values than its profile's."""
        default = self.spec.resolve(self.params.profile)
        return {k: v for k, v in self.params.items() if k != "profile" and default.get(k) != v}

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
        ledger.write_figure_text(self.spec.chapter, self.params.profile, LEGIBILITY)
        if not self.spec.reads_ledger:  # a page built from the records writes none itself
            self._write()  # the numbers glued after the last claims
        lines = [
            f"- chapter `{self.spec.chapter}`, profile `{self.params.profile}`",
            f"- normbook {__version__} (commit {git_commit(short=True)}), torch "
            f"{torch.__version__}, Python {platform.python_version()}, "
            f"{torch.get_num_threads()} threads",
            f"- experiment cache: `{cache.cache_root()}`",
            *[
                f"- cached step `{st.kind}`: {hits} loaded, {new} computed; keyed by the "
                f"code of {', '.join(f'`{n}`' for n in st.code_names)} (hash `{st.code_hash}`)"
                for st, hits, new in cache.steps_used()
            ],
            # where this page's numbers were computed: the machines its cache entries record
            f"- computed by: {origin_text(cache.machines_used())}",
            *([f"- data: {p}" for p in self.provenance] or ["- data: none (synthetic inputs)"]),
            f"- wall time of this execution: **{wall:.1f} s**",
            legibility_line(),
            # both files sit beside the page in the built site (normbook.publish.build)
            f"- download: {{download}}`the jupytext source <{self.spec.chapter}.py>` (open in "
            f"Jupyter with jupytext, or run with `make chapter`), {{download}}`the executed "
            f"notebook <{self.spec.chapter}.ipynb>` (with these outputs)",
        ]
        md("**Run record**\n\n" + "\n".join(lines))


def legibility_line() -> str:
    """The run record's line on figure text size against the caption's (1280-px window)."""
    from normbook.pages.figures import CAPTION_PX

    if not LEGIBILITY:
        return "- figures: none"
    small = {k: v for k, v in LEGIBILITY.items() if v < CAPTION_PX}
    worst = min(LEGIBILITY, key=LEGIBILITY.get)
    return (f"- figure text at a 1280-px window: {len(LEGIBILITY) - len(small)} of "
            f"{len(LEGIBILITY)} figures at least the caption's {CAPTION_PX} px; smallest "
            f"`{worst}` {LEGIBILITY[worst]:.1f} px")  # fmt: skip


def start(spec: Spec, namespace: dict) -> tuple[Params, Run]:
    """Validate the parameters cell (and papermill's injection) before any compute."""
    params = spec.from_namespace(namespace)
    single_threaded_kernel()
    cache.check_writable()  # a read-only or missing cache directory fails now, not after training
    _sharp_figures()
    run = Run(spec, params)
    ledger.forget(spec.chapter, params.profile)  # a failed run must not leave old verdicts
    if spec.params:  # a page with no knob but its profile states the profile in its prose
        run.show_parameters()
    return params, run


def _sharp_figures() -> None:
    """Figures as PNG at twice the pixels of their displayed size (sharp on high-DPI screens)."""
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # not in a notebook kernel
        return
    set_matplotlib_formats("retina")
