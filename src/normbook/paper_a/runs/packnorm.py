"""PackNorm (paper A, Section 3.2 / Fig. 3; our reconstruction, stated on the Methods page).

Two sequences ("paths" A and B) run through the *same* CNN. At every normalization layer
PackNorm concatenates the two paths' activations along space, normalizes them jointly
(InstanceNorm: one mean and variance per channel over both paths), and splits them back.
Nothing else couples the paths, so whatever path A learns about path B travels through the
normalization statistics.

Task: path A gets ``a = z[0:l']`` of a noise sequence ``z`` of length ``2l' - o``; path B gets
either ``b = z[l'-o : 2l'-o]`` (its first ``o`` values are ``a``'s last ``o``) or an independent
noise sequence. A head on path A's features must say which. With ``o = 0`` both cases are the
same distribution, so no network can beat chance.

Every (overlap, seed) pair is one model; all of them are trained side by side in one stacked
network (grouped convolutions, per-model normalization), each with its own initialization
and data stream, so a model trained in a stack is the model trained alone.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy import stats as sps

from normbook.grading import stats
from normbook.paper_a.cached import cache_keys as steps
from normbook.paper_a.cached import stacking
from normbook.paper_a.cached.packnet import (
    PackConfig,
    PackTrainConfig,
    StackedPackNet,
    correct_counts,
    train_pack,
)
from normbook.paper_a.cached.training import late_fraction, model_entries, model_states
from normbook.paper_a.runs.localization import late_step
from normbook.runtime import cache
from normbook.runtime.devices import resolve_device


def trained(
    cfg: PackConfig,
    tc: PackTrainConfig,
    overlaps: list[int],
    seeds: list[int],
    at_step: int | None = None,
):
    """The stacked net of every (overlap, seed) pair, overlap-major (``at_step``: the states
    kept at that step, one of ``tc.checkpoint_steps``, instead of the final ones).

    Each model is cached on its own; the missing ones are trained together in one stack.
    Returns (net, model overlaps, loss history (steps, M), cache hit per model, seconds spent
    training).
    """
    if at_step is not None and at_step not in tc.checkpoint_steps:
        raise ValueError(f"no state kept at step {at_step}; kept: {tc.checkpoint_steps}")
    pairs = [(int(o), int(s)) for o in overlaps for s in seeds]
    keys = [{"net": asdict(cfg), "train": asdict(tc), "overlap": o, "seed": s} for o, s in pairs]
    seconds = 0.0

    def train_missing(idx: list[int]):
        nonlocal seconds
        t0 = time.perf_counter()
        net, record = train_pack(cfg, tc, [pairs[i][0] for i in idx], [pairs[i][1] for i in idx])
        seconds = time.perf_counter() - t0
        yield from model_entries(net, record, idx)

    entries = steps.PACK_TRAIN.cached_each(keys, train_missing)
    states = model_states(entries, at_step)
    net = stacking.restack(StackedPackNet(cfg, [s for _, s in pairs]), states)
    return (
        net,
        [o for o, _ in pairs],
        np.stack([e["loss"] for e in entries], axis=1),
        np.array([e.hit for e in entries]),
        seconds,
    )


@dataclass(frozen=True)
class PackSetup:
    """The PackNorm sweep of a chapter's parameters: nets, training, overlaps, test size."""

    net: PackConfig
    control: PackConfig  # per-path InstanceNorm: no channel between the paths
    train: PackTrainConfig
    overlaps: list[int]
    control_overlaps: list[int]
    seeds: list[int]
    n_test: int
    transition_level: float

    @property
    def path_len(self) -> int:
        return self.train.path_len

    @property
    def radius(self) -> int:
        return self.net.receptive_radius

    @classmethod
    def from_params(cls, params) -> PackSetup:
        """From the chapter's ``pack_*`` parameters; ``pack_len = 0`` means l' = 2R + 1."""
        net = PackConfig(
            depth=params.pack_depth,
            width=params.pack_width,
            kernel=params.pack_kernel,
            coupling="pack",
            head=params.pack_head,
        )
        path_len = params.pack_len or 2 * net.receptive_radius + 1
        # one kept state: the only one a late gain reads (the last curve fraction by half the
        # budget), so that the transition's claim can tell whether it was still moving
        return cls(
            net=net,
            control=PackConfig(**{**asdict(net), "coupling": "separate"}),
            train=PackTrainConfig(
                path_len=path_len,
                steps=params.pack_steps,
                batch_size=params.pack_batch_size,
                lr=params.pack_lr,
                device=resolve_device(params.device),
                checkpoints=late_fraction(params.curve_fractions),
            ),
            overlaps=overlap_grid(path_len, params.overlap_fracs),
            control_overlaps=overlap_grid(path_len, params.control_fracs),
            seeds=list(params.pack_seeds),
            n_test=params.n_test,
            transition_level=params.transition_level,
        )


