"""The U-Net's and the 2-D CNN's runs: train (or load) and evaluate through the cached steps of
:mod:`.arch_common`, then summarize with the localization detector, each normalized config with
its two nulls (:class:`Runs`). This module asks for and reads results; the steps' keys cover
the code that computes them (:mod:`.arch_common`, :mod:`.unet`, :mod:`.grid2d`), not this.

    runs = arch_runs.runs(arch_runs.unet_config(params))  # .norm .none .circular
    runs = arch_runs.runs(arch_runs.grid_config(params))  # idem, per axis too
    runs.curve  # the normalized networks at the late state kept and at the end (or None)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import numpy as np
import torch
from torch import nn

from normbook.grading.stats import effect_size
from normbook.paper_a.cached.arch_common import evaluated
from normbook.paper_a.cached.grid2d import Grid2dConfig, StackedCNN2d
from normbook.paper_a.cached.task import ramp, sample_inputs
from normbook.paper_a.cached.training import late_fraction
from normbook.paper_a.cached.unet import StackedUNet, UNetConfig
from normbook.paper_a.measures import detector
from normbook.paper_a.measures.detector import DetectorConfig, Localization, Moments
from normbook.paper_a.runs import localization
from normbook.paper_a.runs.localization import Curve, SummarizedRun, late_step
from normbook.runtime.devices import resolve_device
from normbook.runtime.seeding import generators

# ============================================================================ configs

# The parameters both architectures share, config field -> chapter A4's parameter.
ARCH_PARAMS = dict(seeds="arch_seeds", batch_size="arch_batch_size", lr="arch_lr",
                   schedule="arch_schedule", eval_batch="arch_eval_batch")  # fmt: skip


def config_from_params(cls, params, **fixed):
    """``cls`` (:class:`UNetConfig` or :class:`Grid2dConfig`) from chapter A4's parameters
    (``cls.PARAMS`` and :data:`ARCH_PARAMS`), with chapter A1's detector; an invalid config's
    error names the parameters, not the fields."""
    names = {**cls.PARAMS, **ARCH_PARAMS}
    values = {f: params[p] for f, p in names.items()}
    values["seeds"] = tuple(values["seeds"])
    # one kept state: the only one a late gain reads (the last curve fraction by half the budget)
    values["checkpoints"] = late_fraction(params.curve_fractions)
    try:
        return cls(**values, **fixed, device=resolve_device(params.device),
                   detector=localization.Setup.from_params(params).detector)  # fmt: skip
    except ValueError as exc:
        msg = str(exc)
        for f, p in sorted(names.items(), key=lambda fp: -len(fp[0])):
            msg = re.sub(rf"\b{f}\b", p, msg)
        raise ValueError(msg) from None


def unet_config(params, norm: str = "group") -> UNetConfig:
    """Chapter A4's U-Net config (``norm="none"``: its unnormalized twin)."""
    return config_from_params(UNetConfig, params, norm=norm)


def grid_config(params, norm: str = "instance") -> Grid2dConfig:
    """Chapter A4's 2-D CNN config (one group when ``norm="group"``)."""
    return config_from_params(Grid2dConfig, params, norm=norm, groups=1)


class _ArchRun(SummarizedRun):
    """What both architectures' runs add to :class:`localization.SummarizedRun`."""

    @property
    def seq_len(self) -> int:
        return self.out.mean.shape[-1]

    @property
    def mean(self) -> np.ndarray:
        """The pooled mean prediction per seed and index (M, L)."""
        return self.out.pooled_mean

    @property
    def n_per_index(self) -> int:
        return int(self.out.count.sum())


@dataclass
class Runs:
    """A normalized config's runs with its two nulls, ready for
    ``verdicts.localizes_verdict(claim, runs.norm, runs.none, runs.circular, runs.curve)``."""

    norm: _ArchRun  # a UNetRun or a GridRun
    none: _ArchRun
    circular: _ArchRun
    curve: Curve | None = None  # ``norm`` at the late kept state and at the end (late_curve)

    @property
    def all(self) -> list:
        return [self.norm, self.none, self.circular]


# ============================================================================ U-Net


