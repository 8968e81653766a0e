"""Paper A's trained networks, run in the reader's page (:mod:`normbook.pages.live`).

The chapter hands over evaluated runs; :func:`live_view` exports their weights from the cache
as float32, with the inputs the view offers and, for a set of control states, the predictions
PyTorch computes on those weights and inputs. ``_static/live.js`` runs the same forward pass
(conv -> norm -> ReLU, a 1x1 head) in the browser; the browser check sets each state's controls
and requires the page's numbers to equal PyTorch's within :data:`TOLERANCE`.

The inputs are drawn from a generator both sides implement the same way (:func:`uniforms`:
Mulberry32, 32-bit integer arithmetic that JavaScript and Python compute exactly; Box-Muller for
normal draws), so the page can draw any noise seed the reader asks for without storing it.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, replace

import numpy as np
import torch

from normbook.pages.live import LiveView
from normbook.pages.views import round_floats

TOLERANCE = 1e-4  # the page's predictions against PyTorch's, on the same weights and inputs
DRAWS = 16  # noise draws behind the view's mean prediction (each update stays ~100 ms)
INPUT_KINDS = ("noise", "constant", "spike", "shifted", "zeroed")
NORMS = ("none", "instance", "group")  # what live.js implements
EPS = 1e-5  # nn.GroupNorm's default, as every paper-A norm layer uses


def uniforms(seed: int, n: int) -> np.ndarray:
    """``n`` uniforms in [0, 1) from Mulberry32 seeded with ``seed`` (live.js: ``uniforms``)."""
    mask = 0xFFFFFFFF

    def imul(a: int, b: int) -> int:
        return (a * b) & mask

    a, out = seed & mask, np.empty(n)
    for i in range(n):
        a = (a + 0x6D2B79F5) & mask
        t = imul(a ^ (a >> 15), 1 | a)
        t = ((t + imul(t ^ (t >> 7), 61 | t)) & mask) ^ t
        out[i] = ((t ^ (t >> 14)) & mask) / 4294967296.0
    return out


def normals(seed: int, n: int) -> np.ndarray:
    """``n`` N(0, 1) draws (Box-Muller on :func:`uniforms`), rounded to float32 as the
    networks see them (live.js: ``normals``)."""
    u = uniforms(seed, 2 * n).reshape(n, 2)
    z = [math.sqrt(-2.0 * math.log(1.0 - a)) * math.cos(2.0 * math.pi * b) for a, b in u]
    return np.asarray(z, dtype=np.float32)


def make_input(kind: str, seq_len: int, seed: int, at: int, radius: int) -> np.ndarray:
    """One input the view offers (live.js: ``makeInput``): ``noise`` (N(0, 1) from ``seed``),
    ``constant`` (the seed's first draw everywhere), ``spike`` (zeros, 1 at index ``at``),
    ``shifted`` (the seed's noise rolled by ``at``) or ``zeroed`` (its noise, zero within
    ``radius`` of ``at``)."""
    if kind not in INPUT_KINDS:
        raise ValueError(f"input kind must be one of {INPUT_KINDS}, got {kind!r}")
    noise = normals(seed, seq_len)
    if kind == "noise":
        return noise
    if kind == "constant":
        return np.full(seq_len, noise[0], dtype=np.float32)
    if kind == "spike":
        x = np.zeros(seq_len, dtype=np.float32)
        x[at] = 1.0
        return x
    if kind == "shifted":
        return np.roll(noise, at)
    x = noise.copy()
    x[max(0, at - radius) : at + radius + 1] = 0.0
    return x


def _b64(arrays: list[np.ndarray]) -> str:
    flat = np.concatenate([np.asarray(a, dtype="<f4").ravel() for a in arrays])
    return base64.b64encode(flat.tobytes()).decode("ascii")


def _arrays(net, i: int) -> list[tuple[str, np.ndarray]]:
    """Model ``i``'s arrays (its state, :meth:`StackedCNN.model_state`), named and ordered as
    live.js reads them: per layer conv weight and bias, then the norm's affine (if any); the
    head last."""
    state, out = net.model_state(i), []
    for d in range(len(net.convs)):
        for part, short in (("convs", "conv"), ("norms", "norm")):
            for kind in ("weight", "bias"):
                if f"{part}.{d}.{kind}" in state:
                    out.append((f"{short}{d}.{kind[0]}", state[f"{part}.{d}.{kind}"].numpy()))
    return out + [("head.w", state["head.weight"].numpy()), ("head.b", state["head.bias"].numpy())]


def _groups(net) -> list[int]:
    """Each layer's groups per model (0: no normalization)."""
    out = []
    for norm in net.norms:
        out.append(norm.num_groups // net.n_models if isinstance(norm, torch.nn.GroupNorm) else 0)
    return out


def export(name: str, run, seeds: int | None = None) -> dict:
    """One evaluated run's networks (its first ``seeds`` seeds, all by default) as the page
    needs them."""
    net, cfg = run.net, run.cnn
    n = min(seeds or net.n_models, net.n_models)
    if cfg.norm not in NORMS or cfg.padding != "zeros":
        raise ValueError(f"the live view runs {NORMS} with zero padding, not {cfg.label}")
    return {
        "name": name,
        "seq_len": run.seq_len,
        "radius": cfg.receptive_radius,
        "kernels": cfg.kernels,
        "groups": _groups(net),
        "width": cfg.width,
        "layout": [[name, list(a.shape)] for name, a in _arrays(net, 0)],
        "seeds": list(run.seeds)[:n],
        "weights": [_b64([a for _, a in _arrays(net, i)]) for i in range(n)],
    }


@dataclass(frozen=True)
class State:
    """One setting of the view's controls."""

    net: int
    seed: int  # index into the network's seeds
    kind: str
    input_seed: int
    at: int
    j: int
    size: float
    freeze: bool = False  # normalize the nudged input with the un-nudged input's statistics

    def controls(self) -> dict:
        return {"net": self.net, "seed": self.seed, "kind": self.kind,
                "input_seed": self.input_seed, "at": self.at, "j": self.j,
                "size": self.size, "freeze": self.freeze}  # fmt: skip


def predict(run, i: int, x: np.ndarray) -> np.ndarray:
    """PyTorch's predictions of model ``i`` of a run for inputs ``x`` (B, L): every model of the
    stack sees the same inputs, and model i's outputs are kept."""
    net = run.net.eval()
    inp = torch.as_tensor(x, dtype=torch.float32)[:, None, :].expand(-1, net.n_models, -1)
    with torch.no_grad():
        return net(inp.contiguous())[:, i, :].double().numpy()


def predict_frozen(run, i: int, x: np.ndarray, nudged: np.ndarray) -> np.ndarray:
    """Model ``i``'s predictions (2, L) for ``x`` and for ``nudged`` when every norm layer uses
    the statistics it computed for ``x``: the network's own convolutions and affine
    parameters, its norm layers' statistics held fixed (both rows by the same arithmetic, so
    what is left of the nudge's reach is convolution's alone)."""
    net = run.net.eval()
    h = torch.as_tensor(np.stack([x, nudged]), dtype=torch.float32)[:, None, :]
    h = h.expand(-1, net.n_models, -1).contiguous()
    with torch.no_grad():
        for conv, norm in zip(net.convs, net.norms):
            h = conv(h)
            if isinstance(norm, torch.nn.GroupNorm):
                groups = h.reshape(2, norm.num_groups, -1)
                mean = groups[:1].mean(-1, keepdim=True)
                var = groups[:1].var(-1, unbiased=False, keepdim=True)
                h = ((groups - mean) / torch.sqrt(var + norm.eps)).reshape(h.shape)
                h = h * norm.weight[None, :, None] + norm.bias[None, :, None]
            h = torch.relu(h)
        return net.head(h)[:, i].double().numpy()


def expected(run, st: State, draws: int = DRAWS) -> dict:
    """What the page must show at state ``st``: predictions for the input and for the nudged
    input, their difference, and the mean prediction over ``draws`` noise draws of the input
    seed (the first draw is the noise input itself)."""
    length, radius = run.seq_len, run.cnn.receptive_radius
    x = make_input(st.kind, length, st.input_seed, st.at, radius)
    nudged = x.copy()
    nudged[st.j] = np.float32(nudged[st.j] + np.float32(st.size))
    both = predict(run, st.seed, np.stack([x, nudged]))
    if st.freeze:  # the un-nudged predictions are the network's own (PyTorch's GroupNorm)
        frozen = predict_frozen(run, st.seed, x, nudged)
        both[1] = both[0] + (frozen[1] - frozen[0])
    batch = normals(st.input_seed, draws * length).reshape(draws, length)
    digits = 8  # float32 carries about 7: the stored values do not add to the difference
    return {"controls": st.controls(), "pred": round_floats(both[0], digits),
            "delta": round_floats(both[1] - both[0], digits),
            "mean": round_floats(predict(run, st.seed, batch).mean(axis=0), digits)}  # fmt: skip


def states(runs: list, seeds: int, freeze: bool = False) -> list[State]:
    """Control states the browser check sets, chosen so that together they move every
    control: each network at its first seed with every input kind, the last network also at
    its last seed (and, with ``freeze``, with its statistics frozen), nudges and positions
    spread along the sequence."""
    out = []
    for n, run in enumerate(runs):
        length = run.seq_len
        for k, kind in enumerate(INPUT_KINDS):
            at = (length * (k + 1)) // (len(INPUT_KINDS) + 1)
            out.append(State(n, 0, kind, k + n, at, length - 1 - at, 0.5 + 0.5 * k))
    last = len(runs) - 1
    last_seed = min(seeds, len(runs[last].seeds)) - 1
    out.append(State(last, last_seed, "noise", 7, 0, runs[last].seq_len // 2, 1.0))
    if freeze:
        out.append(replace(out[-1], freeze=True))
    return out


CONTROLS = ("net", "seed", "kind", "input_seed", "at", "j", "size")


def runs_here(run) -> bool:
    """Whether live.js can run a run's networks (its norm in :data:`NORMS`, zero padding)."""
    padding = getattr(run, "padding", "zeros")  # at evaluation (the circular null's)
    return run.cnn.norm in NORMS and run.cnn.padding == padding == "zeros"


def seeds_text(live_seeds: int, seeds) -> str:
    """How many of a chapter's seeds its live view runs, in words."""
    n = min(live_seeds, len(seeds))
    return "every seed" if n == len(seeds) else f"{n} of the {len(seeds)} seeds"


@dataclass(frozen=True)
class LiveOff:
    """What the page shows where a chapter runs no live view (``live_seeds`` = 0)."""

    reason: str

    def _repr_markdown_(self) -> str:
        return f"*No live view in this build: {self.reason}.*"


def live_view(name: str, runs: dict, description: str, seeds: int, draws: int = DRAWS,
              freeze: bool = False) -> LiveView | LiveOff:  # fmt: skip
    """The live view of ``runs`` ({label: evaluated run}), the first ``seeds`` seeds of each,
    with the checks the browser holds it to; with ``freeze``, a control that normalizes the
    nudged input with the un-nudged input's statistics. Runs live.js cannot run (another norm,
    another padding) are named in the view instead (a chapter re-run with ``norm = layer`` still
    shows its no-norm networks)."""
    if seeds == 0:
        return LiveOff("the parameter `live_seeds` is 0 at this profile")
    here = {label: r for label, r in runs.items() if runs_here(r)}
    if not here:
        raise ValueError(f"none of {list(runs)} can run in the page (live.js runs {NORMS})")
    items = list(here.values())
    checks = states(items, seeds, freeze=freeze)
    one_seed = seeds == 1 or all(len(r.seeds) == 1 for r in items)  # no seed to choose
    controls = [c for c in CONTROLS if not (c == "seed" and one_seed)]
    payload = {
        "controls": [*controls, "freeze"] if freeze else controls,
        "draws": draws,
        "eps": EPS,
        "tolerance": TOLERANCE,
        "kinds": list(INPUT_KINDS),
        "nets": [export(label, r, seeds) for label, r in here.items()],
        "left_out": [label for label in runs if label not in here],
        "checks": [expected(items[s.net], s, draws) for s in checks],
    }
    return LiveView(name, payload, description)