@dataclass
class Accuracy:
    """Test accuracy of one coupling's models: arrays (n_overlaps, n_seeds)."""

    overlaps: list[int]
    seeds: list[int]
    correct: np.ndarray
    n_test: int
    loss: np.ndarray = field(repr=False)  # (steps, n_overlaps, n_seeds)
    train_cache_hits: list[bool] = field(default_factory=list)
    train_seconds: float = 0.0
    at_step: int | None = None  # the kept state tested (None: the trained models)

    @property
    def acc(self) -> np.ndarray:
        return self.correct / self.n_test

    @property
    def ci(self) -> tuple[np.ndarray, np.ndarray]:
        """Wilson 95 % interval per model."""
        return stats.wilson(self.correct, self.n_test)

    @property
    def pooled_acc(self) -> np.ndarray:
        """Accuracy over all seeds' test pairs, per overlap."""
        return self.correct.sum(axis=1) / (self.n_test * len(self.seeds))

    @property
    def pooled_ci(self) -> tuple[np.ndarray, np.ndarray]:
        return stats.wilson(self.correct.sum(axis=1), self.n_test * len(self.seeds))

    def chance_pvalues(self, row: int | None = None) -> list[float]:
        """Exact binomial p-values against 1/2, for one overlap (row) or every model."""
        counts = self.correct[row] if row is not None else self.correct.ravel()
        return [stats.chance_pvalue(k, self.n_test) for k in counts]


@dataclass
class PackResult:
    """Fig. 3: PackNorm and control accuracies, and the statistics the verdicts use."""

    setup: PackSetup
    pack: Accuracy
    control: Accuracy

    @property
    def p_zero(self) -> list[float]:
        """Binomial p-values at o = 0 (empty when the grid has no o = 0)."""
        return self.pack.chance_pvalues(0) if self.pack.overlaps[0] == 0 else []

    @property
    def spearman(self) -> tuple[float, float]:
        """Rank correlation of accuracy with the overlap, over every model."""
        o = np.repeat(self.pack.overlaps, len(self.pack.seeds))
        res = sps.spearmanr(o, self.pack.acc.ravel())
        return float(res.statistic), float(res.pvalue)

    @property
    def transition(self) -> float:
        """Overlap where the mean accuracy over seeds first reaches the transition level."""
        return transition_overlap(
            self.pack.overlaps, self.pack.acc.mean(axis=1), self.setup.transition_level
        )

    @property
    def transition_fraction(self) -> float:
        """The transition as a fraction of the path length (NaN: no transition)."""
        return self.transition / self.setup.path_len

    @property
    def transition_per_seed(self) -> list[float]:
        return transitions(self.pack, self.setup.transition_level)

    @property
    def grid_step(self) -> float:
        """The widest gap of the overlap grid, as a fraction of l'."""
        o = self.pack.overlaps
        return float(np.max(np.diff(o))) / self.setup.path_len if len(o) > 1 else 1.0


def accuracy(
    cfg: PackConfig,
    tc: PackTrainConfig,
    overlaps: list[int],
    seeds: list[int],
    n_test: int,
    at_step: int | None = None,
) -> Accuracy:
    """Train (or load) every (overlap, seed) model and count correct decisions on ``n_test``
    fresh pairs each (cached); ``at_step``: of the states kept at that step."""
    net, model_overlaps, losses, hits, seconds = trained(cfg, tc, overlaps, seeds, at_step)

    def compute():
        counts = correct_counts(net.to(tc.device), tc.path_len, model_overlaps, n_test)
        return cache.Entry({"correct": counts.reshape(len(overlaps), len(seeds))})

    config = {
        "net": asdict(cfg),
        "train": asdict(tc),
        "overlaps": [int(o) for o in overlaps],
        "seeds": [int(s) for s in seeds],
        "n_test": int(n_test),
        "at_step": at_step,
    }
    entry = steps.PACK_EVAL.cached(config, compute)
    return Accuracy(
        overlaps=list(overlaps),
        seeds=list(seeds),
        correct=entry["correct"],
        n_test=int(n_test),
        loss=losses.reshape(tc.steps, len(overlaps), len(seeds)),
        train_cache_hits=hits.tolist(),
        train_seconds=seconds,
        at_step=at_step,
    )


def overlap_sweep(setup: PackSetup) -> PackResult:
    """Fig. 3's sweep: PackNorm at every overlap, the control at its overlaps."""
    return PackResult(
        setup=setup,
        pack=accuracy(setup.net, setup.train, setup.overlaps, setup.seeds, setup.n_test),
        control=accuracy(
            setup.control, setup.train, setup.control_overlaps, setup.seeds, setup.n_test
        ),
    )


def late_accuracy(setup: PackSetup) -> Accuracy | None:
    """PackNorm's sweep (not the control's) at the last state kept by half the budget, tested
    as the trained models are (same pairs): with the trained sweep, all a late gain reads.
    None when no state was kept by then."""
    at = late_step(setup.train)
    if at is None:
        return None
    return accuracy(setup.net, setup.train, setup.overlaps, setup.seeds, setup.n_test, at)


# ----------------------------------------------------------------------------- statistics


def transitions(acc: Accuracy, level: float) -> list[float]:
    """Each seed's transition overlap (:func:`transition_overlap`) in a sweep."""
    return [transition_overlap(acc.overlaps, acc.acc[:, j], level) for j in range(len(acc.seeds))]


def transition_overlap(overlaps, accuracy, level: float = 0.75) -> float:
    """The overlap at which accuracy first reaches ``level`` (linear interpolation between
    grid points); NaN when it never does, the first overlap when it starts above."""
    o = np.asarray(overlaps, float)
    acc = np.asarray(accuracy, float)
    above = np.flatnonzero(acc >= level)
    if above.size == 0:
        return float("nan")
    k = int(above[0])
    if k == 0:
        return float(o[0])
    o0, o1, a0, a1 = o[k - 1], o[k], acc[k - 1], acc[k]
    return float(o0 + (level - a0) / (a1 - a0) * (o1 - o0))


def overlap_grid(path_len: int, fractions: list[float]) -> list[int]:
    """Overlaps o = round(f * l') for the given fractions of the path length, sorted, unique."""
    return sorted({int(round(f * path_len)) for f in fractions})
