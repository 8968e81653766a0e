"""Chapter B4's planned compute (``Spec.plan``): the swapped learning-rate cells of the
factorial and the accuracy-matched reruns, beyond chapter B1's cached networks."""

from __future__ import annotations

from normbook.paper_b.b4_stress import factorial
from normbook.paper_b.runs import classify
from normbook.paper_b.runs.plans import classifiers
from normbook.runtime.flops import Item


def b4(params) -> list[Item]:
    swapped = [c for cell, c in factorial.factorial_configs(params).items()
               if not factorial.is_paper_cell(cell)]  # fmt: skip
    # accuracy-matched: one network per seed runs again up to the matched step; at most
    # a full run (the more accurate variant is known only after chapter B1)
    b1 = classify.Setup.from_params(params).configs
    matched = [b1[ds, True] for ds in factorial.factorial_datasets(params.matched_datasets)]
    return [
        *classifiers(swapped, params.seeds, "swapped cell"),
        *classifiers(matched, params.seeds, "accuracy-matched rerun, at most"),
    ]
