"""One seeding rule for the torch generators of every model: its initial weights, its
training and evaluation data, its minibatch order.

Each random draw belongs to a *stream* (training data, evaluation data, initialisation, ...)
of one model's seed. A stream's generator is seeded with ``seed * 1_000_003 + salt + stream``,
so streams of one seed never repeat each other. A generator lives on the device its model
runs on (:data:`RNG_SCHEME`), so a GPU draws its noise where it uses it. ``salt`` separates
models that share a seed but differ in another knob (PackNorm's overlap, ``overlap * 7_919``);
a salt can exceed the stride, so distinctness is not automatic: ``tests/core/test_seeding.py``
checks that within each experiment no two streams of any profile's models coincide. (Data
subsets, k-means and PCA take their seeds from the chapters' parameters directly.)
"""

from __future__ import annotations

import torch

# One registry of stream numbers for both papers, so that no two purposes share a number.
STREAMS = {
    "train": 0,  # paper A: training inputs
    "probe_fit": 1,  # paper A: inputs the depth probes are fitted on
    "eval": 2,  # paper A: evaluation inputs
    "check": 3,  # paper A: inputs of numerical checks and examples
    "order": 11,  # paper B: minibatch order
    "init": 12,  # paper B: weight initialisation
}

_SEED_STRIDE = 1_000_003  # a prime


def stream_seed(seed: int, stream: str, salt: int = 0) -> int:
    """The integer seed of ``stream`` for model ``seed``."""
    return int(seed) * _SEED_STRIDE + int(salt) + STREAMS[stream]


# What a paper-scale record states of its random numbers.
RNG_SCHEME = (
    f"one torch.Generator per model and stream, on the model's device (CPU: Mersenne Twister; "
    f"CUDA: Philox, so a GPU draws other numbers from the same seed), seeded with "
    f"seed * {_SEED_STRIDE:_} + salt + stream; streams {STREAMS}; initial weights drawn on the "
    f"CPU from the model's seed on every device"
)


def generator(seed: int, stream: str, salt: int = 0, device: str = "cpu") -> torch.Generator:
    """A generator for ``stream`` of model ``seed`` on ``device``."""
    return torch.Generator(device=device).manual_seed(stream_seed(seed, stream, salt))


def generators(seeds, stream: str, device: str = "cpu") -> list[torch.Generator]:
    """One generator per model seed, all for the same purpose, on ``device``."""
    return [generator(s, stream, device=device) for s in seeds]
