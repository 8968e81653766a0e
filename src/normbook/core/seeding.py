"""One seeding rule for every random stream in the book.

Each random draw belongs to a *stream* (training data, evaluation data, initialisation, ...)
of one model's seed. A stream's generator is seeded with ``seed * 1_000_003 + salt + stream``,
so streams of one seed never repeat each other, and two models with different seeds never
share a stream. ``salt`` separates models that share a seed but differ in another knob
(PackNorm's overlap).
"""

from __future__ import annotations

import torch

# Stream numbers are global so that no two purposes can collide.
STREAMS = {
    "train": 0,  # paper A: training inputs
    "probe_fit": 1,  # paper A: inputs the depth probes are fitted on
    "eval": 2,  # paper A: evaluation inputs
    "check": 3,  # paper A: inputs of numerical checks and examples
    "order": 11,  # paper B: minibatch order
    "init": 12,  # paper B: weight initialisation
}

_SEED_STRIDE = 1_000_003  # a prime larger than any salt + stream used here


def stream_seed(seed: int, stream: str, salt: int = 0) -> int:
    """The integer seed of ``stream`` for model ``seed``."""
    return int(seed) * _SEED_STRIDE + int(salt) + STREAMS[stream]


def generator(seed: int, stream: str, salt: int = 0) -> torch.Generator:
    """A CPU generator for ``stream`` of model ``seed``."""
    return torch.Generator().manual_seed(stream_seed(seed, stream, salt))


def generators(seeds, stream: str) -> list[torch.Generator]:
    """One generator per model seed, all for the same purpose."""
    return [generator(s, stream) for s in seeds]
