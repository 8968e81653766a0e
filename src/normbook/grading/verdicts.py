"""The verdict vocabulary: claims (graded by a test that could come out either way, against
the claim's smallest effect of interest) and checks (properties that hold by construction,
so a failure is a bug report, not a verdict).

A claim's grade (:func:`decide`):

- *reproduced*: its interval clears the SESOI on the claim's side;
- *partly reproduced*: a claim of several parts, some reproduced (the row says which);
- *refuted*: its interval lies wholly below the SESOI (smaller than the smallest effect that
  would matter, or of the other sign), the network family passed its positive control, and
  the tested quantity has stopped rising;
- *not shown at this budget*: neither (too little power), or a positive control failed, or
  the quantity may still be rising;
- *moot*: the claim asks about something another claim was refuted for (its premise), so the
  question does not arise at this profile; counted apart from *not shown*;
- *not testable at this profile*: the profile cannot test it (the papers' absolute numbers
  at smaller networks).

The rules that grade each paper's claims live in that paper's package; each is a function of
measured values, and its docstring states the rule.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field, replace

from normbook.grading.claims import ALPHA, CLAIM_CONFIDENCE, ClaimTest, Sesoi

REPRODUCED, PARTLY, REFUTED = "reproduced", "partly reproduced", "refuted"
NOT_SHOWN, NOT_TESTABLE = "not shown at this budget", "not testable at this profile"
MOOT = "moot: its premise was refuted"
GRADES = (REPRODUCED, PARTLY, REFUTED, NOT_SHOWN, MOOT, NOT_TESTABLE)
DECISIVE = (REPRODUCED, PARTLY, REFUTED)
# a claim that holds by symmetry if the code is right (a flat interior where nothing can tilt
# it): graded, but adjusted and counted as a family of its own, apart from the paper's claims
BY_SYMMETRY = "(by symmetry)"


def number_or_dash(v: float, spec: str) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def effect_interval(claim: dict) -> str:
    """A ledger claim's ``effect [low, high]`` in its unit (dashes where there is none)."""
    u = claim["unit"]
    return (f"{number_or_dash(claim['effect'], u)} [{number_or_dash(claim['low'], u)}, "
            f"{number_or_dash(claim['high'], u)}]")  # fmt: skip


@dataclass(frozen=True)
class Control:
    """A network family's positive control: the pre-declared check that it learned, before
    any of its claims is graded. A failed control makes the claims *not shown*. A control that
    is another claim's verdict (the claim's premise, :meth:`of_claim`) makes them *moot* when
    that claim was refuted."""

    family: str
    check: str  # what had to hold, in words
    passed: bool
    evidence: str
    premise: str = ""  # a premise: the claim graded before, in words ("" for a family's check)
    premise_refuted: bool = False  # that claim was refuted
    premise_key: str = ""  # its ledger key: the ledger re-reads its final verdict

    @classmethod
    def of_claim(cls, family: str, claim: str, verdict: str, key: str) -> Control:
        """The premise that ``claim`` (graded before, in words; ledger ``key``) holds: passed
        when it was reproduced; *refuted* when it was refuted (its dependants are then
        *moot*); failed otherwise (not shown). The claims ledger applies the same rule to the
        premise's final verdict, after the paper-wide adjustment."""
        return cls(family, f"premise: {claim} (a claim graded above) is reproduced",
                   verdict == REPRODUCED, verdict, claim, verdict == REFUTED, key)  # fmt: skip

    def line(self) -> str:
        result = "passed" if self.passed else "FAILED"
        return f"{self.family}: {self.check} — {result} ({self.evidence})"


# a Grade's flags for why the rule held it at *not shown* (its fields of these names)
HELD = ("moving", "no_kept_states", "no_interval")


@dataclass(frozen=True)
class Grade:
    verdict: str  # one of GRADES
    why: str  # the part of the rule that decided it
    p: float = float("nan")  # the p-value of the question that decided it (for adjustment)
    test: ClaimTest | None = None  # the test it graded (kept so that a row can be re-derived)
    rising: object = None  # the Rise (late gain against its margin) where one was measured
    parts: tuple = ()  # a claim of parts: ((name, Grade), ...)
    # whether the rule could have graded it refuted: False where no kept states tell whether the
    # tested quantity was still rising (``rising=None``), so that *refuted* is blocked by
    # construction; a claim of parts, when some part could be
    refutable: bool = True
    # why a *not shown* grade was held there by the rule, not by power (the ledger and the
    # stability measure read these, never ``why``'s words); a claim of parts: some part was
    moving: bool = False  # below its SESOI (or outside its band), but the quantity may still move
    no_kept_states: bool = False  # below, but no kept states tell whether it was still moving
    no_interval: bool = False  # no interval (too few units, or no test)


