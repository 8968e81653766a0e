"""Verdict rules for paper B's claims, fixed before looking at the numbers, the checks that
hold by construction, and the ledger of each chapter (B1-B3) built from its typed results.

The unit of inference is the seed. The BN and the no-BN model of one seed start from the same
initial weights and see the same images in the same minibatch order (:func:`seed_pairing`
checks it), so each seed gives one paired difference. Every claim is one pre-declared test of
one pre-declared contrast per seed (the mean over all conv layers, the mean over the deeper
half, the last layer, or the layer where k* settles): the effect, signed so that a positive
value goes the claim's way and, for Davies-Bouldin indices, relative to the no-BN value, is
tested against the claim's smallest effect of interest (:mod:`.sesoi`) by a one-sample t test
over seeds (:func:`normbook.grading.claims.mean_test`), and graded by
:func:`normbook.grading.verdicts.decide`. A claim with several parts (datasets, learning rates,
thresholds) grades each part and combines them (:func:`normbook.grading.verdicts.decide_parts`):
every part reproduced, *reproduced*; some, *partly reproduced*, naming which. Layers are never
counted as if they were independent: per-layer differences are description only.

Before a claim is graded, every network family it compares must have learned
(:func:`.rules.learned`: test accuracy at least twice chance in every seed), and *refuted* needs
a difference that has stopped moving through training (:func:`.rules.moving`, on the kept states
of :mod:`.analysis`). The rules themselves live in :mod:`.rules`.

Inputs are per-seed arrays, shape [seeds] or [seeds, layers], BN and no BN in the same seed
order.
"""

from __future__ import annotations

import numpy as np

from normbook.grading.claims import ClaimTest, inside_band
from normbook.grading.verdicts import (  # noqa: F401  (the vocabulary, re-exported for the chapters)
    NOT_SHOWN,
    NOT_TESTABLE,
    PARTLY,
    REFUTED,
    REPRODUCED,
    Check,
    Control,
    Grade,
    Verdict,
    decide,
    decide_parts,
    sesoi_phrase,
)
from normbook.pages.fmt import mean_sd, sci
from normbook.paper_b import paper_values as reported
from normbook.paper_b.cached.analysis import Clusters, Sparsity, TrainingCurves
from normbook.paper_b.grading.rules import (  # noqa: F401  (re-exported: the chapters read the rules through verdicts)
    DATASET_NAMES,
    Contrast,
    accuracy_curve,
    accuracy_moving,
    both,
    deeper_half,
    direction,
    layer_mean,
    learned,
    moving,
    moving_along,
    settling_layer,
    settling_layers,
    settling_test,
    signed,
    val_acc_at,
)
from normbook.paper_b.grading.sesoi import ACCURACY, DBI, SETTLE, SPARSITY
from normbook.paper_b.runs.classify import DATASETS, Models, split_key


def table1(acc, profile: str, rising: bool | None) -> tuple[Grade, ClaimTest, list]:
    """Table 1 (a comparison with the paper's values, not a hypothesis test): for BN and for
    no BN, the t interval of our mean test accuracy over seeds against the paper's value
    ± ``reported.TABLE1_TOLERANCE`` (:func:`normbook.grading.claims.inside_band`): each inside
    its band, reproduced; wholly outside, refuted, unless the accuracies may still be rising
    (``rising``: some network stopped at its epoch cap, not by the early-stopping rule). Not
    testable at any profile but ``paper``: smaller networks trained on fewer images cannot test
    the paper's absolute numbers."""
    tol, parts, tests = reported.TABLE1_TOLERANCE, [], []
    for bn, label in ((True, "BN"), (False, "no BN")):
        paper = reported.TABLE1_ACCURACY["cifar10", bn]
        null = f"paper: {reported.percent(paper)} ± {100 * tol:g} points"
        t = inside_band(acc["cifar10", bn], paper - tol, paper + tol, null=null)
        parts.append((label, decide(t, testable=profile == "paper", rising=rising)))
        tests.append(t)
    grade = decide_parts(parts)
    if profile != "paper":
        grade = Grade(NOT_TESTABLE, "the paper's absolute numbers need the `paper` profile")
    return grade, tests[0], parts


