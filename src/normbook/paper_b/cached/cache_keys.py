"""Paper B's cached training step and the code its key covers: the data parsing, the networks,
the seed streams and the training loop, and nothing that presents them. The analyses declare
theirs beside their code (:mod:`.analysis`, :mod:`.stress_analyses`, :mod:`.projections`),
each covering this step's code, the trained-model wrapper (:mod:`.models`) and their own."""

from __future__ import annotations

from normbook.paper_b.cached import convnets, training
from normbook.paper_b.data import datasets
from normbook.runtime import cache, seeding

# The cached step that trains a model: its key covers the data parsing, the networks, the
# seed streams and the training loop, and nothing that presents them.
TRAIN = cache.step("b_train", convnets, datasets, seeding, training)
