import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

from normbook.grading import stats
from normbook.pages import fmt
from normbook.runtime import cache


def _compute(counter):
    def compute():
        counter.append(1)
        return cache.Entry({"x": np.arange(3)}, tensors={"w": torch.ones(2)}, meta={"note": "hi"})

    return compute


def test_hit_does_not_recompute_and_returns_the_same_data():
    calls = []
    first = cache.cached("t", {"a": 1}, _compute(calls), (stats,))
    second = cache.cached("t", {"a": 1}, _compute(calls), (stats,))
    assert len(calls) == 1 and not first.hit and second.hit
    np.testing.assert_array_equal(second["x"], np.arange(3))
    assert torch.equal(second.tensors["w"], torch.ones(2))
    assert second.meta["note"] == "hi" and second.meta["config"] == {"a": 1}


def test_key_depends_on_config_and_code():
    calls = []
    cache.cached("t", {"a": 1}, _compute(calls), (stats,))
    cache.cached("t", {"a": 2}, _compute(calls), (stats,))
    cache.cached("t", {"a": 1}, _compute(calls), (stats, fmt))  # other code, other key
    assert len(calls) == 3


def test_interrupted_compute_leaves_no_entry():
    def boom():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cache.cached("t", {"a": 1}, boom, (stats,))
    assert not cache.is_cached("t", {"a": 1}, (stats,))
    kind_dir = cache.cache_root() / "t"
    leftovers = list(kind_dir.glob("*")) if kind_dir.exists() else []
    assert leftovers == []  # no half-written temporary directory either


def test_corrupt_entry_is_an_error_not_a_silent_recompute():
    calls = []
    cache.cached("t", {"a": 1}, _compute(calls), (stats,))
    path = cache.entry_path("t", {"a": 1}, (stats,))
    (path / "arrays.npz").write_bytes(b"garbage")
    with pytest.raises(cache.CacheError, match="normbook.runtime.cache clear"):
        cache.cached("t", {"a": 1}, _compute(calls), (stats,))
    assert len(calls) == 1


def test_clear_and_info():
    cache.cached("t", {"a": 1}, _compute([]), (stats,))
    assert cache.info()["t"][0] == 1
    cache.clear()
    assert cache.info() == {}


def test_interrupted_write_leaves_no_entry_and_no_temporary(monkeypatch):
    def killed(*a, **k):
        raise KeyboardInterrupt  # as if the run were killed half-way through the write

    monkeypatch.setattr(cache.torch, "save", killed)
    with pytest.raises(KeyboardInterrupt):
        cache.cached("t", {"a": 1}, _compute([]), (stats,))
    assert not cache.is_cached("t", {"a": 1}, (stats,))
    assert list((cache.cache_root() / "t").glob("*")) == []


def test_cached_each_computes_only_the_missing_items_and_keeps_finished_ones():
    batches = []

    def compute(idx):
        batches.append(list(idx))
        for i in reversed(idx):  # any order
            yield i, cache.Entry({"i": np.array(i)})

    first = cache.cached_each("m", [{"s": 0}, {"s": 1}], compute, (stats,))
    assert batches == [[0, 1]] and [e.hit for e in first] == [False, False]
    again = cache.cached_each("m", [{"s": 1}, {"s": 2}, {"s": 0}], compute, (stats,))
    assert batches == [[0, 1], [1]]  # only {"s": 2} (index 1 here) is new
    assert [e.hit for e in again] == [True, False, True]
    assert [int(e["i"]) for e in again] == [1, 1, 0]

    def interrupted(idx):
        yield idx[0], cache.Entry({"i": np.array(7)})
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cache.cached_each("m", [{"s": 3}, {"s": 4}], interrupted, (stats,))
    assert cache.is_cached("m", {"s": 3}, (stats,)) and not cache.is_cached("m", {"s": 4}, (stats,))


def test_load_refuses_a_missing_entry():
    with pytest.raises(cache.CacheError, match="missing"):
        cache.load("t", {"a": 1}, (stats,))
    cache.cached("t", {"a": 1}, _compute([]), (stats,))
    assert cache.load("t", {"a": 1}, (stats,)).hit


# ------------------------------------------------------------------ two runs at once, disk faults

_RUN = """
import sys
from pathlib import Path
import numpy as np
from normbook.runtime import cache
from normbook.grading import stats

role, counter, each = sys.argv[1], Path(sys.argv[2]), sys.argv[3] == "each"

def compute():
    with counter.open("a") as f:
        f.write("x")
    if role == "first":  # holding the entry's lock: say so, then compute until the test says
        print("computing", flush=True)
        sys.stdin.readline()  # returns once the test closes stdin
    return cache.Entry({"v": np.arange(4)})

if each:
    def missing(idx):
        for i in idx:
            yield i, compute()
    entries = cache.cached_each("t", [{"a": 1}, {"a": 2}], missing, (stats,))
else:
    entries = [cache.cached("t", {"a": 1}, compute, (stats,))]
print([e.hit for e in entries], [e["v"].tolist() for e in entries])
"""


