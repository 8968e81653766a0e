"""The localization task of paper A: map i.i.d. Gaussian noise to a linear ramp."""

from __future__ import annotations

import torch

INPUT_KINDS = ("noise", "constant")


def ramp(seq_len: int) -> torch.Tensor:
    """Target y_i = i / (seq_len - 1): the position of every index, in [0, 1]."""
    return torch.linspace(0.0, 1.0, seq_len)


def sample_inputs(
    batch: int, n_models: int, seq_len: int, generators: list[torch.Generator], kind: str = "noise"
) -> torch.Tensor:
    """Inputs of shape (batch, n_models, seq_len), one independent stream per model.

    Each model draws from its own generator so that a model trained inside a batched
    group sees exactly the data it would see trained alone; the inputs are drawn on the
    generators' device (a GPU's noise never passes through the host).
    ``kind="constant"`` gives one N(0,1) value repeated along the sequence (a falsifier:
    no unique patches to share).
    """
    if kind not in INPUT_KINDS:
        raise ValueError(f"input kind must be one of {INPUT_KINDS}, got {kind!r}")
    if len(generators) != n_models:
        raise ValueError(f"need one generator per model ({n_models}), got {len(generators)}")
    cols = []
    for g in generators:
        if kind == "noise":
            cols.append(torch.randn(batch, seq_len, generator=g, device=g.device))
        else:
            cols.append(torch.randn(batch, 1, generator=g, device=g.device).expand(batch, seq_len))
    return torch.stack(cols, dim=1)
