"""Verdict rules for paper B's claims, fixed before looking at the numbers, the checks that
hold by construction, and the ledger of each chapter (B1-B3) built from its typed results.

The unit of inference is the seed. The BN and the no-BN model of one seed start from the same
initial weights and see the same images in the same minibatch order (:func:`seed_pairing`
checks it), so each seed gives one paired difference. Every claim is ONE pre-declared test:
an exact one-sided paired sign-flip test over seeds (:func:`normbook.core.claims.paired_signflip`)
of one pre-declared contrast per seed (the mean over all conv layers, the mean over the deeper
half, the last layer, or the layer where k* settles), at level ``ALPHA``. The effect is the
mean paired difference, signed so that a positive value goes the claim's way (no BN - BN for
a claim that BN lowers a quantity), with its Student t interval at CLAIM_CONFIDENCE. A claim
with several parts is an intersection-union test (:func:`normbook.core.claims.worst_of`):
every part must be significant, and its p-value is the largest. Layers are never counted as if
they were independent: per-layer differences are description only. Grades follow
:func:`normbook.core.verdicts.grade_test`: with fewer than 5 seeds a one-sided test cannot
reach ``ALPHA`` (its smallest p is 2^-seeds), so the verdict is *inconclusive*, never
*reproduced*.

Inputs are per-seed arrays, shape [seeds] or [seeds, layers], BN and no BN in the same seed
order. Every rule returns its grade and its test (``Graded``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..core.claims import CLAIM_CONFIDENCE, ClaimTest, paired_signflip, t_interval, worst_of
from ..core.fmt import mean_sd, sci
from ..core.verdicts import (  # noqa: F401  (the vocabulary, re-exported for the chapters)
    INCONCLUSIVE,
    NOT,
    PARTLY,
    REPRODUCED,
    Check,
    Verdict,
    compare_with_paper,
    grade,
    grade_test,
)
from . import reported
from .analysis import Clusters, Sparsity
from .classify import DATASETS, Models, Variant, split_key

DATASET_NAMES = {"mnist": "MNIST", "cifar10": "CIFAR-10"}

Graded = tuple[str, ClaimTest]  # a rule's grade and the test it rests on


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
    k_star, target: int = reported.N_CLASSES, tol: int = reported.K_STAR_TOLERANCE
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


def paired_direction(bn, nobn, expect: str, what: str) -> ClaimTest:
    """The one test behind every direction claim: an exact one-sided paired sign-flip test
    over seeds that BN's per-seed contrast is ``expect`` ("lower" or "higher") than no BN's;
    the effect is signed the claim's way (no BN - BN for "lower", BN - no BN for "higher").
    Graded by ``grade_test``: significant at ALPHA -> reproduced; otherwise not reproduced,
    or inconclusive when the seeds cannot reach ALPHA (fewer than 5)."""
    bn, nobn = np.asarray(bn, float), np.asarray(nobn, float)
    if bn.ndim != 1 or bn.shape != nobn.shape:
        raise ValueError(f"need one value per seed for BN and no BN, got {bn.shape}, {nobn.shape}")
    if expect == "lower":
        return paired_signflip(nobn, bn, null=f"{what}: no BN − BN = 0", alternative="greater")
    if expect == "higher":
        return paired_signflip(bn, nobn, null=f"{what}: BN − no BN = 0", alternative="greater")
    raise ValueError(f"expect must be 'lower' or 'higher', got {expect!r}")


def _intersection(tests: list[ClaimTest]) -> ClaimTest:
    """``worst_of`` the tests, named as the intersection-union test it is."""
    test = worst_of(*tests)
    return replace(test, test=f"all of {len(tests)} tests (largest p): {test.test}")


def all_of(tests: list[ClaimTest]) -> Graded:
    """A claim made of several parts (datasets, or layers on either side of a boundary): an
    intersection-union test, reproduced only when every part is significant (p = the
    largest); otherwise not reproduced, or inconclusive when the seeds cannot reach ALPHA."""
    test = _intersection(tests)
    return grade_test(test), test


def accuracy_gain(bn, nobn) -> Graded:
    """BN generalizes better: test accuracy per seed, BN - no BN > 0, by one
    ``paired_direction`` test, graded by ``grade_test``."""
    test = paired_direction(bn, nobn, "higher", "test accuracy")
    return grade_test(test), test


def band_position(values, paper: float, tol: float) -> str:
    """Where the CLAIM_CONFIDENCE t interval of our mean over seeds lies relative to the
    paper's value ± ``tol``: "inside", "outside" (disjoint) or "straddles" (an edge inside the
    interval, or no interval: one seed, or no spread between seeds)."""
    verdict = compare_with_paper([t_interval(values)], [(paper - tol, paper + tol)])
    return {REPRODUCED: "inside", NOT: "outside"}.get(verdict, "straddles")


def matches_paper(
    ours_bn,
    ours_nobn,
    paper_bn: float,
    paper_nobn: float,
    tol: float = reported.TABLE1_TOLERANCE,
    profile: str = "paper",
) -> Graded:
    """Table 1 (a comparison with the paper's values, not a hypothesis test): for BN and for
    no BN, the t interval of our mean test accuracy over seeds against the paper's value
    ± ``tol`` (``compare_with_paper``). Reproduced: both intervals inside; partly: one inside
    and one outside; not reproduced: both outside; inconclusive: an interval straddles its
    band's edge, or the run is not at the ``paper`` profile (smaller networks trained on fewer
    images cannot test the paper's absolute numbers)."""
    values = ((ours_bn, paper_bn), (ours_nobn, paper_nobn))
    verdict = compare_with_paper(
        [t_interval(v) for v, _ in values], [(p - tol, p + tol) for _, p in values]
    )
    if profile != "paper":
        verdict = INCONCLUSIVE
    dev, values, paper = max(((np.mean(v) - p, v, p) for v, p in values), key=lambda d: abs(d[0]))
    lo, hi = t_interval(values)
    test = ClaimTest(
        effect=float(dev),
        low=lo - paper,
        high=hi - paper,
        p=float("nan"),
        n=int(np.size(values)),
        test=f"comparison with the paper's value: {CLAIM_CONFIDENCE:.0%} t interval over "
        f"{np.size(values)} seeds vs ± {100 * tol:g} points (the larger deviation shown)",
        null=f"paper: {reported.percent(paper_bn)} (BN), {reported.percent(paper_nobn)} (no BN)",
        min_p=float("nan"),
    )
    return verdict, test


def no_consistent_signature(
    mnist_less: ClaimTest, cifar_more: ClaimTest, bn_better: list[ClaimTest]
) -> Graded:
    """The paper's negative sparsity claim: BN less sparse on MNIST AND more sparse on CIFAR-10
    (an intersection-union test of the two one-sided paired sign-flip tests of the layer-mean
    sparsity; the test shown), while BN is more accurate on both datasets (the claim's full
    extent, two more paired tests). Reproduced: the directions and both accuracy gains are
    significant; partly: the directions only; otherwise not reproduced (or inconclusive when
    the seeds cannot reach ALPHA)."""
    directions = _intersection([mnist_less, cifar_more])
    accuracy = _intersection(bn_better)
    return grade_test(directions, strong=accuracy.significant()), directions


def settles_earlier(bn_k, nobn_k, dataset: str) -> ClaimTest:
    """k* reaches the number of classes (10 ± 2) in an earlier layer with BN, on one dataset:
    the per-seed ``settling_layer``, no BN - BN > 0, by ``paired_direction``. The
    claim over both datasets is ``all_of`` the two."""
    return paired_direction(
        settling_layers(bn_k),
        settling_layers(nobn_k),
        "lower",
        f"{DATASET_NAMES[dataset]} layer where k* settles at "
        f"{reported.N_CLASSES} ± {reported.K_STAR_TOLERANCE}",
    )


def better_only_at_last(bn, nobn) -> Graded:
    """MNIST's mixed DBI(k*) result, BN worse except at the last layer: an
    intersection-union test of (mean over every layer but the last: BN - no BN > 0) and
    (last layer: no BN - BN > 0), each a one-sided paired sign-flip test over seeds.
    Arrays [seeds, layers]."""
    bn, nobn = np.asarray(bn, float), np.asarray(nobn, float)
    n = bn.shape[1]
    return all_of(
        [
            paired_direction(
                layer_mean(bn[:, :-1]), layer_mean(nobn[:, :-1]), "higher",
                f"DBI(k*), mean over conv1–conv{n - 1}",
            ),
            paired_direction(bn[:, -1], nobn[:, -1], "lower", f"DBI(k*), conv{n}"),
        ]
    )  # fmt: skip


# ----------------------------------------------------------------------------- checks


def _max_init_difference(bn_cfg, nobn_cfg, seed: int) -> tuple[float, int, int]:
    """The largest absolute BN - no BN difference over the initial tensors both models have,
    how many they share, and how many the no-BN model has."""
    a, b = bn_cfg.build(seed).state_dict(), nobn_cfg.build(seed).state_dict()
    shared = [k for k in b if k in a and a[k].shape == b[k].shape]
    worst = max((float((a[k] - b[k]).abs().max()) for k in shared), default=float("inf"))
    return worst, len(shared), len(b)


def seed_pairing(models: Models) -> list[Check]:
    """Checks that hold by construction, per dataset: the BN and no-BN model of every seed
    are built with identical conv and linear weights (BatchNorm draws no random numbers),
    and they train on the same images in the same minibatch order (same split, minibatch
    size and seed; the order comes from the seed's "order" stream alone), in the same seed
    order, so each seed is one paired difference."""
    checks = []
    for ds in DATASETS:
        bn, nobn = models.trained[ds, True], models.trained[ds, False]
        seeds = [t.seed for t in bn]
        same_seeds = seeds == [t.seed for t in nobn]
        c_bn, c_no = bn[0].cfg, nobn[0].cfg
        inits = [_max_init_difference(c_bn, c_no, s) for s in seeds]
        worst = max(d for d, _, _ in inits)
        complete = all(shared == total for _, shared, total in inits)
        checks.append(
            Check(
                "B",
                f"{DATASET_NAMES[ds]}: the BN and no-BN model of each seed start from identical "
                "conv and linear weights",
                bool(same_seeds and complete and worst == 0.0),
                f"seeds {', '.join(map(str, seeds))}: largest absolute BN − no BN difference "
                f"{worst:g} over the {inits[0][2]} initial tensors of the no-BN model",
            )
        )
        same_split = split_key(c_bn) == split_key(c_no)
        checks.append(
            Check(
                "B",
                f"{DATASET_NAMES[ds]}: the BN and no-BN model of each seed train on the same "
                "images in the same minibatch order",
                bool(same_seeds and same_split and c_bn.batch_size == c_no.batch_size),
                f"same training subset ({c_bn.n_train:,} images, split seed {c_bn.split_seed}): "
                f"{'yes' if same_split else 'no'}; minibatch size {c_bn.batch_size} / "
                f"{c_no.batch_size}; same seeds in the same order: "
                f"{'yes' if same_seeds else 'no'}",
            )
        )
    return checks


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

    def test(self, contrast: str, expect: str, what: str) -> ClaimTest:
        """``paired_direction`` of this metric's per-seed ``contrast`` ("layers" for
        ``layer_mean``, "deeper" for ``deeper_half``)."""
        fn, where = {
            "layers": (layer_mean, "mean over all conv layers"),
            "deeper": (deeper_half, f"mean over {_deeper_names(self.n_layers)}"),
        }[contrast]
        return paired_direction(fn(self.bn), fn(self.nobn), expect, f"{what}, {where}")


def _seed_counts(bn, nobn, expect: str, spec: str = ".3f", word: str = "") -> str:
    """Evidence: both sides' mean ± sd over seeds and in how many seeds the claim's way holds."""
    bn, nobn = np.asarray(bn, float), np.asarray(nobn, float)
    way = bn < nobn if expect == "lower" else bn > nobn
    return (
        f"BN {mean_sd(bn, spec)}, no BN {mean_sd(nobn, spec)} (mean ± sd over seeds); "
        f"BN {word or expect} in {int(way.sum())} of {way.size} seeds"
    )


def _p(test: ClaimTest) -> str:
    return f"p = {test.p:.3g}"


# ----------------------------------------------------------------------------- ledgers


def b1_ledger(models: Models, profile: str) -> list[Verdict]:
    """Chapter B1: BN's accuracy advantage on both datasets, and Table 1's values."""
    acc = models.accuracy
    paper_bn, paper_nobn = (reported.TABLE1_ACCURACY["cifar10", bn] for bn in (True, False))
    ledger = []
    for ds, setting in (
        ("cifar10", f"VGG-16; Adam lr {sci(reported.LR['cifar10', True])} vs "
                    f"{sci(reported.LR['cifar10', False])}"),
        ("mnist", "standard CNN; same SGD lr"),
    ):  # fmt: skip
        verdict, test = accuracy_gain(acc[ds, True], acc[ds, False])
        ledger.append(
            Verdict(
                "B",
                f"BN models reach higher test accuracy than no-BN models on "
                f"{DATASET_NAMES[ds]} ({setting})",
                verdict,
                test,
                _seed_counts(acc[ds, True], acc[ds, False], "higher", ".2%"),
                unit="+.2%",
            )
        )
    verdict, test = matches_paper(
        acc["cifar10", True], acc["cifar10", False], paper_bn, paper_nobn, profile=profile
    )
    ours = ", ".join(
        f"{label} {np.mean(acc['cifar10', bn]):.2%} "
        f"[{t_interval(acc['cifar10', bn])[0]:.2%}, {t_interval(acc['cifar10', bn])[1]:.2%}]: "
        f"{band_position(acc['cifar10', bn], paper, reported.TABLE1_TOLERANCE)}"
        for label, bn, paper in (("BN", True, paper_bn), ("no BN", False, paper_nobn))
    )
    ledger.append(
        Verdict(
            "B",
            f"Table 1: CIFAR-10 test accuracy {reported.percent(paper_bn)} (BN) and "
            f"{reported.percent(paper_nobn)} (no BN)",
            verdict,
            test,
            f"ours, mean [{CLAIM_CONFIDENCE:.0%} CI] vs the paper's ± "
            f"{100 * reported.TABLE1_TOLERANCE:g} points: {ours}; profile `{profile}`"
            + ("" if profile == "paper" else " (the paper's absolute numbers need `paper`)"),
            unit="+.2%",
        )
    )
    return ledger


def b2_ledger(sparsity: Sparsity, accuracy: dict[Variant, np.ndarray]) -> list[Verdict]:
    """Chapter B2: the direction of BN's effect on layer sparsity (mean over layers) per
    dataset, and the paper's conclusion that there is no consistent sparsity signature."""
    layer = Contrast.per_dataset(sparsity.layer)
    mnist_less = layer["mnist"].test("layers", "lower", "MNIST layer sparsity")
    cifar_more = layer["cifar10"].test("layers", "higher", "CIFAR-10 layer sparsity")
    bn_better = [
        paired_direction(accuracy[ds, True], accuracy[ds, False], "higher",
                         f"{DATASET_NAMES[ds]} test accuracy")
        for ds in DATASETS
    ]  # fmt: skip
    mnist, cifar = layer["mnist"], layer["cifar10"]
    signature, signature_test = no_consistent_signature(mnist_less, cifar_more, bn_better)
    return [
        Verdict(
            "B",
            "MNIST: BN representations are less sparse than no-BN ones",
            grade_test(mnist_less),
            mnist_less,
            _seed_counts(layer_mean(mnist.bn), layer_mean(mnist.nobn), "lower"),
        ),
        Verdict(
            "B",
            "CIFAR-10: BN representations are more sparse than no-BN ones",
            grade_test(cifar_more),
            cifar_more,
            _seed_counts(layer_mean(cifar.bn), layer_mean(cifar.nobn), "higher"),
        ),
        Verdict(
            "B",
            "No consistent sparsity signature: BN moves sparsity in opposite "
            "directions on the two datasets yet generalizes better on both",
            signature,
            signature_test,
            f"MNIST less sparse with BN: {_p(mnist_less)}; CIFAR-10 more sparse: "
            f"{_p(cifar_more)}; BN more accurate: MNIST {_p(bn_better[0])}, "
            f"CIFAR-10 {_p(bn_better[1])}",
        ),
    ]


def b3_ledger(clusters: Clusters) -> list[Verdict]:
    """Chapter B3: class-based purity, the optimal-k trajectory, DBI(k*) on both datasets,
    and our check at a fixed k."""
    cls, dbi_k_star, dbi_fixed_k = (
        Contrast.per_dataset(values)
        for values in (clusters.class_dbi, clusters.dbi_k_star, clusters.dbi_fixed_k)
    )
    ledger = []
    for ds, c in cls.items():
        test = c.test("deeper", "lower", f"{DATASET_NAMES[ds]} class-based DBI")
        ledger.append(
            Verdict(
                "B",
                f"{DATASET_NAMES[ds]}: class-based clusters are purer with BN (lower "
                "DBI), especially in deeper layers",
                grade_test(test),
                test,
                _seed_counts(deeper_half(c.bn), deeper_half(c.nobn), "lower", ".2f"),
                unit=".2f",
            )
        )
    settle = {ds: settles_earlier(clusters.k_star[ds, True], clusters.k_star[ds, False], ds)
              for ds in DATASETS}  # fmt: skip
    verdict, test = all_of(list(settle.values()))
    ledger.append(
        Verdict(
            "B",
            "With BN, k* reaches the number of classes in earlier layers (both datasets)",
            verdict,
            test,
            "; ".join(
                f"{DATASET_NAMES[ds]} settling layer: "
                + _seed_counts(
                    *(settling_layers(clusters.k_star[ds, bn]) for bn in (True, False)),
                    "lower",
                    ".1f",
                    "earlier",
                )
                + f", {_p(t)}"
                for ds, t in settle.items()
            ),
            unit=".2f",
        )
    )
    cifar = dbi_k_star["cifar10"]
    test = cifar.test("deeper", "lower", "CIFAR-10 DBI(k*)")
    ledger.append(
        Verdict(
            "B",
            "CIFAR-10: DBI(k*) is lower with BN, especially in deeper layers",
            grade_test(test),
            test,
            _seed_counts(deeper_half(cifar.bn), deeper_half(cifar.nobn), "lower", ".2f"),
            unit=".2f",
        )
    )
    mnist = dbi_k_star["mnist"]
    verdict, test = better_only_at_last(mnist.bn, mnist.nobn)
    rest_higher = (layer_mean(mnist.bn[:, :-1]) > layer_mean(mnist.nobn[:, :-1])).sum()
    last_lower = (mnist.bn[:, -1] < mnist.nobn[:, -1]).sum()
    ledger.append(
        Verdict(
            "B",
            "MNIST: DBI(k*) is higher with BN except at the last layer",
            verdict,
            test,
            f"BN higher over the other layers in {rest_higher} of {len(mnist.bn)} seeds, "
            f"lower at the last layer in {last_lower} of {len(mnist.bn)}",
            unit=".2f",
        )
    )
    fixed = {
        ds: c.test("deeper", "lower", f"{DATASET_NAMES[ds]} DBI at k = {clusters.config.fixed_k}")
        for ds, c in dbi_fixed_k.items()
    }
    verdict, test = all_of(list(fixed.values()))
    ledger.append(
        Verdict(
            "B (our check)",
            f"At fixed k = {clusters.config.fixed_k}, k-means clusters are "
            "purer with BN in deeper layers, on both datasets (no selection on DBI)",
            verdict,
            test,
            "; ".join(
                f"{DATASET_NAMES[ds]}: no BN − BN {t.effect:+.2f} [{t.low:+.2f}, {t.high:+.2f}], "
                f"{_p(t)}"
                for ds, t in fixed.items()
            ),
            unit=".2f",
        )
    )
    return ledger


# ----------------------------------------------------------------------------- B4 rules


def _signed(values, expect: str) -> np.ndarray:
    """Per-seed values signed so that a positive value goes the claim's way."""
    v = np.asarray(values, float)
    if expect not in ("higher", "lower"):
        raise ValueError(f"expect must be 'lower' or 'higher', got {expect!r}")
    return v if expect == "higher" else -v


def bn_main_effect(bn_effect, expect: str, what: str) -> Graded:
    """BatchNorm itself moves a metric the paper's way: per seed, the BN main effect of the
    BN x learning-rate 2 x 2 (BN − no BN, averaged over both learning rates), signed the
    paper's way (``expect``: BN "higher" or "lower"), by an exact one-sided paired sign-flip
    test over seeds, graded by ``grade_test``: significant -> reproduced; otherwise not
    reproduced, or inconclusive when the seeds cannot reach ALPHA."""
    d = _signed(bn_effect, expect)
    test = paired_signflip(d, np.zeros_like(d), null=f"{what}: BN main effect = 0")
    return grade_test(test), test


def lr_confound(lr_effect, expect: str, what: str) -> Graded:
    """The critics' confound: the learning rate the paper gives BN, by itself (the lr main
    effect: paper's BN rate − the other, averaged over BN and no BN), moves a metric the way
    the paper attributes to BN (``expect``); exact one-sided paired sign-flip test over seeds,
    graded by ``grade_test``. *Reproduced* means the confound is real: part of the paper's
    contrast is the learning rate's."""
    d = _signed(lr_effect, expect)
    test = paired_signflip(d, np.zeros_like(d), null=f"{what}: learning-rate main effect = 0")
    return grade_test(test), test


def survives_thresholds(bn, nobn, expect: str, what: str, thresholds) -> Graded:
    """The BN / no-BN sparsity ordering does not depend on the zero threshold: at every
    relative threshold (arrays [seeds, thresholds], layer-mean sparsity), BN is ``expect``
    than no BN by ``paired_direction``; an intersection-union test (``all_of``): reproduced
    only when every threshold's test is significant, its p the largest."""
    bn, nobn = np.asarray(bn, float), np.asarray(nobn, float)
    return all_of(
        [
            paired_direction(bn[:, i], nobn[:, i], expect, f"{what} at t = {t:g}")
            for i, t in enumerate(thresholds)
        ]
    )


def fewer_edges_than_noise(share, noise_share: float, what: str) -> Graded:
    """k* says more about trained representations than about the selection rule: per seed, the
    share of (layer, variant) whose k* is an end of the searched range is lower than on
    isotropic Gaussian noise of the same shape (``noise_share``); one-sided exact paired
    sign-flip test of noise share − share > 0, graded by ``grade_test``."""
    s = np.asarray(share, float)
    test = paired_signflip(
        np.full_like(s, noise_share), s,
        null=f"{what}: k* at an end as often as on isotropic noise ({noise_share:.0%})",
    )  # fmt: skip
    return grade_test(test), test
