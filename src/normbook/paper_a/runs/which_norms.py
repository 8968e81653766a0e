"""Chapter A3's experiments: GroupNorm group counts, BatchNorm's evaluation statistics and
batch size, and the runs the BatchNorm claims are tested with (:class:`BatchMeanRuns`).

    setup = localization.Setup.from_params(params)
    groups = which_norms.group_sweep(setup, params.group_counts, params.group_seeds)
    curves = which_norms.group_curves(setup, params.group_counts, params.group_seeds)
    bn = which_norms.batchnorm_runs(setup)            # none, minibatch, population
    sizes = which_norms.eval_batch_sweep(setup, params.bn_eval_batch_sizes)
    tested = which_norms.batch_mean_runs(setup, sizes.reference)
    bm_curves = which_norms.batch_mean_curves(setup, sizes)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as sps

from normbook.paper_a.measures.detector import Localization
from normbook.paper_a.runs import batchstats, localization
from normbook.paper_a.runs.batchstats import BatchStatsRun
from normbook.paper_a.runs.localization import LocalizationRun, Setup

METRICS: dict[str, Callable[[Localization], float]] = {
    "localization distance": lambda s: s.distance,
    "interior fraction localized": lambda s: s.frac_interior,
    "interior slope (effect size)": lambda s: s.effect_interior.slope,
}


@dataclass(frozen=True)
class NullLevel:
    """What networks that cannot localize the interior show: the largest interior fraction
    and |slope| among their seeds (drawn in Fig. 4 and shown per model in its table)."""

    runs: tuple

    @classmethod
    def of(cls, *runs) -> NullLevel:
        return cls(tuple(runs))

    @property
    def per_seed(self) -> list[Localization]:
        return [s for r in self.runs for s in r.per_seed]

    @property
    def fracs(self) -> list[float]:
        return [s.frac_interior for s in self.per_seed]

    @property
    def slopes(self) -> list[float]:
        return [s.effect_interior.slope for s in self.per_seed]

    @property
    def distances(self) -> list[int]:
        return [s.distance for s in self.per_seed]

    @property
    def frac(self) -> float:
        return max(self.fracs)

    @property
    def slope(self) -> float:
        """The largest |slope|: a null network's slope can have either sign."""
        return max(abs(v) for v in self.slopes)

    def beaten_by(self, loc: Localization) -> bool:
        """One model's interior fraction and slope both above every null network's (a
        description per model; the claims are tested over seeds in :mod:`.verdicts`)."""
        return loc.frac_interior > self.frac and loc.effect_interior.slope > self.slope

    def level(self, metric_name: str) -> float:
        """The null networks' largest value of one of :data:`METRICS` (|slope| for the slope,
        which is the threshold the rule uses)."""
        if metric_name == "interior slope (effect size)":
            return self.slope
        return max(METRICS[metric_name](s) for s in self.per_seed)


@dataclass
class GroupSweep:
    """GroupNorm at every group count G: one run per G (per-sample and batch-mean tests)."""

    group_counts: list[int]
    width: int
    runs: dict[int, BatchStatsRun]

    def values(self, metric: Callable[[Localization], float]) -> np.ndarray:
        """``metric`` per group count and seed, (G, seeds)."""
        return np.array(
            [[metric(s) for s in self.runs[g].per_seed] for g in self.group_counts], dtype=float
        )

    @property
    def distance(self) -> np.ndarray:
        return self.values(METRICS["localization distance"]).astype(int)

    @property
    def slope(self) -> np.ndarray:
        return self.values(METRICS["interior slope (effect size)"])

    def spearman(self, metric: Callable[[Localization], float]) -> tuple[float, float]:
        """Rank correlation of ``metric`` with G over every (G, seed)."""
        vals = self.values(metric)
        res = sps.spearmanr(np.repeat(self.group_counts, vals.shape[1]), vals.ravel())
        return float(res.statistic), float(res.pvalue)

    def beyond_null(self, null: NullLevel) -> dict[int, list[bool]]:
        """Per G, per seed: does the interior localization clear the null level?"""
        return {g: [null.beaten_by(s) for s in self.runs[g].per_seed] for g in self.group_counts}

    @property
    def instance(self) -> BatchStatsRun | None:
        """The G = C run, which is InstanceNorm (the positive control), if swept."""
        return self.runs.get(self.width)


def networks(setup: Setup, group_counts: list[int], seeds: list[int]) -> list:
    """Every (setup, network) this chapter trains, for :func:`localization.pretrain`: each G
    with ``seeds``; no norm, BatchNorm and InstanceNorm with the chapter's seeds."""
    by_group = replace(setup, seeds=tuple(seeds))
    return [(by_group, by_group.cnn("group", groups=g)) for g in sorted(group_counts)] + [
        (setup, setup.cnn(norm)) for norm in ("none", "batch", "instance")
    ]


