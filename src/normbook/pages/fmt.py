"""Formatting of measured numbers for prose, tables and verdict evidence (pure strings).

A number that cannot be computed (NaN, None) is shown as :data:`DASH`, never as "nan" or
"n/a", and the text beside it says why: a footnote under a table (:func:`table`'s
``missing``), a parenthesis in prose (:func:`bracket`'s ``why``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import numpy as np

from normbook.grading.stats import mean_sd as _mean_sd

DASH = "–"  # an en dash: a number that cannot be computed
_DASHED = re.compile(r"(?<![\w.%])–(?![\w.])")  # a dash standing alone, not a range's "0.5–0.6"


def is_missing(v) -> bool:
    """Whether ``v`` is a number that could not be computed (None or NaN)."""
    return v is None or (isinstance(v, float | np.floating) and v != v)


def _why(text: str, why: str) -> str:
    return f"{text} ({why})" if why else text


def mean_sd(values, spec: str = ".3f", why: str = "") -> str:
    """``"m ± sd"`` over seeds (sample sd); one seed: ``"m ± – (one seed)"``; a mean that
    cannot be computed: ``"–"``, followed by ``(why)`` when given."""
    v = np.asarray(values, dtype=float)
    if not v.size:
        return _why(DASH, why)
    m, sd = _mean_sd(v)
    if is_missing(m):
        return _why(DASH, why)
    if v.size == 1:
        return f"{m:{spec}} ± {DASH} (one seed)"
    return f"{m:{spec}} ± {num(sd, spec)}"


def join(values: Iterable, spec: str = "", sep: str = ", ") -> str:
    """Values formatted with ``spec`` and joined: ``"0.12, 0.30"`` (NaN as ``–``)."""
    return sep.join(num(v, spec) for v in values)


def sci(x: float) -> str:
    """A learning rate as people write it: ``1e-3``, ``3e-4`` (``0.01`` -> ``1e-2``)."""
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def yes_no(flags: Iterable[bool]) -> str:
    """``"yes, no"`` for a list of flags."""
    return ", ".join("yes" if f else "no" for f in flags)


def depths(values: Iterable[int | None]) -> str:
    """A depth per seed, ``None`` read as "never"."""
    return ", ".join("never" if v is None else str(v) for v in values)


def count_of(flags, sep: str = " of ") -> str:
    """``"3 of 4"`` (or ``"3/4"`` with ``sep="/"``): how many flags are set."""
    flags = list(np.ravel(flags))
    return f"{sum(bool(f) for f in flags)}{sep}{len(flags)}"


def table(rows: list[dict], floatfmt: str = ".3g", missing: str | Mapping[str, str] = "") -> str:
    """A markdown table from a list of dicts (same keys). A value that cannot be computed (NaN,
    None) shows as ``–``; ``missing`` says why, in a footnote under the table when a dash is
    shown: one reason for the whole table, or one per column (``{column: reason}``)."""
    if not rows:
        return ""
    keys = list(rows[0])
    cell = lambda v: num(v, floatfmt) if isinstance(v, float) or is_missing(v) else str(v)
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(cell(r[k]) for k in keys) + " |" for r in rows]
    dashed = [k for k in keys if any(_DASHED.search(cell(r[k])) for r in rows)]
    return "\n".join(lines) + footnote(dashed, missing)


def footnote(columns: list[str], missing: str | Mapping[str, str]) -> str:
    """The line under a table that says why its ``columns`` show ``–`` ("" when none do)."""
    if not columns or not missing:
        return ""
    if isinstance(missing, str):
        return f"\n\n{DASH}: {missing}"
    reasons: dict[str, list[str]] = {}
    for k in columns:
        if k in missing:
            reasons.setdefault(missing[k], []).append(k)
    return "".join(f"\n\n{DASH} in {', '.join(ks)}: {why}" for why, ks in reasons.items())


def num(v, spec: str = "") -> str:
    """A number in ``spec``; ``–`` when it cannot be computed (NaN, None)."""
    return DASH if is_missing(v) else format(v, spec)


def bracket(est: float, low: float, high: float, spec: str = ".3f", why: str = "") -> str:
    """An estimate and its interval: ``"0.103 [0.061, 0.146]"``. A bound that cannot be
    computed is ``–`` and ``why`` follows in parentheses: ``"0.095 [–, –] (one seed: no
    interval)"``; without an estimate, ``"– (why)"``."""
    if is_missing(est):
        return _why(DASH, why)
    text = f"{num(est, spec)} [{num(low, spec)}, {num(high, spec)}]"
    return _why(text, why) if is_missing(low) or is_missing(high) else text


def no_interval(n: int, unit: str = "seed") -> str:
    """Why an interval over ``n`` units is missing: ``"one seed: no interval"``; two or more
    units without one had a unit whose value could not be computed."""
    if n < 2:
        return f"{'one' if n == 1 else 'no'} {unit}{'' if n == 1 else 's'}: no interval"
    return f"a {unit} without a value: no interval"


def interval(test, spec: str = ".3f", unit: str = "seed") -> str:
    """A claim test's effect and interval (:func:`bracket`), with why either is missing: no
    estimate (the test's own words, such as "no state kept by half the budget"), or too few
    ``unit``s for an interval."""
    if is_missing(test.effect):
        return bracket(test.effect, test.low, test.high, spec, test.test or "no estimate")
    return bracket(test.effect, test.low, test.high, spec, no_interval(test.n, unit))


def from_cache(hits: Mapping[str, object]) -> str:
    """How many of each named run's entries (a flag per seed, or one flag) were loaded from
    the cache, in all and per run: ``"10 of 10 (none: 5 of 5; instance: 5 of 5)"``."""
    flags = {k: [bool(f) for f in np.ravel(v)] for k, v in hits.items()}
    one = lambda fs: count_of(fs) if len(fs) != 1 else ("yes" if fs[0] else "no")
    every = [f for fs in flags.values() for f in fs]
    return f"{count_of(every)} ({'; '.join(f'{k}: {one(fs)}' for k, fs in flags.items())})"
