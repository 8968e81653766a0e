"""Chapter B3's claims: class-based purity, the optimal-k trajectory, DBI(k*) on both datasets,
and our check at a fixed k, graded by the rules of :mod:`normbook.paper_b.grading.rules`.
Chapter B4 asks the purity question of other images and networks with :func:`class_dbi_row`."""

from __future__ import annotations

import numpy as np

from normbook.grading.claims import Rise
from normbook.grading.verdicts import Control, Grade, Verdict, decide, sesoi_phrase
from normbook.paper_b import paper_values
from normbook.paper_b.cached import representations
from normbook.paper_b.cached.analysis import Clusters, TrainingCurves
from normbook.paper_b.grading.pairing import seed_counts
from normbook.paper_b.grading.rules import (
    DATASET_NAMES,
    Contrast,
    both,
    compared,
    deeper_half,
    direction,
    layer_mean,
    learned,
    moving,
    settling_layers,
    settling_test,
)
from normbook.paper_b.grading.sesoi import DBI, SETTLE
from normbook.paper_b.runs.classify import DATASETS, Models


def _grades(parts: list[tuple[str, Grade]]) -> str:
    return "; ".join(f"{name}: {g.verdict}" for name, g in parts)


def class_dbi_row(c: Contrast, dataset: str, *, rising: Rise | bool | None,
                  controls: tuple[Control, ...], key: str, where: str = "") -> Verdict:  # fmt: skip
    """Class-based clusters purer with BN on ``dataset``: the class-based DBI over the deeper
    half of the conv layers per seed (``c``), lower with BN, relative to no BN, against
    :data:`.sesoi.DBI`. ``where``: other images or networks than chapter B3's (chapter B4:
    "test images", "equal validation accuracy"), named in the claim; the paper's statement is
    then the one about training images."""
    name = DATASET_NAMES[dataset]
    if where:
        claim = f"{name} ({where}): class-based clusters are purer with BN, deeper half"
        says = ("Class-based clusters are purer with BN, especially in deeper layers (on "
                "training images)")  # fmt: skip
    else:
        claim = (f"{name}: class-based clusters are purer with BN (lower DBI), over the deeper "
                 "half of the layers")  # fmt: skip
        says = ("Class-based clusters are purer with BN (lower Davies-Bouldin index), "
                "especially in deeper layers")  # fmt: skip
    at = f" ({where})" if where else ""
    test = c.test("deeper", "lower", f"{name} class-based DBI{at}", DBI)
    return Verdict.graded(
        "B", f"{claim}, by at least {sesoi_phrase(DBI, '.2f')}", test, DBI, rising=rising,
        controls=controls, evidence=seed_counts(deeper_half(c.bn), deeper_half(c.nobn), "lower",
                                                ".2f"),
        unit=".2f", paper_says=says, key=key, rule=class_dbi_row, measure=representations.class_dbi,
    )  # fmt: skip


