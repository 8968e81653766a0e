"""Numerical checks of the receptive-field argument (Proposition C.1 of paper A)."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch

from normbook.paper_a.cached.cnn import StackedCNN
from normbook.paper_a.cached.stacking import device_of
from normbook.paper_a.cached.task import sample_inputs
from normbook.runtime.seeding import generators

# Proposition C.1's zero holds in exact arithmetic. A CPU convolution kernel may sum an output
# in an order that depends on its position: oneDNN on an AVX2 EPYC (Zen 3) changes the no-norm
# network's float32 outputs by 1e-8 under a shift, where an AVX-512 one (Zen 4) gave 0. So the
# shift check runs in float64, where that rounding is ~1e-16, and counts a change up to this as
# none. A pooled statistic moves interior outputs by ~1e-2 and more.
SHIFT_TOLERANCE = 1e-9


def on_cpu(net: StackedCNN) -> StackedCNN:
    """The checks run on the CPU, whose kernels are deterministic (a GPU may pick different
    algorithms for the two inputs of a comparison)."""
    return net if device_of(net).type == "cpu" else copy.deepcopy(net).cpu()


def gradient_reach(net: StackedCNN, seq_len: int, n_inputs: int = 4) -> np.ndarray:
    """Per model: how far from an output index its input gradient is non-zero.

    The output at the centre is differentiated with respect to the whole input; the reach
    is the largest |j - centre| with a non-zero gradient on any of ``n_inputs`` inputs.
    A purely convolutional net gives exactly R = floor(k/2)*d; a pooled norm reaches
    the whole sequence.
    """
    net = on_cpu(net).eval()
    centre = seq_len // 2
    x = sample_inputs(
        n_inputs, net.n_models, seq_len, generators(net.seeds, "check")
    ).requires_grad_(True)
    net(x)[:, :, centre].sum().backward()
    nonzero = (x.grad != 0).any(dim=0)  # (M, L)
    offsets = np.abs(np.arange(seq_len) - centre)
    return np.array([offsets[nz.numpy()].max() if nz.any() else -1 for nz in nonzero])


@torch.no_grad()
def shift_check(net: StackedCNN, seq_len: int, shift: int, n_inputs: int = 8) -> np.ndarray:
    """Per model: do interior outputs stay the same when the input is shifted?

    Input x' is x moved right by ``shift`` (fresh noise enters on the left). Every output
    whose receptive field lies inside the sequence for both inputs, i in [R, l-1-R-shift],
    must satisfy f(x')[i+shift] == f(x)[i] if the net is translation equivariant there.
    Computed on a float64 copy of the net; returns the largest absolute difference per model
    (at most :data:`SHIFT_TOLERANCE`: equal up to rounding).
    """
    net = copy.deepcopy(net).to("cpu", torch.float64).eval()
    m, radius = net.n_models, net.cfg.receptive_radius
    gens = generators(net.seeds, "check")
    x = sample_inputs(n_inputs, m, seq_len, gens).double()
    fresh = sample_inputs(n_inputs, m, shift, gens).double()
    x_shift = torch.cat([fresh, x[..., : seq_len - shift]], dim=-1)
    lo, hi = radius, seq_len - 1 - radius - shift
    if hi < lo:
        raise ValueError(f"shift {shift} leaves no interior for R={radius}, l={seq_len}")
    y, y_shift = net(x), net(x_shift)
    diff = (y_shift[..., lo + shift : hi + shift + 1] - y[..., lo : hi + 1]).abs()
    return diff.amax(dim=(0, 2)).numpy()


@torch.no_grad()
def cyclic_change(net: StackedCNN, seq_len: int, shift: int, n_inputs: int = 8) -> np.ndarray:
    """Per model: the largest |f(roll(x, s)) - roll(f(x), s)| over all indices. Zero up to
    rounding for a network without a boundary (circular padding), whatever its norms."""
    net = on_cpu(net).eval()
    x = sample_inputs(n_inputs, net.n_models, seq_len, generators(net.seeds, "check"))
    y, y_roll = net(x), net(torch.roll(x, shift, dims=-1))
    return (y_roll - torch.roll(y, shift, dims=-1)).abs().amax(dim=(0, 2)).numpy()


@dataclass(frozen=True)
class Equivariance:
    """Both checks on one run's networks, per model."""

    name: str
    seeds: list[int]
    radius: int
    reach: np.ndarray  # gradient reach from the centre
    shift: int
    max_change: np.ndarray  # largest interior change under the shift, in float64

    @property
    def exact(self) -> list[bool]:
        """Per model: interior outputs unchanged by the shift, up to float64 rounding."""
        return [float(d) <= SHIFT_TOLERANCE for d in self.max_change]


def check(run, shift: int | None = None) -> Equivariance:
    """Gradient reach and the shift check for a localization run (shift default: R // 2)."""
    seq_len = run.seq_len
    shift = shift or max(1, run.radius // 2)
    return Equivariance(
        run.name,
        list(run.seeds),
        run.radius,
        gradient_reach(run.net, seq_len),
        shift,
        shift_check(run.net, seq_len, shift),
    )
