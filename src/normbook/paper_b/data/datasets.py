"""MNIST and CIFAR-10 readers: the files' contents as arrays, and the tensors and subsets the
classifiers train on. This is the data code the experiment cache's keys cover.

Files are parsed with numpy only: MNIST from its IDX files (gzip or raw), CIFAR-10 from the
official *binary* archive, read member by member from the tar stream (nothing is extracted to
disk, nothing is unpickled). Every file is checked against the published MD5
(:mod:`.data_files`: the data directory, its environment variables, checksums and downloads); a
file that fails is refused unless the caller explicitly accepts an unverified copy, in which
case the returned :class:`Provenance` says so and carries the file's actual checksums.
"""

from __future__ import annotations

import gzip
import hashlib
import tarfile
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from normbook.paper_b.data.data_files import (  # noqa: F401  (re-exported: callers read the data through datasets)
    DataError,
    FileCheck,
    Provenance,
    cached_hashes,
    data_dir,
    download_file,
    enforce,
    hash_stream,
    missing_error,
    resolve_allow,
    resolve_download,
)

MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
# MD5 of the *decompressed* IDX files (the .gz wrappers vary with compression settings).
MNIST_MD5 = {
    "train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
    "train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
    "t10k-images-idx3-ubyte": "2646ac647ad5339dbf082846283269ea",
    "t10k-labels-idx1-ubyte": "27ae3e4e09519cfbb04c329615203637",
}
MNIST_MIRRORS = ("https://ossci-datasets.s3.amazonaws.com/mnist/",)

CIFAR10_ARCHIVE = "cifar-10-binary.tar.gz"
CIFAR10_MD5 = "c32a1d4ab5d03f1284b67883e8d87530"
CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
CIFAR10_SUBDIRS = ("cifar10", "cifar10-jpeg")  # official location first, offline rebuild second
CIFAR10_MEMBERS = {
    "train": tuple(f"cifar-10-batches-bin/data_batch_{i}.bin" for i in range(1, 6)),
    "test": ("cifar-10-batches-bin/test_batch.bin",),
}
CIFAR10_RECORD = 1 + 3 * 32 * 32
CIFAR10_RECORDS_PER_FILE = 10_000
# Official split sizes (images).
TRAIN_SIZE = {"mnist": 60_000, "cifar10": 50_000}
TEST_SIZE = 10_000
CIFAR10_CLASSES = (
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
)

MNIST_MEAN_STD = ((0.1307,), (0.3081,))
CIFAR10_MEAN_STD = ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))

_GZIP_MAGIC = b"\x1f\x8b"
_IDX_IMAGES, _IDX_LABELS = 0x00000803, 0x00000801


# --------------------------------------------------------------------------- MNIST


def _mnist_candidates(root: Path, name: str) -> tuple[Path, Path]:
    return root / "mnist" / f"{name}.gz", root / "mnist" / name


def _read_maybe_gzip(path: Path, expected_md5: str) -> tuple[bytes, bytes]:
    raw = path.read_bytes()
    if raw[:2] != _GZIP_MAGIC:
        return raw, raw
    try:
        return raw, gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as e:
        raise DataError(
            f"Corrupt or truncated gzip file {path} ({e}); expected the "
            f"decompressed content to have MD5 {expected_md5}. Replace the "
            f"file."
        ) from e


def _mnist_check(path: Path, name: str) -> tuple[FileCheck, bytes]:
    expected = MNIST_MD5[name]
    raw, content = _read_maybe_gzip(path, expected)

    def compute():
        return hashlib.md5(content).hexdigest(), hashlib.sha256(raw).hexdigest()

    md5, sha = cached_hashes(path, "mnist-content", compute)
    return FileCheck(str(path), md5, sha, expected, "decompressed content"), content


