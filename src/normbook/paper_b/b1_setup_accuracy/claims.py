"""Chapter B1's claims: BN's accuracy advantage on both datasets (graded by the rules of
:mod:`normbook.paper_b.grading.rules`) and the paper's Table 1 values (a comparison with the
paper's numbers, not a hypothesis test)."""

from __future__ import annotations

import numpy as np

from normbook.grading.claims import ClaimTest, inside_band
from normbook.grading.verdicts import Grade, Verdict, decide, decide_parts, sesoi_phrase
from normbook.pages.fmt import sci
from normbook.paper_b import paper_values
from normbook.paper_b.cached import training
from normbook.paper_b.grading.pairing import seed_counts
from normbook.paper_b.grading.rules import (
    DATASET_NAMES,
    accuracy_moving,
    both,
    compared,
    cut_by_cap,
    direction,
    learned,
)
from normbook.paper_b.grading.sesoi import ACCURACY
from normbook.paper_b.runs.classify import Models


def table1(acc, profile: str, rising) -> tuple[Grade, ClaimTest, list]:
    """Table 1 (a comparison with the paper's values, not a hypothesis test): for BN and for
    no BN, the t interval of our mean test accuracy over seeds against the paper's value
    ± ``paper_values.TABLE1_TOLERANCE`` (:func:`normbook.grading.claims.inside_band`): each inside
    its band, reproduced; wholly outside, refuted, unless the accuracies may still be rising
    (``rising``: :func:`.rules.cut_by_cap`, some network ended by its epoch cap). Not
    testable at any profile but ``paper``: smaller networks trained on fewer images cannot test
    the paper's absolute numbers."""
    tol, parts, tests = paper_values.TABLE1_TOLERANCE, [], []
    for bn, label in ((True, "BN"), (False, "no BN")):
        paper = paper_values.TABLE1_ACCURACY["cifar10", bn]
        null = f"paper: {paper_values.percent(paper)} ± {100 * tol:g} points"
        t = inside_band(acc["cifar10", bn], paper - tol, paper + tol, null=null)
        parts.append((label, decide(t, testable=profile == "paper", rising=rising)))
        tests.append(t)
    return decide_parts(parts), tests[0], parts


def b1_ledger(models: Models, profile: str) -> list[Verdict]:
    """Chapter B1: BN's accuracy advantage on both datasets, and Table 1's values."""
    acc = models.accuracy
    ledger = []
    for ds, setting in (
        ("cifar10", f"VGG-16; Adam lr {sci(paper_values.LR['cifar10', True])} vs "
                    f"{sci(paper_values.LR['cifar10', False])}"),
        ("mnist", "standard CNN; same SGD lr"),
    ):  # fmt: skip
        test = direction(acc[ds, True], acc[ds, False], "higher",
                         f"{DATASET_NAMES[ds]} test accuracy", ACCURACY)  # fmt: skip
        ledger.append(
            Verdict.graded(
                "B",
                f"BN models reach higher test accuracy than no-BN models on "
                f"{DATASET_NAMES[ds]} ({setting}), by at least {sesoi_phrase(ACCURACY, '+.2%')}",
                test,
                ACCURACY,
                rising=accuracy_moving(models, ds),
                controls=learned(acc, both(ds)),
                evidence=seed_counts(acc[ds, True], acc[ds, False], "higher", ".2%"),
                unit="+.2%",
                paper_says="BN models reach higher test accuracy than no-BN models (Table 1)",
                key=f"b1_bn_accuracy_{ds}",
                rule=b1_ledger,
                measure=training.evaluate,
            )
        )
    _, test, parts = table1(
        acc, profile, rising=cut_by_cap(compared(models, "cifar10"), ACCURACY.flat_margin)
    )
    paper_bn, paper_nobn = (paper_values.TABLE1_ACCURACY["cifar10", bn] for bn in (True, False))
    ours = ", ".join(f"{label} {np.mean(acc['cifar10', bn]):.2%}" for label, bn in
                     (("BN", True), ("no BN", False)))  # fmt: skip
    ledger.append(
        Verdict.in_parts(
            "B",
            f"Table 1: CIFAR-10 test accuracy {paper_values.percent(paper_bn)} (BN) and "
            f"{paper_values.percent(paper_nobn)} (no BN)",
            parts,
            test,
            None,
            evidence=f"ours: {ours}; profile `{profile}`",
            unit=".2%",
            paper_says="Table 1",
            key="b1_table1",
            rule=table1,
            measure=training.evaluate,
            untestable=""
            if profile == "paper"
            else "the paper's absolute numbers need the `paper` profile",
        )
    )
    return ledger
