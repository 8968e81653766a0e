"""Measure stacked (grouped-convolution) training against training models one at a time.

python -m normbook.paper_a.benchmark [--seq-len 150 --depth 8 --width 32 --models 4 --steps 200]
"""

from __future__ import annotations

import argparse
import time

import torch

from .cnn import CNNConfig
from .training import TrainConfig, train_stack


def seconds_per_step(cnn: CNNConfig, tc: TrainConfig, seeds: list[int]) -> float:
    train_stack(cnn, TrainConfig(tc.seq_len, 5, tc.batch_size, tc.lr), seeds)  # warm-up
    t0 = time.perf_counter()
    train_stack(cnn, tc, seeds)
    return (time.perf_counter() - t0) / tc.steps


def speedup(cnn: CNNConfig, tc: TrainConfig, n_models: int) -> dict[str, float]:
    seeds = list(range(n_models))
    stacked = seconds_per_step(cnn, tc, seeds)
    sequential = sum(seconds_per_step(cnn, tc, [s]) for s in seeds)
    return {
        "models": n_models,
        "stacked_s_per_step": stacked,
        "sequential_s_per_step": sequential,
        "speedup": sequential / stacked,
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq-len", type=int, default=150)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--models", type=int, default=4)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--norm", default="instance")
    a = ap.parse_args(argv)
    torch.set_num_threads(torch.get_num_threads())
    cnn = CNNConfig(depth=a.depth, width=a.width, norm=a.norm)
    res = speedup(cnn, TrainConfig(seq_len=a.seq_len, steps=a.steps), a.models)
    print(
        f"{a.models} models, l={a.seq_len}, d={a.depth}, C={a.width}, {a.norm}, "
        f"{torch.get_num_threads()} threads: "
        f"stacked {res['stacked_s_per_step'] * 1e3:.1f} ms/step, "
        f"one at a time {res['sequential_s_per_step'] * 1e3:.1f} ms/step, "
        f"speedup x{res['speedup']:.2f}"
    )


if __name__ == "__main__":
    main()