def _parse_idx(content: bytes, path: Path, expected_md5: str, images: bool) -> np.ndarray:
    def bad(msg: str) -> DataError:
        return DataError(
            f"Invalid IDX file {path}: {msg} (expected the decompressed "
            f"content to have MD5 {expected_md5}). Replace the file."
        )

    ndim = 3 if images else 1
    header = 4 + 4 * ndim
    if len(content) < header:
        raise bad(f"only {len(content)} bytes, shorter than the {header}-byte header")
    magic = int.from_bytes(content[:4], "big")
    want = _IDX_IMAGES if images else _IDX_LABELS
    if magic != want:
        raise bad(f"magic number {magic:#010x}, expected {want:#010x}")
    dims = [int.from_bytes(content[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    if images and dims[1:] != [28, 28]:
        raise bad(f"image size {dims[1]}x{dims[2]}, expected 28x28")
    size = int(np.prod(dims))
    if len(content) != header + size:
        kind = "truncated" if len(content) < header + size else "trailing bytes"
        raise bad(f"{kind}: {len(content) - header} data bytes for dims {dims}")
    return np.frombuffer(content, np.uint8, count=size, offset=header).reshape(dims).copy()


def _mnist_download_verify(name: str) -> Callable[[Path], None]:
    def verify(tmp: Path) -> None:
        _, content = _read_maybe_gzip(tmp, MNIST_MD5[name])
        md5 = hashlib.md5(content).hexdigest()
        if md5 != MNIST_MD5[name]:
            raise DataError(
                f"Downloaded {name} has MD5 {md5}, expected {MNIST_MD5[name]}; not installed."
            )

    return verify


def _locate_mnist(root: Path, names: Sequence[str], download: bool) -> list[Path]:
    found, missing = {}, []
    for name in names:
        hit = next((p for p in _mnist_candidates(root, name) if p.is_file()), None)
        if hit is None:
            missing.append(name)
        else:
            found[name] = hit
    if missing:
        expected = [p for n in missing for p in _mnist_candidates(root, n)[:1]]
        if not download:
            raise missing_error("MNIST", expected, "download disabled")
        for name in missing:
            dest = _mnist_candidates(root, name)[0]
            errors = []
            for mirror in MNIST_MIRRORS:
                try:
                    download_file(f"{mirror}{name}.gz", dest, _mnist_download_verify(name))
                    break
                except Exception as e:  # network, permissions, bad payload: try next mirror
                    errors.append(f"{mirror}: {e}")
            else:
                raise missing_error("MNIST", expected, "download failed: " + "; ".join(errors))
            found[name] = dest
    return [found[n] for n in names]


def load_mnist(
    split: str = "train",
    root: str | Path | None = None,
    *,
    allow_unverified: bool | None = None,
    download: bool | None = None,
) -> tuple[np.ndarray, np.ndarray, Provenance]:
    """Load an MNIST split as ``(images uint8 [N,28,28], labels uint8 [N], provenance)``.

    Files are looked up as ``<root>/mnist/<name>.gz`` then ``<root>/mnist/<name>``
    (``root`` defaults to :func:`data_dir`). Verification is on the decompressed bytes.
    """
    if split not in MNIST_FILES:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    root = Path(root) if root is not None else data_dir()
    allow = resolve_allow(allow_unverified)
    names = MNIST_FILES[split]
    paths = _locate_mnist(root, names, resolve_download(download))
    checks, arrays = [], []
    for path, name, is_images in zip(paths, names, (True, False)):
        check, content = _mnist_check(path, name)
        enforce(check, "MNIST", allow, MNIST_MIRRORS[0] + name + ".gz")
        arrays.append(_parse_idx(content, path, check.expected_md5, is_images))
        checks.append(check)
    images, labels = arrays
    if len(images) != len(labels):
        raise DataError(
            f"MNIST {split}: {len(images)} images in {paths[0]} but "
            f"{len(labels)} labels in {paths[1]}."
        )
    if labels.size and labels.max() > 9:
        raise DataError(
            f"MNIST labels in {paths[1]} exceed 9 (expected MD5 {checks[1].expected_md5})."
        )
    note = (
        ""
        if all(c.verified for c in checks)
        else (
            "These MNIST files do not match the published checksums: results may differ from "
            "results on the original data."
        )
    )
    return images, labels, Provenance("MNIST", split, tuple(checks), note)


# --------------------------------------------------------------------------- CIFAR-10


def _cifar_candidates(root: Path) -> list[Path]:
    return [root / sub / CIFAR10_ARCHIVE for sub in CIFAR10_SUBDIRS]


def _cifar_download_verify(tmp: Path) -> None:
    md5, _ = hash_stream(tmp)
    if md5 != CIFAR10_MD5:
        raise DataError(
            f"Downloaded CIFAR-10 archive has MD5 {md5}, expected {CIFAR10_MD5}; not installed."
        )


def _locate_cifar(root: Path, download: bool) -> Path:
    candidates = _cifar_candidates(root)
    hit = next((p for p in candidates if p.is_file()), None)
    if hit is not None:
        return hit
    if not download:
        raise missing_error("CIFAR-10", candidates, "download disabled")
    try:
        download_file(CIFAR10_URL, candidates[0], _cifar_download_verify)
    except Exception as e:
        raise missing_error("CIFAR-10", candidates, f"download failed: {e}") from e
    return candidates[0]


def _read_cifar_members(
    path: Path, members: Sequence[str], expected_md5: str, records_per_file: int | None
) -> dict[str, bytes]:
    def bad(msg: str) -> DataError:
        return DataError(
            f"Invalid CIFAR-10 archive {path}: {msg} (the official archive has "
            f"MD5 {expected_md5}). Replace the file."
        )

    wanted, out = set(members), {}
    try:
        # Stream mode: one sequential pass, stopping once every wanted member has been read
        # (random access into a .tar.gz would re-decompress from the start).
        with tarfile.open(path, mode="r|gz") as tar:
            for m in tar:
                if m.name not in wanted:
                    continue
                if not m.isfile():
                    raise bad(f"member {m.name} is not a regular file")
                if m.size % CIFAR10_RECORD:
                    raise bad(
                        f"member {m.name} has {m.size} bytes, not a multiple of the "
                        f"{CIFAR10_RECORD}-byte record"
                    )
                if records_per_file is not None and m.size != records_per_file * CIFAR10_RECORD:
                    raise bad(
                        f"member {m.name} has {m.size // CIFAR10_RECORD} records, "
                        f"expected {records_per_file}"
                    )
                buf = tar.extractfile(m).read()
                if len(buf) != m.size:
                    raise bad(f"member {m.name} truncated")
                out[m.name] = buf
                if len(out) == len(wanted):
                    break
    except DataError:
        raise
    except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
        raise bad(f"corrupt or truncated ({type(e).__name__}: {e})") from e
    missing = [n for n in members if n not in out]
    if missing:
        raise bad(f"missing member(s) {missing}")
    return out


def load_cifar10(
    split: str = "train",
    root: str | Path | None = None,
    *,
    allow_unverified: bool | None = None,
    download: bool | None = None,
    records_per_file: int | None = CIFAR10_RECORDS_PER_FILE,
) -> tuple[np.ndarray, np.ndarray, Provenance]:
    """Load a CIFAR-10 split as ``(images uint8 [N,3,32,32], labels uint8 [N], provenance)``.

    Images are channel-major (NCHW), the archive's own layout and what torch expects; use
    ``images.transpose(0, 2, 3, 1)`` to plot. The archive is looked up as
    ``<root>/cifar10/cifar-10-binary.tar.gz`` then ``<root>/cifar10-jpeg/...`` (the offline
    copy rebuilt from JPEGs, which fails verification and therefore needs
    ``allow_unverified``). ``records_per_file=None`` only checks whole records (for tests).
    """
    if split not in CIFAR10_MEMBERS:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    root = Path(root) if root is not None else data_dir()
    path = _locate_cifar(root, resolve_download(download))
    md5, sha = cached_hashes(path, "file", lambda: hash_stream(path))
    check = FileCheck(str(path), md5, sha, CIFAR10_MD5, "file")
    enforce(check, "CIFAR-10", resolve_allow(allow_unverified), CIFAR10_URL)
    members = CIFAR10_MEMBERS[split]
    bufs = _read_cifar_members(path, members, CIFAR10_MD5, records_per_file)
    records = np.concatenate(
        [np.frombuffer(bufs[m], np.uint8).reshape(-1, CIFAR10_RECORD) for m in members]
    )
    labels = records[:, 0].copy()
    images = records[:, 1:].reshape(-1, 3, 32, 32).copy()
    if labels.size and labels.max() > 9:
        raise DataError(f"CIFAR-10 labels in {path} exceed 9 (official archive MD5 {CIFAR10_MD5}).")
    note = ""
    if not check.verified:
        note = (
            "This CIFAR-10 archive is not the official one (checksum mismatch)"
            + (
                ": it was rebuilt from a JPEG export, so every pixel went through lossy "
                "compression and the record order is a fixed shuffle"
                if path.parent.name == "cifar10-jpeg"
                else ""
            )
            + ". Results on it are close to, not equal to, results on the original data."
        )
    return images, labels, Provenance("CIFAR-10", split, (check,), note)


# --------------------------------------------------------------------------- tensors & subsets


def to_tensors(
    images: np.ndarray,
    labels: np.ndarray,
    pad_to: int | None = 32,
    normalize: str | tuple | None = None,
):
    """uint8 images -> ``(x float32 [N,C,S,S], y int64 [N])``.

    ``images`` is [N,H,W] (a channel axis is added) or [N,C,H,W]. Pixels are scaled to
    [0, 1] and zero-padded symmetrically to ``pad_to`` (MNIST 28 -> 32; a no-op for
    CIFAR-10). ``normalize``: None, "mnist", "cifar10" (standard constants) or
    ``(mean, std)`` per channel.
    """
    import torch

    x = torch.from_numpy(np.ascontiguousarray(images))
    if x.ndim == 3:
        x = x[:, None]
    if x.ndim != 4:
        raise ValueError(f"images must be [N,H,W] or [N,C,H,W], got shape {tuple(x.shape)}")
    x = x.float()
    if pad_to is not None:
        h, w = x.shape[-2:]
        if h > pad_to or w > pad_to:
            raise ValueError(f"cannot pad {h}x{w} images to {pad_to}")
        top, left = (pad_to - h) // 2, (pad_to - w) // 2
        if (h, w) != (pad_to, pad_to):
            # Pad before normalising so the border equals the raw images' black background.
            x = torch.nn.functional.pad(x, (left, pad_to - w - left, top, pad_to - h - top))
    if normalize is not None:
        if isinstance(normalize, str):
            table = {"mnist": MNIST_MEAN_STD, "cifar10": CIFAR10_MEAN_STD}
            if normalize not in table:
                raise ValueError("normalize must be None, 'mnist', 'cifar10' or (mean, std)")
            normalize = table[normalize]
        mean, std = (
            torch.as_tensor(v, dtype=torch.float32).view(1, -1, 1, 1) * 255.0 for v in normalize
        )
        x.sub_(mean).div_(std)  # in place, on the 0..255 scale: one pass, no extra copy
    else:
        x.div_(255.0)
    y = torch.as_tensor(np.asarray(labels), dtype=torch.int64)
    if len(y) != len(x):
        raise ValueError(f"{len(x)} images but {len(y)} labels")
    return x, y


def subset(
    labels: np.ndarray,
    *,
    n: int | None = None,
    n_per_class: int | None = None,
    seed: int = 0,
    within: np.ndarray | None = None,
) -> np.ndarray:
    """Sorted indices of a class-balanced random subset.

    Give ``n_per_class``, or ``n`` in total (``n // C`` per class; the remainder goes to
    randomly chosen classes). ``within`` restricts the choice to those indices.
    """
    if (n is None) == (n_per_class is None):
        raise ValueError("give exactly one of n and n_per_class")
    labels = np.asarray(labels)
    pool = np.arange(len(labels)) if within is None else np.asarray(within)
    classes = np.unique(labels[pool])
    rng = np.random.default_rng(seed)
    if n_per_class is not None:
        counts = np.full(len(classes), n_per_class)
    else:
        counts = np.full(len(classes), n // len(classes))
        counts[rng.choice(len(classes), n % len(classes), replace=False)] += 1
    out = []
    for c, k in zip(classes, counts):
        idx = pool[labels[pool] == c]
        if k > len(idx):
            raise ValueError(f"class {c} has {len(idx)} examples, {k} requested")
        out.append(rng.choice(idx, k, replace=False))
    return np.sort(np.concatenate(out))
