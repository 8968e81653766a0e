"""A paper-scale record: ``<experiment>.json`` (what ran, where, how, the budget's choice,
timings and per-seed effects) beside ``<experiment>.npz`` (per-index moments, probe maps,
loss curves). The runner rewrites both after every phase, atomically and arrays first; the
JSON names each array with its SHA-256, so a JSON written after an earlier phase still reads
against the arrays of a later one (arrays are only ever added). :func:`load` checks the
schema (:func:`problems`) and every array before the book uses a record.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from normbook.runtime import cache

SCHEMA = 1
MAX_BYTES = 5 * 2**20  # JSON and arrays together (results/ holds small records only)
STATUSES = ("running", "complete", "stopped at its deadline", "failed")
# Top-level fields and their types: what every record has from its first write on.
FIELDS = {
    "schema": int,
    "experiment": str,
    "status": str,
    "command": str,
    "started": str,
    "phases": list,
    "provenance": dict,
    "config": dict,
    "arrays": dict,
}
PROVENANCE = ("commit", "date", "device", "cpu", "versions", "precision", "rng", "code",
              "computed_by")  # fmt: skip
DEVICE = ("type", "name")  # and, on CUDA, capability, memory, driver, cuda, cudnn
# Fields a phase adds, present once that phase is among ``phases``.
AFTER_PHASE = {"timing": ("rates",), "plan": ("ladder",), "summary": ("effects",)}


def module_hashes() -> dict[str, str]:
    """The source hash (as the experiment cache computes it) of every normbook module this
    process has loaded: what the run used."""
    return {
        cache.code_name(mod): cache.code_hash(mod)
        for name, mod in sorted(sys.modules.items())
        if name.startswith("normbook.") and getattr(mod, "__file__", None)
    }


def device_info(device: str) -> dict:
    """The device a run used: on CUDA its name, capability, memory, and the driver, CUDA and
    cuDNN versions (nvidia-smi for the driver, where it is)."""
    import torch

    if device != "cuda":
        from normbook.runtime.devices import cpu_model

        return {"type": "cpu", "name": cpu_model()}
    props = torch.cuda.get_device_properties(0)
    try:
        driver = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        driver = "unknown"
    return {
        "type": "cuda",
        "name": props.name,
        "capability": f"{props.major}.{props.minor}",
        "memory_gib": round(props.total_memory / 2**30, 1),
        "multiprocessors": props.multi_processor_count,
        "driver": driver,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
    }


def versions() -> dict:
    import scipy
    import torch

    return {"python": platform.python_version(), "torch": torch.__version__,
            "numpy": np.__version__, "scipy": scipy.__version__}  # fmt: skip


def _atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # a committed file, readable by all (mkstemp makes it private)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


class Record:
    """A record being written: JSON fields in ``data``, arrays in ``arrays``; :meth:`write`
    puts both on disk (arrays first)."""

    def __init__(self, folder: Path, experiment: str, command: str):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.json_path = self.folder / f"{experiment}.json"
        self.npz_path = self.folder / f"{experiment}.npz"
        self.arrays: dict[str, np.ndarray] = {}
        self.data: dict = {
            "schema": SCHEMA,
            "experiment": experiment,
            "status": "running",
            "command": command,
            "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "phases": [],
            "provenance": {},
            "config": {},
            "arrays": {},
        }

    def add_arrays(self, prefix: str, arrays: dict) -> None:
        """Add ``prefix.name`` for each array (an array, once added, never changes)."""
        for name, a in arrays.items():
            key = f"{prefix}.{name}"
            if key in self.arrays:
                raise ValueError(f"record array {key} written twice")
            self.arrays[key] = np.asarray(a)

    def phase(self, name: str, seconds: float) -> None:
        """Mark phase ``name`` finished (it took ``seconds``) and write the record."""
        self.data["phases"].append(
            {"name": name, "seconds": round(seconds, 3), "at": time.strftime("%H:%M:%S")}
        )
        self.write()

    def write(self) -> None:
        buf = io.BytesIO()
        np.savez_compressed(buf, **self.arrays)
        _atomic(self.npz_path, buf.getvalue())
        self.data["arrays"] = {
            k: {"shape": list(a.shape), "dtype": str(a.dtype), "sha256": _digest(a)}
            for k, a in self.arrays.items()
        }
        text = json.dumps(_finite(self.data), indent=1, default=_jsonable, allow_nan=False)
        _atomic(self.json_path, text.encode())


def _finite(v):
    """NaN and infinities as null (JSON has none); numpy scalars and arrays as Python's."""
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    if isinstance(v, np.ndarray):
        return _finite(v.tolist())
    if isinstance(v, (float, np.floating)):
        return float(v) if np.isfinite(v) else None
    return v


