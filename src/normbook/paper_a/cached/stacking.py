"""M independent models laid side by side in one network (grouped convolutions).

Every parameter and buffer of a stacked network has the models along its first axis, in equal
slices, so one model can be cut out, stored on its own, and stacked again with others.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from normbook.runtime.progress import progress


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


def kept_fractions(fractions) -> tuple[float, ...]:
    """A training config's checkpoint fractions, checked (each in (0, 1)) and sorted."""
    if any(not 0 < f < 1 for f in fractions):
        raise ValueError(f"checkpoints are fractions in (0, 1), got {fractions}")
    return tuple(sorted(float(f) for f in fractions))


def checkpoint_steps(steps: int, fractions) -> list[int]:
    """The steps at which a state is kept: ``round(f * steps)`` for each fraction, at least 1."""
    return sorted({max(1, round(f * steps)) for f in fractions})


@dataclass
class Trained:
    """Loss history (steps, M), training wall-clock seconds (the stacked pass, all models
    together), the models' states at each checkpoint step ({step: [state per model]}) and how
    the steps ran (``eager``, or ``cuda graph``: :func:`graphed_step`)."""

    losses: np.ndarray
    seconds: float
    checkpoints: dict[int, list[dict[str, torch.Tensor]]]
    path: str = "eager"


@dataclass(frozen=True)
class Objective:
    """One training step's work: ``draw()`` a fresh batch, ``loss(batch)`` of every model, (M,).
    Calling it does both; kept apart, a CUDA graph can replay the loss on a batch drawn outside
    it (:func:`graphed_step`)."""

    draw: Callable[[], torch.Tensor]
    loss: Callable[[torch.Tensor], torch.Tensor]

    def __call__(self) -> torch.Tensor:
        return self.loss(self.draw())


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued work (a no-op on the CPU, whose work is never queued)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@contextmanager
def rewound(net: nn.Module, opt: torch.optim.Optimizer):
    """Steps taken inside leave no trace: parameters and buffers are put back and Adam's state
    is zeroed, which is its state before its first step (the warm-up of a CUDA graph)."""
    saved = [t.detach().clone() for t in net.state_dict().values()]
    yield
    with torch.no_grad():
        for t, s in zip(net.state_dict().values(), saved):
            t.copy_(s)
        for state in opt.state.values():
            for v in state.values():
                if torch.is_tensor(v):
                    v.zero_()


def _adam_step(opt, objective: Objective, batch: torch.Tensor) -> torch.Tensor:
    opt.zero_grad(set_to_none=True)
    per_model = objective.loss(batch)
    per_model.sum().backward()
    opt.step()
    return per_model


def graphed_step(net: nn.Module, opt, objective: Objective, first: torch.Tensor, warmup: int = 3):
    """The Adam step captured once as a CUDA graph and replayed: one launch a step instead of
    several hundred (paper A's network has 32 layers). ``opt`` must be ``capturable``;
    ``first`` is the first step's batch, so the data stream is the eager one. The warm-up steps
    (cuDNN's algorithm search, Adam's state) are rewound. Returns ``step()``: draws the next
    batch into the graph's input (the first call uses ``first``), replays, returns the
    losses."""
    static_x = first.clone()
    with rewound(net, opt):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())  # after rewound's copies
        with torch.cuda.stream(side):
            for _ in range(warmup):
                _adam_step(opt, objective, static_x)
        torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = _adam_step(opt, objective, static_x)
    drawn = [False]

    def step() -> torch.Tensor:
        if drawn[0]:
            static_x.copy_(objective.draw())
        drawn[0] = True
        graph.replay()
        return static_loss

    return step


def train(
    net: nn.Module,
    n_models: int,
    steps: int,
    lr: float,
    per_model_loss: Callable[[], torch.Tensor],
    desc: str,
    schedule: str = "constant",
    keep_at: list[int] = (),
    graphs: bool = False,
) -> Trained:
    """Adam on the sum of the models' losses, so each model gets exactly its own gradient
    (Adam is elementwise: each follows its solo trajectory up to float summation order).
    ``per_model_loss()`` draws a batch and returns the loss of every model, shape (M,).
    The states at the steps in ``keep_at`` are kept; the net is left in eval mode.

    Nothing waits for the device between steps: losses stay where they are computed until the
    end, and the clock is read only where a kept state is copied out. With ``graphs``, on CUDA,
    at a constant learning rate and with an :class:`Objective`, the step is a CUDA graph
    (:func:`graphed_step`); if capturing fails the steps run eagerly and ``path`` says why."""
    net.train()
    device = device_of(net)
    graphed = (graphs and device.type == "cuda" and schedule == "constant"
               and isinstance(per_model_loss, Objective))  # fmt: skip
    opt = torch.optim.Adam(net.parameters(), lr=lr, capturable=graphed)
    sched = lr_scheduler(opt, schedule, steps)
    losses = torch.empty((steps, n_models), device=device)  # copied once, at the end
    kept: dict[int, list[dict[str, torch.Tensor]]] = {}
    seconds, keep, path = 0.0, set(keep_at), "eager"
    t0 = time.perf_counter()
    step_fn, first = None, None
    if graphed:
        first = per_model_loss.draw()
        try:
            step_fn, path = graphed_step(net, opt, per_model_loss, first), "cuda graph"
        except RuntimeError as exc:  # an op the graph cannot hold: the same steps, eagerly
            path = f"eager (CUDA graph capture failed: {str(exc).splitlines()[0][:120]})"
    for step in progress(range(steps), desc=desc):
        if step_fn is not None:
            per_model = step_fn()
        elif first is not None:  # the capture failed after drawing the first batch
            per_model, first = _adam_step(opt, per_model_loss, first), None
        else:
            per_model = per_model_loss()
            opt.zero_grad(set_to_none=True)
            per_model.sum().backward()
            opt.step()
        if sched is not None:
            sched.step()
        losses[step] = per_model.detach()
        if step + 1 in keep:
            synchronize(device)
            seconds += time.perf_counter() - t0
            kept[step + 1] = [unstack(net, i, n_models) for i in range(n_models)]
            t0 = time.perf_counter()
    synchronize(device)
    seconds += time.perf_counter() - t0
    net.eval()
    return Trained(losses.cpu().numpy(), seconds, kept, path)
