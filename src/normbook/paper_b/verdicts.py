"""Verdict rules for paper B's claims, fixed before looking at the numbers, and the ledger of
each chapter (B1-B3) built from its typed results.

Inputs are per-seed arrays, shape [seeds] or [seeds, layers]; comparisons use the mean over
seeds. Grades follow :mod:`normbook.core.verdicts`: REPRODUCED / PARTLY / NOT.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.fmt import count_of, mean_sd, sci
from ..core.verdicts import NOT, PARTLY, REPRODUCED, Verdict, grade
from . import reported
from .analysis import Clusters, Sparsity
from .classify import DATASETS, Models, Variant

DATASET_NAMES = {"mnist": "MNIST", "cifar10": "CIFAR-10"}


def layer_direction(bn: np.ndarray, nobn: np.ndarray, expect: str) -> np.ndarray:
    """Per layer: does the mean over seeds of BN differ from no BN in the expected direction
    (``expect`` = "lower" or "higher")? Arrays [seeds, layers] -> bool [layers]."""
    d = np.mean(bn, axis=0) - np.mean(nobn, axis=0)
    if expect == "lower":
        return d < 0
    if expect == "higher":
        return d > 0
    raise ValueError(f"expect must be 'lower' or 'higher', got {expect!r}")


def direction_grade(ok: np.ndarray) -> str:
    """All layers in the expected direction -> reproduced; a strict majority -> partly;
    otherwise not."""
    ok = np.asarray(ok, bool)
    if ok.all():
        return REPRODUCED
    return PARTLY if ok.sum() * 2 > ok.size else NOT


def deeper_half(per_layer: np.ndarray) -> np.ndarray:
    """The deeper half of the conv layers (the paper's "deeper layers"): the last
    ``n - n // 2`` of ``n`` layers."""
    n = len(per_layer)
    return per_layer[n // 2 :]


def accuracy_gain(bn: np.ndarray, nobn: np.ndarray) -> str:
    """BN generalizes better: every BN seed beats every no-BN seed -> reproduced; the mean
    is higher but the seeds overlap -> partly; otherwise not."""
    bn, nobn = np.asarray(bn, float), np.asarray(nobn, float)
    if bn.min() > nobn.max():
        return REPRODUCED
    return PARTLY if bn.mean() > nobn.mean() else NOT


def matches_paper(
    ours_bn: float,
    ours_nobn: float,
    paper_bn: float,
    paper_nobn: float,
    tol: float = reported.TABLE1_TOLERANCE,
) -> str:
    """Table 1: both mean accuracies within ``tol`` (absolute, 0.02 = 2 percentage points)
    of the paper's -> reproduced; otherwise the BN - no BN gap has the paper's sign and is
    within a factor of two of the paper's gap -> partly; otherwise not."""
    if abs(ours_bn - paper_bn) <= tol and abs(ours_nobn - paper_nobn) <= tol:
        return REPRODUCED
    gap, paper_gap = ours_bn - ours_nobn, paper_bn - paper_nobn
    if np.sign(gap) == np.sign(paper_gap) and 0.5 <= gap / paper_gap <= 2.0:
        return PARTLY
    return NOT


def majority_direction(bn: np.ndarray, nobn: np.ndarray) -> str:
    """ "lower" / "higher" when BN's mean over seeds is below / above no BN's in a strict
    majority of layers, else "mixed". Arrays [seeds, layers]."""
    low = layer_direction(bn, nobn, "lower")
    high = layer_direction(bn, nobn, "higher")
    if low.sum() * 2 > low.size:
        return "lower"
    if high.sum() * 2 > high.size:
        return "higher"
    return "mixed"


def no_consistent_signature(dir_a: str, dir_b: str, bn_better_on_both: bool) -> str:
    """The paper's negative sparsity claim. Reproduced: the two datasets have clear, opposite
    majority directions and BN is more accurate on both (the paper's evidence pattern);
    partly: the directions differ but not both clearly (one is "mixed"), or the accuracy
    condition fails; not: the same clear direction on both datasets (a consistent
    signature, which contradicts the claim)."""
    if dir_a == dir_b and dir_a != "mixed":
        return NOT
    if {dir_a, dir_b} == {"lower", "higher"} and bn_better_on_both:
        return REPRODUCED
    return PARTLY


def settling_layer(k_star: np.ndarray, target: int, tol: int) -> int:
    """First layer index (1-based) from which k* stays within ``tol`` of ``target`` up to the
    last layer; ``len(k_star) + 1`` if the last layer is off target. k_star: [layers]."""
    ok = np.abs(np.asarray(k_star) - target) <= tol
    n = len(ok)
    first = n + 1
    for i in range(n - 1, -1, -1):
        if not ok[i]:
            break
        first = i + 1
    return first


def settles_earlier(
    bn_k: np.ndarray,
    nobn_k: np.ndarray,
    target: int = reported.N_CLASSES,
    tol: int = reported.K_STAR_TOLERANCE,
) -> tuple[bool, float, float]:
    """Mean settling layer over seeds, BN vs no BN ([seeds, layers] each), by default at the
    number of classes (10) within +-2. Returns (BN settles strictly earlier, BN mean, no-BN
    mean); "k* reaches the classes earlier" needs BN strictly earlier."""
    b = float(np.mean([settling_layer(k, target, tol) for k in bn_k]))
    n = float(np.mean([settling_layer(k, target, tol) for k in nobn_k]))
    return b < n, b, n


def better_only_at_last(bn_lower: np.ndarray) -> str:
    """MNIST's mixed DBI(k*) result: BN lower (better) at the last layer and higher in a
    strict majority of the other layers -> reproduced; only the last-layer part -> partly;
    BN not lower at the last layer -> not."""
    last_ok = bool(bn_lower[-1])
    rest_worse = int((~bn_lower[:-1]).sum()) * 2 > bn_lower[:-1].size
    return REPRODUCED if last_ok and rest_worse else PARTLY if last_ok else NOT


def deeper_lower_everywhere(deeper_lower: list[np.ndarray]) -> str:
    """Our fixed-k check over both datasets (bool [deeper layers] per dataset): reproduced
    when BN is lower in every deeper layer of every dataset, partly when it is lower in a
    strict majority of the deeper layers of some dataset, otherwise not."""
    return grade(
        all(direction_grade(d) == REPRODUCED for d in deeper_lower),
        any(d.sum() * 2 > d.size for d in deeper_lower),
    )


# ----------------------------------------------------------------------------- evidence


@dataclass(frozen=True)
class Contrast:
    """One metric on one dataset, BN vs no BN, arrays [seeds, layers]."""

    bn: np.ndarray
    nobn: np.ndarray

    @classmethod
    def of(cls, values: dict[Variant, np.ndarray], dataset: str) -> Contrast:
        return cls(np.asarray(values[dataset, True]), np.asarray(values[dataset, False]))

    @classmethod
    def per_dataset(cls, values: dict[Variant, np.ndarray]) -> dict[str, Contrast]:
        return {ds: cls.of(values, ds) for ds in DATASETS}

    @property
    def lower(self) -> np.ndarray:
        """Per layer: is BN's mean over seeds lower?"""
        return layer_direction(self.bn, self.nobn, "lower")

    @property
    def higher(self) -> np.ndarray:
        return layer_direction(self.bn, self.nobn, "higher")

    @property
    def deeper_lower(self) -> np.ndarray:
        return deeper_half(self.lower)

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

    @property
    def direction(self) -> str:
        return majority_direction(self.bn, self.nobn)

    @property
    def settling(self) -> tuple[bool, float, float]:
        """For k* arrays: :func:`settles_earlier` at the number of classes."""
        return settles_earlier(self.bn, self.nobn)


# ----------------------------------------------------------------------------- ledgers


def b1_ledger(models: Models, profile: str) -> list[Verdict]:
    """Chapter B1: BN's accuracy advantage on both datasets, and Table 1's values."""
    acc = models.accuracy
    paper_bn, paper_nobn = (reported.TABLE1_ACCURACY["cifar10", bn] for bn in (True, False))
    return [
        Verdict(
            "B",
            "BN models reach higher test accuracy than no-BN models on CIFAR-10 "
            f"(VGG-16; lr {sci(reported.LR['cifar10', True])} vs "
            f"{sci(reported.LR['cifar10', False])})",
            accuracy_gain(acc["cifar10", True], acc["cifar10", False]),
            f"BN {mean_sd(acc['cifar10', True], '.2%')}, no BN "
            f"{mean_sd(acc['cifar10', False], '.2%')}",
        ),
        Verdict(
            "B",
            "BN models reach higher test accuracy than no-BN models on MNIST "
            "(standard CNN; same SGD lr)",
            accuracy_gain(acc["mnist", True], acc["mnist", False]),
            f"BN {mean_sd(acc['mnist', True], '.2%')}, no BN {mean_sd(acc['mnist', False], '.2%')}",
        ),
        Verdict(
            "B",
            f"Table 1: CIFAR-10 test accuracy {reported.percent(paper_bn)} (BN) and "
            f"{reported.percent(paper_nobn)} (no BN)",
            matches_paper(
                acc["cifar10", True].mean(), acc["cifar10", False].mean(), paper_bn, paper_nobn
            ),
            f"ours {acc['cifar10', True].mean():.2%} / "
            f"{acc['cifar10', False].mean():.2%}, profile `{profile}`",
        ),
    ]


def b2_ledger(sparsity: Sparsity, accuracy: dict[Variant, np.ndarray]) -> list[Verdict]:
    """Chapter B2: the direction of BN's effect on layer sparsity per dataset, and the
    paper's conclusion that there is no consistent sparsity signature."""
    layer, channel = Contrast.per_dataset(sparsity.layer), Contrast.per_dataset(sparsity.channel)
    mnist, cifar = layer["mnist"], layer["cifar10"]
    bn_better = all(accuracy[ds, True].mean() > accuracy[ds, False].mean() for ds in DATASETS)
    return [
        Verdict(
            "B",
            "MNIST: BN representations are less sparse than no-BN ones",
            direction_grade(mnist.lower),
            f"BN lower in {count_of(mnist.lower, '/')} layers; mean difference {mnist.diff:+.3f} "
            f"(channel {channel['mnist'].diff:+.3f})",
        ),
        Verdict(
            "B",
            "CIFAR-10: BN representations are more sparse than no-BN ones",
            direction_grade(cifar.higher),
            f"BN higher in {count_of(cifar.higher, '/')} layers; mean difference {cifar.diff:+.3f} "
            f"(channel {channel['cifar10'].diff:+.3f})",
        ),
        Verdict(
            "B",
            "No consistent sparsity signature: BN moves sparsity in opposite "
            "directions on the two datasets yet generalizes better on both",
            no_consistent_signature(mnist.direction, cifar.direction, bn_better),
            f"BN sparsity vs no BN, majority of layers: MNIST {mnist.direction}, "
            f"CIFAR-10 {cifar.direction}; BN more accurate on both: "
            f"{'yes' if bn_better else 'no'}",
        ),
    ]


def b3_ledger(clusters: Clusters) -> list[Verdict]:
    """Chapter B3: class-based purity, the optimal-k trajectory, DBI(k*) on both datasets,
    and our check at a fixed k."""
    cls, dbi_k_star, dbi_fixed_k, k_star = (
        Contrast.per_dataset(values)
        for values in (
            clusters.class_dbi,
            clusters.dbi_k_star,
            clusters.dbi_fixed_k,
            clusters.k_star,
        )
    )
    settle = {ds: c.settling for ds, c in k_star.items()}
    n_settle = sum(ok for ok, _, _ in settle.values())
    mnist_lower = dbi_k_star["mnist"].lower
    return [
        *(
            Verdict(
                "B",
                f"{DATASET_NAMES[ds]}: class-based clusters are purer with BN (lower "
                "DBI), especially in deeper layers",
                direction_grade(c.deeper_lower),
                f"BN lower in {count_of(c.deeper_lower, '/')} deeper layers, "
                f"{count_of(c.lower, '/')} overall",
            )
            for ds, c in cls.items()
        ),
        Verdict(
            "B",
            "With BN, k* reaches the number of classes in earlier layers",
            grade(n_settle == len(DATASETS), n_settle >= 1),
            "; ".join(
                f"{ds}: settles at layer {b:.1f} (BN) vs {n:.1f} (no BN)"
                for ds, (_, b, n) in settle.items()
            ),
        ),
        Verdict(
            "B",
            "CIFAR-10: DBI(k*) is lower with BN, especially in deeper layers",
            direction_grade(dbi_k_star["cifar10"].deeper_lower),
            f"BN lower in {count_of(dbi_k_star['cifar10'].deeper_lower, '/')} deeper layers",
        ),
        Verdict(
            "B",
            "MNIST: DBI(k*) is higher with BN except at the last layer",
            better_only_at_last(mnist_lower),
            f"BN lower at the last layer: {'yes' if mnist_lower[-1] else 'no'}; "
            f"BN higher in {count_of(~mnist_lower[:-1], '/')} other layers",
        ),
        Verdict(
            "B (our check)",
            f"At fixed k = {clusters.config.fixed_k}, k-means clusters are "
            "purer with BN in deeper layers (no selection on DBI)",
            deeper_lower_everywhere([c.deeper_lower for c in dbi_fixed_k.values()]),
            "; ".join(
                f"{ds}: BN lower in {count_of(c.deeper_lower, '/')} deeper layers"
                for ds, c in dbi_fixed_k.items()
            ),
        ),
    ]
