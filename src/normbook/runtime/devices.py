"""Where models run (the chapters' ``device`` parameter), on what machine, from what commit."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
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


# The switches that change which kernels compute (and so the last bits of every result).
ISA_FLAGS = ("ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "DNNL_MAX_CPU_ISA")


@functools.cache
def onednn_isa() -> str:
    """The instruction set oneDNN's convolutions use on this machine under this environment
    ('Intel AVX2', 'Intel AVX-512 ...'), read from its verbose log in a fresh process (the
    choice is made once per process, at its first primitive); 'unknown' where it cannot say."""
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


def machine() -> dict:
    """What a CPU result depends on beyond the code and the seed: the CPU, the instruction sets
    oneDNN and ATen chose, the versions, and the switches that pin them. Every chapter computes
    on one thread per process (:mod:`normbook.runtime.workers`), so the thread count is not
    among them."""
    return {
        "cpu": cpu_model(),
        "isa": onednn_isa(),
        "aten_capability": torch.backends.cpu.get_cpu_capability(),
        "torch": torch.__version__,
        "onednn": _onednn_version(),
        "flags": {k: os.environ[k] for k in ISA_FLAGS if k in os.environ},
    }


def _onednn_version() -> str:
    for line in torch.__config__.show().splitlines():
        if "MKL-DNN" in line or "oneDNN" in line:
            return line.split(" v", 1)[1].split(" ")[0] if " v" in line else line.strip()
    return "unknown"
