"""The localization experiment: train (cached per seed), evaluate with streaming statistics,
probe every depth, and summarize with the test of PROTOCOL A.2 and effect sizes."""
from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch

from . import cache, models, norms, probes, stats, tasks, training
from .models import CNNConfig, StackedCNN, set_batch_eval
from .progress import progress
from .tasks import ramp, sample_inputs
from .training import TrainConfig, generators, train_stack

TRAIN_CODE = (tasks, norms, models, training)
EVAL_CODE = TRAIN_CODE + (probes,)


@dataclass(frozen=True)
class EvalConfig:
    n_samples: int = 51_200      # predictions per index, split over two independent streams
    batch_size: int = 32         # matters only for BatchNorm with minibatch statistics
    batch_eval: str = "minibatch"
    probe_batches: int = 64      # batches of fresh noise used to fit each depth's probe
    probe_ridge: float = 1e-3
    input_kind: str = "noise"


def training_identity(cnn: CNNConfig) -> CNNConfig:
    """The config that determines the trained weights (so equal models share a cache entry).

    GroupNorm with G = C *is* InstanceNorm, and BatchNorm's evaluation mode does not
    change training: both are normalized away so chapters reuse each other's models.
    """
    if cnn.norm == "group" and cnn.groups == cnn.width:
        cnn = replace(cnn, norm="instance")
    if cnn.norm != "group":
        cnn = replace(cnn, groups=1)
    return replace(cnn, batch_eval="minibatch")


def trained(cnn: CNNConfig, tc: TrainConfig, seeds: list[int]) -> tuple[StackedCNN, np.ndarray, list[bool]]:
    """The trained stack for these seeds; seeds already cached are loaded, the rest are
    trained together in one stacked pass. Returns (net, loss history (steps, M), hit per seed)."""
    ident = training_identity(cnn)
    keyed = lambda s: {"cnn": asdict(ident), "train": asdict(tc), "seed": int(s)}
    missing = [s for s in seeds if not cache.is_cached("a_train", keyed(s), TRAIN_CODE)]
    fresh = {}
    if missing:
        net, losses = train_stack(ident, tc, missing)
        for i, s in enumerate(missing):
            fresh[s] = (net.model_state(i), losses[:, i])
    states, hist, hits = [], [], []
    for s in seeds:
        def compute(s=s):
            state, loss = fresh[s]
            return cache.Entry({"loss": loss}, tensors=state)
        entry = cache.cached("a_train", keyed(s), compute, TRAIN_CODE)
        states.append(entry.tensors)
        hist.append(entry["loss"])
        hits.append(entry.hit)
    net = StackedCNN.from_model_states(replace(ident, batch_eval=cnn.batch_eval), seeds, states)
    net.eval()
    return net, np.stack(hist, axis=1), hits


@torch.no_grad()
def evaluate(net: StackedCNN, seq_len: int, ev: EvalConfig, probe_weights: torch.Tensor | None):
    """Streaming per-index moments of the predictions (and probe outputs) on fresh noise.

    Batches alternate between two accumulators, so each index has two independent
    estimates: the neighbour test compares i in one with i +- 1 in the other.
    """
    m, depth = net.n_models, net.cfg.depth
    set_batch_eval(net, ev.batch_eval)
    net.eval()
    out_mom = [stats.RunningMoments((m, seq_len)) for _ in range(2)]
    probe_mom = [stats.RunningMoments((depth, m, seq_len)) for _ in range(2)]
    gens = generators(net.seeds, "eval")
    n_batches = max(2, -(-ev.n_samples // ev.batch_size))
    for b in progress(range(n_batches), desc="evaluate"):
        x = sample_inputs(ev.batch_size, m, seq_len, gens, ev.input_kind)
        if probe_weights is None:
            out_mom[b % 2].update(net(x).numpy())
            continue
        out, acts = net(x, return_activations=True)
        out_mom[b % 2].update(out.numpy())
        probe_mom[b % 2].update(probes.apply_probes(acts, probe_weights).numpy())
    return {**stats.stack_moments("out", out_mom), **stats.stack_moments("probe", probe_mom)}


def run(cnn: CNNConfig, tc: TrainConfig, ev: EvalConfig, seeds: list[int], with_probes: bool = True):
    """Train (or load) and evaluate, both cached. Returns (cache Entry of arrays, trained net)."""
    net, losses, hits = trained(cnn, tc, seeds)

    def compute():
        w = None
        if with_probes:
            w = probes.fit_probes(net, tc.seq_len, ev.probe_batches, 32, ev.probe_ridge, ev.input_kind)
        arrays = evaluate(net, tc.seq_len, ev, w)
        if w is not None:
            arrays["probe_weights"] = w.numpy()
        return cache.Entry(arrays)

    config = {"cnn": asdict(training_identity(cnn)), "batch_eval": cnn.batch_eval,
              "train": asdict(tc), "eval": asdict(ev), "seeds": list(seeds), "probes": with_probes}
    entry = cache.cached("a_eval", config, compute, EVAL_CODE + (stats, sys.modules[__name__]))
    entry["loss"] = losses
    entry.meta["train_cache_hits"] = hits
    entry.meta["seeds"] = list(seeds)
    entry.meta["radius"] = cnn.receptive_radius
    return entry, net


@dataclass(frozen=True)
class Localization:
    """Per-model result of the neighbour test and effect sizes."""

    localized: np.ndarray        # (L,) bool
    distance: int                # localization distance (boundary -> inward)
    frac_interior: float         # fraction of [R, l-1-R] localized
    frac_all: float
    effect_all: stats.EffectSize
    effect_interior: stats.EffectSize


def summarize(mean: np.ndarray, std: np.ndarray, count: np.ndarray, radius: int, alpha: float,
              window: int = 4, threshold: float = 0.5) -> list[Localization]:
    """Apply PROTOCOL A.2 to the two-stream moments of shape (2, M, L)."""
    seq_len = mean.shape[-1]
    p_l, p_r = stats.neighbour_pvalues(mean[0], std[0], count[0], mean[1], std[1], count[1])
    target = ramp(seq_len).numpy()
    interior = stats.interior_mask(seq_len, radius)
    pooled = (mean[0] * count[0] + mean[1] * count[1]) / (count[0] + count[1])
    out = []
    for m in range(mean.shape[1]):
        loc = stats.localized_mask(p_l[m], p_r[m], alpha)
        out.append(Localization(
            localized=loc,
            distance=stats.localization_distance(loc, window, threshold),
            frac_interior=float(loc[interior].mean()) if interior.any() else float("nan"),
            frac_all=float(loc.mean()),
            effect_all=stats.effect_size(pooled[m], target),
            effect_interior=stats.effect_size(pooled[m], target, interior),
        ))
    return out


def depth_maps(entry, alpha: float) -> np.ndarray:
    """Localized mask per depth (depth, M, L) from the probe moments."""
    mean, std, count = entry["probe_mean"], entry["probe_std"], entry["probe_count"]
    p_l, p_r = stats.neighbour_pvalues(mean[0], std[0], count[0], mean[1], std[1], count[1])
    return stats.localized_mask(p_l, p_r, alpha)