# ----------------------------------------------------------------------------- checks


def max_init_difference(bn_cfg, nobn_cfg, seed: int) -> tuple[float, int, int]:
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
        inits = [max_init_difference(c_bn, c_no, s) for s in seeds]
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


def seed_counts(bn, nobn, expect: str, spec: str = ".3f", word: str = "") -> str:
    """Evidence: both sides' mean ± sd over seeds and in how many seeds the claim's way holds."""
    bn, nobn = np.asarray(bn, float), np.asarray(nobn, float)
    way = bn < nobn if expect == "lower" else bn > nobn
    return (
        f"BN {mean_sd(bn, spec)}, no BN {mean_sd(nobn, spec)} (mean ± sd over seeds); "
        f"BN {word or expect} in {int(way.sum())} of {way.size} seeds"
    )


def _grades(parts: list[tuple[str, Grade]]) -> str:
    return "; ".join(f"{name}: {g.verdict}" for name, g in parts)


# ----------------------------------------------------------------------------- ledgers


def b1_ledger(models: Models, profile: str) -> list[Verdict]:
    """Chapter B1: BN's accuracy advantage on both datasets, and Table 1's values."""
    acc = models.accuracy
    ledger = []
    for ds, setting in (
        ("cifar10", f"VGG-16; Adam lr {sci(reported.LR['cifar10', True])} vs "
                    f"{sci(reported.LR['cifar10', False])}"),
        ("mnist", "standard CNN; same SGD lr"),
    ):  # fmt: skip
        test = direction(acc[ds, True], acc[ds, False], "higher",
                         f"{DATASET_NAMES[ds]} test accuracy", ACCURACY)  # fmt: skip
        controls = learned(acc, both(ds))
        ledger.append(
            Verdict(
                "B",
                f"BN models reach higher test accuracy than no-BN models on "
                f"{DATASET_NAMES[ds]} ({setting}), by at least {sesoi_phrase(ACCURACY, '+.2%')}",
                decide(test, controls, rising=accuracy_moving(models, ds)),
                test,
                ACCURACY,
                seed_counts(acc[ds, True], acc[ds, False], "higher", ".2%"),
                unit="+.2%",
                controls=controls,
                paper_says="BN models reach higher test accuracy than no-BN models (Table 1)",
            )
        )
    capped = not all(t.early_stopped for bn in (True, False) for t in models.trained["cifar10", bn])
    grade, test, parts = table1(acc, profile, rising=capped)
    paper_bn, paper_nobn = (reported.TABLE1_ACCURACY["cifar10", bn] for bn in (True, False))
    ours = ", ".join(f"{label} {np.mean(acc['cifar10', bn]):.2%}" for label, bn in
                     (("BN", True), ("no BN", False)))  # fmt: skip
    ledger.append(
        Verdict(
            "B",
            f"Table 1: CIFAR-10 test accuracy {reported.percent(paper_bn)} (BN) and "
            f"{reported.percent(paper_nobn)} (no BN)",
            grade,
            test,
            None,
            f"ours: {ours}; profile `{profile}`",
            unit=".2%",
            paper_says="Table 1",
        )
    )
    return ledger


def b2_ledger(sparsity: Sparsity, models: Models, curves: TrainingCurves | None) -> list[Verdict]:
    """Chapter B2: the direction of BN's effect on layer sparsity (mean over layers) per
    dataset. The paper's conclusion, no consistent sparsity signature, is these two rows
    together with chapter B1's accuracy rows (:func:`signature_reading`), not a row of its own
    (which would count the same tests twice)."""
    layer = Contrast.per_dataset(sparsity.layer)
    acc = models.accuracy
    rows, grades = [], {}
    for ds, expect, word in (("mnist", "lower", "less"), ("cifar10", "higher", "more")):
        c = layer[ds]
        test = c.test("layers", expect, f"{DATASET_NAMES[ds]} layer sparsity", SPARSITY)
        controls = learned(acc, both(ds))
        up = moving(curves, ds, expect, layer_mean, SPARSITY)
        grade = decide(test, controls, rising=up)
        grades[ds] = grade
        rows.append(Verdict(
            "B", f"{DATASET_NAMES[ds]}: BN representations are {word} sparse than no-BN ones "
            f"(layer sparsity, mean over conv layers), by at least {sesoi_phrase(SPARSITY)}",
            grade, test, SPARSITY,
            seed_counts(layer_mean(c.bn), layer_mean(c.nobn), expect), controls=controls,
            paper_says=f"{DATASET_NAMES[ds]}: BN representations are {word} sparse (no "
            "consistent sparsity signature across datasets)",
        ))  # fmt: skip
    return rows