def decide(
    test: ClaimTest,
    controls: tuple[Control, ...] | list[Control] = (),
    *,
    rising: bool | None,
    testable: bool = True,
    alpha: float = ALPHA,
) -> Grade:
    """The grade of one claim from its test (module docstring), carrying the test and the
    evidence on rising. ``rising`` (required, so that no claim skips the rule by default):
    whether the tested quantity may still be rising at the end of the budget (a bool, or a
    :class:`normbook.grading.claims.Rise` with its late gain); ``None``: no kept states can tell,
    which blocks *refuted* the same way; ``False`` only for a quantity that more training
    cannot raise."""
    g = _decide(test, controls, rising=rising, testable=testable, alpha=alpha)
    return replace(g, test=test, rising=rising if hasattr(rising, "record") else None,
                   refutable=rising is not None)  # fmt: skip


def _decide(test, controls, *, rising, testable, alpha) -> Grade:
    if not testable:
        return Grade(NOT_TESTABLE, "this profile cannot test it")
    failed = [c for c in controls if not c.passed]
    if refuted := [c for c in failed if c.premise_refuted]:
        return Grade(MOOT, "its premise was refuted: " + "; ".join(
            f"{c.family}, {c.premise}" for c in refuted))  # fmt: skip
    if failed:
        return Grade(NOT_SHOWN, "positive control failed: " + "; ".join(
            f"{c.family} ({c.check})" for c in failed))  # fmt: skip
    if test.p != test.p and test.p_refute != test.p_refute:
        return Grade(NOT_SHOWN, "no interval (too few units, or no test)", no_interval=True)
    if test.band:
        return _decide_band(test, rising, alpha)
    if test.clears(alpha):
        return Grade(REPRODUCED, "interval clears the SESOI", test.p)
    if test.below(alpha):
        where = "of the other sign" if test.high < 0 else "below the SESOI"
        if rising is None:
            return Grade(NOT_SHOWN, f"{where}, but no kept states tell whether it was still "
                         "rising", test.p_refute, no_kept_states=True)  # fmt: skip
        if rising:
            return Grade(NOT_SHOWN, f"{where}, but may still be rising", test.p_refute,
                         moving=True)  # fmt: skip
        return Grade(REFUTED, f"interval wholly {where}, and flat", test.p_refute)
    if test.high < test.sesoi:  # below in the part shown, not at the level adjusted for parts
        return Grade(NOT_SHOWN, "below the SESOI in the part shown, not after adjusting for "
                     "the claim's other parts", test.decisive_p)  # fmt: skip
    if test.low == test.high == test.sesoi:
        return Grade(NOT_SHOWN, "equal to the SESOI in every unit", test.decisive_p)
    return Grade(NOT_SHOWN, "interval contains the SESOI (too little power)", test.decisive_p)


def _decide_band(test: ClaimTest, rising: bool | None, alpha: float) -> Grade:
    """:func:`decide` for an equivalence test (a value inside a band)."""
    if test.clears(alpha):
        return Grade(REPRODUCED, "inside the band", test.p)
    if test.below(alpha):
        if rising is None or rising:
            why = "no kept states tell whether it was still moving" if rising is None else (
                "may still be moving")  # fmt: skip
            return Grade(NOT_SHOWN, f"outside the band, but {why}", test.p_refute,
                         moving=rising is not None, no_kept_states=rising is None)  # fmt: skip
        return Grade(REFUTED, "wholly outside the band", test.p_refute)
    return Grade(NOT_SHOWN, "the interval straddles the band's edge (too little power)",
                 test.decisive_p)  # fmt: skip


def decide_parts(parts: list[tuple[str, Grade]]) -> Grade:
    """A claim of several named parts, each graded by :func:`decide`: every part reproduced,
    *reproduced* (p: the largest); some, *partly reproduced*, when a reproduced part's p,
    Bonferroni over the parts, is below ALPHA (which part holds was not fixed in advance);
    none, but a part refuted at the same adjusted level, *refuted*; otherwise *not shown*. The
    reason names each part's grade, and the why of each part not shown (whose flags, a part's
    ``moving`` say, the claim carries: some part was held so)."""
    g = _decide_parts(parts)
    held = {k: any(getattr(p, k) for _, p in parts) for k in HELD}
    return replace(g, parts=tuple(parts), refutable=any(p.refutable for _, p in parts), **held)


