"""Chapter A4's stress tests of the side channel, on the networks chapter A1 trained.

- :func:`constant_input`: with no input variation, what reaches the interior?
- :func:`interventions`: replace each sample's normalization statistics at evaluation by the
  population's, another sample's, or the interior's only, at one layer or all of them.
- :func:`trained_circular`: networks *trained* without a boundary.
"""

from __future__ import annotations

import sys
import types
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch
from torch import nn

from ..core import cache, stats
from ..core.seeding import generators
from . import bands, detector, localization
from .cnn import CNNConfig, StackedCNN
from .detector import Localization, Moments
from .task import sample_inputs

# ----------------------------------------------------------------------------- constant input


@dataclass
class ConstantInput:
    """Outputs of trained networks fed constant sequences: arrays (V, M, L)."""

    name: str
    values: np.ndarray  # (V,) the constants (0 is the all-zero input)
    out: np.ndarray  # (V, M, L)
    radius: int

    @property
    def interior_spread(self) -> np.ndarray:
        """(V, M): max - min of the outputs at indices beyond R from both ends."""
        inner = self.out[..., self.radius : self.out.shape[-1] - self.radius]
        return inner.max(axis=-1) - inner.min(axis=-1)

    @property
    def boundary_reach(self) -> np.ndarray:
        """(M,): the farthest distance from an end at which some constant's output differs
        from that constant's interior value (-1: nowhere)."""
        L = self.out.shape[-1]
        centre = self.out[..., L // 2 : L // 2 + 1]
        scale = np.abs(self.out).max(axis=(0, 2), keepdims=True) + 1e-12
        differs = (np.abs(self.out - centre) > 1e-5 * scale).any(axis=0)  # (M, L)
        dist = np.minimum(np.arange(L), L - 1 - np.arange(L))
        return np.array([dist[d].max() if d.any() else -1 for d in differs])


@torch.no_grad()
def constant_input(run, values) -> ConstantInput:
    """Feed each constant sequence (one per forward pass, so that BatchNorm's minibatch
    statistics could not mix them) to the run's trained networks."""
    net = run.net.eval()
    L, m = run.seq_len, net.n_models
    outs = [
        net(torch.full((1, m, L), float(v), device=next(net.parameters()).device))[0].cpu()
        for v in values
    ]
    return ConstantInput(run.name, np.asarray(values, float), torch.stack(outs).numpy(), run.radius)


# ----------------------------------------------------------------------------- interventions

MODES = ("population", "shuffled", "interior")
MODE_DOC = {
    "population": "population statistics (mean and variance over many samples and positions)",
    "shuffled": "another sample's statistics (the next sample of the batch)",
    "interior": "statistics of the interior only (positions whose input misses the padding)",
}


def norm_layers(net: StackedCNN) -> list[nn.GroupNorm]:
    """The network's InstanceNorm/GroupNorm layers, input to output."""
    if net.cfg.mix:  # the interior mode's reach (i + 1) * r assumes one kernel throughout
        raise ValueError("interventions need networks without kernel-1 blocks (mix = 0)")
    layers = [n for n in net.norms if isinstance(n, nn.GroupNorm)]
    if len(layers) != len(net.norms):
        raise ValueError(f"interventions need GroupNorm/InstanceNorm layers, got {net.cfg.norm!r}")
    return layers


def _group_view(mod: nn.GroupNorm, x: torch.Tensor) -> torch.Tensor:
    b, c, length = x.shape
    return x.reshape(b, mod.num_groups, c // mod.num_groups, length)


def _moments(xg: torch.Tensor, dims=(2, 3)) -> tuple[torch.Tensor, torch.Tensor]:
    return xg.mean(dim=dims, keepdim=True), xg.var(dim=dims, unbiased=False, keepdim=True)


def _normalize(mod: nn.GroupNorm, x: torch.Tensor, mean, var) -> torch.Tensor:
    y = ((_group_view(mod, x) - mean) / torch.sqrt(var + mod.eps)).reshape(x.shape)
    return y * mod.weight[None, :, None] + mod.bias[None, :, None]


@torch.no_grad()
def population_stats(net: StackedCNN, seq_len: int, n_samples: int) -> list[tuple]:
    """Per norm layer: mean and variance over ``n_samples`` fresh inputs and all positions
    (what BatchNorm would use at evaluation), drawn from the stream the depth probes are fitted
    on: fitting data, never the evaluation's."""
    layers, captured = norm_layers(net), {}
    hooks = [
        mod.register_forward_hook(lambda m, inp, out, i=i: captured.setdefault(i, []).append(
            _group_view(m, inp[0]).transpose(0, 1).reshape(m.num_groups, -1)))
        for i, mod in enumerate(layers)
    ]  # fmt: skip
    try:
        x = sample_inputs(n_samples, net.n_models, seq_len, generators(net.seeds, "probe_fit"))
        net(x.to(next(net.parameters()).device))
    finally:
        for h in hooks:
            h.remove()
    out = []
    for i in range(len(layers)):
        flat = torch.cat(captured[i], dim=1)
        out.append((flat.mean(dim=1)[None, :, None, None], flat.var(dim=1)[None, :, None, None]))
    return out


@contextmanager
def intervened(net: StackedCNN, mode: str, layers: list[int], pop: list[tuple] | None = None):
    """Within the block, the norm layers ``layers`` (0-based) normalize with the statistics
    ``mode`` names instead of each sample's own (:data:`MODES`)."""
    if mode not in MODES:
        raise ValueError(f"intervention must be one of {MODES}, got {mode!r}")
    norms, r = norm_layers(net), net.cfg.kernel // 2

    def forward_for(i: int):
        def forward(mod, x):
            xg = _group_view(mod, x)
            if mode == "population":
                mean, var = pop[i]
            elif mode == "shuffled":
                mean, var = (torch.roll(t, 1, dims=0) for t in _moments(xg))
            else:  # layer i+1's conv output at p sees inputs p +- (i+1)r: keep those inside
                lo, hi = (i + 1) * r, x.shape[-1] - (i + 1) * r
                mean, var = _moments(xg[..., lo:hi])
            return _normalize(mod, x, mean, var)

        return forward

    try:
        for i in layers:
            norms[i].forward = types.MethodType(forward_for(i), norms[i])
        yield net
    finally:
        for i in layers:
            norms[i].__dict__.pop("forward", None)


@dataclass
class InterventionSweep:
    """Per mode and condition ("all" layers, or one layer "1".."d"): per-seed localization."""

    name: str
    conditions: list[str]
    baseline: list[Localization]  # no intervention, same samples
    results: dict[str, dict[str, list[Localization]]]  # mode -> condition -> per seed
    se: dict[str, dict[str, np.ndarray]]  # mode -> condition -> interior slope's SE per seed

    def slopes(self, mode: str, condition: str) -> np.ndarray:
        return np.array([s.effect_interior.slope for s in self.results[mode][condition]])

    def fracs(self, mode: str, condition: str) -> np.ndarray:
        return np.array([s.frac_interior for s in self.results[mode][condition]])

    @property
    def baseline_slopes(self) -> np.ndarray:
        return np.array([s.effect_interior.slope for s in self.baseline])


def interventions(setup, cnn: CNNConfig, n_samples: int, ref_samples: int) -> InterventionSweep:
    """Evaluate the trained networks of ``cnn`` under every intervention (cached): all layers
    at once and each layer alone, on the same fresh inputs as the baseline."""
    net, _, _ = localization.trained(cnn, setup.train, list(setup.seeds))
    net.to(setup.eval.device).eval()
    depth = net.cfg.depth
    ev = replace(setup.eval, n_samples=n_samples)
    conditions = ["all", *[str(i + 1) for i in range(depth)]]
    layer_sets = {"all": list(range(depth)), **{str(i + 1): [i] for i in range(depth)}}
    radius = cnn.receptive_radius

    def compute():
        pop = population_stats(net, setup.seq_len, ref_samples)
        arrays = {"base": localization.evaluate(net, setup.seq_len, ev, None)}
        for mode in MODES:
            for cond in conditions:
                with intervened(net, mode, layer_sets[cond], pop):
                    arrays[f"{mode}/{cond}"] = localization.evaluate(net, setup.seq_len, ev, None)
        return cache.Entry({f"{k}/{a}": v for k, d in arrays.items() for a, v in d.items()})

    config = {
        "cnn": asdict(localization.training_identity(cnn)),
        "train": asdict(setup.train),
        "eval": asdict(ev),
        "seeds": list(setup.seeds),
        "ref_samples": ref_samples,
    }
    entry = INTERVENE.cached(config, compute)

    def moments(prefix: str) -> Moments:
        arrays = {
            k[len(prefix) + 1 :]: entry[k] for k in entry.keys() if k.startswith(prefix + "/")
        }
        return Moments.from_arrays(arrays, "out")

    def summary(prefix: str) -> list[Localization]:
        return detector.summarize(moments(prefix), radius, setup.detector)

    def se(prefix: str) -> np.ndarray:
        run = types.SimpleNamespace(out=moments(prefix), seq_len=setup.seq_len, radius=radius)
        return bands.slope_se(run)

    return InterventionSweep(
        name=cnn.label,
        conditions=conditions,
        baseline=summary("base"),
        results={m: {c: summary(f"{m}/{c}") for c in conditions} for m in MODES},
        se={m: {c: se(f"{m}/{c}") for c in conditions} for m in MODES},
    )


# ----------------------------------------------------------------------------- circular


def circular_network(setup, norm: str, steps: int):
    """(setup, network) of :func:`trained_circular`."""
    s = replace(setup, train=replace(setup.train, steps=steps, checkpoints=()))
    return s, replace(s.cnn(norm), padding="circular")


def trained_circular(setup, norm: str, steps: int):
    """Networks trained *and* evaluated with circular padding (no boundary anywhere), with
    ``steps`` of training; everything else as chapter A1."""
    s, cnn = circular_network(setup, norm, steps)
    return localization.run(s, cnn, with_probes=False, padding="circular")


def networks(setup, P) -> list:
    """Every (setup, network) this chapter trains, for :func:`localization.pretrain`."""
    circular = circular_network(setup, P.norm, P.circular_steps)
    return [*localization.chapter_networks(setup), circular]


CODE = (*localization.EVAL_CODE, stats, sys.modules[__name__])
INTERVENE = cache.step("a_intervene", *CODE)


def receptive_field_sweeps(pack_setup, kernel: int, heads) -> dict:
    """Chapter A2's PackNorm overlap sweep with another kernel and each head (same path length,
    overlaps, seeds, training and test pairs): {head: Accuracy}."""
    from . import packnorm

    s = pack_setup
    return {
        h: packnorm.accuracy(replace(s.net, kernel=kernel, head=h), s.train, s.overlaps,
                             s.seeds, s.n_test)
        for h in heads
    }  # fmt: skip
