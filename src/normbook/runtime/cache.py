"""On-disk experiment cache keyed by the full config and the code that produced it.

An entry is a directory ``<root>/<kind>/<key>/`` holding ``meta.json``, ``arrays.npz``
and (optionally) ``tensors.pt``. It is written under a temporary name and renamed into
place, so a killed run never leaves a half-written entry behind. A run computing an entry
holds a lock on it (``.locks/<kind>/<key>.lock``, an OS file lock that dies with its
process), so two runs that need the same entry compute it once: the second waits, then reads
the first one's result.

    python -m normbook.runtime.cache info     # what is cached, and how much
    python -m normbook.runtime.cache clear    # delete every entry
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import torch

from . import code_keys, devices

REPO_ROOT = Path(__file__).resolve().parents[3]


class CacheError(RuntimeError):
    """An unreadable cache entry (never silently recomputed over)."""


def cache_root() -> Path:
    return Path(os.environ.get("NORMBOOK_CACHE", REPO_ROOT / ".cache" / "normbook"))


def build_root() -> Path:
    """Where executed notebooks, stamps, claims ledgers and sites go (``NORMBOOK_BUILD_DIR``)."""
    return Path(os.environ.get("NORMBOOK_BUILD_DIR", REPO_ROOT / "_build"))


def code_hash(*code) -> str:
    """SHA-256 of what the given library modules, classes or functions compute: their syntax
    trees without docstrings, comments, formatting or import aliases (order-independent;
    :mod:`normbook.runtime.code_keys`)."""
    h = hashlib.sha256()
    for src in sorted(code_keys.canonical_of(m) for m in code):
        h.update(src.encode())
    return h.hexdigest()[:16]


def code_name(obj) -> str:
    """``normbook.paper_a.cached.task`` -> ``paper_a.cached.task``; a function or class with
    its module."""
    mod = obj.__name__ if isinstance(obj, ModuleType) else f"{obj.__module__}.{obj.__qualname__}"
    return mod.removeprefix("normbook.")


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


def _unwritable(where: Path, exc: OSError) -> CacheError:
    return CacheError(
        f"cannot write the experiment cache at {where} ({exc.strerror or exc}); free space "
        f"there or set NORMBOOK_CACHE to a writable directory"
    )


def check_writable(root: Path | None = None) -> None:
    """A one-line CacheError now, before any compute, if the cache cannot be written."""
    root = root or cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=root):
            pass
    except OSError as exc:
        raise _unwritable(root, exc) from None


def lock_or_wait(f, waiting: str) -> None:
    """An exclusive OS lock on the open file ``f`` (released when it closes or its process
    dies); if another process holds it, print ``waiting`` once and block until it is free."""
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(waiting, file=sys.stderr, flush=True)
        fcntl.flock(f, fcntl.LOCK_EX)


@contextmanager
def _locked(paths: Iterable[Path]) -> Iterator[None]:
    """Exclusive locks on these entries, taken in sorted order (two runs never deadlock); a run
    that has to wait says so once."""
    held = []
    try:
        for path in sorted(set(paths)):
            lock = path.parent.parent / ".locks" / path.parent.name / f"{path.name}.lock"
            try:
                lock.parent.mkdir(parents=True, exist_ok=True)
                f = open(lock, "a")  # noqa: SIM115 - held until the finally below
            except OSError as exc:
                raise _unwritable(path.parent.parent, exc) from None
            held.append(f)
            lock_or_wait(f, f"[cache] another run is computing {path.parent.name}/{path.name}; "
                            f"waiting to share its result")  # fmt: skip
        yield
    finally:
        for f in held:
            f.close()  # releases its lock


def _write(path: Path, entry: Entry, meta: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=path.name + ".tmp-", dir=path.parent))
    except OSError as exc:
        raise _unwritable(path.parent.parent, exc) from None
    try:
        np.savez(tmp / "arrays.npz", **dict(entry))
        if entry.tensors:
            try:
                torch.save(entry.tensors, tmp / "tensors.pt")
            except RuntimeError as exc:  # torch reports a failed write (a full disk) this way
                raise OSError(str(exc)) from exc
        (tmp / "meta.json").write_text(json.dumps(_jsonable(meta), indent=1))
        try:
            os.rename(tmp, path)  # atomic on one filesystem
        except OSError:
            if not (path / "meta.json").exists():
                raise
            shutil.rmtree(tmp)  # a concurrent run wrote the same entry first
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _unwritable(path.parent.parent, exc) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


# A file that every entry this process (and its children) reads or writes is noted in, one
# "<kind>/<key>" line each: a chapter's execution sets it (normbook.publish.execution), and
# `make bundle` packs what the book's chapters noted (normbook.publish.bundle). Lines are
# appended whole (O_APPEND), so a kernel and its workers share the file.
READ_LOG = "NORMBOOK_READ_LOG"


def _note(path: Path) -> None:
    log = os.environ.get(READ_LOG)
    if log:
        with open(log, "a") as f:
            f.write(f"{path.parent.name}/{path.name}\n")


# Entries that worker processes computed for this process: loading one is not a cache hit.
_FRESH: set[str] = set()


def mark_fresh(paths) -> None:
    """Record entries that a worker process computed on this run's behalf, so that loading them
    here reports them as computed (``hit`` False), as if this process had computed them."""
    _FRESH.update(str(p) for p in paths)


def _read(path: Path) -> Entry:
    _note(path)
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
            f"'python -m normbook.runtime.cache clear'"
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
    with _locked([path]):
        if (path / "meta.json").exists():  # computed by another run while this one waited
            return _read(path)
        return _compute(path, kind, key, config, code, compute)


def _compute(path, kind, key, config, code, compute) -> Entry:
    t0 = time.perf_counter()
    entry = compute()
    meta = {
        "kind": kind,
        "key": key,
        "config": config,
        "code_hash": code,
        "compute_seconds": round(time.perf_counter() - t0, 2),
        "created": time.strftime("%Y-%m-%d %H:%M:%S"),
        # the CPU, instruction sets, pins, threads and versions that computed it
        "computed_by": devices.provenance(),
        **entry.meta,
    }
    _write(path, entry, meta)
    _note(path)
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
    if missing:
        with _locked(entry_path(kind, keys[i], modules) for i in missing):
            # another run may have computed some while this one waited: share those
            missing = [i for i in missing if not is_cached(kind, keys[i], modules)]
            for i, entry in compute_missing(missing) if missing else ():
                path = entry_path(kind, keys[i], modules)
                code = code_hash(*modules)
                fresh[i] = _compute(path, kind, path.name, keys[i], code, lambda e=entry: e)
    return [fresh[i] if i in fresh else load(kind, k, modules) for i, k in enumerate(keys)]


@dataclass(frozen=True)
class Step:
    """One cached experiment step: its entries' kind, and the code its key covers, declared
    once (modules, classes or functions holding computation only: editing a figure, a table or
    a sentence never changes a key). Every chapter's run record lists the steps it used."""

    kind: str
    code: tuple

    @property
    def code_hash(self) -> str:
        return code_hash(*self.code)

    @property
    def code_names(self) -> list[str]:
        return sorted(code_name(c) for c in self.code)

    def path(self, config: Any) -> Path:
        return entry_path(self.kind, config, self.code)

    def is_cached(self, config: Any) -> bool:
        return is_cached(self.kind, config, self.code)

    def cached(self, config: Any, compute: Callable[[], Entry]) -> Entry:
        return _used(self, [cached(self.kind, config, compute, self.code)])[0]

    def cached_each(self, keys: list[Any], compute_missing) -> list[Entry]:
        return _used(self, cached_each(self.kind, keys, compute_missing, self.code))

    def load(self, config: Any) -> Entry:
        return _used(self, [load(self.kind, config, self.code)])[0]


