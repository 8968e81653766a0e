"""Where models run (the chapters' ``device`` parameter), on what machine, from what commit."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(value: str) -> str:
    """'auto' is 'cuda' when available, else 'cpu'; 'cuda' without CUDA is an error."""
    if value not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {value!r}")
    if value == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if value == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' requested but CUDA is not available; use 'auto' or 'cpu'")
    return value


def cpu_model() -> str:
    """This machine's CPU model name with its family and model numbers (from /proc/cpuinfo:
    virtual machines often name only the vendor, 'AMD EPYC'; family 23 model 49 is Zen 2);
    the platform's word elsewhere."""
    import platform

    try:
        fields: dict[str, str] = {}
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if not key.strip():
                break  # the first processor's block is enough
            fields.setdefault(key.strip(), value.strip())
        if "model name" in fields:
            numbers = ", ".join(f"{k} {fields[k]}" for k in ("cpu family", "model") if k in fields)
            return fields["model name"] + (f" ({numbers})" if numbers else "")
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def git_commit(short: bool = False) -> str:
    """This checkout's commit, ``+changes`` when tracked files differ from it; ``unknown``
    where there is no git or no history (a GPU machine gets the tree alone)."""
    root = Path(__file__).resolve().parents[3]
    head = ["git", "rev-parse", *(["--short"] if short else []), "HEAD"]
    try:
        out = subprocess.run(head, cwd=root, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, capture_output=True, text=True, timeout=10)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if out.returncode:
        return "unknown"
    return out.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