def b3_ledger(clusters: Clusters, models: Models,
              curves: dict[str, TrainingCurves] | None) -> list[Verdict]:  # fmt: skip
    """Chapter B3: class-based purity, the optimal-k trajectory, DBI(k*) on both datasets,
    and our check at a fixed k. Davies-Bouldin effects are relative to the no-BN value.
    ``curves``: :func:`.analysis.cluster_curves` (each metric at the kept states)."""
    acc = models.accuracy
    curves = curves or {}

    def up(metric: str, ds: str, expect: str, contrast, sesoi=DBI):
        return moving(curves.get(metric), ds, expect, contrast, sesoi, nets=compared(models, ds))

    cls, dbi_k_star, dbi_fixed_k = (
        Contrast.per_dataset(values)
        for values in (clusters.class_dbi, clusters.dbi_k_star, clusters.dbi_fixed_k)
    )
    ledger = [class_dbi_row(c, ds, rising=up("class_dbi", ds, "lower", deeper_half),
                            controls=learned(acc, both(ds)), key=f"b3_purer_classes_{ds}")
              for ds, c in cls.items()]  # fmt: skip
    every = tuple(c for ds in DATASETS for c in learned(acc, both(ds)))
    settle = {ds: settling_test(clusters.k_star[ds, True], clusters.k_star[ds, False], ds)
              for ds in DATASETS}  # fmt: skip
    parts = [(DATASET_NAMES[ds], decide(t, learned(acc, both(ds)),
                                        rising=up("k_star", ds, "lower", settling_layers, SETTLE)))
             for ds, t in settle.items()]  # fmt: skip
    ledger.append(Verdict.in_parts(
        "B", f"With BN, k* reaches the number of classes ({paper_values.N_CLASSES} ± "
        f"{paper_values.K_STAR_TOLERANCE}) at least one layer earlier, on both datasets (a shift "
        f"beyond {SETTLE.value:g} layer)",
        parts, settle["mnist"], SETTLE, controls=every,
        evidence="; ".join(f"{DATASET_NAMES[ds]} settling layer: " + seed_counts(
            *(settling_layers(clusters.k_star[ds, bn]) for bn in (True, False)), "lower", ".1f",
            "earlier") for ds in DATASETS) + "; " + _grades(parts), unit=".2f",
        paper_says="With BN, k* reaches the number of classes in earlier layers",
        key="b3_k_star_earlier", rule=b3_ledger, measure=representations.kmeans_sweep,
    ))  # fmt: skip
    cifar = dbi_k_star["cifar10"]
    test = cifar.test("deeper", "lower", "CIFAR-10 DBI(k*)", DBI)
    ledger.append(Verdict.graded(
        "B", "CIFAR-10: DBI(k*) is lower with BN over the deeper half of the layers, by at "
        f"least {sesoi_phrase(DBI, '.2f')}", test, DBI,
        rising=up("dbi_k_star", "cifar10", "lower", deeper_half),
        controls=learned(acc, both("cifar10")),
        evidence=seed_counts(deeper_half(cifar.bn), deeper_half(cifar.nobn), "lower", ".2f"),
        unit=".2f", paper_says="CIFAR-10: DBI(k*) is lower with BN, especially in deeper layers",
        key="b3_lower_dbi_k_star_cifar10", rule=b3_ledger, measure=representations.kmeans_sweep,
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
    ledger.append(Verdict.in_parts(
        "B", "MNIST: DBI(k*) is higher with BN except at the last layer, each part by at least "
        f"{sesoi_phrase(DBI, '.2f')}", parts, rest, DBI, controls=m_controls,
        evidence=_grades(parts) + f"; at conv{n}: effect {last.effect:+.2f} "
        f"[{last.low:+.2f}, {last.high:+.2f}]", unit=".2f",
        paper_says="MNIST: DBI(k*) is higher with BN except at the last layer",
        key="b3_higher_dbi_k_star_mnist", rule=b3_ledger, measure=representations.kmeans_sweep,
    ))  # fmt: skip
    k = clusters.config.fixed_k
    fixed = {ds: c.test("deeper", "lower", f"{DATASET_NAMES[ds]} DBI at k = {k}", DBI)
             for ds, c in dbi_fixed_k.items()}  # fmt: skip
    parts = [(DATASET_NAMES[ds], decide(t, learned(acc, both(ds)),
                                        rising=up("dbi_fixed_k", ds, "lower", deeper_half)))
             for ds, t in fixed.items()]  # fmt: skip
    ledger.append(Verdict.in_parts(
        "B (ours)", f"(ours) At fixed k = {k}, k-means clusters are purer with BN in deeper "
        f"layers, on both datasets (no selection on DBI), by at least {sesoi_phrase(DBI, '.2f')}",
        parts, fixed["mnist"], DBI, controls=every,
        evidence="; ".join(f"{DATASET_NAMES[ds]}: relative DBI reduction {t.effect:+.2f} "
                           f"[{t.low:+.2f}, {t.high:+.2f}]" for ds, t in fixed.items())
        + "; " + _grades(parts), unit=".2f", key="b3_purer_at_fixed_k",
        rule=b3_ledger, measure=representations.kmeans_sweep,
    ))  # fmt: skip
    return ledger