STEPS: dict[str, Step] = {}
_USED: dict[str, list[int]] = {}  # kind -> [loaded, computed] in this process
_MACHINES: dict[str, list] = {}  # the machines that computed the entries used: json -> [m, n]


def step(kind: str, *code) -> Step:
    """Declare (once) the cached step ``kind`` and the code its key covers."""
    if kind in STEPS and STEPS[kind].code != code:
        raise ValueError(f"cache step {kind!r} declared twice with different code")
    STEPS[kind] = Step(kind, tuple(code))
    return STEPS[kind]


def _used(s: Step, entries: list[Entry]) -> list[Entry]:
    counts = _USED.setdefault(s.kind, [0, 0])
    for e in entries:
        counts[0 if e.hit else 1] += 1
        m = e.meta.get("computed_by")  # None: an entry written before entries recorded it
        _MACHINES.setdefault(json.dumps(m, sort_keys=True), [m, 0])[1] += 1
    return entries


def machines_used() -> list[dict]:
    """The machines that computed the entries this process used, each with its number of
    entries (``machine`` None: entries that record none), most entries first."""
    found = sorted(_MACHINES.values(), key=lambda mn: -mn[1])
    return [{"machine": m, "entries": n} for m, n in found]


def steps_used() -> list[tuple[Step, int, int]]:
    """The steps this process used, with how many entries it loaded and computed."""
    return [(STEPS[k], n_hit, n_new) for k, (n_hit, n_new) in sorted(_USED.items())]


def info(root: Path | None = None) -> dict[str, tuple[int, int]]:
    """Number of entries and bytes per kind."""
    root = root or cache_root()
    out = {}
    if root.exists():
        for kind in sorted(p for p in root.iterdir() if p.is_dir() and p.name != ".locks"):
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
        print("usage: python -m normbook.runtime.cache [info|clear]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
