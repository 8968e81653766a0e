"""Formatting of measured numbers for prose, tables and verdict evidence (pure strings)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .stats import mean_sd as _mean_sd


def mean_sd(values, spec: str = ".3f") -> str:
    """``"m ± sd"`` over seeds (sample sd; ``nan`` for a single seed)."""
    m, sd = _mean_sd(values)
    return f"{m:{spec}} ± {sd:{spec}}"


def join(values: Iterable, spec: str = "", sep: str = ", ") -> str:
    """Values formatted with ``spec`` and joined: ``"0.12, 0.30"``."""
    return sep.join(format(v, spec) for v in values)


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


def table(rows: list[dict], floatfmt: str = ".3g") -> str:
    """A markdown table from a list of dicts (same keys)."""
    if not rows:
        return ""
    keys = list(rows[0])
    fmt = lambda v: format(v, floatfmt) if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(fmt(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def num(v: float, spec: str) -> str:
    """A number in ``spec``; ``n/a`` for NaN."""
    return "n/a" if v != v else format(v, spec)


def bracket(est: float, low: float, high: float, spec: str = ".3f") -> str:
    """An estimate and its interval: ``"0.103 [0.061, 0.146]"`` (``n/a`` for NaN)."""
    return f"{num(est, spec)} [{num(low, spec)}, {num(high, spec)}]"


def interval(test, spec: str = ".3f") -> str:
    """A claim test's effect and interval (:func:`bracket`)."""
    return bracket(test.effect, test.low, test.high, spec)
