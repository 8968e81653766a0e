"""Where models run (the chapters' ``device`` parameter), on what machine, from what commit."""

from __future__ import annotations

import subprocess
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
