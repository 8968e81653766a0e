"""Paper A's chapters' planned compute (:mod:`normbook.runtime.flops`), one function per
chapter, each named by its spec (``Spec.plan``): what the chapter trains and evaluates beyond
what another chapter's cached networks give it."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import torch

from normbook.paper_a.cached import grid2d, packnet, unet
from normbook.paper_a.runs import arch_runs, localization, packnorm, reach
from normbook.runtime.flops import Item, count, train_step_flops


@cache
def localization_flops(
    seq_len: int, depth: int, width: int, kernel: int, mix: int = 0
) -> tuple[int, int]:
    """(training step per sample, forward per sample) of one localization CNN."""
    from normbook.paper_a.cached.cnn import CNNConfig, StackedCNN
    from normbook.paper_a.cached.task import ramp

    cfg = CNNConfig(depth=depth, width=width, kernel=kernel, norm="instance", mix=mix)
    net = StackedCNN(cfg, [0])
    x = torch.randn(1, 1, seq_len)
    train = count(lambda: ((net(x) - ramp(seq_len)) ** 2).mean().backward())
    with torch.no_grad():
        forward = count(lambda: net(x))
    return train, forward


def localization_runs(params, label: str, n_models: int, norms: int = 1) -> list[Item]:
    """Training and evaluation (trained model and its circular null at ``n_eval``, the
    compute-to-effect curve's points at ``curve_eval``) of ``norms`` normalizations x
    ``n_models`` seeds at chapter A1's knobs."""
    train, fwd = localization_flops(params.seq_len, params.depth, params.width, params.kernel)
    models = n_models * norms
    full = params.get("n_eval", 0)
    curve = (len(params.curve_fractions) + 1) * params.curve_eval
    samples = 2 * full + curve + params.get("probe_batches", 0) * 32
    return [
        Item(f"{label}: train {models} models x {params.steps:,} steps",
             models * params.steps * params.batch_size * train),
        Item(f"{label}: evaluate {samples:,} samples per model", models * samples * fwd),
    ]  # fmt: skip


def pack(label: str, s, net_cfg, n_sweep: int, retest: int = 0) -> list[Item]:
    """Train and test ``n_sweep`` overlaps x seeds PackNorm models of ``net_cfg``; ``retest``
    overlaps x seeds of them are tested again at the late kept state."""
    net = packnet.StackedPackNet(net_cfg, [0])
    a = torch.randn(1, 1, s.train.path_len)
    step = count(lambda: net(a, a).sum().backward())
    with torch.no_grad():
        fwd = count(lambda: net(a, a))
    n, kept = n_sweep * len(s.seeds), retest * len(s.seeds)
    items = [
        Item(f"{label}: train {n} models x {s.train.steps:,} steps",
             n * s.train.steps * s.train.batch_size * step),
        Item(f"{label}: test {n} models x {s.n_test:,} pairs", n * s.n_test * fwd),
    ]  # fmt: skip
    if kept:
        items.append(Item(f"{label}: test {kept} models x {s.n_test:,} pairs at the state kept "
                          "by half the budget", kept * s.n_test * fwd))  # fmt: skip
    return items


def a4(params) -> list[Item]:
    """Chapter A4: what it trains and evaluates beyond chapter A1's cached networks."""
    train, fwd = localization_flops(params.seq_len, params.depth, params.width, params.kernel)
    # the interventions run on the trained networks and on the last state kept by half the
    # budget (the late gain's two ends)
    n, evals = len(params.seeds), (3 * (params.depth + 1) + 1) * 2
    items = [
        Item(f"circular-padding null: train {n} models x {params.circular_steps:,} steps",
             n * params.circular_steps * params.batch_size * train),
        Item(f"interventions: {evals} evaluations x {params.intervention_eval:,} samples",
             n * evals * params.intervention_eval * fwd),
    ]  # fmt: skip
    s = packnorm.PackSetup.from_params(params)
    for head in params.rf_pack_heads:
        net = replace(s.net, kernel=params.rf_pack_kernel, head=head)
        items += pack(f"PackNorm k = {params.rf_pack_kernel}, {head} head", s, net, len(s.overlaps))
    u_cfg, grid = arch_runs.unet_config(params), arch_runs.grid_config(params)
    for label, cfg, net, x in (
        ("U-Net", u_cfg, unet.StackedUNet(u_cfg, [0]), torch.randn(1, 1, u_cfg.seq_len)),
        ("2-D CNN", grid, grid2d.StackedCNN2d(grid, [0]),
         torch.randn(1, 1, grid.height, grid.width)),
    ):  # fmt: skip
        step = train_step_flops(net, x)
        with torch.no_grad():
            f = count(lambda net=net, x=x: net(x))
        # normalized, no norm and the circular null evaluated, and the normalized networks
        # again at the state kept by half the budget
        m = (3 + (localization.late_step(cfg.train) is not None)) * len(cfg.seeds)
        items.append(Item(f"{label}: train {2 * len(cfg.seeds)} models x {cfg.steps:,} steps, "
                          f"evaluate {m} x {cfg.n_eval:,} samples",
                          2 * len(cfg.seeds) * cfg.steps * cfg.batch_size * step
                          + m * cfg.n_eval * f))  # fmt: skip
    return items


def a5(params) -> list[Item]:
    """Chapter A5: every family beyond the base one (chapter A1's networks, cached)."""
    setup, items, seen = localization.Setup.from_params(params), [], set()
    for f in reach.families(setup, params) + reach.matched_families(setup, params):
        if f.a1 or (f.setup, f.cnn) in seen:  # the matched control's normalized half is
            continue  # the layer axis's family of as many blocks
        seen.add((f.setup, f.cnn))
        c, tc = f.cnn, f.setup.train
        t, fwd = localization_flops(f.seq_len, c.depth, c.width, c.kernel, c.mix)
        m = len(f.setup.seeds)
        samples = f.setup.eval.n_samples + (len(tc.checkpoints) + 1) * f.setup.curve_samples
        items.append(Item(f"{f.label}: train {m} models x {tc.steps:,} steps, evaluate "
                          f"{samples:,} samples each",
                          m * (tc.steps * tc.batch_size * t + samples * fwd)))  # fmt: skip
    return items


def a1(params) -> list[Item]:
    return localization_runs(params, "no norm + " + params.norm, len(params.seeds), norms=2)


def a2(params) -> list[Item]:
    s = packnorm.PackSetup.from_params(params)
    retest = len(s.overlaps) if localization.late_step(s.train) is not None else 0
    return pack("PackNorm", s, s.net, len(s.overlaps) + len(s.control_overlaps), retest)


def a3(params) -> list[Item]:
    """GroupNorm and BatchNorm; no norm and InstanceNorm are chapter A1's networks, cached."""
    return [
        *localization_runs(params, "GroupNorm", len(params.group_seeds), len(params.group_counts)),
        *localization_runs(params, "BatchNorm", len(params.seeds), 1),
    ]


def calibration(params) -> list[Item]:
    n = len(params.cal_schedules)
    return localization_runs(params, f"{n} candidates (InstanceNorm)", len(params.seeds), n)
