from dataclasses import replace

import pytest

from normbook.paper_a import localization
from normbook.paper_a.specs import A1


@pytest.fixture
def tiny_setup():
    """A factory of small, validated localization setups (chapter A1's knobs)."""

    def make(seeds=(0,), n_eval=64, **overrides):
        knobs = dict(
            seq_len=24,
            kernel=3,
            depth=2,
            width=4,
            steps=3,
            batch_size=8,
            eval_batch_size=16,
            probe_batches=2,
        )
        # a chapter needs two seeds; a library test may use any (set after validation)
        P = A1.resolve("smoke", seeds=[0, 1], n_eval=n_eval, **{**knobs, **overrides})
        return replace(localization.configs(P), seeds=tuple(seeds))

    return make
