"""Builds that are killed, run twice at once, or re-run: nothing is lost, half-read or different.

These run the real pipeline (papermill, kernels, the cache) on the smoke profile, in a
throw-away build and cache directory."""

import json
import os
import re
import signal
import subprocess
import sys
import time

from normbook.publish import execution, project

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


def test_a_killed_build_resumes_where_it_stopped(tmp_path):
    first = subprocess.Popen(
        BOOK, cwd=project.ROOT, env=_env(tmp_path), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    seen, in_a2 = [], False
    for line in first.stdout:
        seen.append(line)
        in_a2 = in_a2 or "[execute] book/a2_mechanism.py" in line
        if in_a2 and "Executing Cell 6" in line:  # chapter A2 is half-way: kill everything
            os.killpg(first.pid, signal.SIGKILL)
            break
    first.wait(60)
    assert in_a2 and first.returncode == -signal.SIGKILL, "".join(seen[-30:])
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
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / "build"))
    log = tmp_path / "second.log"
    with project.build_lock("smoke"), log.open("w") as f:
        second = subprocess.Popen(
            BOOK, cwd=project.ROOT, env=_env(tmp_path), stdout=f, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while "[wait]" not in log.read_text() and time.monotonic() < deadline:
                assert second.poll() is None, log.read_text()
                time.sleep(0.2)
            assert "another build of profile smoke is running" in log.read_text()
            assert second.poll() is None  # still waiting, nothing executed
            assert "[execute]" not in log.read_text()
        finally:
            os.killpg(second.pid, signal.SIGKILL)
            second.wait(30)


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
