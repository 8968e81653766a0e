"""Where paper B's data files come from and whether they are the originals: the data directory
and its settings, checksums (cached per file), verification against the published MD5, and
atomic downloads. :mod:`.datasets` reads the files' contents; nothing here changes them, so
the experiment cache's keys do not cover this module.

Environment variables:

- ``NORMBOOK_DATA``: the data directory (default ``<repo>/data``). A relative path is taken
  from the current directory when it exists there, else from the repository root, so
  ``NORMBOOK_DATA=../shared/data`` also works from a notebook running inside ``book/``.
- ``NORMBOOK_ALLOW_UNVERIFIED=1``: accept files whose checksum does not match.
- ``NORMBOOK_NO_DOWNLOAD=1``: never try to download missing files.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from normbook.runtime.cache import REPO_ROOT

_TRUE = {"1", "true", "yes", "on"}


class DataError(RuntimeError):
    """A data file is missing, corrupt, or fails checksum verification."""


# --------------------------------------------------------------------------- provenance


@dataclass(frozen=True)
class FileCheck:
    """Verification record of one file.

    ``md5`` is of the bytes the published checksum refers to (``md5_of``: "decompressed
    content" for MNIST, "file" for the CIFAR-10 archive); ``sha256`` is always of the file as
    stored on disk, so it identifies the exact copy used.
    """

    path: str
    md5: str
    sha256: str
    expected_md5: str
    md5_of: str = "file"

    @property
    def verified(self) -> bool:
        return self.md5 == self.expected_md5


@dataclass(frozen=True)
class Provenance:
    """Where a loaded split came from and whether it is the original data."""

    dataset: str
    split: str
    checks: tuple[FileCheck, ...]
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return all(c.verified for c in self.checks)

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(c.path for c in self.checks)

    @property
    def md5(self) -> tuple[str, ...]:
        return tuple(c.md5 for c in self.checks)

    @property
    def sha256(self) -> tuple[str, ...]:
        return tuple(c.sha256 for c in self.checks)

    @property
    def expected_md5(self) -> tuple[str, ...]:
        return tuple(c.expected_md5 for c in self.checks)


# --------------------------------------------------------------------------- settings


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def data_dir() -> Path:
    """The data directory: ``$NORMBOOK_DATA`` or ``<repo>/data``."""
    env = os.environ.get("NORMBOOK_DATA")
    if not env:
        return REPO_ROOT / "data"
    p = Path(env).expanduser()
    if p.is_absolute() or p.exists():
        return p.resolve()
    return (REPO_ROOT / p).resolve()


def resolve_allow(allow_unverified: bool | None) -> bool:
    """Whether unverified copies are accepted: as given, or ``NORMBOOK_ALLOW_UNVERIFIED``
    when ``None``."""
    return _env_flag("NORMBOOK_ALLOW_UNVERIFIED") if allow_unverified is None else allow_unverified


def resolve_download(download: bool | None) -> bool:
    return (not _env_flag("NORMBOOK_NO_DOWNLOAD")) if download is None else download


# --------------------------------------------------------------------------- hashing

# (resolved path, size, mtime_ns, what) -> (md5, sha256); an edited or replaced file changes
# size or mtime, so a stale entry cannot vouch for it.
_HASH_CACHE: dict[tuple, tuple[str, str]] = {}


def _file_key(path: Path, what: str) -> tuple:
    st = path.stat()
    return (str(path.resolve()), st.st_size, st.st_mtime_ns, what)


def hash_stream(path: Path) -> tuple[str, str]:
    md5, sha = hashlib.md5(), hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            md5.update(chunk)
            sha.update(chunk)
    return md5.hexdigest(), sha.hexdigest()


def cached_hashes(path: Path, what: str, compute: Callable[[], tuple[str, str]]):
    key = _file_key(path, what)
    if key not in _HASH_CACHE:
        _HASH_CACHE[key] = compute()
    return _HASH_CACHE[key]


def enforce(check: FileCheck, dataset: str, allow: bool, fix_url: str) -> None:
    if check.verified or allow:
        return
    raise DataError(
        f"Checksum mismatch for {check.path}: expected MD5 {check.expected_md5} "
        f"(of the {check.md5_of}), actual MD5 {check.md5} (file SHA-256 {check.sha256}). "
        f"This is not the original {dataset} file and will not be used silently. To fix: "
        f"replace it with the original file (delete it and re-run with network access to "
        f"download it from {fix_url}), or set NORMBOOK_ALLOW_UNVERIFIED=1 (or pass "
        f"allow_unverified=True) to accept an unverified copy; its checksums are then "
        f"recorded in the provenance and must be reported with the results."
    )


# --------------------------------------------------------------------------- download


# Seconds without a byte before a download counts as stalled (a socket timeout).
DOWNLOAD_TIMEOUT = 60.0


def _open_url(url: str, timeout: float | None = None):
    # Indirection so tests can replace the network with a local stub.
    return urllib.request.urlopen(url, timeout=timeout or DOWNLOAD_TIMEOUT)


def download_file(url: str, dest: Path, verify: Callable[[Path], None]) -> None:
    """Fetch ``url`` to ``dest`` atomically; ``verify(tmp)`` must pass before the rename.
    A stalled, truncated or failed transfer leaves nothing behind."""
    from tqdm.auto import tqdm

    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    tmp = Path(tmp)
    try:
        with os.fdopen(fd, "wb") as out, _open_url(url) as resp:
            total = resp.headers.get("Content-Length") if hasattr(resp, "headers") else None
            total = int(total) if total else None
            got = 0
            with tqdm(total=total, unit="B", unit_scale=True, desc=dest.name, leave=False) as bar:
                while chunk := resp.read(1 << 20):
                    out.write(chunk)
                    got += len(chunk)
                    bar.update(len(chunk))
        if total is not None and got != total:
            raise DataError(f"truncated transfer: {got:,} of {total:,} bytes")
        verify(tmp)
        os.replace(tmp, dest)
    except TimeoutError as exc:
        raise DataError(f"stalled: no data for {DOWNLOAD_TIMEOUT:g} s ({exc})") from exc
    finally:
        tmp.unlink(missing_ok=True)


def missing_error(dataset: str, paths: Sequence[Path], reason: str) -> DataError:
    where = "\n".join(f"  {p}" for p in paths)
    return DataError(
        f"{dataset} data not found ({reason}). Expected at:\n{where}\n"
        f"Place the files there, or set NORMBOOK_DATA to a directory that holds them "
        f"(e.g. NORMBOOK_DATA=../shared/data for the offline copy, relative to the project "
        f"root). Downloads can be disabled with NORMBOOK_NO_DOWNLOAD=1."
    )