def _jsonable(v):
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(f"not JSON: {type(v).__name__}")


def problems(data: dict) -> list[str]:
    """What makes ``data`` not a record of this schema (empty: it is one)."""
    out = [f"missing field {k!r}" for k in FIELDS if k not in data]
    out += [f"field {k!r} is not a {t.__name__}" for k, t in FIELDS.items()
            if k in data and not isinstance(data[k], t)]  # fmt: skip
    if out:
        return out
    if data["schema"] != SCHEMA:
        return [f"schema {data['schema']}, this code reads {SCHEMA}"]
    if not any(data["status"].startswith(s) for s in STATUSES):
        out.append(f"status {data['status']!r} is none of {STATUSES}")
    prov = data["provenance"]
    out += [f"provenance lacks {k!r}" for k in PROVENANCE if k not in prov]
    out += [f"provenance.device lacks {k!r}" for k in DEVICE if k not in prov.get("device", {})]
    done = [p.get("name") for p in data["phases"]]
    for phase, fields in AFTER_PHASE.items():
        out += [f"phase {phase!r} finished but {f!r} is missing"
                for f in fields if phase in done and f not in data]  # fmt: skip
    if data["status"] == "complete" and "summary" not in done:
        out.append("status complete without a summary phase")
    for k, meta in data["arrays"].items():
        if not {"shape", "dtype", "sha256"} <= set(meta):
            out.append(f"array {k!r} lacks shape, dtype or sha256")
    return out


@dataclass(frozen=True)
class Loaded:
    """A record read back: its JSON fields and its arrays (checked against their hashes)."""

    path: Path
    data: dict
    arrays: dict[str, np.ndarray]

    @property
    def complete(self) -> bool:
        return self.data["status"] == "complete"

    @property
    def phases(self) -> list[str]:
        return [p["name"] for p in self.data["phases"]]

    def group(self, prefix: str) -> dict[str, np.ndarray]:
        """The arrays ``prefix.name`` as ``{name: array}``."""
        return {
            k[len(prefix) + 1 :]: a for k, a in self.arrays.items() if k.startswith(prefix + ".")
        }

    def stale_modules(self) -> list[str]:
        """The modules that computed the record whose source differs from this checkout's (or
        is gone): the record was made with earlier code."""
        import importlib

        code, out = self.data["provenance"]["code"], []
        for name in self.data["provenance"]["computed_by"]:
            try:
                now = cache.code_hash(importlib.import_module(f"normbook.{name}"))
            except ImportError:
                now = None
            if now != code.get(name):
                out.append(name)
        return out


class RecordError(ValueError):
    """A record that cannot be used (one line: what and where)."""


def load(json_path: Path) -> Loaded:
    """Read and check a record; :class:`RecordError` names what is wrong."""
    json_path = Path(json_path)
    try:
        data = json.loads(json_path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise RecordError(f"cannot read record {json_path}: {exc}") from None
    bad = problems(data)
    if bad:
        raise RecordError(f"record {json_path} is not a schema-{SCHEMA} record: {bad[0]}")
    npz = json_path.with_suffix(".npz")
    try:
        with np.load(npz, allow_pickle=False) as f:
            arrays = {k: f[k] for k in data["arrays"]}
    except (OSError, KeyError, ValueError) as exc:
        raise RecordError(f"record arrays {npz} do not match {json_path.name}: {exc}") from None
    for k, meta in data["arrays"].items():
        if _digest(arrays[k]) != meta["sha256"]:
            raise RecordError(f"record array {k} in {npz} does not match its SHA-256")
    return Loaded(json_path, data, arrays)