def group_sweep(setup: Setup, group_counts: list[int], seeds: list[int]) -> GroupSweep:
    """Outputs only (no probes) of ``seeds``' networks per G, at the chapter's evaluation
    batch size."""
    setup, group_counts = replace(setup, seeds=tuple(seeds)), sorted(group_counts)
    runs = {
        g: batchstats.localize(
            setup, setup.cnn("group", groups=g), setup.eval.batch_size, "minibatch"
        )
        for g in group_counts
    }
    return GroupSweep(list(group_counts), setup.width, runs)


def group_curves(setup: Setup, group_counts: list[int], seeds: list[int]) -> list:
    """The compute-to-effect curve of every G (:func:`localization.curve`), same seeds as the
    sweep."""
    setup = replace(setup, seeds=tuple(seeds))
    return [localization.curve(setup, setup.cnn("group", groups=g)) for g in sorted(group_counts)]


@dataclass
class BatchNormRuns:
    """Chapter A3's BatchNorm study: no normalization, and the same trained BatchNorm networks
    evaluated with minibatch and with population statistics, each with depth probes."""

    none: LocalizationRun
    minibatch: LocalizationRun
    population: LocalizationRun


def batchnorm_runs(setup: Setup) -> BatchNormRuns:
    """Train (or load) and evaluate the three networks of :class:`BatchNormRuns`."""
    return BatchNormRuns(
        *(
            localization.localize(setup, setup.cnn(norm, batch_eval=mode))
            for norm, mode in (
                ("none", "minibatch"),
                ("batch", "minibatch"),
                ("batch", "population"),
            )
        )
    )


@dataclass
class BatchMeanRuns:
    """The BatchNorm claims' runs, all measured with the batch-mean test at one evaluation
    batch size: minibatch and population statistics, and the two nulls (no normalization;
    the same BatchNorm networks with circular padding)."""

    minibatch: BatchStatsRun
    population: BatchStatsRun
    none: BatchStatsRun
    circular: BatchStatsRun


def batch_mean_runs(setup: Setup, batch_size: int) -> BatchMeanRuns:
    """Evaluate (cached) the four runs of :class:`BatchMeanRuns` at ``batch_size``."""
    bn = setup.cnn("batch")
    return BatchMeanRuns(
        minibatch=batchstats.localize(setup, bn, batch_size, "minibatch"),
        population=batchstats.localize(setup, bn, batch_size, "population"),
        none=batchstats.localize(setup, setup.cnn("none"), batch_size, "minibatch"),
        circular=batchstats.localize(setup, bn, batch_size, "minibatch", padding="circular"),
    )


@dataclass
class BatchMeanCurves:
    """The BatchNorm claims' runs through training (:func:`batchstats.curve`, the batch-mean
    evaluation of :class:`BatchMeanRuns`): BatchNorm with minibatch statistics and no
    normalization at the reference evaluation batch size, and BatchNorm at the largest."""

    minibatch: localization.Curve
    none: localization.Curve
    largest: localization.Curve


def batch_mean_curves(setup: Setup, sizes: EvalBatchSweep) -> BatchMeanCurves:
    """Evaluate (cached) the curves of :class:`BatchMeanCurves` for ``sizes``' batch sizes."""
    bn = setup.cnn("batch")
    return BatchMeanCurves(
        minibatch=batchstats.curve(setup, bn, sizes.reference),
        none=batchstats.curve(setup, setup.cnn("none"), sizes.reference),
        largest=batchstats.curve(setup, bn, sizes.largest),
    )


@dataclass
class EvalBatchSweep:
    """BatchNorm with minibatch statistics at several evaluation batch sizes, and with
    population statistics."""

    sizes: list[int]
    runs: dict[int, BatchStatsRun]
    population: BatchStatsRun
    train_batch: int

    @property
    def reference(self) -> int:
        """The training batch size if swept, else the smallest size."""
        return self.train_batch if self.train_batch in self.sizes else min(self.sizes)

    @property
    def largest(self) -> int:
        return max(self.sizes)


def eval_batch_sweep(setup: Setup, sizes: list[int]) -> EvalBatchSweep:
    """The chapter's BatchNorm networks evaluated at every batch size in ``sizes``."""
    bn = setup.cnn("batch")
    runs = {b: batchstats.localize(setup, bn, b, "minibatch") for b in sizes}
    pop = batchstats.localize(setup, bn, setup.eval.batch_size, "population")
    return EvalBatchSweep(sorted(sizes), runs, pop, setup.train.batch_size)
