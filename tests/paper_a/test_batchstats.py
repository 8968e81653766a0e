"""Evaluation with per-sample and batch-mean statistics (BatchNorm at evaluation)."""

import numpy as np
import pytest
import torch

from normbook.paper_a.cached import evaluation
from normbook.paper_a.measures.detector import Moments
from normbook.paper_a.runs import batchstats


class _SharedOffset(torch.nn.Module):
    """Predictions = input + c * (one N(0,1) number per batch): samples in a batch move together,
    as they do when they share minibatch statistics."""

    def __init__(self, c):
        super().__init__()
        self.c, self.seeds, self.n_models = c, [0], 1

    def forward(self, x):
        b, m, length = x.shape
        shared = x.mean(dim=(0, 2), keepdim=True) * (b * length) ** 0.5
        return x + self.c * shared


@pytest.mark.parametrize("c,expected", [(0.0, 1.0), (1.0, (1 + 16) / 2)])
def test_design_effect_measures_within_batch_dependence(c, expected):
    b = 16
    entry = evaluation.evaluate_batches(_SharedOffset(c), 20, 16384, b, "minibatch")
    out, bmean = Moments.from_arrays(entry, "out"), Moments.from_arrays(entry, "bmean")
    assert bmean.count.tolist() == [512, 512] and out.count.tolist() == [8192, 8192]
    np.testing.assert_allclose(bmean.mean, out.mean, rtol=1e-6, atol=1e-6)
    assert batchstats.design_effect(out, bmean, b)[0] == pytest.approx(expected, rel=0.15)


def test_localize_is_cached_and_shares_trained_models(monkeypatch, tiny_setup):
    setup = tiny_setup(seeds=(0,), n_eval=256)
    cnn = setup.cnn("batch")
    first = batchstats.localize(setup, cnn, 16, "minibatch")
    assert first.train_cache_hits == [False]
    real = batchstats.evaluate_batches
    calls = []
    monkeypatch.setattr(batchstats, "evaluate_batches", lambda *a: calls.append(a) or real(*a))
    again = batchstats.localize(setup, cnn, 16, "minibatch")
    other_mode = batchstats.localize(setup, cnn, 16, "population")
    assert len(calls) == 1 and calls[0][-1] == "population"  # only the new mode evaluates
    assert other_mode.train_cache_hits == [True]  # same trained model
    np.testing.assert_array_equal(first.out.mean, again.out.mean)
    assert not np.array_equal(first.out.mean, other_mode.out.mean)
    assert len(first.per_seed) == len(first.batch_mean) == 1 and first.design_effect.shape == (1,)


def test_boundary_fraction():
    loc = np.zeros(20, dtype=bool)
    loc[[0, 1, 19]] = True
    assert batchstats.boundary_fraction(loc, radius=2) == pytest.approx(3 / 4)
