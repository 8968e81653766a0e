"""Builds that are killed, run twice at once, or re-run: nothing is lost, half-read or different.

These run the real pipeline (papermill, kernels, the cache) on the smoke profile, in a
throw-away build and cache directory."""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
from dataclasses import asdict

import psutil
import pytest

from normbook.paper_a.a2_mechanism import spec as a2_spec
from normbook.paper_a.cached import cache_keys
from normbook.paper_a.runs import packnorm
from normbook.publish import execution, project
from normbook.runtime import cache

CHAPTERS = ["--chapters", "a1_localization,a2_mechanism"]
# one chapter at a time: the scenarios below kill or lock a build mid-chapter
BOOK = [sys.executable, "-m", "normbook.publish.build", "book", "--profile", "smoke", *CHAPTERS,
        "--jobs", "1"]  # fmt: skip


def _env(tmp_path, cache="cache"):
    return {
        **os.environ,
        "NORMBOOK_BUILD_DIR": str(tmp_path / "build"),
        "NORMBOOK_CACHE": str(tmp_path / cache),
    }


def _outputs(nb_path) -> str:
    nb = json.loads(nb_path.read_text())
    return "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))


def _a2_first_training_entries() -> list:
    """The cache entries of the PackNorm models chapter A2 trains first at the smoke profile
    (its Fig. 3 sweep, :func:`.packnorm.trained`'s keys): nothing in chapter A1 computes them."""
    s = packnorm.PackSetup.from_params(a2_spec.A2.resolve("smoke"))
    return [cache_keys.PACK_TRAIN.path({"net": asdict(s.net), "train": asdict(s.train),
                                        "overlap": int(o), "seed": int(seed)})
            for o in s.overlaps for seed in s.seeds]  # fmt: skip


def _kill_tree(proc: subprocess.Popen) -> None:
    """SIGKILL a build and every process it started (its kernel runs in a session of its own,
    so killing the build's process group alone would leave it running)."""
    try:
        procs = [*psutil.Process(proc.pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        procs = []
    with contextlib.suppress(ProcessLookupError):  # already reaped (the watchdog's call)
        os.killpg(proc.pid, signal.SIGKILL)
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    psutil.wait_procs(procs, timeout=60)
    proc.wait(60)


@pytest.mark.heavy
def test_a_killed_build_resumes_where_it_stopped(tmp_path, monkeypatch):
    """A build killed with SIGKILL while chapter A2 executes keeps A1 (stamped, its networks
    cached) and leaves nothing of A2; the rerun executes only A2, from A1's cached networks.
    The test holds the lock of the first entry A2 trains, so A2 is provably mid-chapter (waiting
    on it) when the build is killed, however fast or slow the machine."""
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path / "cache"))  # the build's cache, below
    with cache._locked(_a2_first_training_entries()):
        first = subprocess.Popen(
            BOOK, cwd=project.ROOT, env=_env(tmp_path), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )  # fmt: skip
        # a build that never reaches the lock becomes a failure, not a hang
        watchdog = threading.Timer(900, _kill_tree, (first,))
        watchdog.start()
        seen, in_a2, waiting = [], False, False
        try:
            for line in first.stdout:
                seen.append(line)
                in_a2 = in_a2 or "[execute] book/a2_mechanism.py" in line
                if in_a2 and "another run is computing a_pack_train/" in line:
                    waiting = True  # A2 waits on the test's lock: kill the build now
                    break
            _kill_tree(first)
        finally:
            watchdog.cancel()
    assert waiting and first.returncode == -signal.SIGKILL, "".join(seen[-30:])
    executed = tmp_path / "build" / "smoke" / "executed" / "book"
    assert (executed / "a1_localization.stamp").exists()
    assert not (executed / "a2_mechanism.ipynb").exists()  # nothing half-written to read
    assert not (executed / "a2_mechanism.stamp").exists()

    second = subprocess.run(
        BOOK, cwd=project.ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=900
    )
    log = second.stdout + second.stderr
    assert second.returncode == 0, log[-4000:]
    assert "[up to date] book/a1_localization.py" in log  # the finished chapter is reused
    assert "[done] book/a2_mechanism.py" in log  # the interrupted one re-executed
    reused = next(ln for ln in _outputs(executed / "a2_mechanism.ipynb").splitlines()
                  if ln.startswith("A1's results loaded from the cache"))  # fmt: skip
    loaded, total = re.search(r"(\d+) of (\d+)", reused).groups()
    assert loaded == total and ": no" not in reused, reused  # A1's networks, from the cache
    assert (tmp_path / "build/smoke/site/_build/html/book/a2_mechanism.html").exists()


def test_a_second_build_waits_for_the_first(tmp_path, monkeypatch):
    """A build started while another of its profile runs says it waits and executes nothing
    until the first finishes. The test holds the build lock and reads the second build's
    output until its "[wait]" line: no deadline, no polling."""
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / "build"))
    with project.build_lock("smoke"):
        second = subprocess.Popen(
            BOOK, cwd=project.ROOT, env=_env(tmp_path), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )  # fmt: skip
        watchdog = threading.Timer(600, _kill_tree, (second,))  # a hang becomes a failure
        watchdog.start()
        try:
            log = ""
            while "[wait]" not in log:
                line = second.stdout.readline()
                assert line, log  # it ended (or was killed) without waiting
                log += line
            assert "another build of profile smoke is running" in log
            assert second.poll() is None  # still waiting (on the lock held here)
            assert "[execute]" not in log  # nothing executed before it waited
        finally:
            watchdog.cancel()
            _kill_tree(second)


@pytest.mark.heavy
def test_same_parameters_same_glued_numbers(tmp_path, monkeypatch):
    """Re-executing a chapter with its cache cleared gives bit-identical glued numbers."""
    chapter = project.ROOT / "book" / "a1_localization.py"
    runs = []
    for i in range(2):
        monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / f"build{i}"))
        monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path / f"cache{i}"))
        nb, secs = execution.execute(chapter, "smoke", {}, force=True)
        assert secs is not None
        wall_clock = re.compile(r"_wall_s$")  # how long the run took: the one value that varies
        runs.append(
            {k: v for k, v in execution.glued_values(nb).items() if not wall_clock.search(k)}
        )
    numbers = [v for v in runs[0].values() if any(ch.isdigit() for ch in v)]
    assert len(numbers) > 20 and runs[0] == runs[1]
