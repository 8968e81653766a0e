"""Which claim rows could not come out *refuted*, by construction: the rule needs to know
whether the tested quantity was still rising at the end of the budget, and for these rows no
kept states measure it (``rising=None``), so an interval wholly below the SESOI reads *not
shown* whatever it is.

Every such row is declared here, with the measurement it waits for. ``make test`` runs
``python -m normbook.tools.refutable smoke`` after the smoke build: it fails when a row is blocked
that is not declared (a new claim that cannot be refuted), and when a declared row is no
longer blocked (the list must shrink with the work). Rows declared not testable at a profile
are exempt. It also fails when a claim has no key, or shares one (the prose names a claim's
verdict by its key), and when a claim's row does not link the rule that graded it, the function
that measured its effect and its SESOI (where it has one), each to a definition the book's
source pages anchor (:func:`unlinked`).

A row can also be blocked by its number of units: where they tie (integer effects often do),
the exact sign test's smallest p is 2^-n, and with n = 4 that is 0.0625, above the level, so
no data could decide it either way (:func:`floored`). ``make reference`` runs the check at
``cpu`` and writes no reference with such a row; at ``smoke`` (two seeds, whose floor 0.25
decides nothing) the rows are counted, not failed.
"""

from __future__ import annotations

import sys

from normbook.book_pages import ledger as claims_ledger
from normbook.grading.claims import ALPHA
from normbook.grading.verdicts import MOOT, NOT_TESTABLE

SIGN_TEST = "(no spread: sign test)"  # how grading.claims.mean_test names its tie branch
FLOOR_EXEMPT = ("smoke",)  # profiles whose seeds are for speed: their floored rows are counted

# (section, start of the claim as tested): the measurement that would unblock it.
AWAITING: dict[tuple[str, str], str] = {}


def _row(c: dict) -> str:
    return f"{c['section']}: {c['claim'][:90]}"


def blocked(recs: list[dict]) -> list[dict]:
    """The claims whose rule could not grade them refuted (not testable ones exempt, and moot
    ones: their premise was refuted, so their own question does not arise)."""
    exempt = (NOT_TESTABLE, MOOT)
    return [c for r in recs for c in r["claims"]
            if not c.get("refutable", True) and c["graded"] not in exempt]  # fmt: skip


def floor_p(test: dict) -> float:
    """The smallest p the test of a row (or of one part) could have given: 2^-n where its units
    had no spread and the exact sign test replaced the t test; 0 for every other test."""
    name, n = str(test.get("test") or ""), test.get("n") or 0
    return 0.5**n if SIGN_TEST in name and n else 0.0


def floored(recs: list[dict]) -> list[str]:
    """Rows (or parts) that no data could have decided: their test's smallest p is above the
    level (not testable and moot rows exempt)."""
    out = []
    for r in recs:
        for c in r["claims"]:
            if c.get("graded") in (NOT_TESTABLE, MOOT):
                continue
            for what, t in [("", c)] + [(f" (part {p['name']})", p) for p in c.get("parts", [])]:
                if floor_p(t) > ALPHA:
                    out.append(f"undecidable with {t['n']} units{what}: they tie, and the sign "
                               f"test's smallest p, 2^-{t['n']} = {floor_p(t):.4g}, is above "
                               f"the level {ALPHA:g}: {_row(c)}")  # fmt: skip
    return out


def declared(c: dict) -> bool:
    return any(c["section"] == s and c["claim"].startswith(start) for s, start in AWAITING)


def unnamed(recs: list[dict]) -> list[str]:
    """Claims the prose cannot name: without a key, or with a key another claim has."""
    keys = [c.get("key", "") for r in recs for c in r["claims"]]
    out = [f"claim without a key: {_row(c)}" for r in recs for c in r["claims"]
           if not c.get("key")]  # fmt: skip
    return out + [
        f"key used twice: {k}" for k in sorted({k for k in keys if k and keys.count(k) > 1})
    ]


def unlinked(recs: list[dict]) -> list[str]:
    """Claims whose row does not link, in this order, the rule that graded it, the function that
    measured its effect and its SESOI (none for a comparison with the paper's band), or links a
    name that is not a definition the source pages anchor (a line, a renamed or moved one:
    :func:`normbook.publish.sphinx_code.locate`)."""
    from sphinx.errors import SphinxError  # Sphinx only where the check runs, not in a chapter

    from normbook.publish.sphinx_code import locate

    out = []
    for r in recs:
        for c in r["claims"]:
            code = c.get("code") or []
            roles = [role for role, *_ in code]
            want = ["rule", "effect"] + (["SESOI"] if c.get("sesoi_name") != "paper's band" else [])
            if roles != want:
                out.append(f"links {', '.join(roles) or 'no code'}, not {', '.join(want)}: "
                           f"{_row(c)}")  # fmt: skip
            for role, module, name in code:
                try:
                    if name.startswith("L-"):
                        raise SphinxError(f"{module}.{name} is a line, not a definition")
                    locate(f"{module}.{name}")
                except SphinxError as exc:
                    out.append(f"its {role} link lands on no definition ({exc}): {_row(c)}")
    return out


def problems(recs: list[dict]) -> list[str]:
    """Undeclared blocked rows, declared rows that are no longer blocked, and claims without
    a key of their own."""
    stuck = blocked(recs)
    out = unnamed(recs) + [f"blocked by construction and not declared: {_row(c)}" for c in stuck
                           if not declared(c)]  # fmt: skip
    for s, start in AWAITING:
        found = [c for r in recs for c in r["claims"]
                 if c["section"] == s and c["claim"].startswith(start)]  # fmt: skip
        if found and not any(c in stuck for c in found):
            out.append(f"declared as blocked but refutable now (drop it from AWAITING): {s}: "
                       f"{start}")  # fmt: skip
    return out


def main(argv: list[str]) -> int:
    profile = argv[0] if argv else "smoke"
    recs = claims_ledger.records(profile)
    floors = floored(recs)
    found = problems(recs) + unlinked(recs) + ([] if profile in FLOOR_EXEMPT else floors)
    n = sum(len(r["claims"]) for r in recs)
    counted = f" ({len(floors)} tied below the sign test's floor: not failed at {profile})"
    print(
        f"[refutable] {n} claims at {profile}; {len(blocked(recs))} blocked by construction, "
        f"all declared; {'none' if not floors else len(floors)} undecidable by their units"
        f"{counted if floors else ''}; every one linked to its rule, effect and SESOI"
        if not found
        else "\n".join(f"[refutable] {p}" for p in found)
    )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