def gradient_reach(net: nn.Module, seq_len: int, outputs, n_inputs: int = 4) -> np.ndarray:
    """Per model and output index: the largest |j - i| with a non-zero input gradient of output
    i on any of ``n_inputs`` noise inputs ((M, len(outputs)); -1: no gradient). For a U-Net."""
    net = net.cpu().eval()
    m, outputs = net.n_models, list(outputs)
    x = sample_inputs(n_inputs * len(outputs), m, seq_len, generators(net.seeds, "check"))
    x.requires_grad_(True)
    out = net(x).view(len(outputs), n_inputs, m, seq_len)
    sel = torch.stack([out[k, :, :, i] for k, i in enumerate(outputs)])
    sel.sum().backward()
    grad = (x.grad.view(len(outputs), n_inputs, m, seq_len) != 0).any(dim=1)  # (K, M, L)
    reach = np.full((m, len(outputs)), -1)
    for k, i in enumerate(outputs):
        for j in range(m):
            nz = np.flatnonzero(grad[k, j].numpy())
            if nz.size:
                reach[j, k] = np.abs(nz - i).max()
    return reach


@dataclass
class UNetRun(_ArchRun):
    """One U-Net config's networks (one per seed), evaluated and summarized; ``cnn`` is the
    :class:`UNetConfig` (it has ``label``, ``norm`` and ``receptive_radius``)."""

    cnn: UNetConfig
    seeds: list[int]
    net: StackedUNet = field(repr=False)
    loss: np.ndarray  # (steps, M)
    out: Moments  # (2, M, L)
    per_seed: list[Localization]
    train_cache_hits: list[bool]
    cache_hit: bool
    padding: str = "zeros"


def _by_residue(a: np.ndarray, period: int) -> np.ndarray:
    """(..., L) -> (..., period, L // period): index q * period + r goes to [r, q]."""
    return np.swapaxes(a.reshape(*a.shape[:-1], -1, period), -1, -2)


def _from_residue(a: np.ndarray) -> np.ndarray:
    """The inverse of :func:`_by_residue`."""
    return np.swapaxes(a, -1, -2).reshape(*a.shape[:-2], -1)


def summarize_periodic(
    moments: Moments, radius: int, det: DetectorConfig, period: int
) -> list[Localization]:
    """:func:`detector.summarize` for a network equivariant only to shifts by ``period``.

    A U-Net that down-samples by 2**levels computes the same function only at indices of
    the same residue mod 2**levels, so even without any boundary its mean output repeats with
    that period, and the span test (i - 1 against i + 1) would "localize" the residue. Here
    each test compares indices of one residue class: the span test asks whether i - period
    and i + period differ. The interior fraction counts the indices whose test uses only
    outputs at least R from both ends ([R + period, l - 1 - R - period] for span); effect sizes
    and the localization distance are those of :func:`detector.summarize`. With ``period`` 1
    this is :func:`detector.summarize`.
    """
    seq_len = moments.mean.shape[-1]
    if seq_len % period:
        raise ValueError(f"sequence length {seq_len} is not a multiple of the period {period}")
    split = Moments(
        _by_residue(moments.mean, period), _by_residue(moments.std, period), moments.count
    )
    localized = detector.localized_mask(_from_residue(split.pvalues(det.test)), det.alpha)
    tested = detector.interior_mask(seq_len, radius + period * detector.TEST_REACH[det.test])
    return detector.per_model(localized, moments.pooled_mean, radius, tested, det)


def late_curve(final, run) -> Curve | None:
    """The normalized networks at the last state kept by half the budget and at the end
    (``final``, the graded run): all a late gain reads. ``run(at_step=...)`` evaluates the kept
    state as ``final`` was evaluated (same samples). None when no state was kept by then."""
    tc = final.cnn.train
    half = late_step(tc)
    if half is None:
        return None
    return Curve(final.cnn, np.array([half, tc.steps]), tc.steps, [run(at_step=half), final])


def unet_run(cfg: UNetConfig, padding: str = "zeros", at_step: int | None = None) -> UNetRun:
    """Train (or load) the U-Nets of ``cfg.seeds``, evaluate them with ``padding`` (cached;
    ``at_step``: the states kept at that step), and summarize with the interior beyond the
    exact receptive radius."""
    net, losses, hits, entry = evaluated(cfg, padding, at_step)
    out = Moments.from_arrays(entry, "out")
    return UNetRun(
        cnn=cfg,
        seeds=list(cfg.seeds),
        net=net,
        loss=losses,
        out=out,
        per_seed=summarize_periodic(out, cfg.receptive_radius, cfg.detector, 2**cfg.levels),
        train_cache_hits=hits,
        cache_hit=entry.hit,
        padding=padding,
    )


# ============================================================================ 2-D CNN


