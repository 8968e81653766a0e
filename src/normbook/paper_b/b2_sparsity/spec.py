"""Chapter B2's parameters: chapter B1's training knobs and the sparsity analysis's
(:mod:`..params`; registered in normbook.publish.chapters.SPECS)."""

from __future__ import annotations

from normbook.paper_b.params import (
    SPARSITY_PARAMS,
    SPARSITY_PROFILES,
    TRAIN_CHECKS,
    TRAIN_PARAMS,
    TRAIN_PROFILES,
    images_available,
    merge,
)
from normbook.runtime.params import Spec

B2 = Spec(
    chapter="b2_sparsity",
    params=TRAIN_PARAMS + SPARSITY_PARAMS,
    profiles=merge(TRAIN_PROFILES, SPARSITY_PROFILES),
    checks=TRAIN_CHECKS + [images_available("sparsity")],
)
