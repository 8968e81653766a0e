"""Chapter B4's BN x learning-rate 2 x 2: the cells the paper trains are chapter B1's configs,
and the contrasts of the four cells decompose the paper's."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from normbook.paper_b.b1_setup_accuracy.spec import B1
from normbook.paper_b.b4_stress import factorial
from normbook.paper_b.b4_stress.spec import B4
from normbook.paper_b.runs import classify

SEEDS5 = np.array([0.0, 0.01, -0.01, 0.02, -0.02])  # seed-to-seed jitter


@pytest.mark.parametrize("profile", ["smoke", "cpu", "paper"])
def test_paper_cells_are_b1_configs_and_swapped_cells_differ_only_in_lr(profile):
    params = B4.resolve(profile, factorial_datasets="both")
    b1 = classify.Setup.from_params(B1.resolve(profile)).configs
    cfgs = factorial.factorial_configs(params)
    assert len(cfgs) == 8
    for (ds, bn, j), cfg in cfgs.items():
        if factorial.is_paper_cell((ds, bn, j)):
            assert cfg == b1[ds, bn]  # same cache key: B1's cached model, never retrained
        else:
            assert cfg != b1[ds, bn] and replace(cfg, lr=b1[ds, bn].lr) == b1[ds, bn]
    assert cfgs["cifar10", True, 1].lr == params.cifar_lr_nobn
    assert cfgs["cifar10", False, 0].lr == params.cifar_lr_bn
    only = factorial.factorial_configs(B4.resolve(profile, factorial_datasets="cifar10"))
    assert {c[0] for c in only} == {"cifar10"}


def test_factorial_effects_and_the_papers_contrast():
    # BN adds 3 at lr 0 and 1 at lr 1; lr 0 adds 4 with BN and 2 without
    y = {(True, 0): 13 + SEEDS5, (True, 1): 9 + SEEDS5, (False, 0): 10 + SEEDS5,
         (False, 1): 8 + SEEDS5}  # fmt: skip
    e = factorial.factorial_effects(y, "cifar10", (1e-3, 1e-4))
    np.testing.assert_allclose(e.bn, 2.0)
    np.testing.assert_allclose(e.lr, 3.0)
    np.testing.assert_allclose(e.interaction, 2.0)
    np.testing.assert_allclose(e.paper, 13 - 8)  # BN at 1e-3 vs no BN at 1e-4 = 2 + 3
    assert factorial.decomposition_error(e, "cifar10") < 1e-12
    m = factorial.factorial_effects(y, "mnist")
    np.testing.assert_allclose(m.paper, 3.0)  # both at lr 0
    assert factorial.decomposition_error(m, "mnist") < 1e-12
