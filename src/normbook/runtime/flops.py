"""Planned compute: what a chapter will train and evaluate, in FLOPs, before it runs, and an
estimated time on a stated device. Each chapter's spec carries its plan (``Spec.plan``: the
chapter's parameters -> a list of :class:`Item`); the build's queue starts the largest
chapters first, and ``make plan`` prints the table (:func:`report`).

FLOPs come from PyTorch's own counter (``torch.utils.flop_counter``) run on one model at the
chapter's geometry: a training step costs one forward and one backward pass, an evaluated
sample one forward pass. The time assumes a sustained share of the device's fp32 peak (small
1-D convolutions rarely reach more), stated with every estimate; it ignores data loading,
k-means and the statistics, which run on the CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def count(fn) -> int:
    """FLOPs of one call of ``fn`` (PyTorch's counter)."""
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def train_step_flops(model: torch.nn.Module, x: torch.Tensor) -> int:
    return count(lambda: model(x).sum().backward())


def report(plans: dict[str, list[Item]]) -> str:
    """The dry-run table: every chapter's items, FLOPs and estimated time."""
    lines = [
        f"Planned compute; time estimated on {DEVICE} at {UTILIZATION:.0%} of its "
        f"{PEAK_TFLOPS:g} TFLOP/s fp32 peak (training and evaluation passes only)"
    ]
    total = 0.0
    for name, items in plans.items():
        flops = sum(i.flops for i in items)
        total += flops
        secs = sum(i.seconds() for i in items)
        lines.append(f"{name}: {flops / 1e12:,.1f} TFLOP, about {secs / 60:,.1f} min")
        lines += [f"    {i.what}: {i.flops / 1e12:,.2f} TFLOP" for i in items]
    secs = total / (PEAK_TFLOPS * 1e12 * UTILIZATION)
    lines.append(f"total: {total / 1e12:,.1f} TFLOP, about {secs / 3600:,.2f} h")
    return "\n".join(lines)
