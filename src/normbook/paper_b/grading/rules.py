"""The rules paper B's claims are graded by, fixed before looking at the numbers: the
per-seed contrasts (mean over all conv layers, over the deeper half, the layer where k*
settles), the signed effect and its test against a smallest effect of interest, and the
conditions a verdict needs (every family learned; a refuted difference has stopped moving).
Each chapter's ``claims`` module applies them to its results.

The unit of inference is the seed. The BN and the no-BN model of one seed start from the same
initial weights and see the same images in the same minibatch order
(:func:`.pairing.seed_pairing` checks it), so each seed gives one paired difference. Every claim
is one pre-declared test of one pre-declared contrast per seed (the mean over all conv layers,
the mean over the deeper half, the last layer, or the layer where k* settles): the effect,
signed so that a positive value goes the claim's way and, for Davies-Bouldin indices, relative
to the no-BN value, is tested against the claim's smallest effect of interest (:mod:`.sesoi`)
by a one-sample t test over seeds (:func:`normbook.grading.claims.mean_test`), and graded by
:func:`normbook.grading.verdicts.decide`. A claim with several parts (datasets, learning rates,
thresholds) grades each part and combines them (:func:`normbook.grading.verdicts.decide_parts`):
every part reproduced, *reproduced*; some, *partly reproduced*, naming which. Layers are never
counted as if they were independent: per-layer differences are description only.

Before a claim is graded, every network family it compares must have learned (:func:`learned`:
test accuracy at least twice chance in every seed), and *refuted* needs a difference that has
stopped moving through training (:func:`moving`). A network that early stopping ended is
finished: the book trains it no further, so its difference has stopped by definition. Only
where the epoch cap cut some compared network is the difference read at the kept states of
:mod:`normbook.paper_b.cached.analysis`, and may then still be moving.

Inputs are per-seed arrays, shape [seeds] or [seeds, layers], BN and no BN in the same seed
order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from normbook.grading.claims import (
    ClaimTest,
    Rise,
    Sesoi,
    finished,
    may_rise,
    mean_test,
    rank_shift_test,
)
from normbook.grading.verdicts import Control
from normbook.pages.fmt import join
from normbook.paper_b import paper_values
from normbook.paper_b.cached.analysis import TrainingCurves
from normbook.paper_b.grading.sesoi import ACCURACY, DBI, LEARNED_ACCURACY, SETTLE
from normbook.paper_b.runs.classify import DATASETS, Models, Variant

DATASET_NAMES = {"mnist": "MNIST", "cifar10": "CIFAR-10"}


# ----------------------------------------------------------------------------- contrasts


def layer_mean(values) -> np.ndarray:
    """Contrast "the layers": per seed, the mean over all conv layers ([seeds, layers] ->
    [seeds])."""
    return np.asarray(values, float).mean(axis=-1)


def deeper_half(values) -> np.ndarray:
    """Contrast "deeper layers" (the paper's phrase): per seed, the mean over the deeper half
    of the conv layers, the last ``n - n // 2`` of ``n`` (MNIST: conv3-4 of 4; VGG-16:
    conv7-13 of 13). [seeds, layers] -> [seeds]."""
    v = np.asarray(values, float)
    return v[..., v.shape[-1] // 2 :].mean(axis=-1)


def _deeper_names(n_layers: int) -> str:
    """The layers ``deeper_half`` averages, as text: ``"conv3–conv4"``."""
    return f"conv{n_layers // 2 + 1}–conv{n_layers}"


def settling_layer(
    k_star, target: int = paper_values.N_CLASSES, tol: int = paper_values.K_STAR_TOLERANCE
) -> int:
    """Contrast "where k* reaches the classes", per seed: the first conv layer (1-based) from
    which k* stays within ``tol`` of ``target`` up to the last layer; ``len(k_star) + 1`` if
    the last layer itself is off target. k_star: [layers]."""
    ok = np.abs(np.asarray(k_star) - target) <= tol
    first = len(ok) + 1
    for i in range(len(ok) - 1, -1, -1):
        if not ok[i]:
            break
        first = i + 1
    return first


def settling_layers(k_star) -> np.ndarray:
    """``settling_layer`` of every seed ([seeds, layers] -> [seeds])."""
    return np.array([settling_layer(k) for k in np.asarray(k_star)], dtype=float)


# ----------------------------------------------------------------------------- rules


def signed(bn, nobn, expect: str, relative: bool = False) -> np.ndarray:
    """Per seed, the effect signed the claim's way: BN - no BN when the claim is that BN is
    "higher", no BN - BN when "lower"; ``relative``: over the no-BN value (for indices
    without a natural unit)."""
    bn, nobn = np.asarray(bn, float), np.asarray(nobn, float)
    if bn.shape != nobn.shape or bn.ndim > 2:
        raise ValueError(f"need BN and no-BN values of one shape, got {bn.shape}, {nobn.shape}")
    if expect not in ("higher", "lower"):
        raise ValueError(f"expect must be 'lower' or 'higher', got {expect!r}")
    d = bn - nobn if expect == "higher" else nobn - bn
    return d / np.abs(nobn) if relative else d


def direction(bn, nobn, expect: str, what: str, sesoi: Sesoi,
              never: float | None = None) -> ClaimTest:  # fmt: skip
    """The one test behind every direction claim: per seed, the effect ``signed`` the claim's
    way (relative for Davies-Bouldin indices, ``sesoi`` is :data:`.sesoi.DBI`), a t test over
    seeds against the SESOI; for the settling layer (``sesoi`` is :data:`.sesoi.SETTLE`), an
    ordinal outcome whose "never" has no size, a rank test of the shift
    (:func:`rank_shift_test`, censored at ``never``: the layer count + 1 that
    :func:`settling_layer` gives a network whose k* never settles)."""
    bn = np.asarray(bn, float)
    if bn.ndim != 1:
        raise ValueError(f"need one value per seed for BN and no BN, got {bn.shape}")
    way = "BN − no BN" if expect == "higher" else "no BN − BN"
    if sesoi is SETTLE:
        x, y = (
            (bn, np.asarray(nobn, float)) if expect == "higher" else (np.asarray(nobn, float), bn)
        )
        return rank_shift_test(x, y, sesoi.value, null=f"{what}: {way}", never=never)
    d = signed(bn, nobn, expect, relative=sesoi is DBI)
    return mean_test(d, sesoi.value, null=f"{what}: {way}, same seeds", what="paired t test")


def learned(accuracy: dict[Variant, np.ndarray], variants, label: str = "") -> tuple[Control, ...]:
    """Each compared family's positive control: test accuracy at least ``LEARNED_ACCURACY``
    (twice chance) in every seed."""
    out = []
    for v in variants:
        acc = np.asarray(accuracy[v], float)
        out.append(Control(
            f"{DATASET_NAMES[v[0]]} {'BN' if v[1] else 'no BN'}{label}",
            f"learned: test accuracy ≥ {LEARNED_ACCURACY:.0%} in every seed",
            bool(np.all(acc >= LEARNED_ACCURACY)),
            f"test accuracy {join(acc, '.1%')}",
        ))  # fmt: skip
    return tuple(out)


def both(dataset: str) -> list[Variant]:
    return [Variant(dataset, True), Variant(dataset, False)]


def compared(models: Models, dataset: str) -> list:
    """The networks a BN-vs-no-BN row of ``dataset`` compares: both variants, every seed."""
    return [t for v in both(dataset) for t in models.trained[v]]


def moving(curves: TrainingCurves | None, dataset: str, expect: str, contrast,
           sesoi: Sesoi, *, nets) -> Rise | None:  # fmt: skip
    """Whether the BN-vs-no-BN effect (``signed``, per seed, of ``contrast`` over layers) may
    still be moving the claim's way at the end of training: only where the epoch cap cut
    some of the compared networks (``nets``: their :class:`TrainedModel` objects,
    :func:`normbook.grading.claims.finished`), and then when its gain over the last half of the
    epoch budget may reach half the SESOI (:func:`normbook.grading.claims.may_rise`). None
    without kept states where the cap cut any."""
    rise = None
    if curves is not None:
        bn, nobn = (np.asarray(curves.values[dataset, b], float) for b in (True, False))
        effect = np.array([signed(contrast(bn[k]), contrast(nobn[k]), expect, sesoi is DBI)
                           for k in range(len(curves.fractions))])  # fmt: skip
        rise = may_rise(effect, curves.fractions, sesoi.flat_margin)
    return finished(rise, [t.capped for t in nets], sesoi.flat_margin)


def cut_by_cap(nets, margin: float) -> Rise:
    """For a quantity with no kept states to read (Table 1's accuracies): finished networks
    have stopped moving; where the cap cut any, it may still be (and the row says how many)."""
    capped = [t.capped for t in nets]
    none = ClaimTest(np.nan, np.nan, np.nan, np.nan, np.nan, 0, "no late gain measured", "")
    return Rise(any(capped), none, margin, sum(capped), len(capped))


def moving_along(runs, effect, sesoi: Sesoi, *, nets) -> Rise | None:
    """:func:`moving` for any analysis at the kept states (``runs``: an
    :class:`.analysis.Along`, or a list of per-state results ending with the kept models,
    with ``.fractions``): ``effect(result)`` is the per-seed effect signed the claim's way;
    ``nets``: the networks the effect compares."""
    rise = None
    if runs is not None:
        values = np.array([np.asarray(effect(r), float) for r in runs.results])
        rise = may_rise(values, runs.fractions, sesoi.flat_margin)
    return finished(rise, [t.capped for t in nets], sesoi.flat_margin)


def val_acc_at(t, frac: float) -> float:
    """A run's validation accuracy at ``frac`` of its epoch budget: at the last evaluation at
    or before it, or its kept weights' once the run has ended (a finished network stays as it
    was kept); NaN before the first evaluation."""
    c, epoch = t.curves, frac * t.cfg.max_epochs
    if epoch >= t.stopped_epoch:
        return t.kept_val_acc
    seen = np.flatnonzero(c["epoch"] <= epoch + 1e-9)
    return float(c["val_acc"][seen[-1]]) if seen.size else np.nan


def accuracy_curve(models: Models, dataset: str) -> tuple[np.ndarray, np.ndarray] | None:
    """BN - no BN validation accuracy per seed at the kept states' epochs and at the kept
    model, (fractions, [K, seeds]); None when no states were kept."""
    cfg = models.trained[dataset, True][0].cfg
    if not cfg.checkpoints:
        return None
    at = val_acc_at
    rows = []
    for frac in cfg.checkpoints:
        rows.append(
            [
                at(b, frac) - at(n, frac)
                for b, n in zip(models.trained[dataset, True], models.trained[dataset, False])
            ]
        )
    rows.append(
        [
            b.kept_val_acc - n.kept_val_acc
            for b, n in zip(models.trained[dataset, True], models.trained[dataset, False])
        ]
    )
    return np.array([*cfg.checkpoints, 1.0]), np.array(rows)  # fmt: skip


def accuracy_moving(models: Models, dataset: str) -> Rise | None:
    """:func:`moving` for the accuracy gain, on validation accuracy through training."""
    curve = accuracy_curve(models, dataset)
    rise = None if curve is None else may_rise(curve[1], curve[0], ACCURACY.flat_margin)
    return finished(rise, [t.capped for t in compared(models, dataset)], ACCURACY.flat_margin)


def settling_test(bn_k, nobn_k, dataset: str) -> ClaimTest:
    """k* reaches the number of classes (10 ± 2) in an earlier layer with BN, on one dataset:
    the per-seed ``settling_layer``, no BN - BN, against :data:`.sesoi.SETTLE`."""
    return direction(
        settling_layers(bn_k), settling_layers(nobn_k), "lower",
        f"{DATASET_NAMES[dataset]} layer where k* settles at {paper_values.N_CLASSES} ± "
        f"{paper_values.K_STAR_TOLERANCE}", SETTLE, never=np.shape(bn_k)[-1] + 1,
    )  # fmt: skip


# ----------------------------------------------------------------------------- evidence


@dataclass(frozen=True)
class Contrast:
    """One metric on one dataset, BN vs no BN, arrays [seeds, layers] in the same seed
    order."""

    bn: np.ndarray
    nobn: np.ndarray

    @classmethod
    def of(cls, values: dict[Variant, np.ndarray], dataset: str) -> Contrast:
        bn, nobn = (np.asarray(values[dataset, bn], float) for bn in (True, False))
        return cls(bn, nobn)

    @classmethod
    def per_dataset(cls, values: dict[Variant, np.ndarray]) -> dict[str, Contrast]:
        return {ds: cls.of(values, ds) for ds in DATASETS}

    @property
    def n_layers(self) -> int:
        return self.bn.shape[1]

    @property
    def lower(self) -> np.ndarray:
        """Per layer (description only): is BN's mean over seeds lower?"""
        return self.bn.mean(axis=0) < self.nobn.mean(axis=0)

    @property
    def deeper_lower(self) -> np.ndarray:
        """``lower`` for the deeper half of the layers (description only)."""
        return self.lower[self.n_layers // 2 :]

    @property
    def mean_bn(self) -> float:
        return float(self.bn.mean())

    @property
    def mean_nobn(self) -> float:
        return float(self.nobn.mean())

    @property
    def diff(self) -> float:
        """BN - no BN, mean over seeds and layers."""
        return float(self.bn.mean() - self.nobn.mean())

    @property
    def last(self) -> tuple[float, float]:
        """Mean over seeds at the last layer: (BN, no BN)."""
        return float(self.bn[:, -1].mean()), float(self.nobn[:, -1].mean())

    def per_seed(self, contrast: str) -> tuple[np.ndarray, np.ndarray, str]:
        """(BN, no BN) per seed of ``contrast`` ("layers": ``layer_mean``, "deeper":
        ``deeper_half``), and where it is taken, in words."""
        fn, where = {
            "layers": (layer_mean, "mean over all conv layers"),
            "deeper": (deeper_half, f"mean over {_deeper_names(self.n_layers)}"),
        }[contrast]
        return fn(self.bn), fn(self.nobn), where

    def test(self, contrast: str, expect: str, what: str, sesoi: Sesoi) -> ClaimTest:
        """:func:`direction` of this metric's per-seed ``contrast``."""
        bn, nobn, where = self.per_seed(contrast)
        return direction(bn, nobn, expect, f"{what}, {where}", sesoi)