def signature_reading(b2_rows: list[Verdict], b1_rows: list[Verdict]) -> str:
    """The paper's conclusion that sparsity has no consistent BN signature, read from chapter
    B2's two direction rows (MNIST less sparse, CIFAR-10 more sparse) and chapter B1's two
    accuracy rows (BN more accurate on CIFAR-10, on MNIST), as a sentence."""
    mnist, cifar = (r.verdict for r in b2_rows[:2])
    gains = [r.verdict for r in b1_rows[:2]]
    if mnist == cifar == REPRODUCED and all(g == REPRODUCED for g in gains):
        return ("supported: BN moves sparsity in opposite directions on the two datasets and "
                "is more accurate on both")  # fmt: skip
    if mnist == cifar == REPRODUCED:
        return (f"half supported: the opposite directions are reproduced, BN's accuracy gain is "
                f"{gains[0]} on CIFAR-10 and {gains[1]} on MNIST (chapter B1)")  # fmt: skip
    return (f"not supported at this budget: BN less sparse on MNIST is {mnist}, more sparse on "
            f"CIFAR-10 {cifar}")  # fmt: skip


def b3_ledger(clusters: Clusters, models: Models,
              curves: dict[str, TrainingCurves] | None) -> list[Verdict]:  # fmt: skip
    """Chapter B3: class-based purity, the optimal-k trajectory, DBI(k*) on both datasets,
    and our check at a fixed k. Davies-Bouldin effects are relative to the no-BN value.
    ``curves``: :func:`.analysis.cluster_curves` (each metric at the kept states)."""
    acc = models.accuracy
    curves = curves or {}

    def up(metric: str, ds: str, expect: str, contrast, sesoi=DBI):
        return moving(curves.get(metric), ds, expect, contrast, sesoi)

    cls, dbi_k_star, dbi_fixed_k = (
        Contrast.per_dataset(values)
        for values in (clusters.class_dbi, clusters.dbi_k_star, clusters.dbi_fixed_k)
    )
    ledger = []
    for ds, c in cls.items():
        test = c.test("deeper", "lower", f"{DATASET_NAMES[ds]} class-based DBI", DBI)
        controls = learned(acc, both(ds))
        ledger.append(Verdict(
            "B", f"{DATASET_NAMES[ds]}: class-based clusters are purer with BN (lower DBI), "
            f"over the deeper half of the layers, by at least {sesoi_phrase(DBI, '.2f')}",
            decide(test, controls, rising=up("class_dbi", ds, "lower", deeper_half)), test, DBI,
            seed_counts(deeper_half(c.bn), deeper_half(c.nobn), "lower", ".2f"),
            unit=".2f", controls=controls,
            paper_says="Class-based clusters are purer with BN (lower Davies-Bouldin index), "
            "especially in deeper layers",
        ))  # fmt: skip
    every = tuple(c for ds in DATASETS for c in learned(acc, both(ds)))
    settle = {ds: settling_test(clusters.k_star[ds, True], clusters.k_star[ds, False], ds)
              for ds in DATASETS}  # fmt: skip
    parts = [(DATASET_NAMES[ds], decide(t, learned(acc, both(ds)),
                                        rising=up("k_star", ds, "lower", settling_layers, SETTLE)))
             for ds, t in settle.items()]  # fmt: skip
    ledger.append(Verdict(
        "B", f"With BN, k* reaches the number of classes ({reported.N_CLASSES} ± "
        f"{reported.K_STAR_TOLERANCE}) at least one layer earlier, on both datasets (a shift "
        f"beyond {SETTLE.value:g} layer)",
        decide_parts(parts), settle["mnist"], SETTLE,
        "; ".join(f"{DATASET_NAMES[ds]} settling layer: " + seed_counts(
            *(settling_layers(clusters.k_star[ds, bn]) for bn in (True, False)), "lower", ".1f",
            "earlier") for ds in DATASETS) + "; " + _grades(parts), unit=".2f", controls=every,
        paper_says="With BN, k* reaches the number of classes in earlier layers",
    ))  # fmt: skip
    cifar = dbi_k_star["cifar10"]
    test = cifar.test("deeper", "lower", "CIFAR-10 DBI(k*)", DBI)
    ledger.append(Verdict(
        "B", "CIFAR-10: DBI(k*) is lower with BN over the deeper half of the layers, by at "
        f"least {sesoi_phrase(DBI, '.2f')}",
        decide(test, learned(acc, both("cifar10")),
               rising=up("dbi_k_star", "cifar10", "lower", deeper_half)), test, DBI,
        seed_counts(deeper_half(cifar.bn), deeper_half(cifar.nobn), "lower", ".2f"),
        unit=".2f", controls=learned(acc, both("cifar10")),
        paper_says="CIFAR-10: DBI(k*) is lower with BN, especially in deeper layers",
    ))  # fmt: skip
    mnist = dbi_k_star["mnist"]
    n = mnist.n_layers
    rest = direction(layer_mean(mnist.bn[:, :-1]), layer_mean(mnist.nobn[:, :-1]), "higher",
                     f"DBI(k*), mean over conv1–conv{n - 1}", DBI)  # fmt: skip
    last = direction(mnist.bn[:, -1], mnist.nobn[:, -1], "lower", f"DBI(k*), conv{n}", DBI)
    m_controls = learned(acc, both("mnist"))

    def but_last(a):
        return layer_mean(np.asarray(a)[:, :-1])

    def at_last(a):
        return np.asarray(a)[:, -1]

    rest_up = up("dbi_k_star", "mnist", "higher", but_last)
    last_up = up("dbi_k_star", "mnist", "lower", at_last)
    parts = [(f"higher over conv1–conv{n - 1}", decide(rest, m_controls, rising=rest_up)),
             (f"lower at conv{n}", decide(last, m_controls, rising=last_up))]  # fmt: skip
    ledger.append(Verdict(
        "B", "MNIST: DBI(k*) is higher with BN except at the last layer, each part by at least "
        f"{sesoi_phrase(DBI, '.2f')}", decide_parts(parts),
        rest, DBI, _grades(parts) + f"; at conv{n}: effect {last.effect:+.2f} "
        f"[{last.low:+.2f}, {last.high:+.2f}]", unit=".2f", controls=m_controls,
        paper_says="MNIST: DBI(k*) is higher with BN except at the last layer",
    ))  # fmt: skip
    k = clusters.config.fixed_k
    fixed = {ds: c.test("deeper", "lower", f"{DATASET_NAMES[ds]} DBI at k = {k}", DBI)
             for ds, c in dbi_fixed_k.items()}  # fmt: skip
    parts = [(DATASET_NAMES[ds], decide(t, learned(acc, both(ds)),
                                        rising=up("dbi_fixed_k", ds, "lower", deeper_half)))
             for ds, t in fixed.items()]  # fmt: skip
    ledger.append(Verdict(
        "B (ours)", f"(ours) At fixed k = {k}, k-means clusters are purer with BN in deeper "
        f"layers, on both datasets (no selection on DBI), by at least {sesoi_phrase(DBI, '.2f')}",
        decide_parts(parts), fixed["mnist"],
        DBI, "; ".join(f"{DATASET_NAMES[ds]}: relative DBI reduction {t.effect:+.2f} "
                       f"[{t.low:+.2f}, {t.high:+.2f}]" for ds, t in fixed.items())
        + "; " + _grades(parts), unit=".2f", controls=every,
    ))  # fmt: skip
    return ledger
