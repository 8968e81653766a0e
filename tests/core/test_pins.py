"""The kernels' pins: the Makefile sets the reference machine's by default (and exactly
fingerprint's), keeps a value the machine sets, drops them at ``ISA=native``; the smoke build's
check finds an entry computed without them."""

import json
import os
import subprocess

import pytest

from normbook.publish import project
from normbook.tools import fingerprint, pins

AVX2, _ = fingerprint.has_avx2()


def _make_pins(*args, **env):
    # a make of its own: not the one running make test (its jobserver flags and level)
    skip = {*fingerprint.PINNED, "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"}
    clean = {k: v for k, v in os.environ.items() if k not in skip}
    out = subprocess.run(["make", "-s", "--no-print-directory", "pins", *args], cwd=project.ROOT,
                         env={**clean, **env}, capture_output=True, text=True)  # fmt: skip
    return out.returncode, out.stdout + out.stderr


@pytest.mark.skipif(not AVX2, reason="no AVX2 here: the Makefile pins nothing")
def test_the_makefile_pins_fingerprints_kernels_by_default_and_keeps_the_machines_own():
    rc, out = _make_pins()
    assert rc == 0, out
    assert dict(line.split("=", 1) for line in out.splitlines()) == fingerprint.PINNED, out
    rc, out = _make_pins(OPENBLAS_CORETYPE="Sandybridge")  # the machine's own value stays
    assert "OPENBLAS_CORETYPE=Sandybridge" in out and "ONEDNN_MAX_CPU_ISA=AVX2" in out


def test_isa_native_pins_nothing_and_another_value_is_refused():
    rc, out = _make_pins("ISA=native")
    assert rc == 0 and out.startswith("no pins")
    rc, out = _make_pins("ISA=avx512")
    assert rc != 0 and "ISA must be avx2 (the default) or native, got 'avx512'" in out


def test_a_cpu_without_avx2_is_told_to_use_the_bundle():
    arm = "processor\t: 0\nFeatures\t: fp asimd\n"
    ok, why = fingerprint.has_avx2(arm)
    assert not ok and "no avx2" in why
    assert fingerprint.has_avx2("flags\t\t: fpu sse avx avx2 fma\n") == (True, "")
    assert "make book BUNDLE=" in fingerprint.NO_AVX2.format(why=why)


def _entry(root, kind, key, flags):
    d = root / kind / key
    d.mkdir(parents=True)
    (d / "meta.json").write_text(json.dumps({"computed_by": {"flags": flags}}))


def test_the_check_finds_an_entry_computed_without_the_pins(tmp_path, monkeypatch, capsys):
    want = {"ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"}
    _entry(tmp_path, "a_train", "k1", want)
    _entry(tmp_path, "b_train", "k2", {**want, "OPENBLAS_CORETYPE": "Haswell"})
    for k in fingerprint.PINNED:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx2")
    assert pins.main([str(tmp_path)]) == 0
    assert "all 2 entries" in capsys.readouterr().out
    _entry(tmp_path, "b_sparsity", "k3", {"ONEDNN_MAX_CPU_ISA": "AVX2"})  # a worker without one
    assert pins.unpinned(tmp_path, pins.expected()) == ["b_sparsity/k3"]
    assert pins.main([str(tmp_path)]) == 1
    assert "1 of 3 entries were computed without the pins" in capsys.readouterr().err
    assert pins.main([str(tmp_path / "empty")]) == 2


def _kernels_here(shared):
    import torch

    from normbook.runtime.devices import blas_kernels

    env = {k: os.environ.get(k) for k in fingerprint.PINNED}
    return env, torch.backends.cpu.get_cpu_capability(), blas_kernels()


@pytest.mark.skipif(not AVX2, reason="no AVX2 here: nothing to pin")
def test_the_pins_reach_a_chapters_worker_processes_and_take_effect_there(monkeypatch):
    """A chapter's workers are spawned from its kernel, which make's environment reaches: with
    the pins set, a fresh worker sees them and its ATen and OpenBLAS run the pinned kernels."""
    from normbook.runtime import workers

    workers.close_pool()
    for k, v in fingerprint.PINNED.items():
        monkeypatch.setenv(k, v)
    try:
        got = [r for _, r in workers.run_jobs(_kernels_here, [(), ()], None, workers=2)]
    finally:
        workers.close_pool()
    for env, aten, blas in got:
        assert env == fingerprint.PINNED
        assert aten == "AVX2" and blas in ("Haswell", "unknown")
