"""M independent models laid side by side in one network (grouped convolutions).

Every parameter and buffer of a stacked network has the models along its first axis, in equal
slices, so one model can be cut out, stored on its own, and stacked again with others.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from ..core.progress import progress


def unstack(net: nn.Module, i: int, n_models: int) -> dict[str, torch.Tensor]:
    """Model ``i``'s parameters and buffers (0-d buffers, such as BatchNorm's step counter,
    belong to no model and are left out)."""
    out = {}
    for name, t in net.state_dict().items():
        if t.ndim == 0:
            continue
        per = t.shape[0] // n_models
        out[name] = t[i * per : (i + 1) * per].clone()
    return out


def restack(net: nn.Module, states: list[dict[str, torch.Tensor]]) -> nn.Module:
    """Load separately stored models into ``net`` (built for ``len(states)`` models); eval mode."""
    full = net.state_dict()
    for name in full:
        if full[name].ndim:
            full[name] = torch.cat([s[name] for s in states], dim=0)
    net.load_state_dict(full)
    return net.eval()


def train(
    net: nn.Module,
    n_models: int,
    steps: int,
    lr: float,
    per_model_loss: Callable[[], torch.Tensor],
    desc: str,
) -> np.ndarray:
    """Adam on the sum of the models' losses, so each model gets exactly its own gradient
    (Adam is elementwise: each follows its solo trajectory up to float summation order).
    ``per_model_loss()`` draws a batch and returns the loss of every model, shape (M,).
    Returns the loss history (steps, M); the net is left in eval mode."""
    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    losses = np.empty((steps, n_models), dtype=np.float32)
    for step in progress(range(steps), desc=desc):
        per_model = per_model_loss()
        opt.zero_grad(set_to_none=True)
        per_model.sum().backward()
        opt.step()
        losses[step] = per_model.detach().numpy()
    net.eval()
    return losses
