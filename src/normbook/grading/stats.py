"""Statistics primitives shared by both papers: streaming moments, effect sizes, binomial
intervals and tests, seed summaries. Tests come from scipy.stats."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from scipy import stats as sps


class RunningMoments:
    """Count, mean and sum of squared deviations per index, merged batch by batch.

    Uses Chan et al.'s pairwise update, so millions of predictions per index never
    have to be held in memory.
    """

    def __init__(self, shape: tuple[int, ...]):
        self.count = 0
        self.mean = np.zeros(shape, dtype=np.float64)
        self.m2 = np.zeros(shape, dtype=np.float64)

    def update(self, batch: np.ndarray) -> None:
        """Add samples; ``batch`` has shape (n, *shape)."""
        batch = np.asarray(batch, dtype=np.float64)
        n_b = batch.shape[0]
        if n_b == 0:
            return
        mean_b = batch.mean(axis=0)
        m2_b = ((batch - mean_b) ** 2).sum(axis=0)
        n_a, n = self.count, self.count + n_b
        delta = mean_b - self.mean
        self.mean = self.mean + delta * (n_b / n)
        self.m2 = self.m2 + m2_b + delta**2 * (n_a * n_b / n)
        self.count = n

    @property
    def var(self) -> np.ndarray:
        """Unbiased sample variance."""
        return self.m2 / max(self.count - 1, 1)

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(self.var)


class DeviceMoments:
    """:class:`RunningMoments` kept in float64 on the device the batches are on (a GPU): the
    same update, with no copy to the host per batch; :meth:`to_host` ends it. It equals
    :class:`RunningMoments` on the same batches up to float64 rounding (tested at 1e-12)."""

    def __init__(self, shape: tuple[int, ...], device):
        self.count = 0  # a host integer: the update never waits for the device
        self.mean = torch.zeros(shape, dtype=torch.float64, device=device)
        self.m2 = torch.zeros(shape, dtype=torch.float64, device=device)

    def update(self, batch: torch.Tensor) -> None:
        """Add samples; ``batch`` has shape (n, *shape), any float dtype."""
        n_b = batch.shape[0]
        if n_b == 0:
            return
        batch = batch.to(torch.float64)
        mean_b = batch.mean(dim=0)
        m2_b = ((batch - mean_b) ** 2).sum(dim=0)
        n_a, n = self.count, self.count + n_b
        delta = mean_b - self.mean
        self.mean += delta * (n_b / n)
        self.m2 += m2_b + delta**2 * (n_a * n_b / n)
        self.count = n

    def to_host(self) -> RunningMoments:
        """The moments as a (numpy) :class:`RunningMoments`: one copy, at the end."""
        host = RunningMoments(tuple(self.mean.shape))
        host.count, host.mean, host.m2 = self.count, self.mean.cpu().numpy(), self.m2.cpu().numpy()
        return host


def stack_moments(prefix: str, streams: list[RunningMoments]) -> dict[str, np.ndarray]:
    """``{prefix}_mean``, ``_std`` and ``_count`` arrays over independent streams (axis 0)."""
    return {
        f"{prefix}_mean": np.stack([m.mean for m in streams]),
        f"{prefix}_std": np.stack([m.std for m in streams]),
        f"{prefix}_count": np.array([m.count for m in streams]),
    }


@dataclass(frozen=True)
class EffectSize:
    """How large the position signal is, not only whether it is detectable."""

    slope: float  # of mean prediction vs target (1 = the ramp itself)
    r2: float  # of mean prediction vs target
    mae: float  # mean |mean prediction - target|
    n_indices: int


def effect_size(
    mean_pred: np.ndarray, target: np.ndarray, where: np.ndarray | None = None
) -> EffectSize:
    """Slope, R^2 and MAE of the per-index mean predictions against the ramp."""
    mean_pred, target = np.asarray(mean_pred, float), np.asarray(target, float)
    if where is not None:
        mean_pred, target = mean_pred[where], target[where]
    fit = sps.linregress(target, mean_pred)
    return EffectSize(
        slope=float(fit.slope),
        r2=float(fit.rvalue**2),
        mae=float(np.abs(mean_pred - target).mean()),
        n_indices=int(target.size),
    )


CONFIDENCE = 0.95  # of every interval the book reports


def wilson(correct, n: int, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of each accuracy ``correct / n`` (scipy.stats.binomtest)."""
    flat = np.asarray(correct).ravel()
    lo, hi = np.empty(flat.shape), np.empty(flat.shape)
    for i, k in enumerate(flat):
        ci = sps.binomtest(int(k), int(n)).proportion_ci(
            confidence_level=confidence, method="wilson"
        )
        lo[i], hi[i] = ci.low, ci.high
    shape = np.shape(correct)
    return lo.reshape(shape), hi.reshape(shape)


def chance_pvalue(correct: int, n: int) -> float:
    """Two-sided exact binomial test of accuracy = 1/2."""
    return float(sps.binomtest(int(correct), int(n), 0.5).pvalue)


def mean_sd(values) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof = 1) over seeds; sd is NaN for one seed."""
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else float("nan")
