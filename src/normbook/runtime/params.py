"""Chapter parameters: profiles, overrides and validation before any compute.

Every chapter declares a :class:`Spec`: its knobs with types and limits, the values
each profile gives them, and cross-checks between knobs. ``Spec.resolve`` turns a
profile plus overrides into a validated :class:`Params`, or raises
:class:`ParameterError` with a one-line message naming the parameter and what is valid.
"""

from __future__ import annotations

import difflib
import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PROFILES = ("smoke", "cpu", "paper")


class ParameterError(ValueError):
    """A chapter parameter that cannot be used."""


@dataclass(frozen=True)
class Param:
    name: str
    type: type
    doc: str
    choices: tuple | None = None
    min: float | None = None
    max: float | None = None
    reconstruction: bool = False  # the paper leaves it open; we chose the value
    list_of: type | None = None  # for list-valued knobs (type=list)
    shape: Any = None  # a count: its value in the paper-shape run (`make paper-shape`), or None

    def describe(self) -> str:
        if self.choices:
            return "one of " + ", ".join(map(repr, self.choices))
        names = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
        kind = (
            f"a comma-separated list of {names[self.list_of].split(' ', 1)[1]}s"
            if self.type is list
            else names[self.type]
        )
        lims = []
        if self.min is not None:
            lims.append(f">= {self.min:g}")
        if self.max is not None:
            lims.append(f"<= {self.max:g}")
        return kind + (" " + " and ".join(lims) if lims else "")

    def check(self, value: Any) -> Any:
        """Coerce and validate one value; raise ParameterError otherwise."""
        v = value
        if self.type is list:
            if isinstance(v, str):  # command-line form: "0,1,2"
                v = [s for s in v.replace(" ", "").split(",") if s]
            if not isinstance(v, (list, tuple)) or not v:
                self._fail(value)
            v = [self._scalar(x, self.list_of, value) for x in v]
            for x in v:
                self._range(x, value)
            return v
        v = self._scalar(v, self.type, value)
        if self.choices is not None and v not in self.choices:
            self._fail(value)
        self._range(v, value)
        return v

    def _scalar(self, v: Any, typ: type, orig: Any) -> Any:
        if typ is bool:
            if isinstance(v, str) and v.lower() in ("true", "false", "1", "0"):
                return v.lower() in ("true", "1")
            if isinstance(v, bool):
                return v
            self._fail(orig)
        if typ is int:
            if isinstance(v, bool):
                self._fail(orig)
            if isinstance(v, str):
                try:
                    v = int(v)
                except ValueError:
                    self._fail(orig)
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            if not isinstance(v, int):
                self._fail(orig)
            return v
        if typ is float:
            if isinstance(v, bool):
                self._fail(orig)
            try:
                v = float(v)
            except (TypeError, ValueError, OverflowError):
                self._fail(orig)
            if not math.isfinite(v):  # nan passes every range check
                self._fail(orig)
            return v
        if typ is str:
            if not isinstance(v, str):
                self._fail(orig)
            return v
        raise TypeError(f"unsupported parameter type {typ}")

    def _range(self, v: Any, orig: Any) -> None:
        if (self.min is not None and v < self.min) or (self.max is not None and v > self.max):
            self._fail(orig)

    def _fail(self, value: Any):
        raise ParameterError(f"parameter '{self.name}': must be {self.describe()}, got {value!r}")