@pytest.mark.parametrize("each", [False, True])
def test_two_runs_of_one_configuration_compute_it_once(tmp_path, each):
    """A second run that needs an entry the first is computing waits on its lock (and says
    so), then shares the first one's result: computed once. The first run computes until the
    second has said it waits, so the order is fixed by events, never by timing."""
    counter = tmp_path / "computed"
    env = {**os.environ, "NORMBOOK_CACHE": str(tmp_path / "cache")}

    def start(role, **pipes):
        cmd = [sys.executable, "-c", _RUN, role, str(counter), "each" if each else "one"]
        return subprocess.Popen(cmd, env=env, text=True, **pipes)

    with (tmp_path / "err1").open("w") as err1, (tmp_path / "out2").open("w") as out2:
        first = start("first", stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err1)
        runs = [first]
        # a hang (a lock never released) becomes a failure: the runs are killed, reads end
        watchdog = threading.Timer(600, lambda: [r.kill() for r in runs])
        watchdog.start()
        try:
            assert first.stdout.readline() == "computing\n"  # it holds the entry's lock
            second = start("second", stdout=out2, stderr=subprocess.PIPE)
            runs.append(second)
            err2 = ""
            while "waiting to share its result" not in err2:
                line = second.stderr.readline()
                assert line, err2  # it ended (or was killed) without waiting
                err2 += line
            first.stdin.close()  # the first run finishes its computation
            out1 = first.stdout.read()
            err2 += second.stderr.read()
            codes = [r.wait() for r in runs]
        finally:
            watchdog.cancel()
            for r in runs:
                r.kill()
                r.wait()
    assert codes == [0, 0], (tmp_path / "err1").read_text() + err2
    n = 2 if each else 1
    assert counter.read_text() == "x" * n  # computed once, by the first run
    assert out1.splitlines()[-1] == f"{[False] * n} {[[0, 1, 2, 3]] * n}"
    assert (tmp_path / "out2").read_text().strip() == f"{[True] * n} {[[0, 1, 2, 3]] * n}"


def test_an_unwritable_cache_is_a_one_line_error_before_compute(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")  # a cache "directory" below a file cannot be created
    monkeypatch.setenv("NORMBOOK_CACHE", str(blocker / "cache"))
    with pytest.raises(cache.CacheError) as e:
        cache.check_writable()
    msg = str(e.value)
    assert "\n" not in msg and str(blocker / "cache") in msg and "NORMBOOK_CACHE" in msg
    calls = []
    with pytest.raises(cache.CacheError, match="NORMBOOK_CACHE"):
        cache.cached("t", {"a": 1}, _compute(calls), (stats,))
    assert calls == []  # the lock failed first: nothing computed for nothing


def test_a_full_disk_is_a_one_line_error_and_leaves_no_entry(tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", full)
    calls = []
    with pytest.raises(cache.CacheError) as e:
        cache.cached("t", {"a": 1}, _compute(calls), (stats,))
    msg = str(e.value)
    assert "\n" not in msg and "No space left on device" in msg and "NORMBOOK_CACHE" in msg
    assert str(cache.cache_root()) in msg and calls == [1]
    kind = cache.cache_root() / "t"
    assert not any(p.is_dir() for p in kind.iterdir())  # no entry, no temporary
    assert not cache.is_cached("t", {"a": 1}, (stats,))


def test_every_entry_records_the_machine_that_computed_it_and_a_record_lists_them(monkeypatch):
    from normbook.runtime import devices

    for name in ("STEPS", "_USED", "_MACHINES"):  # this test's step leaves no trace
        monkeypatch.setattr(cache, name, {})
    step = cache.step("t_provenance", stats)
    entry = step.cached({"a": 1}, _compute([]))
    made = entry.meta["computed_by"]
    assert made == {**devices.machine(), "threads": torch.get_num_threads()}
    for k in ("python", "torch", "onednn", "numpy", "scipy", "scikit-learn"):
        assert made["versions"][k] not in ("", None, "absent"), k
    assert made["cpu"] and made["isa"] and made["aten_capability"]
    again = step.cached({"a": 1}, _compute([]))
    assert again.hit and again.meta["computed_by"] == made  # read back, not re-stamped
    used = {json.dumps(m["machine"], sort_keys=True): m["entries"] for m in cache.machines_used()}
    assert used == {json.dumps(made, sort_keys=True): 2}
    assert [st.kind for st, _, _ in cache.steps_used()] == ["t_provenance"]
