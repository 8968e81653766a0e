"""The worker pool: started once and reused, each call's shared data (never a stale one), a
failed job stops the pool and the next call starts a fresh one, and so does a changed
environment."""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from normbook.runtime import workers


def _pid_and_data(shared, i):
    return os.getpid(), shared["tag"], i


def _pid_when_both_run(folder, i):
    """Each job says it has started, then waits for the other one: the two jobs run at once,
    so in both workers, however the pool hands them out and however long a worker takes to
    start. The deadline is only a safety bound (a hang becomes a failure)."""
    Path(folder, str(i)).touch()
    deadline = time.monotonic() + 300
    while len(list(Path(folder).iterdir())) < 2:
        if time.monotonic() > deadline:
            raise TimeoutError("the other job never started")
        time.sleep(0.01)
    return os.getpid()


def _env(shared, i):
    return os.environ.get("NORMBOOK_CACHE")


def _fail_on(shared, i):
    if i == shared:
        raise ValueError(f"job {i} failed")
    return os.getpid()


def _pid_then_sleep(shared, i):
    Path(shared, f"{i}.pid").write_text(str(os.getpid()))
    time.sleep(600)  # until interrupted; the length only bounds a failing run
    Path(shared, f"{i}.done").touch()


def _run(fn, n, shared):
    return dict(workers.run_jobs(fn, [(i,) for i in range(n)], shared, workers=2, desc="t"))


def test_pool_is_reused_and_each_call_sees_its_own_shared_data():
    workers.close_pool()
    first = _run(_pid_and_data, 6, {"tag": "a"})
    second = _run(_pid_and_data, 6, {"tag": "b"})
    assert {t for _, t, _ in first.values()} == {"a"}
    assert {t for _, t, _ in second.values()} == {"b"}  # never the last call's data
    assert [i for _, _, i in (first[j] for j in range(6))] == list(range(6))
    pids = {p for p, _, _ in first.values()} | {p for p, _, _ in second.values()}
    assert os.getpid() not in pids and len(pids) <= 2  # the same two workers throughout


def test_a_failed_job_stops_the_pool_and_the_next_call_starts_a_fresh_one():
    workers.close_pool()
    before = set(_run(_fail_on, 4, -1).values())
    with pytest.raises(ValueError, match="job 2 failed"):
        _run(_fail_on, 4, 2)
    assert workers._POOL["pool"] is None
    after = set(_run(_fail_on, 4, -1).values())
    assert after and not (after & before)  # new processes
    workers.close_pool()


def test_one_worker_or_one_job_runs_here_in_order():
    out = list(workers.run_jobs(_pid_and_data, [(0,), (1,)], {"tag": "x"}, workers=1))
    assert out == [(0, (os.getpid(), "x", 0)), (1, (os.getpid(), "x", 1))]


def test_a_changed_environment_starts_new_workers(monkeypatch, tmp_path):
    workers.close_pool()
    _run(_pid_and_data, 4, {"tag": "a"})
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path))  # workers read the cache from it
    assert set(_run(_env, 4, None).values()) == {str(tmp_path)}
    workers.close_pool()


def _ignores_sigint(pid: int) -> bool:
    """Whether the process ignores SIGINT (Linux: its SigIgn mask), so that a SIGINT sent to it
    is discarded when sent (nothing left pending to act on later)."""
    status = Path(f"/proc/{pid}/status").read_text()
    mask = int(re.search(r"^SigIgn:\s*([0-9a-f]+)", status, re.M).group(1), 16)
    return bool(mask & (1 << (signal.SIGINT - 1)))