def _decide_parts(parts: list[tuple[str, Grade]]) -> Grade:
    grades = [g.verdict for _, g in parts]
    why = "; ".join(f"{name}: {g.verdict}" + (f" ({g.why})" if g.verdict == NOT_SHOWN else "")
                    for name, g in parts)  # fmt: skip
    ps = lambda grade: [g.p for _, g in parts if g.verdict == grade and g.p == g.p]
    if all(g == REPRODUCED for g in grades):
        return Grade(REPRODUCED, why, max(ps(REPRODUCED), default=math.nan))
    if any(g == REPRODUCED for g in grades):
        # which part holds was not fixed in advance: Bonferroni over the parts
        p = min(1.0, len(parts) * min(ps(REPRODUCED)))
        if p < ALPHA:
            return Grade(PARTLY, why, p)
        return Grade(NOT_SHOWN, why + f" (the part that clears has p = {p:.3g} after "
                     f"Bonferroni over {len(parts)} parts)", p)  # fmt: skip
    if any(g == NOT_TESTABLE for g in grades):
        return Grade(NOT_TESTABLE, why)
    if any(g == REFUTED for g in grades):
        refuted = ps(REFUTED)
        p = min(1.0, len(parts) * min(refuted)) if refuted else math.nan
        if p < ALPHA:  # Bonferroni over the parts: the conjunction is refuted at ALPHA
            return Grade(REFUTED, why, p)
        return Grade(NOT_SHOWN, why + f" (a part below its SESOI, but p = {p:.3g} after "
                     f"Bonferroni over {len(parts)} parts)", p)  # fmt: skip
    return Grade(NOT_SHOWN, why, min((g.p for _, g in parts if g.p == g.p), default=math.nan))


def sesoi_phrase(sesoi: Sesoi, unit: str = ".3f") -> str:
    """A SESOI in words, in the format of its claim's effect (``unit``): "0.050 of the ramp's
    slope", "0.5 percentage points of test accuracy"."""
    spec = unit.replace("+", "")
    if spec.endswith("%"):  # a fraction shown in percentage points
        return f"{100 * sesoi.value:g} percentage points {sesoi.unit}"
    return f"{number_or_dash(sesoi.value, spec)} {sesoi.unit}"


_REQUIRED = object()  # Verdict.graded's ``rising``: no default, but None is a value

CODE_PAGES = "_code"  # the site's folder of highlighted source pages (publish.sphinx_code)


def code_href(module: str, anchor: str, depth: int = 1) -> str:
    """The link to ``anchor`` (a qualified name, or ``L-<n>``) on a module's source page, from
    a page ``depth`` folders below the site's root (the chapters are in ``book/``: 1)."""
    return "../" * depth + f"{CODE_PAGES}/{module.replace('.', '/')}.html#{anchor}"


def code_links(code) -> str:
    """A row's links to the code behind it (``code``: (role, module, anchor) triples): the rule
    that graded it, the function that measured its effect, its SESOI with its reason."""
    links = [f'<a class="code-link" href="{html.escape(code_href(m, a))}" '
             f'title="{html.escape(m)}.{html.escape(a)}">{html.escape(role)}</a>'
             for role, m, a in code]  # fmt: skip
    return f' <span class="code-links">code: {" · ".join(links)}</span>' if links else ""


def _definition(fn) -> tuple[str, str]:
    """(module, qualified name) of a function, cut back to the definition a source page
    anchors (a lambda or nested function: the one that encloses it)."""
    fn = getattr(fn, "func", fn)  # a functools.partial: the function it wraps
    return fn.__module__, fn.__qualname__.split(".<")[0]


