"""The seed is paper B's unit of inference: the checks that each seed's BN and no-BN models are
a pair (same initial weights, same images in the same order), which every chapter shows, and the
per-seed counts every claim row gives as evidence."""

from __future__ import annotations

import numpy as np

from normbook.grading.verdicts import Check
from normbook.pages.fmt import mean_sd
from normbook.paper_b.grading.rules import DATASET_NAMES
from normbook.paper_b.runs.classify import DATASETS, Models, split_key


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
