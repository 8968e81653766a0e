"""Run independent jobs in worker processes, with results identical to running them here.

Jobs share read-only data (a dataset, say), written once per call to a private temporary file
that each worker reads once, instead of sent with every job. The worker processes are
started once per process (a chapter's kernel) and reused by every later call with the same
number of workers: starting two workers and importing torch in them costs about 3 s, and
chapter B4 alone makes ten calls. Callers run each job under :func:`single_thread`, wherever
it runs, so that a result never depends on the number of workers or on which worker ran it.
"""

from __future__ import annotations

import atexit
import ctypes
import multiprocessing as mp
import os
import pickle
import signal
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from normbook.runtime.devices import computing_on
from normbook.runtime.progress import mark_worker, progress

_SHARED: dict[str, Any] = {"path": None, "data": None, "in_worker": False, "heap_kept": False}
_POOL: dict[str, Any] = {"pool": None, "workers": 0, "env": None}


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameters, from glibc's malloc.h


def keep_freed_memory() -> bool:
    """Keep freed memory in the process instead of handing it back to the OS.

    By default glibc serves blocks over 128 kB with fresh pages and returns the free top of the
    heap, so a training step, which frees and reallocates its megabyte-sized activations, page
    faults on every one of them: thousands of faults a step, up to a quarter of chapter A1's step
    time in kernel code, and more or less of it from one run to the next. Raising both
    thresholds (to glibc's 32 MB mmap limit, and 1 GB) keeps those pages; the process then holds
    its peak memory until it exits. Numbers are unchanged. Returns False where the C library
    is not glibc (nothing is changed there).
    """
    if _SHARED.get("heap_kept"):
        return True
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    mmap_ok = libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    kept = bool(mmap_ok and libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30))
    _SHARED["heap_kept"] = kept
    return kept


@contextmanager
def single_thread():
    """One intra-op thread (bit-reproducible results; two processes share two cores), on a
    heap that keeps freed memory (:func:`keep_freed_memory`)."""
    keep_freed_memory()
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    computing_on(1)  # the entries written after it ends record the thread it computed on
    try:
        yield
    finally:
        torch.set_num_threads(before)


def single_threaded_kernel() -> None:
    """A chapter's own process computes on one thread (torch, and the BLAS and OpenMP pools
    of numpy and scikit-learn); its parallel work runs in worker processes.

    Measured: while another chapter ran beside it, a kernel on its default two threads took
    0.58 to 2.2 s per PackNorm training step against 0.16-0.18 s on one (OpenMP's threads wait
    for each other on a core that another process holds); its evaluations ran 20x slower than
    alone. One thread also makes a kernel's numbers independent of the machine's cores."""
    from threadpoolctl import threadpool_limits

    keep_freed_memory()
    torch.set_num_threads(1)
    computing_on(1)
    _SHARED["blas_limit"] = threadpool_limits(limits=1)  # kept: the limit lasts while it lives


def in_worker() -> bool:
    """True inside a worker process (its own progress bars would interleave: stay quiet)."""
    return _SHARED["in_worker"]


def _init() -> None:
    _SHARED["in_worker"] = True
    mark_worker()
    # Jupyter interrupts a kernel's whole process group, and does so at every kernel shutdown:
    # an idle worker ignores it (close_pool stops it cleanly, no traceback in the build log);
    # a running job is interrupted (_call), and the caller gets its KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call(fn: Callable, path: str | None, job: tuple) -> Any:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        if path != _SHARED["path"]:  # a new call's data: drop the last call's, read it once
            _SHARED["data"] = None
            _SHARED["data"] = None if path is None else pickle.loads(Path(path).read_bytes())
            _SHARED["path"] = path
        return fn(_SHARED["data"], *job)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _pool(workers: int) -> ProcessPoolExecutor:
    """The process's pool of ``workers`` 'spawn' processes (safe after torch and OpenMP have
    started), started on first use and kept for later calls while the environment variables
    and working directory they started with are unchanged (a worker reads the cache directory
    from ``NORMBOOK_CACHE``, say)."""
    started_in = (dict(os.environ), os.getcwd())
    if _POOL["pool"] is None or (_POOL["workers"], _POOL["env"]) != (workers, started_in):
        close_pool()
        ctx = mp.get_context("spawn")
        _POOL.update(
            pool=ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init),
            workers=workers,
            env=started_in,
        )
    return _POOL["pool"]


@atexit.register
def close_pool() -> None:
    """Stop the worker processes (at exit, or after a failed call)."""
    pool, _POOL["pool"] = _POOL["pool"], None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def worker_count(workers: int) -> int:
    """``workers`` processes, or, when it is 0 (the ``cpu`` profile's default: results do not
    depend on it), one per core this chapter may use: ``NORMBOOK_CORES`` where a sweep runs
    several chapters at once and shares the cores out, else every core of the machine."""
    if workers > 0:
        return workers
    cores = os.environ.get("NORMBOOK_CORES", "")
    return max(1, int(cores)) if cores.isdigit() else (os.cpu_count() or 1)


def run_jobs(
    fn: Callable, jobs: list[tuple], shared: Any, workers: int = 1, desc: str = "jobs"
) -> Iterator[tuple[int, Any]]:
    """Yield ``(index, fn(shared, *job))`` for every job, in completion order.

    ``workers > 1`` with more than one job: the jobs run in the process's worker pool
    (:func:`_pool`), ``shared`` read once by each worker. Otherwise they run here, in order.
    A failed job (or a caller that stops early) stops the pool: no stale job keeps a worker.
    ``workers=0``: one per core (:func:`worker_count`).
    """
    workers = worker_count(workers)
    if len(jobs) > 1 and workers > 1:
        with tempfile.TemporaryDirectory(prefix="normbook-jobs-") as tmp:  # private: 0700
            path = None
            if shared is not None:
                path = os.path.join(tmp, "shared.pickle")  # our own data, never downloaded
                Path(path).write_bytes(pickle.dumps(shared, protocol=pickle.HIGHEST_PROTOCOL))
            pool = _pool(workers)
            try:
                futures = {pool.submit(_call, fn, path, job): i for i, job in enumerate(jobs)}
                for fut in progress(as_completed(futures), total=len(futures), desc=desc):
                    yield futures[fut], fut.result()
            except BaseException:
                close_pool()
                raise
        return
    for i, job in progress(list(enumerate(jobs)), desc=desc):
        yield i, fn(shared, *job)