@dataclass(frozen=True)
class Verdict:
    paper: str  # "A" or "B"
    claim: str  # what the test tests, in words (with the SESOI where the claim is about size)
    grade: Grade
    test: ClaimTest  # the effect, its interval, the test, its p-values and the null
    sesoi: Sesoi | None = None  # the smallest effect of interest (None: a band comparison)
    evidence: str = ""  # further numbers the rule used
    unit: str = ".3f"  # format of the effect, its interval and the SESOI
    controls: tuple[Control, ...] = field(default_factory=tuple)
    paper_says: str = ""  # the paper's own wording ("" for a claim of ours)
    key: str = ""  # the claim's name for the prose (``a1_side_channel``), stable under reordering
    # (role, module, anchor): the rule that graded it, the measure of its effect, its SESOI
    code: tuple = ()

    @classmethod
    def graded(
        cls,
        paper: str,
        claim: str,
        test: ClaimTest,
        sesoi: Sesoi | None,
        *,
        rising=_REQUIRED,
        parts: list[tuple[str, Grade]] | None = None,
        controls: tuple[Control, ...] | list[Control] = (),
        evidence: str = "",
        unit: str = ".3f",
        paper_says: str = "",
        untestable: str = "",
        key: str = "",
        rule=None,
        measure=None,
    ) -> Verdict:
        """Grade ``claim`` and build its row, each argument given once: the test and the
        controls that decide the grade are the ones the row records. One test: :func:`decide`
        (``rising`` required, see there). A claim of named ``parts``, each graded by
        :func:`decide`: :func:`decide_parts`, the row showing ``test``, one part's.
        ``untestable``: why this profile cannot test the claim ("": it can). ``rule`` (required):
        the function that applies the claim's rule, runs its test and grades it (its docstring
        states the rule); ``measure``: the function that computes the effect's per-unit
        quantity. The row links both, and the SESOI, to their definitions in the code."""
        if not callable(rule):
            raise TypeError(f"{key or claim!r}: needs rule=, the function that applies its rule")
        if parts is not None:
            grade = Grade(NOT_TESTABLE, untestable) if untestable else decide_parts(parts)
        elif rising is _REQUIRED:
            raise TypeError(f"{key or claim!r}: a claim of one test needs rising= (see decide)")
        else:
            grade = decide(test, controls, rising=rising, testable=not untestable)
            grade = replace(grade, why=untestable) if untestable else grade
        code = [("rule", *_definition(rule))]
        if measure is not None:
            code.append(("effect", *_definition(measure)))
        if sesoi is not None:
            code.append(("SESOI", *sesoi.code_ref()))
        return cls(paper, claim, grade, test, sesoi, evidence, unit, tuple(controls), paper_says,
                   key, tuple(code))  # fmt: skip

    @classmethod
    def in_parts(cls, paper, claim, parts, shown, sesoi, **row) -> Verdict:
        """:meth:`graded` for a claim of several named ``parts`` (``shown``: the test its row
        shows); ``row``: the other fields, as there."""
        return cls.graded(paper, claim, shown, sesoi, parts=parts, **row)

    @property
    def verdict(self) -> str:
        return self.grade.verdict

    def sesoi_text(self) -> str:
        if self.sesoi is None:
            return "paper's band"
        return ("± " if self.test.band else "") + sesoi_phrase(self.sesoi, self.unit)

    def blocked_text(self) -> str:
        """For prose: the family checks this row failed, each with what was measured, and
        what the row's own test says, so that a reader can tell whether a passing control
        alone would decide it ("" when every family check passed)."""
        failed = [c for c in self.controls if not c.passed and not c.premise]
        if not failed:
            return ""
        t, f = self.test, self.unit
        inside, outside, edge = (
            ("lies inside the band", "lies outside it", "the band's edge")
            if t.band
            else ("clears the SESOI", "is below the SESOI", "the SESOI")
        )
        side = inside if t.clears() else outside if t.below() else f"is on neither side of {edge}"
        return (
            "; ".join(f"{c.family} failed its check ({c.check}: {c.evidence})" for c in failed)
            + f". The row's own test, read without the check: {number_or_dash(t.effect, f)} "
            f"[{number_or_dash(t.low, f)}, {number_or_dash(t.high, f)}] against the SESOI "
            f"{self.sesoi_text()}, p(reproduce) {p_text(t.p)} and p(refute) {p_text(t.p_refute)} "
            f"over {t.n} units: at level {ALPHA:g}, before the paper-wide adjustment of the "
            f"ledger, it {side}"
        )

    def row(self) -> dict:
        """The claim, its verdict and reason, and its effect against the SESOI; the paper's
        wording, the test, its p-values, the null and the evidence fold under the claim."""
        t, f = self.test, self.unit
        folded = {
            "paper says": self.paper_says or "(ours)",
            "test": f"{t.test}; p(reproduce) {p_text(t.p)}, p(refute) {p_text(t.p_refute)}",
            "compared with": t.null,
            "evidence": self.evidence,
        }
        return {
            "claim (as tested)": self.claim + fold(folded) + code_links(self.code),
            "verdict": f"**{self.verdict}** ({self.grade.why})",
            f"effect [{CLAIM_CONFIDENCE:.0%} CI] vs SESOI": (
                f"{number_or_dash(t.effect, f)} [{number_or_dash(t.low, f)}, "
                f"{number_or_dash(t.high, f)}]; SESOI {self.sesoi_text()}"
            ),
        }


def fold(items: dict[str, str], summary: str = "test, null, evidence") -> str:
    """Details folded inside a table cell (a closed ``<details>``): the row stays one claim,
    its verdict and its effect, and a reader opens the rest. Text is escaped, and a table's
    cell separator too."""
    body = "<br>".join(f"<b>{html.escape(k)}</b>: {html.escape(str(v))}"
                       for k, v in items.items() if v)  # fmt: skip
    body = body.replace("|", "\\|").replace("\n", " ")
    return f" <details><summary>{summary}</summary>{body}</details>"


def p_text(p: float) -> str:
    if p is None or p != p:
        return "–"
    return "< 1e-300" if p == 0 else f"= {p:.3g}"


@dataclass(frozen=True)
class Check:
    """A property that holds by construction (exact equivariance, a control at chance)."""

    paper: str
    check: str
    holds: bool
    evidence: str

    def row(self) -> dict:
        return {
            "check": self.check + fold({"evidence": self.evidence}, "evidence"),
            "result": "holds" if self.holds else "**FAILED: a bug, not a verdict**",
        }
