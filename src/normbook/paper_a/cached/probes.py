"""Per-depth linear probes (paper A, Fig. 1b).

At every depth a 1x1 convolution (one linear map from the C channels to a scalar,
shared by all positions) is fitted by ridge least squares to the ramp, on fresh noise,
with the network frozen. Shared weights mean a probe adds no positional information
of its own: whatever position it reads out was already in the activations.
"""

from __future__ import annotations

import torch

from normbook.paper_a.cached.cnn import StackedCNN
from normbook.paper_a.cached.stacking import device_of
from normbook.paper_a.cached.task import ramp, sample_inputs
from normbook.runtime.progress import progress
from normbook.runtime.seeding import generators


def _features(h: torch.Tensor, n_models: int) -> torch.Tensor:
    """(B, M*C, L) -> (B, M, C+1, L) with a constant feature for the intercept."""
    b, mc, length = h.shape
    h = h.view(b, n_models, mc // n_models, length)
    ones = torch.ones(b, n_models, 1, length, dtype=h.dtype, device=h.device)
    return torch.cat([h, ones], dim=2)


@torch.no_grad()
def fit_probes(
    net: StackedCNN,
    seq_len: int,
    n_batches: int,
    batch_size: int,
    ridge: float = 1e-3,
    input_kind: str = "noise",
) -> torch.Tensor:
    """Probe weights, shape (depth, M, C+1) on the CPU, from accumulated normal equations."""
    m, c, depth = net.n_models, net.cfg.width, net.cfg.n_layers
    dev = device_of(net)
    xtx = torch.zeros(depth, m, c + 1, c + 1, dtype=torch.float64, device=dev)
    xty = torch.zeros(depth, m, c + 1, dtype=torch.float64, device=dev)
    y = ramp(seq_len).double().to(dev)
    gens = generators(net.seeds, "probe_fit", dev)
    for _ in progress(range(n_batches), desc="fit probes"):
        x = sample_inputs(batch_size, m, seq_len, gens, input_kind)
        _, acts = net(x, return_activations=True)
        for d, h in enumerate(acts):
            f = _features(h, m).double()
            xtx[d] += torch.einsum("bmil,bmjl->mij", f, f)
            xty[d] += torch.einsum("bmil,l->mi", f, y)
    n = n_batches * batch_size * seq_len
    eye = torch.eye(c + 1, dtype=torch.float64)
    return torch.linalg.solve(xtx.cpu() / n + ridge * eye, xty.cpu() / n).float()


def apply_probe(h: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """One depth's probe outputs (B, M, L) from its activations and its weights (M, C+1)."""
    return torch.einsum("bmil,mi->bml", _features(h, weights.shape[0]), weights)
