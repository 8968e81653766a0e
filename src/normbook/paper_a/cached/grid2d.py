"""**2-D CNN** (:class:`StackedCNN2d`): conv(k) -> norm -> ReLU blocks with zero padding, a 1x1
head to two channels regressing the row coordinate i/(H-1) and the column coordinate j/(W-1)
on H x W noise images; norm ``"instance"`` or ``"none"`` (``"group"`` also works).
R = (k // 2) * depth. Localization is tested per axis: the row channel averaged over columns
is one value per row index (the column channel averaged over rows, one per column), with
moments in two streams exactly as :func:`.evaluation.evaluate`; a row's average includes
columns near the left and right padding, but that padding is the same for every row, so
without a norm interior rows still cannot be told apart. The run's own ``per_seed`` joins the
two axes (:func:`.arch_runs.join_axes`); ``.rows`` and ``.cols`` are the axes alone.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from normbook.paper_a.cached import stacking
from normbook.paper_a.cached.arch_common import (
    ArchConfig,
    check_common,
    declare_steps,
    init_per_model,
    one_of,
    positive,
    set_padding,
)
from normbook.paper_a.cached.norms import make_norm
from normbook.paper_a.cached.task import ramp

GRID_NORMS = ("instance", "group", "none")


@dataclass(frozen=True)
class Grid2dConfig(ArchConfig):
    """Every size and choice of a 2-D localization run, all required (chapter A4's:
    :func:`normbook.paper_a.runs.arch_runs.grid_config`); ``channels`` is the conv width
    (``height`` and ``width`` are the image's)."""

    height: int
    width: int
    depth: int
    channels: int
    kernel: int
    norm: str
    groups: int  # per model, used by norm="group"
    seeds: tuple[int, ...]
    steps: int
    batch_size: int
    lr: float  # the peak of the one-cycle schedule
    schedule: str
    checkpoints: tuple[float, ...]  # fractions of the steps whose states are kept (A4: one)
    n_eval: int
    eval_batch: int
    device: str
    detector: object  # the measures' DetectorConfig (runs.arch_runs); not in any key

    kind = "2-D CNN"
    cache_kind = "a_grid2d"
    loss_dims = (0, 2, 3, 4)
    mean_map = True

    PARAMS = dict(height="grid_size", width="grid_size", depth="grid_depth",
                  channels="grid_channels", kernel="grid_kernel", steps="grid_steps",
                  n_eval="grid_eval")  # fmt: skip

    def __post_init__(self):
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        for name in ("height", "width", "depth", "channels", "kernel", "groups"):
            positive(name, getattr(self, name))
        if self.kernel % 2 == 0:
            raise ValueError(f"kernel must be odd (centred convolutions), got {self.kernel}")
        one_of("norm", self.norm, GRID_NORMS)
        if self.norm == "group" and self.channels % self.groups:
            raise ValueError(f"groups ({self.groups}) must divide channels ({self.channels})")
        if min(self.height, self.width) < 2:
            raise ValueError(
                f"the image needs at least 2 x 2 pixels, got {self.height, self.width}"
            )
        check_common(self)

    @property
    def receptive_radius(self) -> int:
        """R = floor(k/2) * depth, along either axis."""
        return (self.kernel // 2) * self.depth

    @property
    def train_length(self) -> int:
        return self.height

    def architecture(self) -> dict:
        arch = {k: getattr(self, k) for k in ("height", "width", "depth", "channels", "kernel")}
        return {**arch, "norm": self.norm, "groups": self.groups if self.norm == "group" else 0}

    def network(self) -> type:
        return StackedCNN2d

    def draw(self, batch: int, gens) -> torch.Tensor:
        return sample_images(batch, len(gens), self.height, self.width, gens)

    def target(self) -> torch.Tensor:
        return grid_target(self.height, self.width)

    def outputs(self, m: int) -> dict[str, tuple[int, ...]]:
        """The row channel averaged over columns, the column channel averaged over rows."""
        return {"rows": (m, self.height), "cols": (m, self.width)}

    def views(self, y: torch.Tensor) -> dict[str, np.ndarray]:
        return {"rows": y[:, :, 0].mean(dim=-1).numpy(), "cols": y[:, :, 1].mean(dim=-2).numpy()}


# Piloted on the shared 2-core CPU, one torch thread (two threads were up to 100x slower for
# these small nets while other jobs ran). U-Net cpu: about 57 s for all three runs (5 seeds);
# interior slopes 0.28-0.40 and every tested interior index localized, nulls ~0 and <= 0.23.
# 2-D cpu: about 67 s; it does NOT localize beyond R at this budget (interior slopes <= 0.003;
# 24 x 24 with 8 channels, depth 4, and 2500 steps did not either); smoke: a few seconds each.


class StackedCNN2d(nn.Module):
    """M copies of the 2-D CNN; input (B, M, H, W) -> output (B, M, 2, H, W) (row, column)."""

    def __init__(self, cfg: Grid2dConfig, seeds: list[int], padding: str = "zeros"):
        super().__init__()
        self.cfg, self.seeds, m, c = cfg, list(seeds), len(seeds), cfg.channels
        self.n_models = m
        self.convs, self.norms = nn.ModuleList(), nn.ModuleList()
        for layer in range(cfg.depth):
            c_in = 1 if layer == 0 else c
            k = cfg.kernel
            self.convs.append(nn.Conv2d(m * c_in, m * c, k, padding=k // 2, groups=m))
            self.norms.append(make_norm(cfg.norm, m, c, cfg.groups))
        self.head = nn.Conv2d(m * c, m * 2, 1, groups=m)
        init_per_model([*self.convs, self.head], self.seeds)
        set_padding(self, padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x
        for conv, norm in zip(self.convs, self.norms):
            h = F.relu(norm(conv(h)))
        out = self.head(h)
        return out.view(out.shape[0], self.n_models, 2, *out.shape[-2:])

    def model_state(self, i: int) -> dict[str, torch.Tensor]:
        return stacking.unstack(self, i, self.n_models)

    @classmethod
    def from_model_states(cls, cfg, seeds, states, padding: str = "zeros") -> StackedCNN2d:
        return stacking.restack(cls(cfg, seeds, padding), states)


def sample_images(
    batch: int, n_models: int, height: int, width: int, gens: list[torch.Generator]
) -> torch.Tensor:
    """i.i.d. N(0, 1) images (batch, n_models, height, width), one stream per model."""
    if len(gens) != n_models:
        raise ValueError(f"need one generator per model ({n_models}), got {len(gens)}")
    return torch.stack([torch.randn(batch, height, width, generator=g) for g in gens], dim=1)


def grid_target(height: int, width: int) -> torch.Tensor:
    """(2, H, W): the row coordinate i/(H-1) and the column coordinate j/(W-1)."""
    rows = ramp(height)[:, None].expand(height, width)
    cols = ramp(width)[None, :].expand(height, width)
    return torch.stack([rows, cols])


declare_steps(Grid2dConfig, sys.modules[__name__])
