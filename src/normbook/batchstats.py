"""Output-only evaluation with per-sample *and* per-batch statistics; BatchNorm at evaluation
(minibatch vs population statistics, evaluation batch size; paper A, Appendix D / Figs. 5-6).

With minibatch statistics the samples of one evaluation batch share their normalization
statistics, so their predictions are not independent. The per-sample Welch test of
PROTOCOL A.2 assumes they are; :func:`evaluate_batches` therefore also streams the moments of
per-batch mean predictions (batches *are* independent), for a test that stays valid, and
reports the design effect: how much larger the variance of a batch mean is than independent
samples would give (1 = no within-batch dependence).
"""
from __future__ import annotations

import sys
from dataclasses import asdict

import numpy as np
import torch

from . import cache, localization, stats
from .models import CNNConfig, StackedCNN, set_batch_eval
from .progress import progress
from .tasks import sample_inputs
from .training import TrainConfig, generators


@torch.no_grad()
def evaluate_batches(net: StackedCNN, seq_len: int, n_samples: int, batch_size: int, mode: str) -> dict:
    """Per-index moments of single predictions and of batch-mean predictions, in two
    independent streams (batches alternate), for evaluation statistics ``mode``."""
    m = net.n_models
    set_batch_eval(net, mode)
    net.eval()
    single = [stats.RunningMoments((m, seq_len)) for _ in range(2)]
    means = [stats.RunningMoments((m, seq_len)) for _ in range(2)]
    gens = generators(net.seeds, "eval")
    n_batches = max(4, -(-n_samples // batch_size))
    n_batches += n_batches % 2
    for b in progress(range(n_batches), desc=f"evaluate ({mode}, batch {batch_size})"):
        out = net(sample_inputs(batch_size, m, seq_len, gens)).numpy()
        single[b % 2].update(out)
        means[b % 2].update(out.mean(axis=0, keepdims=True))
    return {**stats.stack_moments("out", single), **stats.stack_moments("bmean", means)}


def run(cnn: CNNConfig, tc: TrainConfig, seeds: list[int], n_samples: int, batch_size: int,
        mode: str) -> cache.Entry:
    """Train (or load, shared with every other chapter) and evaluate with batch means (cached)."""
    net, losses, hits = localization.trained(cnn, tc, seeds)

    def compute():
        return cache.Entry(evaluate_batches(net, tc.seq_len, n_samples, batch_size, mode))

    config = {"cnn": asdict(localization.training_identity(cnn)), "train": asdict(tc),
              "seeds": [int(s) for s in seeds], "n_samples": int(n_samples),
              "batch_size": int(batch_size), "mode": mode}
    entry = cache.cached("a_batchstats", config, compute,
                         localization.TRAIN_CODE + (stats, sys.modules[__name__]))
    entry["loss"] = losses
    entry.meta["train_cache_hits"] = hits
    return entry


def design_effect(entry: cache.Entry, batch_size: int) -> np.ndarray:
    """Per model: median over indices of batch_size * var(batch mean) / var(single prediction).

    1 when the predictions in a batch are independent; larger when they move together
    (shared minibatch statistics), in which case the per-sample test overstates significance.
    """
    var_single = (entry["out_std"] ** 2).mean(axis=0)
    var_bmean = (entry["bmean_std"] ** 2).mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = batch_size * var_bmean / var_single
    return np.nanmedian(ratio, axis=-1)


def summaries(entry: cache.Entry, radius: int, alpha: float, window: int, threshold: float) -> dict:
    """The localization summary with the per-sample test and with the batch-mean test."""
    return {
        "per-sample test": localization.summarize(entry["out_mean"], entry["out_std"], entry["out_count"],
                                                  radius, alpha, window, threshold),
        "batch-mean test": localization.summarize(entry["bmean_mean"], entry["bmean_std"],
                                                  entry["bmean_count"], radius, alpha, window, threshold),
    }


def boundary_fraction(localized: np.ndarray, radius: int) -> float:
    """Fraction of the indices within R of an end (where padding is visible) that are localized."""
    band = stats.boundary_distance(localized.shape[-1]) < radius
    return float(np.asarray(localized)[..., band].mean())
