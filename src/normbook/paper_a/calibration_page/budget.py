"""The training-budget calibration: how fast each candidate schedule, learning rate and batch
size makes the positive control (InstanceNorm) localize, per minute of training on this
machine, at seeds the book's chapters never use.

    cands = budget.candidates(params.cal_schedules, params.cal_lrs, params.cal_batch_sizes)
    results = budget.study(localization.Setup.from_params(params), cands)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from normbook.pages.fmt import DASH
from normbook.paper_a.runs import localization
from normbook.paper_a.runs.localization import Curve, Setup

ONSET = 0.05  # interior slope that marks the end of the plateau


@dataclass(frozen=True)
class Candidate:
    schedule: str
    lr: float
    batch_size: int

    @property
    def label(self) -> str:
        return f"{self.schedule}, lr {self.lr:g}, batch {self.batch_size}"


def candidates(schedules, lrs, batch_sizes) -> list[Candidate]:
    """Candidate i is (schedules[i], lrs[i], batch_sizes[i])."""
    if not len(schedules) == len(lrs) == len(batch_sizes):
        raise ValueError(
            "cal_schedules, cal_lrs and cal_batch_sizes must have one entry per candidate, got "
            f"{len(schedules)}, {len(lrs)} and {len(batch_sizes)}"
        )
    return [Candidate(s, float(lr), int(b)) for s, lr, b in zip(schedules, lrs, batch_sizes)]


@dataclass
class Result:
    """One candidate's curve, and the wall-clock of training behind each of its points."""

    candidate: Candidate
    curve: Curve
    seconds: np.ndarray  # measured, per seed: its share of the stacked training pass
    charged_seconds: float | None = None  # one model's full budget, as charged (see study)

    @property
    def minutes(self) -> np.ndarray:
        """Training minutes per model at each kept step (training time is linear in steps): the
        charged time when set, else the measured one."""
        full = self.seconds.mean() if self.charged_seconds is None else self.charged_seconds
        return full / 60 * self.curve.fractions

    @property
    def final_slope(self) -> float:
        return float(self.curve.slope[-1].mean())

    @property
    def slope_per_minute(self) -> float:
        """The figure of merit: interior slope reached per minute of training of one model."""
        return self.final_slope / self.minutes[-1]

    @property
    def name(self) -> str:
        return self.candidate.label

    @property
    def onset_minutes(self) -> float:
        """Minutes until the first kept state whose mean slope reaches :data:`ONSET` (NaN if
        none does): the end of the plateau."""
        reached = np.flatnonzero(self.curve.slope.mean(axis=1) >= ONSET)
        return float(self.minutes[reached[0]]) if reached.size else float("nan")


def setup_for(setup: Setup, c: Candidate) -> Setup:
    """The candidate's training at the same sample budget as ``setup`` (steps x batch size)."""
    samples = setup.train.steps * setup.train.batch_size
    tc = replace(
        setup.train,
        steps=max(1, samples // c.batch_size),
        batch_size=c.batch_size,
        lr=c.lr,
        schedule=c.schedule,
    )
    return replace(setup, train=tc)


def study(setup: Setup, cands: list[Candidate]) -> list[Result]:
    """Train (cached) and evaluate every candidate's InstanceNorm networks at every kept step.

    Candidates of one batch size do identical arithmetic (same network, same number of steps),
    so each is charged the mean measured time of its batch size: the machine's timing noise
    then cannot rank them (the final slope does), and enters only between batch sizes."""
    out = []
    for c in cands:
        s = setup_for(setup, c)
        cnn = s.cnn("instance")
        curve = localization.curve(s, cnn)
        seconds = localization.training_seconds(cnn, s.train, list(s.seeds))
        out.append(Result(c, curve, seconds))
    return charge_by_batch_size(out)


def charge_by_batch_size(results: list[Result]) -> list[Result]:
    """Each result charged the mean measured time of the candidates of its batch size."""
    by_batch: dict[int, list[float]] = {}
    for r in results:
        by_batch.setdefault(r.candidate.batch_size, []).append(float(r.seconds.mean()))
    return [
        replace(r, charged_seconds=float(np.mean(by_batch[r.candidate.batch_size])))
        for r in results
    ]


def timing_spread(results: list[Result]) -> tuple[int, str]:
    """Among the candidates of the most common batch size (identical arithmetic per step at
    equal steps), how much their measured training times differ: (batch size, "12%"), the
    noise that :func:`study` keeps out of the ranking; a lone candidate has nothing to differ
    from: "–" and why."""
    sizes = [r.candidate.batch_size for r in results]
    batch = max(set(sizes), key=sizes.count)
    same = [r.seconds.mean() for r in results if r.candidate.batch_size == batch]
    if len(same) < 2:
        return batch, f"{DASH} (one candidate at this batch size: nothing to compare)"
    return batch, f"{max(same) / min(same) - 1:.0%}"


def best(results: list[Result]) -> Result:
    """The candidate with the largest interior slope per (charged) minute of training."""
    return max(results, key=lambda r: r.slope_per_minute)
