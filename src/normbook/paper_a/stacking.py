"""M independent models laid side by side in one network (grouped convolutions).

Every parameter and buffer of a stacked network has the models along its first axis, in equal
slices, so one model can be cut out, stored on its own, and stacked again with others.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..core.progress import progress


def device_of(net: nn.Module) -> torch.device:
    """Where a network's parameters live (the CPU for one without parameters)."""
    p = next(net.parameters(), None)
    return p.device if p is not None else torch.device("cpu")


def unstack(net: nn.Module, i: int, n_models: int) -> dict[str, torch.Tensor]:
    """Model ``i``'s parameters and buffers (0-d buffers, such as BatchNorm's step counter,
    belong to no model and are left out)."""
    out = {}
    for name, t in net.state_dict().items():
        if t.ndim == 0:
            continue
        per = t.shape[0] // n_models
        out[name] = t[i * per : (i + 1) * per].detach().to("cpu", copy=True)
    return out


def restack(net: nn.Module, states: list[dict[str, torch.Tensor]]) -> nn.Module:
    """Load separately stored models into ``net`` (built for ``len(states)`` models); eval mode."""
    full = net.state_dict()
    for name in full:
        if full[name].ndim:
            full[name] = torch.cat([s[name] for s in states], dim=0)
    net.load_state_dict(full)
    return net.eval()


SCHEDULES = ("constant", "onecycle", "cosine")


def lr_scheduler(opt: torch.optim.Optimizer, schedule: str, steps: int, warmup: float = 0.05):
    """The learning-rate schedule: ``constant``; ``onecycle`` (PyTorch's OneCycleLR, peak at
    30 % of the steps); ``cosine`` (linear warm-up over ``warmup`` of the steps, then cosine
    decay to zero). The optimizer's lr is the peak."""
    if schedule == "constant":
        return None
    if schedule == "onecycle":
        peak = opt.param_groups[0]["lr"]
        return torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=peak, total_steps=steps)
    if schedule == "cosine":
        n_warm = max(1, round(warmup * steps))

        def factor(step: int) -> float:
            if step < n_warm:
                return (step + 1) / n_warm
            return 0.5 * (1 + math.cos(math.pi * (step - n_warm) / max(1, steps - n_warm)))

        return torch.optim.lr_scheduler.LambdaLR(opt, factor)
    raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")


def checkpoint_steps(steps: int, fractions) -> list[int]:
    """The steps at which a state is kept: ``round(f * steps)`` for each fraction, at least 1."""
    return sorted({max(1, round(f * steps)) for f in fractions})


@dataclass
class Trained:
    """Loss history (steps, M), training wall-clock seconds (the stacked pass, all models
    together) and the models' states at each checkpoint step: {step: [state per model]}."""

    losses: np.ndarray
    seconds: float
    checkpoints: dict[int, list[dict[str, torch.Tensor]]]


def train(
    net: nn.Module,
    n_models: int,
    steps: int,
    lr: float,
    per_model_loss: Callable[[], torch.Tensor],
    desc: str,
    schedule: str = "constant",
    keep_at: list[int] = (),
) -> Trained:
    """Adam on the sum of the models' losses, so each model gets exactly its own gradient
    (Adam is elementwise: each follows its solo trajectory up to float summation order).
    ``per_model_loss()`` draws a batch and returns the loss of every model, shape (M,).
    The states at the steps in ``keep_at`` are kept; the net is left in eval mode."""
    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = lr_scheduler(opt, schedule, steps)
    device = device_of(net)
    losses = torch.empty((steps, n_models), device=device)  # copied once, at the end
    kept: dict[int, list[dict[str, torch.Tensor]]] = {}
    seconds, keep = 0.0, set(keep_at)
    for step in progress(range(steps), desc=desc):
        t0 = time.perf_counter()
        per_model = per_model_loss()
        opt.zero_grad(set_to_none=True)
        per_model.sum().backward()
        opt.step()
        if sched is not None:
            sched.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds += time.perf_counter() - t0
        losses[step] = per_model.detach()
        if step + 1 in keep:
            kept[step + 1] = [unstack(net, i, n_models) for i in range(n_models)]
    net.eval()
    return Trained(losses.cpu().numpy(), seconds, kept)
