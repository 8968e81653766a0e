"""Evaluating trained localization CNNs on fresh noise: the computation the evaluation steps'
cache keys cover (:mod:`.steps`), and nothing else. Streaming per-index moments of the
predictions (and of depth-probe outputs), in two independent streams."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..core import stats
from ..core.progress import progress
from ..core.seeding import generators
from . import probes
from .cnn import StackedCNN, set_batch_eval
from .stacking import device_of
from .task import sample_inputs

EVAL_PASS_SAMPLES = 256  # samples per forward pass when batches are independent (measured best)


@dataclass(frozen=True)
class EvalConfig:
    n_samples: int  # predictions per index, split over two independent streams
    batch_size: int  # matters only for BatchNorm with minibatch statistics
    probe_batches: int  # batches of fresh noise used to fit each depth's probe
    device: str
    batch_eval: str = "minibatch"
    probe_ridge: float = 1e-3
    input_kind: str = "noise"
    padding: str = "zeros"  # "circular": the trained weights without a boundary (a null)


@torch.no_grad()
def evaluate(net: StackedCNN, seq_len: int, ev: EvalConfig, probe_weights: torch.Tensor | None):
    """Streaming per-index moments of the predictions (and probe outputs) on fresh noise.

    Batches alternate between two accumulators, so each index has two independent
    estimates: every localization test compares outputs of one stream with the other's.
    """
    m, depth = net.n_models, net.cfg.n_layers
    set_batch_eval(net, ev.batch_eval)
    net.eval()
    dev = device_of(net)
    if probe_weights is not None:
        probe_weights = probe_weights.to(dev)
    out_mom = [stats.RunningMoments((m, seq_len)) for _ in range(2)]
    probe_mom = [stats.RunningMoments((depth, m, seq_len)) for _ in range(2)]
    gens = generators(net.seeds, "eval")
    n_batches = max(2, -(-ev.n_samples // ev.batch_size))
    # Samples of one batch talk to each other only through minibatch BatchNorm; otherwise
    # several batches go through the network in one pass (same samples, fewer calls).
    coupled = ev.batch_eval == "minibatch" and net.cfg.norm == "batch"
    per_pass = 1 if coupled else max(1, EVAL_PASS_SAMPLES // ev.batch_size)
    bs = ev.batch_size
    for first in progress(range(0, n_batches, per_pass), desc="evaluate"):
        k = min(per_pass, n_batches - first)
        x = sample_inputs(bs * k, m, seq_len, gens, ev.input_kind).to(dev)
        if probe_weights is None:
            out, probe_out = net(x).cpu().numpy(), None
        else:
            out, acts = net(x, return_activations=True)
            probe_out = probes.apply_probes(acts, probe_weights).cpu().numpy()
            out = out.cpu().numpy()
        for j in range(k):
            rows, stream = slice(j * bs, (j + 1) * bs), (first + j) % 2
            out_mom[stream].update(out[rows])
            if probe_out is not None:
                probe_mom[stream].update(probe_out[rows])
    return {**stats.stack_moments("out", out_mom), **stats.stack_moments("probe", probe_mom)}


def evaluation_arrays(net: StackedCNN, seq_len: int, ev: EvalConfig, with_probes: bool) -> dict:
    """What one cached evaluation holds: the depth probes fitted on their own noise stream (if
    ``with_probes``), then :func:`evaluate` with them."""
    w = None
    if with_probes:
        if ev.probe_batches < 1:
            raise ValueError(f"depth probes need probe_batches >= 1, got {ev.probe_batches}")
        w = probes.fit_probes(net, seq_len, ev.probe_batches, 32, ev.probe_ridge, ev.input_kind)
    arrays = evaluate(net, seq_len, ev, w)
    if w is not None:
        arrays["probe_weights"] = w.numpy()
    return arrays


@torch.no_grad()
def evaluate_batches(
    net: StackedCNN, seq_len: int, n_samples: int, batch_size: int, mode: str
) -> dict:
    """Per-index moments of single predictions and of batch-mean predictions, in two
    independent streams (batches alternate), for evaluation statistics ``mode``."""
    m = net.n_models
    set_batch_eval(net, mode)
    net.eval()
    single = [stats.RunningMoments((m, seq_len)) for _ in range(2)]
    means = [stats.RunningMoments((m, seq_len)) for _ in range(2)]
    gens = generators(net.seeds, "eval")
    dev = device_of(net)
    n_batches = max(4, -(-n_samples // batch_size))
    n_batches += n_batches % 2
    for b in progress(range(n_batches), desc=f"evaluate ({mode}, batch {batch_size})"):
        out = net(sample_inputs(batch_size, m, seq_len, gens).to(dev)).cpu().numpy()
        single[b % 2].update(out)
        means[b % 2].update(out.mean(axis=0, keepdims=True))
    return {**stats.stack_moments("out", single), **stats.stack_moments("bmean", means)}