def test_an_idle_worker_ignores_the_interrupt_jupyter_sends_at_kernel_shutdown(tmp_path):
    """Jupyter interrupts a kernel's whole process group at shutdown: idle workers survive it
    and keep working."""
    workers.close_pool()
    # signal only workers that have started (a worker still booting has not yet set its
    # handler, and a real kernel shutdown finds none in that state): two jobs that wait for
    # each other run in both workers
    started, jobs = tmp_path / "started", [(i,) for i in range(2)]
    started.mkdir()
    seen = {p for _, p in workers.run_jobs(_pid_when_both_run, jobs, str(started), workers=2)}
    pids = {p.pid for p in multiprocessing.active_children()}
    assert len(pids) == 2 and seen == pids
    if sys.platform.startswith("linux"):  # ignored: the signal is discarded as it is sent
        assert all(_ignores_sigint(pid) for pid in pids)
    for pid in pids:
        os.kill(pid, signal.SIGINT)
    again = {p for p, _, _ in _run(_pid_and_data, 4, {"tag": "b"}).values()}
    assert again <= pids  # the same workers, alive and working
    assert {p.pid for p in multiprocessing.active_children()} == pids
    workers.close_pool()


def test_an_interrupt_stops_a_running_job_and_reaches_the_caller(tmp_path):
    """SIGINT to workers running jobs stops the jobs (they never finish) and raises
    KeyboardInterrupt in the caller, and the pool is closed."""
    workers.close_pool()

    def interrupt_when_started():  # once both jobs run, so under their SIGINT handler
        while len(pid_files := [f for f in tmp_path.glob("*.pid") if f.read_text()]) < 2:
            time.sleep(0.05)
        for f in pid_files:
            os.kill(int(f.read_text()), signal.SIGINT)

    threading.Thread(target=interrupt_when_started, daemon=True).start()
    jobs = workers.run_jobs(_pid_then_sleep, [(0,), (1,)], str(tmp_path), workers=2)
    with pytest.raises(KeyboardInterrupt):
        for _ in jobs:
            pass
    assert workers._POOL["pool"] is None  # closed, after waiting for its workers' jobs to end
    assert list(tmp_path.glob("*.done")) == []  # both jobs stopped, neither ran to its end


_CHURN = """
import resource, sys, torch
from normbook.runtime import workers
if sys.argv[1] == "keep":
    assert workers.keep_freed_memory()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for r in range(50):  # megabyte blocks freed and allocated again, each a little larger
    torch.empty((2 << 20) + r * (64 << 10), dtype=torch.uint8).fill_(1)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_keep_freed_memory_stops_page_faults_of_reallocated_activations():
    def faults(mode):
        out = subprocess.run(
            [sys.executable, "-c", _CHURN, mode], capture_output=True, text=True, check=True
        )
        return int(out.stdout.split()[-1])

    default, kept = faults("default"), faults("keep")
    assert default > 50 * 500  # glibc's default: every block on fresh pages (2 MB = 512 pages)
    assert kept < default / 4


def test_single_thread_keeps_freed_memory():
    with workers.single_thread():
        assert torch.get_num_threads() == 1
    assert workers._SHARED["heap_kept"] == sys.platform.startswith("linux")


def test_zero_workers_means_one_per_core_or_the_share_a_sweep_gives(monkeypatch):
    monkeypatch.delenv("NORMBOOK_CORES", raising=False)
    assert workers.worker_count(3) == 3
    assert workers.worker_count(0) == (os.cpu_count() or 1)
    monkeypatch.setenv("NORMBOOK_CORES", "1")
    assert workers.worker_count(0) == 1 and workers.worker_count(2) == 2
    monkeypatch.setenv("NORMBOOK_CORES", "junk")
    assert workers.worker_count(0) == (os.cpu_count() or 1)


def test_a_kernel_computes_on_one_thread(monkeypatch):
    """Chapters run side by side: a multi-threaded kernel beside another process stalls on its
    own OpenMP threads (measured 3-13x slower per step), so a kernel uses one thread."""
    import threadpoolctl

    from normbook.runtime import workers as w

    before = torch.get_num_threads()
    try:
        w.single_threaded_kernel()
        assert torch.get_num_threads() == 1
        assert all(p["num_threads"] == 1 for p in threadpoolctl.threadpool_info())
    finally:
        torch.set_num_threads(before)
        w._SHARED.pop("blas_limit").restore_original_limits()
