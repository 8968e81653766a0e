"""Where models run: the chapters' ``device`` parameter."""

from __future__ import annotations

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
    """This machine's CPU model name (from /proc/cpuinfo; the platform's word elsewhere)."""
    import platform

    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"
