"""Chapter B1's parameters: the training knobs of :mod:`..params`, shared by every chapter of
paper B (registered in normbook.publish.chapters.SPECS)."""

from __future__ import annotations

from normbook.paper_b.params import TRAIN_CHECKS, TRAIN_PARAMS, TRAIN_PROFILES, merge
from normbook.paper_b.runs import plans
from normbook.runtime.params import Spec

B1 = Spec(
    chapter="b1_setup_accuracy",
    params=TRAIN_PARAMS,
    profiles=merge(TRAIN_PROFILES),
    checks=TRAIN_CHECKS,
    plan=plans.b1,
)