# The switches that change which kernels compute (and so the last bits of every result): the
# Makefile pins the first two and OpenBLAS's by default (`make pins`).
ISA_FLAGS = ("ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "DNNL_MAX_CPU_ISA", "OPENBLAS_CORETYPE")


@functools.cache
def onednn_isa() -> str:
    """The instruction set oneDNN's convolutions use on this machine under this environment
    ('Intel AVX2', 'Intel AVX-512 ...'), read from its verbose log in a fresh process (the
    choice is made once per process, at its first primitive); 'unknown' where it cannot say.

    That process costs about 2.5 s (measured on a Zen 3 core: importing torch), and every
    process that writes a cache entry asks: the answer is kept in the temporary folder, keyed
    by what decides it (the CPU's feature flags, the pinning switches, torch and this Python)."""
    memo = Path(tempfile.gettempdir()) / f"normbook-onednn-isa-{_isa_key()}"
    if memo.is_file():
        return memo.read_text().strip() or "unknown"
    isa = _onednn_isa_measured()
    if isa != "unknown":
        try:
            tmp = memo.with_name(f"{memo.name}.{os.getpid()}.tmp")
            tmp.write_text(isa)
            os.replace(tmp, memo)  # atomic: a concurrent process reads the whole answer
        except OSError:
            pass  # not kept: the next process measures again
    return isa


def _isa_key() -> str:
    try:
        info = Path("/proc/cpuinfo").read_text().split("\n\n", 1)[0]
        flags = [line for line in info.splitlines() if line.startswith(("flags", "model name"))]
    except OSError:
        import platform

        flags = [platform.processor(), platform.machine()]
    pins = {k: os.environ.get(k) for k in ISA_FLAGS}
    blob = json.dumps([flags, pins, torch.__version__, sys.executable], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _onednn_isa_measured() -> str:
    # a convolution large enough that PyTorch hands it to oneDNN (a 1-channel one it does not)
    code = "import torch; torch.nn.functional.conv1d(torch.ones(2, 4, 16), torch.ones(4, 4, 3))"
    env = {**os.environ, "ONEDNN_VERBOSE": "1"}
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=120)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    for line in out.stdout.splitlines():
        if ",cpu,isa:" in line:
            return line.split(",cpu,isa:", 1)[1].strip()
    return "unknown"


def versions() -> dict[str, str]:
    """The versions of what computes: Python and the libraries whose kernels give the numbers
    (read from the installed packages' metadata, without importing them; 'absent' where one
    is not installed, as scikit-learn on a GPU machine with torch, numpy and scipy only)."""
    import platform
    from importlib import metadata

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "absent"

    return {"python": platform.python_version(), "torch": torch.__version__,
            "onednn": _onednn_version(), "numpy": version("numpy"), "scipy": version("scipy"),
            "scikit-learn": version("scikit-learn")}  # fmt: skip


def blas_kernels() -> str:
    """The kernels of the BLAS under numpy, scipy and scikit-learn ('Haswell', 'SkylakeX', ...:
    OpenBLAS's choice, which ``OPENBLAS_CORETYPE`` pins), from threadpoolctl; 'unknown' where
    it cannot say (a machine without scikit-learn, or another BLAS)."""
    try:
        import numpy  # noqa: F401  (loads the BLAS that threadpoolctl reads)
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown"
    found = {i.get("architecture") for i in threadpool_info() if i.get("user_api") == "blas"}
    found.discard(None)
    return "+".join(sorted(found)) or "unknown"


def machine() -> dict:
    """What a CPU result depends on beyond the code and the seed: the CPU, the instruction sets
    oneDNN and ATen chose, the versions, and the switches that pin them. Every chapter computes
    on one thread per process (:mod:`normbook.runtime.workers`), so the thread count is not
    among them (a cache entry records it: :func:`provenance`)."""
    return {
        "cpu": cpu_model(),
        "isa": onednn_isa(),
        "aten_capability": torch.backends.cpu.get_cpu_capability(),
        "blas": blas_kernels(),
        "torch": torch.__version__,
        "onednn": _onednn_version(),
        "versions": versions(),
        "flags": {k: os.environ[k] for k in ISA_FLAGS if k in os.environ},
    }


@functools.cache
def _machine_once() -> dict:
    return machine()


# the intra-op threads this process computes on, where a computation set them (workers.
# single_thread restores torch's count when it ends, before the entries it made are written)
_COMPUTED_ON: list[int] = []


def computing_on(threads: int) -> None:
    """Note that this process computes on ``threads`` intra-op threads: the entries it writes
    from now on record that count, not the one torch is set back to after the computation."""
    _COMPUTED_ON[:] = [threads]


def provenance() -> dict:
    """The machine of the process computing a result now (:func:`machine`, read once per
    process) and the intra-op threads it computed on (:func:`computing_on`; else torch's
    count): what every cache entry records of its origin. Work done in worker processes runs
    on the same machine and environment as the process that writes its entries."""
    threads = _COMPUTED_ON[0] if _COMPUTED_ON else torch.get_num_threads()
    return {**_machine_once(), "threads": threads}


def same_machine(a: dict, b: dict) -> bool:
    """Whether two machines compute alike: the same CPU model and the same kernels, as oneDNN,
    ATen and the BLAS chose them (the BLAS's where both recorded it). The pins are recorded,
    not compared: they act through the kernels they leave (AVX2 pinned on a CPU that chooses
    AVX2 anyway computes the same bits). The versions are compared on their own
    (:func:`version_changes`); the thread count is recorded, not compared: every computation
    of the book runs on one thread by construction."""
    keys = ["cpu", "isa", "aten_capability"]
    if a.get("blas", "unknown") != "unknown" and b.get("blas", "unknown") != "unknown":
        keys.append("blas")
    return all(a.get(k) == b.get(k) for k in keys)


def version_changes(a: dict, b: dict) -> list[str]:
    """The libraries whose versions differ between two machines ('numpy 1.26.4 -> 2.1.0')."""
    va, vb = a.get("versions") or {}, b.get("versions") or {}
    return [f"{k} {va.get(k)} -> {vb.get(k)}" for k in sorted(set(va) | set(vb))
            if va.get(k) != vb.get(k)]  # fmt: skip


def _onednn_version() -> str:
    for line in torch.__config__.show().splitlines():
        if "MKL-DNN" in line or "oneDNN" in line:
            return line.split(" v", 1)[1].split(" ")[0] if " v" in line else line.strip()
    return "unknown"


def machine_text(m: dict | None) -> str:
    """``AMD EPYC (cpu family 25, model 1), oneDNN on Intel AVX2`` (with any pinning flag)."""
    if not m:
        return "an unrecorded machine"
    flags = ", ".join(f"{k}={v}" for k, v in (m.get("flags") or {}).items())
    return f"{m['cpu']}, oneDNN on {m['isa']}" + (f" ({flags})" if flags else "")


def origin_text(machines: list[dict] | None) -> str:
    """The machines that computed a chapter's cache entries, each with its versions and its
    number of entries (``AMD EPYC (...), oneDNN on Intel AVX2, 1 thread; torch 2.13.0, numpy
    2.3.5, scipy 1.16.3, scikit-learn 1.7.2 (412 entries)``)."""
    if not machines:
        return "unrecorded"
    parts = []
    for m in machines:
        mm = m.get("machine")
        if not mm:
            parts.append(f"unrecorded ({m.get('entries')} entries)")
            continue
        v = mm.get("versions") or {}
        libs = ", ".join(f"{k} {v[k]}" for k in ("torch", "numpy", "scipy", "scikit-learn")
                         if k in v)  # fmt: skip
        threads = mm.get("threads")
        parts.append(
            f"{machine_text(mm)}"
            + (f", {threads} thread{'s' * (threads != 1)}" if threads else "")  # fmt: skip
            + (f"; {libs}" if libs else "")
            + f" ({m.get('entries')} entries)"
        )
    return "; ".join(parts)