class Params(dict):
    """Resolved parameters; also readable as attributes (``params.seq_len``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError as exc:
            raise AttributeError(name) from exc


@dataclass
class Spec:
    """A chapter's knobs. The build re-executes a chapter when its source, its parameters or a
    library module it imports changes, and, with ``reads_ledger``, when any chapter's claims
    ledger record changes."""

    chapter: str
    params: list[Param]
    profiles: dict[str, dict[str, Any]]
    checks: list[Callable[[Params], str | None]] = field(default_factory=list)
    reads_ledger: bool = False  # the chapter reads every chapter's ledger record (re-run on change)
    records: tuple[str, ...] = ()  # parameters naming a recorded run it reads (re-run on change)
    # what the chapter trains and evaluates (parameters -> runtime.flops Items): the build's
    # queue starts the largest first, `make plan` prints it; None: it trains nothing of its own
    plan: Callable[[Params], list] | None = None

    def __post_init__(self):
        names = {p.name for p in self.params}
        for prof, values in self.profiles.items():
            missing, extra = names - set(values), set(values) - names
            if missing or extra:
                raise TypeError(f"{self.chapter}: profile {prof} missing {missing} extra {extra}")

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.params]

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        close = difflib.get_close_matches(str(name), ["profile", *self.names], n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise ParameterError(
            f"unknown parameter {str(name)!r} for chapter {self.chapter}; {hint}"
            f"valid: profile, {', '.join(self.names)}"
        )

    def planned(self, params: Params) -> list:
        """What the chapter will compute at ``params`` (:attr:`plan`; [] when it trains none)."""
        return self.plan(params) if self.plan else []

    @property
    def shape_counts(self) -> dict[str, Any]:
        """The counts a paper-shape run cuts, and their values there (``Param.shape``)."""
        return {p.name: p.shape for p in self.params if p.shape is not None}

    def resolve(self, profile: str = "cpu", /, **overrides: Any) -> Params:
        """Profile defaults, then overrides (``None`` means "keep the profile's value")."""
        if "profile" in overrides:
            raise ParameterError("parameter 'profile': given twice (resolve's first argument)")
        if profile not in PROFILES:
            raise ParameterError(
                f"parameter 'profile': must be one of {', '.join(PROFILES)}, got {profile!r}"
            )
        values = dict(self.profiles[profile])
        for name, value in overrides.items():
            p = self.param(name)
            if value is not None:
                values[name] = p.check(value)
        out = Params(profile=profile, **{n: self.param(n).check(v) for n, v in values.items()})
        for check in self.checks:
            msg = check(out)
            if msg:
                raise ParameterError(msg)
        return out

    def from_namespace(self, ns: dict[str, Any]) -> Params:
        """Resolve from a notebook's globals (the parameters cell and papermill's injection)."""
        return self.resolve(ns.get("profile", "cpu"), **{n: ns.get(n) for n in self.names})

    def reconstructed(self) -> list[Param]:
        return [p for p in self.params if p.reconstruction]

    def parameters_cell(self) -> str:
        """The source of the chapter's cell tagged ``parameters``, generated from this spec.

        Every knob is ``None`` (take the profile's value) with its meaning as a comment; the
        chapter's cell must equal this text (``python -m normbook.publish.build params`` rewrites
        it, and a test fails when the two drift). An assignment line holds one ``=``: papermill
        skips any line with more (``PythonTranslator.inspect`` counts them before it reads the
        comment) and then calls the knob an unknown parameter, so a meaning or values with an
        ``=`` go on the comment lines below it.
        """
        lines = [f'profile = "cpu"  # {PROFILE_DOC}']
        for p in self.params:
            line = f"{p.name} = None  # {p.doc}"
            values = self.profile_values(p.name)
            together = " · ".join(values)
            if "=" in p.doc:
                lines.append(f"{p.name} = None")
                line = f"#   {p.doc}"
            inline = line.startswith("#") or "=" not in together
            if inline and len(f"{line} [{together}]") <= CELL_WIDTH:
                lines.append(f"{line} [{together}]")
            elif len(f"#   [{together}]") <= CELL_WIDTH:  # the values on the next line
                lines += [line, f"#   [{together}]"]
            else:  # one line per profile, a long list continued on the next lines
                lines.append(line)
                for v in values:
                    chunks = textwrap.wrap(v, CELL_WIDTH - 6, break_long_words=False)
                    lines += [f"#   {chunks[0]}", *(f"#     {c}" for c in chunks[1:])]
        return "\n".join(lines)

    def profile_values(self, name: str) -> list[str]:
        """What each profile gives ``name``, for a reader of the parameters cell:
        ``["smoke 40", "cpu 5,000", "paper 20,000"]`` (``["every profile: 5"]`` when they
        agree)."""
        shown = {prof: _shown(values[name]) for prof, values in self.profiles.items()}
        if len(set(shown.values())) == 1:
            return [f"every profile: {next(iter(shown.values()))}"]
        return [f"{prof} {v}" for prof, v in shown.items()]


CELL_WIDTH = 100  # the book's line limit (ruff)


def _shown(value: Any) -> str:
    """A profile value as a reader would write it: 5,000; 0.01; 0-4 for a run of integers."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,}" if value.is_integer() and abs(value) >= 1000 else f"{value:g}"
    if isinstance(value, (list, tuple)):
        ints = all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        if ints and len(value) > 3 and list(value) == list(range(value[0], value[-1] + 1)):
            return f"{value[0]}-{value[-1]}"
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    return str(value)


def curve_fractions_error(params) -> str | None:
    """The shared cross-check of every chapter's ``curve_fractions``: fractions strictly between
    0 and 1 (the end of the budget is always measured)."""
    bad = [f for f in params.curve_fractions if not 0 < f < 1]
    if bad:
        return (
            f"parameter 'curve_fractions': fractions strictly between 0 and 1 (the end of the "
            f"budget is always measured), got {bad[0]:g}"
        )
    return None


def profiles(common: dict, **per_profile: dict) -> dict[str, dict]:
    """Profile values: what all profiles share, then each profile's own (``smoke=..., ...``)."""
    return {name: {**common, **values} for name, values in per_profile.items()}


PROFILE_DOC = "smoke, cpu or paper; a knob left at None takes the profile's value"


def parameter_names(cell_source: str) -> list[str]:
    """Names assigned at top level of a parameters cell, in order."""
    import ast

    names = []
    for node in ast.parse(cell_source).body:
        if isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names
