"""Run independent jobs in worker processes, with results identical to running them here.

Jobs share read-only data (a dataset, say), sent once to each worker instead of once per job.
Callers run each job under :func:`single_thread`, wherever it runs, so that a result never
depends on the number of workers.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any

import torch

from .progress import mark_worker, progress

_SHARED: dict[str, Any] = {"data": None, "in_worker": False}


@contextmanager
def single_thread():
    """One intra-op thread (bit-reproducible results; two processes share two cores)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def in_worker() -> bool:
    """True inside a worker process (its own progress bars would interleave: stay quiet)."""
    return _SHARED["in_worker"]


def _init(shared: Any) -> None:
    _SHARED.update(data=shared, in_worker=True)
    mark_worker()


def _call(fn: Callable, job: tuple) -> Any:
    return fn(_SHARED["data"], *job)


def run_jobs(
    fn: Callable, jobs: list[tuple], shared: Any, workers: int = 1, desc: str = "jobs"
) -> Iterator[tuple[int, Any]]:
    """Yield ``(index, fn(shared, *job))`` for every job, in completion order.

    ``workers > 1`` with more than one job: a pool of 'spawn' processes (safe after torch and
    OpenMP have started), ``shared`` sent once to each. Otherwise the jobs run here, in order.
    """
    if len(jobs) > 1 and workers > 1:
        ctx = mp.get_context("spawn")
        with ProcessPoolExecutor(
            max_workers=min(workers, len(jobs)),
            mp_context=ctx,
            initializer=_init,
            initargs=(shared,),
        ) as pool:
            futures = {pool.submit(_call, fn, job): i for i, job in enumerate(jobs)}
            for fut in progress(as_completed(futures), total=len(futures), desc=desc):
                yield futures[fut], fut.result()
        return
    for i, job in progress(list(enumerate(jobs)), desc=desc):
        yield i, fn(shared, *job)
