"""What a chapter will compute at a profile, before computing it: planned FLOPs per part and an
estimated time on a stated device.

    python -m normbook.publish.build book --profile paper --dry-run

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


def train_step_flops(model: torch.nn.Module, x: torch.Tensor) -> int:
    return _count(lambda: model(x).sum().backward())


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
    train = _count(lambda: ((net(x) - ramp(seq_len)) ** 2).mean().backward())
    with torch.no_grad():
        forward = _count(lambda: net(x))
    return train, forward


def _localization(params, label: str, n_models: int, norms: int = 1) -> list[Item]:
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


def _pack(label: str, s, net_cfg, n_sweep: int, retest: int = 0) -> list[Item]:
    """Train and test ``n_sweep`` overlaps x seeds PackNorm models of ``net_cfg``; ``retest``
    overlaps x seeds of them are tested again at the late kept state."""
    from normbook.paper_a.cached import packnet

    net = packnet.StackedPackNet(net_cfg, [0])
    a = torch.randn(1, 1, s.train.path_len)
    step = _count(lambda: net(a, a).sum().backward())
    with torch.no_grad():
        fwd = _count(lambda: net(a, a))
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


def _classifiers(cfgs, seeds, what: str = "") -> list[Item]:
    out = []
    for cfg in cfgs:
        x = torch.randn(1, cfg.in_channels, 32, 32)  # MNIST is padded to 32 x 32
        step = train_step_flops(cfg.build(0), x)
        images = cfg.max_epochs * cfg.n_train * len(seeds)
        out.append(
            Item(
                f"{cfg.dataset} {cfg.label}{', ' + what if what else ''} (lr {cfg.lr:g}): train "
                f"{len(seeds)} models, at most {cfg.max_epochs} epochs of {cfg.n_train:,} images",
                images * step,
            )
        )
    return out


def _stress_a(params) -> list[Item]:
    """Chapter A4: what it trains and evaluates beyond chapter A1's cached networks."""
    from dataclasses import replace

    from normbook.paper_a.cached import grid2d, unet
    from normbook.paper_a.runs import arch_runs, localization, packnorm

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
        items += _pack(
            f"PackNorm k = {params.rf_pack_kernel}, {head} head", s, net, len(s.overlaps)
        )
    u_cfg, grid = arch_runs.unet_config(params), arch_runs.grid_config(params)
    for label, cfg, net, x in (
        ("U-Net", u_cfg, unet.StackedUNet(u_cfg, [0]), torch.randn(1, 1, u_cfg.seq_len)),
        ("2-D CNN", grid, grid2d.StackedCNN2d(grid, [0]),
         torch.randn(1, 1, grid.height, grid.width)),
    ):  # fmt: skip
        step = train_step_flops(net, x)
        with torch.no_grad():
            f = _count(lambda net=net, x=x: net(x))
        # normalized, no norm and the circular null evaluated, and the normalized networks
        # again at the state kept by half the budget
        m = (3 + (localization.late_step(cfg.train) is not None)) * len(cfg.seeds)
        items.append(Item(f"{label}: train {2 * len(cfg.seeds)} models x {cfg.steps:,} steps, "
                          f"evaluate {m} x {cfg.n_eval:,} samples",
                          2 * len(cfg.seeds) * cfg.steps * cfg.batch_size * step
                          + m * cfg.n_eval * f))  # fmt: skip
    return items


def _reach(params) -> list[Item]:
    """Chapter A5: every family beyond the base one (chapter A1's networks, cached)."""
    from normbook.paper_a.runs import localization, reach

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


def chapter_plan(name: str, params) -> list[Item]:
    """The planned compute of chapter ``name`` at resolved parameters ``params``."""
    if name == "a1_localization":
        return _localization(params, "no norm + " + params.norm, len(params.seeds), norms=2)
    if name == "a2_mechanism":
        from normbook.paper_a.runs import localization, packnorm

        s = packnorm.PackSetup.from_params(params)
        retest = len(s.overlaps) if localization.late_step(s.train) is not None else 0
        return _pack("PackNorm", s, s.net, len(s.overlaps) + len(s.control_overlaps), retest)
    if name == "a4_stress":
        return _stress_a(params)
    if name == "a5_reach":
        return _reach(params)
    if name == "a3_which_norms":
        return [
            *_localization(params, "GroupNorm", len(params.group_seeds), len(params.group_counts)),
            *_localization(params, "BatchNorm", len(params.seeds), 1),
        ]  # no norm and InstanceNorm are chapter A1's networks, cached
    if name == "calibration":
        n = len(params.cal_schedules)
        return _localization(params, f"{n} candidates (InstanceNorm)", len(params.seeds), n)
    if name == "b1_setup_accuracy":
        from normbook.paper_b.runs import classify

        return _classifiers(classify.Setup.from_params(params).configs.values(), params.seeds)
    if name == "b4_stress":
        from normbook.paper_b.b4_stress import factorial
        from normbook.paper_b.runs import classify

        swapped = [c for cell, c in factorial.factorial_configs(params).items()
                   if not factorial.is_paper_cell(cell)]  # fmt: skip
        # accuracy-matched: one network per seed runs again up to the matched step; at most
        # a full run (the more accurate variant is known only after chapter B1)
        b1 = classify.Setup.from_params(params).configs
        matched = [b1[ds, True] for ds in factorial.factorial_datasets(params.matched_datasets)]
        return [
            *_classifiers(swapped, params.seeds, "swapped cell"),
            *_classifiers(matched, params.seeds, "accuracy-matched rerun, at most"),
        ]
    return []  # B2, B3, Methods: chapter B1's models, CPU-bound analysis


def report(chapters: dict[str, object]) -> str:
    """The dry-run table: every chapter's items, FLOPs and estimated time."""
    lines = [
        f"Planned compute; time estimated on {DEVICE} at {UTILIZATION:.0%} of its "
        f"{PEAK_TFLOPS:g} TFLOP/s fp32 peak (training and evaluation passes only)"
    ]
    total = 0.0
    for name, params in chapters.items():
        items = chapter_plan(name, params)
        flops = sum(i.flops for i in items)
        total += flops
        secs = sum(i.seconds() for i in items)
        lines.append(f"{name}: {flops / 1e12:,.1f} TFLOP, about {secs / 60:,.1f} min")
        lines += [f"    {i.what}: {i.flops / 1e12:,.2f} TFLOP" for i in items]
    secs = total / (PEAK_TFLOPS * 1e12 * UTILIZATION)
    lines.append(f"total: {total / 1e12:,.1f} TFLOP, about {secs / 3600:,.2f} h")
    return "\n".join(lines)
