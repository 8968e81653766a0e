"""What a chapter will compute at a profile, before computing it: planned FLOPs per part and an
estimated time on a stated device.

    python -m normbook.core.build book --profile paper --dry-run

FLOPs come from PyTorch's own counter (``torch.utils.flop_counter``) run on one model at the
chapter's geometry: a training step costs one forward and one backward pass, an evaluated
sample one forward pass. The time assumes a sustained share of the device's fp32 peak (small
1-D convolutions rarely reach more), stated with every estimate; it ignores data loading,
k-means and the statistics, which run on the CPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import torch
from torch.utils.flop_counter import FlopCounterMode

# A stated device: NVIDIA H200 (fp32, no tensor cores: 67 TFLOP/s peak), at an assumed 25 %.
DEVICE = "NVIDIA H200"
PEAK_TFLOPS = 67.0
UTILIZATION = 0.25


@dataclass(frozen=True)
class Item:
    what: str
    flops: float

    def seconds(self, tflops: float = PEAK_TFLOPS, utilization: float = UTILIZATION) -> float:
        return self.flops / (tflops * 1e12 * utilization)


def _count(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def _train_flops(model: torch.nn.Module, x: torch.Tensor) -> int:
    return _count(lambda: model(x).sum().backward())


@cache
def localization_flops(seq_len: int, depth: int, width: int, kernel: int) -> tuple[int, int]:
    """(training step per sample, forward per sample) of one localization CNN."""
    from .paper_a.cnn import CNNConfig, StackedCNN
    from .paper_a.task import ramp

    net = StackedCNN(CNNConfig(depth=depth, width=width, kernel=kernel), [0])
    x = torch.randn(1, 1, seq_len)
    train = _count(lambda: ((net(x) - ramp(seq_len)) ** 2).mean().backward())
    with torch.no_grad():
        forward = _count(lambda: net(x))
    return train, forward


def _localization(P, label: str, n_models: int, norms: int = 1) -> list[Item]:
    """Training and evaluation (trained model and its circular null at ``n_eval``, the
    compute-to-effect curve's points at ``curve_eval``) of ``norms`` normalizations x
    ``n_models`` seeds at chapter A1's knobs."""
    train, fwd = localization_flops(P.seq_len, P.depth, P.width, P.kernel)
    models = n_models * norms
    full = P.get("n_eval", 0)
    curve = (len(P.curve_fractions) + 1) * P.curve_eval
    samples = 2 * full + curve + P.get("probe_batches", 0) * 32
    return [
        Item(f"{label}: train {models} models x {P.steps:,} steps",
             models * P.steps * P.batch_size * train),
        Item(f"{label}: evaluate {samples:,} samples per model", models * samples * fwd),
    ]  # fmt: skip


def chapter_plan(name: str, P) -> list[Item]:
    """The planned compute of chapter ``name`` at resolved parameters ``P``."""
    if name == "a1_localization":
        return _localization(P, "no norm + " + P.norm, len(P.seeds), norms=2)
    if name == "a2_mechanism":
        from .paper_a import packnorm

        s = packnorm.configs(P)
        net = packnorm.StackedPackNet(s.net, [0])
        a = torch.randn(1, 1, s.train.path_len)
        step = _count(lambda: net(a, a).sum().backward())
        with torch.no_grad():
            fwd = _count(lambda: net(a, a))
        n = (len(s.overlaps) + len(s.control_overlaps)) * len(s.seeds)
        return [
            Item(
                f"PackNorm: train {n} models x {s.train.steps:,} steps",
                n * s.train.steps * s.train.batch_size * step,
            ),
            Item(f"PackNorm: test {n} models x {s.n_test:,} pairs", n * s.n_test * fwd),
        ]  # fmt: skip  (the localization networks are chapter A1's, cached)
    if name == "a3_which_norms":
        return [
            *_localization(P, "GroupNorm", len(P.group_seeds), len(P.group_counts)),
            *_localization(P, "BatchNorm", len(P.seeds), 1),
        ]  # no norm and InstanceNorm are chapter A1's networks, cached
    if name == "calibration":
        n = len(P.cal_schedules)
        return _localization(P, f"{n} candidates (InstanceNorm)", len(P.seeds), n)
    if name == "b1_setup_accuracy":
        from .paper_b import classify

        out = []
        for cfg in classify.configs(P).configs.values():
            x = torch.randn(1, cfg.in_channels, 32, 32)  # MNIST is padded to 32 x 32
            step = _train_flops(cfg.build(0), x)
            images = cfg.max_epochs * cfg.n_train * len(P.seeds)
            out.append(
                Item(
                    f"{cfg.dataset} {cfg.label}: train {len(P.seeds)} models, at most "
                    f"{cfg.max_epochs} epochs of {cfg.n_train:,} images",
                    images * step,
                )
            )
        return out  # fmt: skip
    return []  # B2, B3, Methods: chapter B1's models, CPU-bound analysis


def report(chapters: dict[str, object]) -> str:
    """The dry-run table: every chapter's items, FLOPs and estimated time."""
    lines = [
        f"Planned compute; time estimated on {DEVICE} at {UTILIZATION:.0%} of its "
        f"{PEAK_TFLOPS:g} TFLOP/s fp32 peak (training and evaluation passes only)"
    ]
    total = 0.0
    for name, P in chapters.items():
        items = chapter_plan(name, P)
        flops = sum(i.flops for i in items)
        total += flops
        secs = sum(i.seconds() for i in items)
        lines.append(f"{name}: {flops / 1e12:,.1f} TFLOP, about {secs / 60:,.1f} min")
        lines += [f"    {i.what}: {i.flops / 1e12:,.2f} TFLOP" for i in items]
    secs = total / (PEAK_TFLOPS * 1e12 * UTILIZATION)
    lines.append(f"total: {total / 1e12:,.1f} TFLOP, about {secs / 3600:,.2f} h")
    return "\n".join(lines)
