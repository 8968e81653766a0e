"""Evaluating trained localization CNNs on fresh noise: the computation the evaluation steps'
cache keys cover (:mod:`.steps`), and nothing else. Streaming per-index moments of the
predictions (and of depth-probe outputs), in two independent streams."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from normbook.grading import stats
from normbook.paper_a.cached import probes
from normbook.paper_a.cached.cnn import StackedCNN, set_batch_eval
from normbook.paper_a.cached.stacking import device_of
from normbook.paper_a.cached.task import sample_inputs
from normbook.runtime.progress import progress
from normbook.runtime.seeding import generators

EVAL_PASS_SAMPLES = 256  # samples per forward pass when batches are independent (measured best)
DEVICE_PASS_SAMPLES = 8192  # on a GPU: a pass that fills it (paper A at l = 600: ~10 GB)


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


def native(dev: torch.device) -> bool:
    """Whether evaluation runs device-native: noise drawn, moments accumulated (float64) and
    passes sized on the device. The CPU keeps its own path, whose numbers the book was built
    with (numpy moments, per batch)."""
    return dev.type != "cpu"


class _Streams:
    """Two independent accumulators of per-index moments; batch j of the evaluation goes to
    stream j % 2. On the CPU, numpy updates per batch; device-native, one float64 update per
    stream and pass on the device (:class:`stats.DeviceMoments`)."""

    def __init__(self, shape: tuple[int, ...], dev: torch.device, on_device: bool):
        self.on_device = on_device
        make = (lambda: stats.DeviceMoments(shape, dev)) if on_device else (
            lambda: stats.RunningMoments(shape))  # fmt: skip
        self.streams = [make(), make()]

    def update(self, out: torch.Tensor, first: int, k: int, bs: int, batch_mean=False) -> None:
        """Add a pass of ``k`` batches of ``bs`` rows, its first the evaluation's batch
        ``first``; with ``batch_mean``, one batch's mean over its rows instead (k = 1)."""
        if batch_mean:
            mean = (lambda a: a.mean(dim=0, keepdim=True)) if self.on_device else (
                lambda a: a.cpu().numpy().mean(axis=0, keepdims=True))  # fmt: skip
            self.streams[first % 2].update(mean(out))
            return
        if self.on_device:
            batches = out.reshape(k, bs, *out.shape[1:])
            for s in (0, 1):
                self.streams[s].update(batches[(s - first) % 2 :: 2].flatten(0, 1))
            return
        out = out.cpu().numpy()
        for j in range(k):
            self.streams[(first + j) % 2].update(out[j * bs : (j + 1) * bs])

    def moments(self, prefix: str) -> dict:
        host = [m.to_host() if self.on_device else m for m in self.streams]
        return stats.stack_moments(prefix, host)


@torch.no_grad()
def evaluate(
    net: StackedCNN,
    seq_len: int,
    ev: EvalConfig,
    probe_weights: torch.Tensor | None,
    on_device: bool | None = None,
):
    """Streaming per-index moments of the predictions (and probe outputs) on fresh noise.

    Batches alternate between two accumulators, so each index has two independent
    estimates: every localization test compares outputs of one stream with the other's.
    ``on_device`` (default: :func:`native`) selects the device-native path.
    """
    m, depth = net.n_models, net.cfg.n_layers
    set_batch_eval(net, ev.batch_eval)
    net.eval()
    dev = device_of(net)
    on_device = native(dev) if on_device is None else on_device
    if probe_weights is not None:
        probe_weights = probe_weights.to(dev)
    out_mom = _Streams((m, seq_len), dev, on_device)
    probe_mom = _Streams((depth, m, seq_len), dev, on_device)
    gens = generators(net.seeds, "eval", dev)
    n_batches = max(2, -(-ev.n_samples // ev.batch_size))
    # Samples of one batch talk to each other only through minibatch BatchNorm; otherwise
    # several batches go through the network in one pass (same samples, fewer calls).
    coupled = ev.batch_eval == "minibatch" and net.cfg.norm == "batch"
    bs = ev.batch_size
    per_pass = (
        1 if coupled else max(1, (DEVICE_PASS_SAMPLES if on_device else EVAL_PASS_SAMPLES) // bs)
    )
    for first in progress(range(0, n_batches, per_pass), desc="evaluate"):
        k = min(per_pass, n_batches - first)
        x = sample_inputs(bs * k, m, seq_len, gens, ev.input_kind)
        if probe_weights is None:
            out_mom.update(net(x), first, k, bs)
            continue
        probe_out = torch.empty((bs * k, depth, m, seq_len), device=dev)

        def read(d, h, into=probe_out):  # each depth's probe, as its layer is made
            into[:, d].copy_(probes.apply_probe(h, probe_weights[d]))

        out_mom.update(net(x, each_layer=read), first, k, bs)
        probe_mom.update(probe_out, first, k, bs)
    return {**out_mom.moments("out"), **probe_mom.moments("probe")}


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
    dev = device_of(net)
    single = _Streams((m, seq_len), dev, native(dev))
    means = _Streams((m, seq_len), dev, native(dev))
    gens = generators(net.seeds, "eval", dev)
    n_batches = max(4, -(-n_samples // batch_size))
    n_batches += n_batches % 2
    for b in progress(range(n_batches), desc=f"evaluate ({mode}, batch {batch_size})"):
        out = net(sample_inputs(batch_size, m, seq_len, gens))
        single.update(out, b, 1, batch_size)
        means.update(out, b, 1, batch_size, batch_mean=True)
    return {**single.moments("out"), **means.moments("bmean")}
