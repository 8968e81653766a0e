"""The machine a result records: oneDNN's instruction set is measured once per machine and
environment (a process of its own costs seconds), and a pin is another environment."""

import tempfile

import pytest

from normbook.runtime import devices


def test_the_instruction_set_is_measured_once_per_cpu_and_pin(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    measured = []

    def measure():
        measured.append(1)
        return "Intel AVX2"

    monkeypatch.setattr(devices, "_onednn_isa_measured", measure)
    for pin in (None, None, "AVX", "AVX"):  # each call as a new process would make it
        devices.onednn_isa.cache_clear()
        if pin:
            monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", pin)
        assert devices.onednn_isa() == "Intel AVX2"
    assert len(measured) == 2  # once unpinned, once pinned
    assert len(list(tmp_path.glob("normbook-onednn-isa-*"))) == 2
    devices.onednn_isa.cache_clear()


def test_an_unknown_answer_is_not_kept(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(devices, "_onednn_isa_measured", lambda: "unknown")
    devices.onednn_isa.cache_clear()
    assert devices.onednn_isa() == "unknown"
    assert not list(tmp_path.glob("normbook-onednn-isa-*"))
    devices.onednn_isa.cache_clear()


def test_a_version_change_is_named_and_the_thread_count_is_recorded_not_compared():
    a = {"cpu": "x", "isa": "AVX2", "aten_capability": "AVX2", "flags": {}, "threads": 1,
         "versions": {"numpy": "2.3.5", "scipy": "1.16.3"}}  # fmt: skip
    assert devices.same_machine(a, {**a, "versions": {"numpy": "2.4.0", "scipy": "1.16.3"}})
    assert devices.version_changes(a, {**a, "versions": {"numpy": "2.4.0", "scipy": "1.16.3"}}) == [
        "numpy 2.3.5 -> 2.4.0"]  # fmt: skip
    assert devices.same_machine(a, {**a, "threads": 2})


def test_pins_are_compared_through_the_kernels_they_leave():
    a = {"cpu": "x", "isa": "Intel AVX2", "aten_capability": "AVX2", "flags": {}}
    pinned = {"ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"}
    assert devices.same_machine(a, {**a, "flags": pinned})  # AVX2 pinned where AVX2 is chosen
    assert not devices.same_machine(a, {**a, "isa": "Intel AVX-512", "flags": {}})
    assert not devices.same_machine({**a, "blas": "Haswell"}, {**a, "blas": "SkylakeX"})
    assert devices.same_machine({**a, "blas": "Haswell"}, a)  # an older record has none
    assert devices.same_machine({**a, "blas": "unknown"}, {**a, "blas": "Haswell"})


def test_the_blas_kernels_are_read_and_pinned_by_openblas_coretype():
    """In a fresh process (OpenBLAS chooses once, at load): the machine's choice, then the one
    ``OPENBLAS_CORETYPE`` pins. Sandybridge runs on every x86 CPU with AVX."""
    import os
    import subprocess
    import sys

    code = "from normbook.runtime.devices import blas_kernels; print(blas_kernels())"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    chosen = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, check=True).stdout.strip()  # fmt: skip
    if chosen == "unknown" or "avx" not in open("/proc/cpuinfo").read():
        pytest.skip(f"no OpenBLAS kernels to read here ({chosen})")
    pinned = subprocess.run([sys.executable, "-c", code],
                            env={**env, "OPENBLAS_CORETYPE": "Sandybridge"},
                            capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    assert pinned == "Sandybridge"


def test_an_entry_records_the_threads_it_was_computed_on(monkeypatch):
    """Training runs inside ``workers.single_thread``, which sets torch back to its own count
    when it ends, before the trained states are written: they record one thread."""
    import torch

    from normbook.runtime import workers

    monkeypatch.setattr(devices, "_COMPUTED_ON", [])
    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)  # the process's own count
    assert devices.provenance()["threads"] == 2
    monkeypatch.setattr(torch, "set_num_threads", lambda n: None)
    with workers.single_thread():
        pass
    assert devices.provenance()["threads"] == 1
