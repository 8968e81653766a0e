"""On-disk experiment cache keyed by the full config and the code that produced it.

An entry is a directory ``<root>/<kind>/<key>/`` holding ``meta.json``, ``arrays.npz``
and (optionally) ``tensors.pt``. It is written under a temporary name and renamed into
place, so a killed run never leaves a half-written entry behind.

    python -m normbook.core.cache info     # what is cached, and how much
    python -m normbook.core.cache clear    # delete every entry
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, is_dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import torch

REPO_ROOT = Path(__file__).resolve().parents[3]


class CacheError(RuntimeError):
    """An unreadable cache entry (never silently recomputed over)."""


def cache_root() -> Path:
    return Path(os.environ.get("NORMBOOK_CACHE", REPO_ROOT / ".cache" / "normbook"))


def code_hash(*modules: ModuleType) -> str:
    """SHA-256 of the source of the given library modules (order-independent)."""
    h = hashlib.sha256()
    for src in sorted(inspect.getsource(m) for m in modules):
        h.update(src.encode())
    return h.hexdigest()[:16]


def _jsonable(obj: Any) -> Any:
    if is_dataclass(obj):
        return _jsonable(asdict(obj))
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in sorted(obj.items())}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    return obj


def config_key(config: Any, code: str) -> str:
    blob = json.dumps({"config": _jsonable(config), "code": code}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


class Entry(dict):
    """A cached result: arrays (numpy), tensors (torch) and JSON metadata."""

    def __init__(self, arrays=None, tensors=None, meta=None, hit: bool = False):
        super().__init__(arrays or {})
        self.tensors: dict[str, torch.Tensor] = tensors or {}
        self.meta: dict[str, Any] = meta or {}
        self.hit = hit


def _write(path: Path, entry: Entry, meta: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=path.name + ".tmp-", dir=path.parent))
    try:
        np.savez(tmp / "arrays.npz", **dict(entry))
        if entry.tensors:
            torch.save(entry.tensors, tmp / "tensors.pt")
        (tmp / "meta.json").write_text(json.dumps(_jsonable(meta), indent=1))
        try:
            os.rename(tmp, path)  # atomic on one filesystem
        except OSError:
            if not (path / "meta.json").exists():
                raise
            shutil.rmtree(tmp)  # a concurrent run wrote the same entry first
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


# Entries that worker processes computed for this process: loading one is not a cache hit.
_FRESH: set[str] = set()


def mark_fresh(paths) -> None:
    """Record entries that a worker process computed on this run's behalf, so that loading them
    here reports them as computed (``hit`` False), as if this process had computed them."""
    _FRESH.update(str(p) for p in paths)


def _read(path: Path) -> Entry:
    try:
        meta = json.loads((path / "meta.json").read_text())
        with np.load(path / "arrays.npz", allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        tensors = {}
        if (path / "tensors.pt").exists():
            tensors = torch.load(path / "tensors.pt", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any failure means the entry is unusable
        raise CacheError(
            f"cache entry {path} is unreadable ({exc}); delete it or run "
            f"'python -m normbook.core.cache clear'"
        ) from exc
    return Entry(arrays, tensors, meta, hit=str(path) not in _FRESH)


def entry_path(
    kind: str, config: Any, modules: tuple[ModuleType, ...], root: Path | None = None
) -> Path:
    return (root or cache_root()) / kind / config_key(config, code_hash(*modules))


def is_cached(
    kind: str, config: Any, modules: tuple[ModuleType, ...], root: Path | None = None
) -> bool:
    return (entry_path(kind, config, modules, root) / "meta.json").exists()


def cached(
    kind: str,
    config: Any,
    compute: Callable[[], Entry],
    modules: tuple[ModuleType, ...],
    root: Path | None = None,
) -> Entry:
    """Return the cached entry for ``config``, computing and storing it on a miss."""
    code = code_hash(*modules)
    key = config_key(config, code)
    path = (root or cache_root()) / kind / key
    if (path / "meta.json").exists():
        return _read(path)
    t0 = time.perf_counter()
    entry = compute()
    meta = {
        "kind": kind,
        "key": key,
        "config": config,
        "code_hash": code,
        "compute_seconds": round(time.perf_counter() - t0, 2),
        "created": time.strftime("%Y-%m-%d %H:%M:%S"),
        **entry.meta,
    }
    _write(path, entry, meta)
    entry.meta, entry.hit = _jsonable(meta), False
    return entry


def load(kind: str, config: Any, modules: tuple[ModuleType, ...]) -> Entry:
    """The entry for ``config``, which must exist (an error otherwise, never a recompute)."""
    path = entry_path(kind, config, modules)
    if not (path / "meta.json").exists():
        raise CacheError(
            f"cache entry {path} is missing (deleted while this run used it?); re-run the chapter"
        )
    return _read(path)


def cached_each(
    kind: str,
    keys: list[Any],
    compute_missing: Callable[[list[int]], Iterable[tuple[int, Entry]]],
    modules: tuple[ModuleType, ...],
) -> list[Entry]:
    """One entry per key, for items computed together (one stacked training run) or side by
    side (worker processes) but cached one by one, so any later subset is a cache hit.

    ``compute_missing(indices)`` gets the indices of the keys not cached yet and yields
    ``(index, entry)`` for each, in any order; every entry is written as soon as it arrives,
    so an interrupted run keeps what it finished.
    """
    missing = [i for i, k in enumerate(keys) if not is_cached(kind, k, modules)]
    fresh = {}
    for i, entry in compute_missing(missing) if missing else ():
        fresh[i] = cached(kind, keys[i], lambda e=entry: e, modules)
        fresh[i].hit = False  # computed by this run (an identical key may have been written)
    return [fresh[i] if i in fresh else load(kind, k, modules) for i, k in enumerate(keys)]


def info(root: Path | None = None) -> dict[str, tuple[int, int]]:
    """Number of entries and bytes per kind."""
    root = root or cache_root()
    out = {}
    if root.exists():
        for kind in sorted(p for p in root.iterdir() if p.is_dir()):
            entries = [p for p in kind.iterdir() if (p / "meta.json").exists()]
            size = sum(f.stat().st_size for p in entries for f in p.iterdir())
            out[kind.name] = (len(entries), size)
    return out


def clear(root: Path | None = None) -> None:
    shutil.rmtree(root or cache_root(), ignore_errors=True)


def main(argv: list[str]) -> int:
    cmd = argv[0] if argv else "info"
    if cmd == "clear":
        clear()
        print(f"cleared {cache_root()}")
    elif cmd == "info":
        for kind, (n, size) in info().items():
            print(f"{kind:24s} {n:5d} entries {size / 1e6:9.1f} MB")
    else:
        print("usage: python -m normbook.core.cache [info|clear]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
