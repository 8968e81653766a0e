"""Paper A's cached steps of the 1-D CNNs and PackNorm and, in one place, the code each one's
key covers: the modules that compute what an entry holds (data, networks, training,
evaluation), never the orchestration that asks for it or the figures, tables and prose that
show it (those edits re-execute a chapter from the cache; they never retrain). The run record
lists each step's code. Two families declare theirs beside their code, with the same rule: the
detector's calibration on simulated data (:mod:`.calibration`) and the U-Net and 2-D CNN
(:func:`.arch_common.declare_steps`)."""

from __future__ import annotations

from normbook.grading import stats
from normbook.paper_a.cached import (
    cnn,
    evaluation,
    interventions,
    norms,
    packnet,
    probes,
    stacking,
    task,
    training,
)
from normbook.runtime import cache, seeding

TRAIN_CODE = (task, norms, cnn, stacking, training, seeding)

TRAIN = cache.step("a_train", *TRAIN_CODE)
EVAL = cache.step("a_eval", *TRAIN_CODE, probes, stats, evaluation)
BATCHSTATS = cache.step("a_batchstats", *TRAIN_CODE, stats, evaluation)
INTERVENE = cache.step("a_intervene", *TRAIN_CODE, stats, evaluation, interventions)
# training: the kept states' entries (training.model_entries), as paper A's networks keep them
PACK_TRAIN = cache.step("a_pack_train", packnet, stacking, seeding, training)
PACK_EVAL = cache.step("a_pack_eval", packnet, stacking, seeding, training)
