"""How many epochs paper B's networks need before early stopping ends them, measured on seeds
the book does not use, so that the epoch caps can be set where no graded network hits them.

    python -m normbook.tools.epochs_needed [--profile cpu] [--seeds 100 101] [--cap 40]
        [--cells cifar10-nobn-0.0001 ...] [--batch-size 128] [--out results/cpu/epochs_needed.json]

Trains every cell of chapter B4's 2 x 2 (each dataset, BN and no BN, at both learning rates;
the cells at the paper's rates are chapter B1's networks) with the profile's configuration and
the epoch cap raised to ``--cap``, one network per (cell, seed), ``--workers`` at a time. Writes
per network the epoch early stopping ended it (or that the cap did), the epoch of its kept
weights, its test accuracy and its seconds, with the CPU model, versions and commit. Nothing is
read from or written to the experiment cache: the seeds are not the book's.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from normbook.paper_b.b4_stress.factorial import factorial_configs
from normbook.paper_b.b4_stress.spec import B4
from normbook.paper_b.runs.classify import load_data, split_key, train_one
from normbook.publish.project import write_atomic
from normbook.runtime import devices
from normbook.runtime.workers import run_jobs


def _job(subsets, cfg, seed, key):
    return train_one(cfg, seed, subsets[key], show_progress=False)


def cell_name(cfg) -> str:
    return f"{cfg.dataset}-{'bn' if cfg.batchnorm else 'nobn'}-{cfg.lr:g}"


def measure(profile: str, seeds: list[int], cap: int, workers: int, cells_wanted=None,
            batch_size: int | None = None) -> list[dict]:  # fmt: skip
    r"""One row per (cell, seed): the cell, the learning rate, when training ended and why
    (``cells_wanted``: only these :func:`cell_name`\ s; ``batch_size``: another minibatch)."""
    params = B4.resolve(profile, factorial_datasets="both")
    book_seeds = set(params.seeds)
    if book_seeds & set(seeds):
        raise SystemExit(f"error: seeds {sorted(book_seeds & set(seeds))} are the book's seeds")
    bs = {} if batch_size is None else {"batch_size": batch_size}
    cells = {c: replace(cfg, max_epochs=cap, checkpoints=(), **bs)
             for c, cfg in factorial_configs(params).items()
             if cells_wanted is None or cell_name(cfg) in cells_wanted}  # fmt: skip
    if not cells:
        raise SystemExit(f"error: no cell named {cells_wanted}")
    splits = load_data(type("S", (), {"allow_unverified": None})())
    jobs = [(cfg, s, split_key(cfg)) for cfg in cells.values() for s in seeds]
    # the slowest first: CIFAR-10 at the low rate
    jobs.sort(key=lambda j: (j[0].dataset != "cifar10", j[0].lr))
    subsets = {split_key(cfg): splits[cfg.dataset].of(cfg) for cfg in cells.values()}
    rows = []
    for i, res in run_jobs(_job, jobs, subsets, workers, desc="networks"):
        cfg, seed, _ = jobs[i]
        rows.append(dict(
            dataset=cfg.dataset, batchnorm=cfg.batchnorm, lr=cfg.lr, seed=seed, cap=cap,
            batch_size=cfg.batch_size,
            stopped_epoch=res.stopped_epoch, best_epoch=res.best_epoch,
            ended_by="early stopping" if res.early_stopped else "the cap",
            test_acc=res.test_acc, seconds=round(res.seconds, 1),
        ))  # fmt: skip
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--seeds", type=int, nargs="+", default=[100, 101])
    ap.add_argument("--cap", type=int, default=40)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cells", nargs="+", default=None, help="e.g. cifar10-nobn-0.0001")
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    out = a.out or Path("results") / a.profile / "epochs_needed.json"
    started = datetime.now(UTC).isoformat(timespec="seconds")
    commit = devices.git_commit()  # read before the run: the code it ran
    rows = measure(a.profile, a.seeds, a.cap, a.workers, a.cells, a.batch_size)
    record = dict(profile=a.profile, seeds=a.seeds, cap=a.cap, started=started,
                  batch_size=a.batch_size,
                  commit=commit, machine=devices.provenance(), networks=rows)  # fmt: skip
    write_atomic(out, json.dumps(record, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
