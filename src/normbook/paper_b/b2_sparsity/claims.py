"""Chapter B2's claims: the direction of BN's effect on layer sparsity (mean over conv layers)
per dataset, graded by the rules of :mod:`normbook.paper_b.grading.rules`, and the paper's
conclusion read from them. Chapter B4 asks the same question of other images and networks with
:func:`sparsity_row`."""

from __future__ import annotations

from normbook.grading.claims import Rise
from normbook.grading.verdicts import REPRODUCED, Control, Verdict, sesoi_phrase
from normbook.paper_b.cached import representations
from normbook.paper_b.cached.analysis import Sparsity, TrainingCurves
from normbook.paper_b.grading.pairing import seed_counts
from normbook.paper_b.grading.rules import (
    DATASET_NAMES,
    Contrast,
    both,
    compared,
    layer_mean,
    learned,
    moving,
)
from normbook.paper_b.grading.sesoi import SPARSITY
from normbook.paper_b.runs.classify import Models

# the paper's direction per dataset: BN's layer sparsity "lower" / "higher", in words
PAPER_WAY = {"mnist": ("lower", "less"), "cifar10": ("higher", "more")}


def sparsity_row(c: Contrast, dataset: str, *, rising: Rise | bool | None,
                 controls: tuple[Control, ...], key: str, where: str = "") -> Verdict:  # fmt: skip
    """The paper's sparsity direction on ``dataset`` (MNIST: BN less sparse; CIFAR-10: more),
    layer sparsity averaged over all conv layers per seed (``c``), against
    :data:`.sesoi.SPARSITY`. ``where``: other images or networks than chapter B2's (chapter B4:
    "test images", "equal validation accuracy"), named in the claim; the paper's statement is
    then the one about training images."""
    expect, word = PAPER_WAY[dataset]
    name, at = DATASET_NAMES[dataset], f" ({where})" if where else ""
    tested = "" if where else " than no-BN ones (layer sparsity, mean over conv layers)"
    context = "on training images" if where else "no consistent sparsity signature across datasets"
    test = c.test("layers", expect, f"{name} layer sparsity{at}", SPARSITY)
    return Verdict.graded(
        "B", f"{name}{at}: BN representations are {word} sparse{tested}, by at least "
        f"{sesoi_phrase(SPARSITY)}", test, SPARSITY, rising=rising, controls=controls,
        evidence=seed_counts(layer_mean(c.bn), layer_mean(c.nobn), expect),
        paper_says=f"{name}: BN representations are {word} sparse ({context})", key=key,
        rule=sparsity_row, measure=representations.layer_sparsity,
    )  # fmt: skip


def b2_ledger(sparsity: Sparsity, models: Models, curves: TrainingCurves | None) -> list[Verdict]:
    """Chapter B2: the direction of BN's effect on layer sparsity (mean over layers) per
    dataset. The paper's conclusion, no consistent sparsity signature, is these two rows
    together with chapter B1's accuracy rows (:func:`signature_reading`), not a row of its own
    (which would count the same tests twice)."""
    layer = Contrast.per_dataset(sparsity.layer)
    return [
        sparsity_row(layer[ds], ds, rising=moving(curves, ds, PAPER_WAY[ds][0], layer_mean,
                                                  SPARSITY, nets=compared(models, ds)),
                     controls=learned(models.accuracy, both(ds)),
                     key=f"b2_{PAPER_WAY[ds][1]}_sparse_{ds}")
        for ds in PAPER_WAY
    ]  # fmt: skip


def signature_reading(b2_rows: list[Verdict], b1_rows: list[Verdict]) -> str:
    """The paper's conclusion that sparsity has no consistent BN signature, read from chapter
    B2's two direction rows (MNIST less sparse, CIFAR-10 more sparse) and chapter B1's two
    accuracy rows (BN more accurate on CIFAR-10, on MNIST), as a sentence."""
    grade = {r.key: r.verdict for r in [*b2_rows, *b1_rows]}
    mnist, cifar = grade["b2_less_sparse_mnist"], grade["b2_more_sparse_cifar10"]
    gains = [grade["b1_bn_accuracy_cifar10"], grade["b1_bn_accuracy_mnist"]]
    if mnist == cifar == REPRODUCED and all(g == REPRODUCED for g in gains):
        return ("supported: BN moves sparsity in opposite directions on the two datasets and "
                "is more accurate on both")  # fmt: skip
    if mnist == cifar == REPRODUCED:
        return (f"half supported: the opposite directions are reproduced, BN's accuracy gain is "
                f"{gains[0]} on CIFAR-10 and {gains[1]} on MNIST (chapter B1)")  # fmt: skip
    return (f"not supported at this budget: BN less sparse on MNIST is {mnist}, more sparse on "
            f"CIFAR-10 {cifar}")  # fmt: skip
