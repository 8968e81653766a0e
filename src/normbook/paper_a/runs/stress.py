"""Chapter A4's stress tests of the side channel, on the networks chapter A1 trained.

- :func:`constant_input`: with no input variation, what reaches the interior?
- :func:`interventions`: replace each sample's normalization statistics at evaluation by the
  population's, another sample's, or the interior's only, at one layer or all of them.
- :func:`trained_circular`: networks *trained* without a boundary.
"""

from __future__ import annotations

import types
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch

from normbook.paper_a.cached import cache_keys as steps
from normbook.paper_a.cached.cnn import CNNConfig
from normbook.paper_a.cached.interventions import MODES, intervention_arrays, layer_sets
from normbook.paper_a.measures import bands, detector
from normbook.paper_a.measures.detector import Localization, Moments
from normbook.paper_a.runs import localization, packnorm
from normbook.runtime import cache

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

MODE_DOC = {
    "population": "population statistics (mean and variance over many samples and positions)",
    "shuffled": "another sample's statistics (the next sample of the batch)",
    "interior": "statistics of the interior only (positions whose input misses the padding)",
}


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


def interventions(
    setup, cnn: CNNConfig, n_samples: int, ref_samples: int, at_step: int | None = None
) -> InterventionSweep:
    """Evaluate the trained networks of ``cnn`` under every intervention (cached): all layers
    at once and each layer alone, on the same fresh inputs as the baseline; ``at_step``: the
    states kept at that training step instead (:func:`intervention_curve`)."""
    net, _, _ = localization.trained(cnn, setup.train, list(setup.seeds), at_step)
    net.to(setup.eval.device).eval()
    ev = replace(setup.eval, n_samples=n_samples, probe_batches=0)  # no probes are fitted
    conditions = list(layer_sets(net.cfg.depth))
    radius = cnn.receptive_radius

    def compute():
        return cache.Entry(intervention_arrays(net, setup.seq_len, ev, ref_samples))

    config = {
        "cnn": asdict(localization.training_identity(cnn)),
        "train": asdict(setup.train),
        "eval": asdict(ev),
        "seeds": list(setup.seeds),
        "ref_samples": ref_samples,
    }
    if at_step is not None:  # only then, so the trained models' entry keeps its key
        config["at_step"] = at_step
    entry = steps.INTERVENE.cached(config, compute)

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


def intervention_curve(setup, cnn: CNNConfig, n_samples: int, ref_samples: int):
    """:func:`interventions` at the late states and the trained model
    (:func:`localization.kept_curve`), with the trained sweep's ``n_samples`` (not the curves'
    ``curve_samples``), so its last point is that sweep itself, read from the cache."""
    return localization.kept_curve(
        replace(setup, curve_samples=n_samples),
        cnn,
        lambda s, at: interventions(s, cnn, n_samples, ref_samples, at_step=at),
        late=True,
    )


# ----------------------------------------------------------------------------- circular


def circular_network(setup, norm: str, n_steps: int):
    """(setup, network) of :func:`trained_circular`."""
    s = replace(setup, train=replace(setup.train, steps=n_steps, checkpoints=()))
    return s, replace(s.cnn(norm), padding="circular")


def trained_circular(setup, norm: str, n_steps: int):
    """Networks trained *and* evaluated with circular padding (no boundary anywhere), with
    ``n_steps`` of training; everything else as chapter A1."""
    s, cnn = circular_network(setup, norm, n_steps)
    return localization.localize(s, cnn, with_probes=False, padding="circular")


def networks(setup, params) -> list:
    """Every (setup, network) this chapter trains, for :func:`localization.pretrain`."""
    circular = circular_network(setup, params.norm, params.circular_steps)
    return [*localization.chapter_networks(setup), circular]


def receptive_field_sweeps(pack_setup, kernel: int, heads) -> dict:
    """Chapter A2's PackNorm overlap sweep with another kernel and each head (same path length,
    overlaps, seeds, training and test pairs): {head: Accuracy}."""
    s = pack_setup
    return {
        h: packnorm.accuracy(replace(s.net, kernel=kernel, head=h), s.train, s.overlaps,
                             s.seeds, s.n_test)
        for h in heads
    }  # fmt: skip