@dataclass
class AxisRun(_ArchRun):
    """One axis of a 2-D run (``axis`` = "rows" or "columns"), a run of its own."""

    cnn: Grid2dConfig
    seeds: list[int]
    axis: str
    out: Moments  # (2, M, H) or (2, M, W)
    per_seed: list[Localization]
    padding: str = "zeros"

    @property
    def name(self) -> str:
        return f"{super().name} ({self.axis})"


@dataclass
class GridRun(SummarizedRun):
    """One 2-D config's networks; ``rows`` and ``cols`` are the axes as runs of their own and
    ``per_seed`` joins them (:func:`join_axes`); ``maps`` are the mean prediction maps."""

    cnn: Grid2dConfig
    seeds: list[int]
    net: StackedCNN2d = field(repr=False)
    loss: np.ndarray  # (steps, M)
    rows: AxisRun
    cols: AxisRun
    maps: np.ndarray  # (M, 2, H, W): mean row and column predictions
    per_seed: list[Localization]
    train_cache_hits: list[bool]
    cache_hit: bool
    padding: str = "zeros"

    @property
    def mean(self) -> np.ndarray:
        """The mean prediction maps per seed (M, 2, H, W)."""
        return self.maps


def join_axes(rows: AxisRun, cols: AxisRun) -> list[Localization]:
    """Per seed, both axes as one measure: the localized indices of rows then columns, the
    interior fraction over the tested indices of both axes, the effect sizes of both axes' mean
    predictions against their ramps, and the shorter of the two localization distances."""
    radius, test = rows.radius, rows.cnn.detector.test
    parts = []
    for run in (rows, cols):
        n = run.seq_len
        interior = detector.interior_mask(n, radius)
        tested = detector.interior_mask(n, radius + detector.TEST_REACH[test])
        parts.append((run, ramp(n).numpy(), interior, tested))
    out = []
    for s in range(len(rows.per_seed)):
        loc = np.concatenate([r.per_seed[s].localized for r, *_ in parts])
        tested = np.concatenate([t for *_, t in parts])
        interior = np.concatenate([i for _, _, i, _ in parts])
        mean = np.concatenate([r.mean[s] for r, *_ in parts])
        target = np.concatenate([t for _, t, _, _ in parts])
        out.append(
            Localization(
                localized=loc,
                distance=min(r.per_seed[s].distance for r, *_ in parts),
                frac_interior=float(loc[tested].mean()) if tested.any() else float("nan"),
                frac_all=float(loc.mean()),
                effect_all=effect_size(mean, target),
                effect_interior=effect_size(mean, target, interior),
            )
        )
    return out


def grid_run(cfg: Grid2dConfig, padding: str = "zeros", at_step: int | None = None) -> GridRun:
    """Train (or load) the 2-D CNNs of ``cfg.seeds``, evaluate them with ``padding`` (cached;
    ``at_step``: the states kept at that step), and summarize each axis with
    R = floor(k/2) * depth."""
    net, losses, hits, entry = evaluated(cfg, padding, at_step)
    axes = {}
    for name, axis in (("rows", "rows"), ("cols", "columns")):
        out = Moments.from_arrays(entry, name)
        axes[name] = AxisRun(
            cnn=cfg,
            seeds=list(cfg.seeds),
            axis=axis,
            out=out,
            per_seed=detector.summarize(out, cfg.receptive_radius, cfg.detector),
            padding=padding,
        )
    return GridRun(
        cnn=cfg,
        seeds=list(cfg.seeds),
        net=net,
        loss=losses,
        rows=axes["rows"],
        cols=axes["cols"],
        maps=entry["map"],
        per_seed=join_axes(axes["rows"], axes["cols"]),
        train_cache_hits=hits,
        cache_hit=entry.hit,
        padding=padding,
    )


def runs(cfg: UNetConfig | Grid2dConfig) -> Runs:
    """``cfg`` (normalized), the same config without norm, and the same trained networks
    evaluated with circular padding (the null without a boundary), for either architecture."""
    run = unet_run if isinstance(cfg, UNetConfig) else grid_run
    if cfg.norm == "none":
        raise ValueError(f"{type(cfg).__name__}: the runs need a normalized config, not 'none'")
    norm = run(cfg)
    curve = late_curve(norm, lambda at_step: run(cfg, at_step=at_step))
    return Runs(norm, run(replace(cfg, norm="none")), run(cfg, padding="circular"), curve)
