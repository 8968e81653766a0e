"""Paper B's planned compute (:mod:`normbook.runtime.flops`): the classifiers a chapter trains
(chapter B4's own plan, the swapped and matched cells, is in :mod:`..b4_stress.factorial`'s
chapter folder). B2, B3 and the Methods page analyse chapter B1's networks: no plan."""

from __future__ import annotations

import torch

from normbook.paper_b.runs import classify
from normbook.runtime.flops import Item, train_step_flops


def classifiers(cfgs, seeds, what: str = "") -> list[Item]:
    out = []
    for cfg in cfgs:
        x = torch.randn(1, cfg.in_channels, 32, 32)  # MNIST is padded to 32 x 32
        step = train_step_flops(cfg.build(0), x)
        images = cfg.max_epochs * cfg.n_train * len(seeds)
        out.append(
            Item(
                f"{cfg.dataset} {cfg.label}{', ' + what if what else ''} (lr {cfg.lr:g}): train "
                f"{len(seeds)} models, at most {cfg.max_epochs} epochs of {cfg.n_train:,} images",
                images * step,
            )
        )
    return out


def b1(params) -> list[Item]:
    return classifiers(classify.Setup.from_params(params).configs.values(), params.seeds)
