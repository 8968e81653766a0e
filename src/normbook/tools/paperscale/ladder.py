"""The budget of a paper-scale run, chosen from measured rates by a ladder fixed in code before
any result is seen.

Each rung is a fraction of the profile's budget. From the top, the first rung whose estimated
time fits what is left of the deadline (with a safety factor) is run. The order of the cuts is
the reason the ladder exists: predictions per index go first, because every graded claim is a
slope over hundreds of indices and needs far fewer than the paper's 3.2 x 10^6 to be precise
(only the fraction flagged by the significance test depends on them, and it is read at the
number actually used); training steps go next, because a network that has not learned grades
nothing; seeds go last, because every claim is a t test over seeds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

SAFETY = 1.15  # an estimate from a few timed steps may run that much short
RESERVE_S = 30.0  # the checks (on the CPU), the summary and the last writes


@dataclass(frozen=True)
class Rung:
    """One budget: how many of the profile's seeds, and fractions of its steps, predictions
    per index, curve predictions and probe batches."""

    name: str
    seeds: int
    steps: float
    n_eval: float
    curve_eval: float
    probe_batches: float

    def params(self, params) -> dict:
        """The chapter parameters this rung runs with (``params``: the profile's)."""
        even = lambda n: max(
            2 * params.eval_batch_size, int(n) // params.eval_batch_size * params.eval_batch_size
        )
        return {
            "seeds": list(params.seeds[: self.seeds]),
            "steps": max(8, round(params.steps * self.steps)),
            "n_eval": even(params.n_eval * self.n_eval),
            "curve_eval": even(params.curve_eval * self.curve_eval),
            "probe_batches": max(1, round(params.probe_batches * self.probe_batches)),
        }


LADDER = (
    Rung("the paper's budget", 5, 1, 1, 1, 1),
    Rung("a quarter of the predictions", 5, 1, 1 / 4, 1 / 4, 1),
    Rung("a sixteenth of the predictions", 5, 1, 1 / 16, 1 / 16, 1 / 2),
    Rung("half the steps, a sixteenth of the predictions", 5, 1 / 2, 1 / 16, 1 / 16, 1 / 2),
    Rung("a quarter of the steps, 1/32 of the predictions", 5, 1 / 4, 1 / 32, 1 / 32, 1 / 4),
    Rung("four seeds, an eighth of the steps, 1/64 of the predictions", 4, 1 / 8, 1 / 64,
         1 / 64, 1 / 4),
)  # fmt: skip


@dataclass(frozen=True)
class Choice:
    rung: Rung
    index: int
    params: dict
    estimates: list[dict]  # per rung: its parts and total, in seconds
    budget_s: float
    reason: str

    def as_dict(self) -> dict:
        return {"rung": asdict(self.rung), "index": self.index, "params": self.params,
                "budget_s": self.budget_s, "estimates": self.estimates, "reason": self.reason,
                "safety": SAFETY, "ladder": [asdict(r) for r in LADDER]}  # fmt: skip


def choose(params, rates: dict, budget_s: float, cost) -> Choice:
    """The first rung whose estimated seconds (``cost(rung_params, params, rates)``: the
    experiment's parts, each in seconds) times :data:`SAFETY` fit ``budget_s``; the last rung when
    none does (it runs, and stops at the deadline with what it finished)."""
    rows = []
    for r in LADDER:
        parts = {**cost(r.params(params), params, rates), "reserve": RESERVE_S}
        rows.append({"rung": r.name, **parts, "total": sum(parts.values())})
    fits = [i for i, row in enumerate(rows) if row["total"] * SAFETY <= budget_s]
    i = fits[0] if fits else len(LADDER) - 1
    row = rows[i]
    if fits:
        parts = ", ".join(f"{k} {v:.0f}" for k, v in row.items() if k not in ("rung", "total"))
        why = (
            f"'{LADDER[i].name}' is the first rung whose estimate, {row['total']:.0f} s "
            f"({parts}), times {SAFETY:g} fits the {budget_s:.0f} s left"
        )
        if i:
            why += f"; the rung above needs {rows[i - 1]['total']:.0f} s"
    else:
        why = (f"no rung fits the {budget_s:.0f} s left (the smallest needs "
               f"{row['total']:.0f} s): the smallest runs and stops at the deadline")  # fmt: skip
    return Choice(LADDER[i], i, LADDER[i].params(params), rows, budget_s, why)
