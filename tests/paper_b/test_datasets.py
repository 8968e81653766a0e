"""Dataset readers: formats, verification, refusal of unverified or corrupt files, and the
provenance notes the chapters show."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import os
import tarfile
import threading
from pathlib import Path

import numpy as np
import pytest

from normbook.paper_b.data import data_files, datasets, provenance

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    """No test may reach the network, and the caller's environment must not leak in."""
    monkeypatch.delenv("NORMBOOK_ALLOW_UNVERIFIED", raising=False)
    monkeypatch.setenv("NORMBOOK_NO_DOWNLOAD", "1")

    def no_network(url, timeout=60.0):
        raise AssertionError(f"test tried to open {url}")

    monkeypatch.setattr(data_files, "_open_url", no_network)


# --------------------------------------------------------------------------- writers


def idx_bytes(arr: np.ndarray) -> bytes:
    magic = 0x00000803 if arr.ndim == 3 else 0x00000801
    head = magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in arr.shape)
    return head + arr.astype(np.uint8).tobytes()


def fake_mnist(root: Path, split="train", n=7, gz=True, seed=0):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, n, dtype=np.uint8)
    (root / "mnist").mkdir(parents=True, exist_ok=True)
    md5 = {}
    for name, arr in zip(datasets.MNIST_FILES[split], (images, labels)):
        content = idx_bytes(arr)
        md5[name] = hashlib.md5(content).hexdigest()
        if gz:
            (root / "mnist" / f"{name}.gz").write_bytes(gzip.compress(content))
        else:
            (root / "mnist" / name).write_bytes(content)
    return images, labels, md5


def cifar_records(n: int, seed: int):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, 3, 32, 32), dtype=np.uint8)
    labels = (np.arange(n) % 10).astype(np.uint8)
    recs = np.concatenate([labels[:, None], images.reshape(n, -1)], axis=1)
    return images, labels, recs.tobytes()


def fake_cifar(root: Path, n=4, sub="cifar10", bad_member=None):
    """A small archive in the official layout; returns {split: (images, labels)}, path."""
    path = root / sub / datasets.CIFAR10_ARCHIVE
    path.parent.mkdir(parents=True, exist_ok=True)
    out = {"train": ([], []), "test": ([], [])}
    with tarfile.open(path, "w:gz") as tar:
        for split, members in (
            ("train", datasets.CIFAR10_MEMBERS["train"]),
            ("test", datasets.CIFAR10_MEMBERS["test"]),
        ):
            for j, member in enumerate(members):
                im, lb, raw = cifar_records(n, seed=100 * (split == "test") + j)
                if member == bad_member:
                    raw = raw[:-5]
                info = tarfile.TarInfo(member)
                info.size = len(raw)
                tar.addfile(info, io.BytesIO(raw))
                out[split][0].append(im)
                out[split][1].append(lb)
        meta = b"airplane\n"
        info = tarfile.TarInfo("cifar-10-batches-bin/batches.meta.txt")
        info.size = len(meta)
        tar.addfile(info, io.BytesIO(meta))
    arrays = {s: (np.concatenate(v[0]), np.concatenate(v[1])) for s, v in out.items()}
    return arrays, path


def md5_of(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- MNIST


@pytest.mark.parametrize("gz", [True, False])
def test_mnist_roundtrip_verified(tmp_path, monkeypatch, gz):
    images, labels, md5 = fake_mnist(tmp_path, "test", gz=gz)
    for name, h in md5.items():
        monkeypatch.setitem(datasets.MNIST_MD5, name, h)
    x, y, prov = datasets.load_mnist("test", root=tmp_path, download=False)
    assert x.dtype == np.uint8 and x.shape == (7, 28, 28)
    np.testing.assert_array_equal(x, images)
    np.testing.assert_array_equal(y, labels)
    assert prov.verified and prov.dataset == "MNIST" and prov.split == "test"
    assert prov.md5 == tuple(md5.values())
    assert all(Path(f).parent == tmp_path / "mnist" for f in prov.files)
    assert "{note}" in provenance.provenance_admonition(prov)
    x[0, 0, 0] ^= 1  # returned arrays are writable copies


def test_mnist_checksum_mismatch_refused(tmp_path):
    fake_mnist(tmp_path, "train")
    with pytest.raises(datasets.DataError) as e:
        datasets.load_mnist("train", root=tmp_path, download=False)
    msg = str(e.value)
    assert "train-images-idx3-ubyte.gz" in msg
    assert datasets.MNIST_MD5["train-images-idx3-ubyte"] in msg
    assert "NORMBOOK_ALLOW_UNVERIFIED=1" in msg


@pytest.mark.parametrize("how", ["argument", "env"])
def test_mnist_unverified_allowed(tmp_path, monkeypatch, how):
    images, labels, md5 = fake_mnist(tmp_path, "train")
    kw = {}
    if how == "env":
        monkeypatch.setenv("NORMBOOK_ALLOW_UNVERIFIED", "1")
    else:
        kw["allow_unverified"] = True
    x, y, prov = datasets.load_mnist("train", root=tmp_path, download=False, **kw)
    np.testing.assert_array_equal(x, images)
    assert prov.verified is False
    assert prov.md5 == tuple(md5.values())
    gz = tmp_path / "mnist" / "train-images-idx3-ubyte.gz"
    assert prov.sha256[0] == hashlib.sha256(gz.read_bytes()).hexdigest()
    assert prov.expected_md5[0] == datasets.MNIST_MD5["train-images-idx3-ubyte"]
    adm = provenance.provenance_admonition(prov)
    assert ":class: warning" in adm and md5["train-images-idx3-ubyte"] in adm


def test_mnist_truncated_gzip(tmp_path):
    fake_mnist(tmp_path, "test")
    p = tmp_path / "mnist" / "t10k-images-idx3-ubyte.gz"
    p.write_bytes(p.read_bytes()[:-20])
    with pytest.raises(datasets.DataError) as e:
        datasets.load_mnist("test", root=tmp_path, download=False, allow_unverified=True)
    assert str(p) in str(e.value) and datasets.MNIST_MD5["t10k-images-idx3-ubyte"] in str(e.value)


@pytest.mark.parametrize("damage", ["truncate", "magic", "dims"])
def test_mnist_bad_idx(tmp_path, damage):
    fake_mnist(tmp_path, "test", gz=False)
    p = tmp_path / "mnist" / "t10k-images-idx3-ubyte"
    raw = bytearray(p.read_bytes())
    if damage == "truncate":
        raw = raw[:-3]
    elif damage == "magic":
        raw[3] = 0x01
    else:
        raw[8:12] = (27).to_bytes(4, "big")
    p.write_bytes(bytes(raw))
    with pytest.raises(datasets.DataError, match="t10k-images-idx3-ubyte"):
        datasets.load_mnist("test", root=tmp_path, download=False, allow_unverified=True)


def test_mnist_missing_no_download(tmp_path, monkeypatch):
    with pytest.raises(datasets.DataError) as e:
        datasets.load_mnist("train", root=tmp_path)  # env NORMBOOK_NO_DOWNLOAD=1
    msg = str(e.value)
    assert "NORMBOOK_DATA" in msg
    assert str(tmp_path / "mnist" / "train-images-idx3-ubyte.gz") in msg


class _FakeResponse(io.BytesIO):
    def __init__(self, payload: bytes):
        super().__init__(payload)
        self.headers = {"Content-Length": str(len(payload))}


def test_mnist_download_atomic_and_verified(tmp_path, monkeypatch):
    src = tmp_path / "src"
    images, labels, md5 = fake_mnist(src, "test")
    for name, h in md5.items():
        monkeypatch.setitem(datasets.MNIST_MD5, name, h)
    urls = []

    def serve(url, timeout=60.0):
        urls.append(url)
        return _FakeResponse((src / "mnist" / url.rsplit("/", 1)[1]).read_bytes())

    monkeypatch.setattr(data_files, "_open_url", serve)
    root = tmp_path / "root"
    x, y, prov = datasets.load_mnist("test", root=root, download=True)
    np.testing.assert_array_equal(x, images)
    assert prov.verified and all(u.startswith(datasets.MNIST_MIRRORS[0]) for u in urls)
    assert sorted(p.name for p in (root / "mnist").iterdir()) == [
        "t10k-images-idx3-ubyte.gz",
        "t10k-labels-idx1-ubyte.gz",
    ]  # no .part left behind


def test_download_bad_payload_not_installed(tmp_path, monkeypatch):
    monkeypatch.setattr(data_files, "_open_url", lambda url, timeout=60.0: _FakeResponse(b"junk"))
    with pytest.raises(datasets.DataError, match="NORMBOOK_DATA"):
        datasets.load_mnist("test", root=tmp_path, download=True)
    assert list((tmp_path / "mnist").iterdir()) == []


def test_download_network_failure(tmp_path, monkeypatch):
    def fail(url, timeout=60.0):
        raise OSError("no network")

    monkeypatch.setattr(data_files, "_open_url", fail)
    with pytest.raises(datasets.DataError) as e:
        datasets.load_cifar10("test", root=tmp_path, download=True)
    assert "no network" in str(e.value) and "NORMBOOK_DATA" in str(e.value)
    assert str(tmp_path / "cifar10" / datasets.CIFAR10_ARCHIVE) in str(e.value)


# --------------------------------------------------------------------------- CIFAR-10


def test_cifar_roundtrip_verified(tmp_path, monkeypatch):
    arrays, path = fake_cifar(tmp_path)
    monkeypatch.setattr(datasets, "CIFAR10_MD5", md5_of(path))
    for split, n in (("train", 20), ("test", 4)):
        x, y, prov = datasets.load_cifar10(
            split, root=tmp_path, download=False, records_per_file=None
        )
        assert x.shape == (n, 3, 32, 32) and x.dtype == np.uint8 and y.shape == (n,)
        np.testing.assert_array_equal(x, arrays[split][0])
        np.testing.assert_array_equal(y, arrays[split][1])
        assert prov.verified and prov.files == (str(path),) and prov.note == ""


def test_cifar_real_size_enforced_by_default(tmp_path, monkeypatch):
    _, path = fake_cifar(tmp_path)
    monkeypatch.setattr(datasets, "CIFAR10_MD5", md5_of(path))
    with pytest.raises(datasets.DataError, match="expected 10000"):
        datasets.load_cifar10("test", root=tmp_path, download=False)
    x, _, _ = datasets.load_cifar10("test", root=tmp_path, download=False, records_per_file=4)
    assert len(x) == 4


def test_cifar_checksum_mismatch_refused_then_allowed(tmp_path):
    arrays, path = fake_cifar(tmp_path, sub="cifar10-jpeg")
    with pytest.raises(datasets.DataError) as e:
        datasets.load_cifar10("test", root=tmp_path, download=False, records_per_file=None)
    msg = str(e.value)
    assert str(path) in msg and datasets.CIFAR10_MD5 in msg and md5_of(path) in msg
    assert "NORMBOOK_ALLOW_UNVERIFIED=1" in msg
    x, y, prov = datasets.load_cifar10(
        "test", root=tmp_path, download=False, records_per_file=None, allow_unverified=True
    )
    np.testing.assert_array_equal(x, arrays["test"][0])
    assert not prov.verified and prov.md5 == (md5_of(path),)
    assert prov.sha256 == (hashlib.sha256(path.read_bytes()).hexdigest(),)
    assert prov.expected_md5 == (datasets.CIFAR10_MD5,)
    assert "JPEG" in prov.note and "close to, not equal to" in prov.note
    adm = provenance.provenance_admonition(prov)
    # a titled warning: the title on the directive's line, the text after its options
    assert adm.startswith("```{admonition} Unverified CIFAR-10 data\n:class: warning\n\n")
    assert md5_of(path) in adm


def test_cifar_prefers_official_location(tmp_path, monkeypatch):
    _, official = fake_cifar(tmp_path, sub="cifar10")
    fake_cifar(tmp_path, sub="cifar10-jpeg")
    monkeypatch.setattr(datasets, "CIFAR10_MD5", md5_of(official))
    _, _, prov = datasets.load_cifar10("test", root=tmp_path, download=False, records_per_file=None)
    assert prov.files == (str(official),) and prov.verified


def test_cifar_truncated_archive(tmp_path, monkeypatch):
    _, path = fake_cifar(tmp_path)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    # Verified path: checksum of the truncated file is accepted, parsing must still fail.
    monkeypatch.setattr(datasets, "CIFAR10_MD5", md5_of(path))
    with pytest.raises(datasets.DataError) as e:
        datasets.load_cifar10("test", root=tmp_path, download=False, records_per_file=None)
    assert str(path) in str(e.value) and datasets.CIFAR10_MD5 in str(e.value)


def test_cifar_not_a_tar(tmp_path):
    path = tmp_path / "cifar10" / datasets.CIFAR10_ARCHIVE
    path.parent.mkdir()
    path.write_bytes(gzip.compress(b"not a tar archive" * 100))
    with pytest.raises(datasets.DataError, match="cifar-10-binary.tar.gz"):
        datasets.load_cifar10("train", root=tmp_path, download=False, allow_unverified=True)


def test_cifar_wrong_record_size(tmp_path):
    _, path = fake_cifar(tmp_path, bad_member="cifar-10-batches-bin/test_batch.bin")
    with pytest.raises(datasets.DataError) as e:
        datasets.load_cifar10(
            "test", root=tmp_path, download=False, allow_unverified=True, records_per_file=None
        )
    assert "test_batch.bin" in str(e.value) and str(path) in str(e.value)


def test_cifar_missing_no_download(tmp_path):
    with pytest.raises(datasets.DataError) as e:
        datasets.load_cifar10("train", root=tmp_path, download=False)
    msg = str(e.value)
    assert "NORMBOOK_DATA" in msg
    for sub in datasets.CIFAR10_SUBDIRS:
        assert str(tmp_path / sub / datasets.CIFAR10_ARCHIVE) in msg


def test_hash_cache_invalidated_on_change(tmp_path, monkeypatch):
    _, path = fake_cifar(tmp_path)
    monkeypatch.setattr(datasets, "CIFAR10_MD5", md5_of(path))
    calls = []
    real = datasets.hash_stream
    monkeypatch.setattr(datasets, "hash_stream", lambda p: calls.append(p) or real(p))
    for _ in range(2):
        datasets.load_cifar10("test", root=tmp_path, download=False, records_per_file=None)
    assert len(calls) == 1  # second load reuses the cached checksum
    fake_cifar(tmp_path, n=5)  # rewritten: new size, so it must be rehashed and refused
    with pytest.raises(datasets.DataError, match="Checksum mismatch"):
        datasets.load_cifar10("test", root=tmp_path, download=False, records_per_file=None)


# --------------------------------------------------------------------------- helpers


def test_data_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("NORMBOOK_DATA", raising=False)
    assert datasets.data_dir() == REPO / "data"
    monkeypatch.setenv("NORMBOOK_DATA", str(tmp_path))
    assert datasets.data_dir() == tmp_path.resolve()


def test_to_tensors_pad_and_normalize():
    imgs = np.full((2, 28, 28), 255, np.uint8)
    x, y = datasets.to_tensors(imgs, np.array([3, 4]), pad_to=32)
    assert x.shape == (2, 1, 32, 32) and x.dtype.is_floating_point and y.tolist() == [3, 4]
    assert x[:, :, 2:30, 2:30].eq(1).all() and x.sum() == 2 * 28 * 28
    xn, _ = datasets.to_tensors(imgs, [0, 1], normalize=((0.5,), (0.25,)))
    assert xn[0, 0, 0, 0] == pytest.approx(-2.0) and xn[0, 0, 5, 5] == pytest.approx(2.0)
    c = np.zeros((3, 3, 32, 32), np.uint8)
    xc, _ = datasets.to_tensors(c, [0, 1, 2], normalize="cifar10")
    assert xc.shape == (3, 3, 32, 32)
    assert xc[0, :, 0, 0].tolist() == pytest.approx(
        [-m / s for m, s in zip(*datasets.CIFAR10_MEAN_STD)], rel=1e-5
    )


def test_subset_balanced():
    labels = np.repeat(np.arange(10), [30, 40, 50, 60, 70, 30, 40, 50, 60, 70])
    idx = datasets.subset(labels, n_per_class=12, seed=3)
    assert np.bincount(labels[idx]).tolist() == [12] * 10 and len(set(idx)) == 120
    np.testing.assert_array_equal(idx, datasets.subset(labels, n_per_class=12, seed=3))
    idx = datasets.subset(labels, n=105, seed=0)
    counts = np.bincount(labels[idx])
    assert counts.sum() == 105 and set(counts) == {10, 11}
    within = np.arange(0, len(labels), 2)
    idx = datasets.subset(labels, n_per_class=5, seed=0, within=within)
    assert set(idx) <= set(within)
    with pytest.raises(ValueError):
        datasets.subset(labels, n_per_class=31, seed=0)


# --------------------------------------------------------------------------- provenance


class _Loaded:
    """Stands in for classify.Splits: only the provenance of its train and test files."""

    def __init__(self, *provenance):
        self.provenance = provenance


def _prov(dataset, split, ok, sha="ab" * 32):
    check = datasets.FileCheck(
        f"/d/{dataset}-{split}.bin", "0" * 32 if ok else "1" * 32, sha, "0" * 32
    )
    return datasets.Provenance(dataset, split, (check,))


def test_provenance_notes_one_per_file_set_and_only_unverified_on_request():
    # MNIST: two verified file sets; CIFAR-10: one unverified archive behind both splits
    splits = {
        "mnist": _Loaded(
            _prov("MNIST", "train", True, "a" * 64), _prov("MNIST", "test", True, "b" * 64)
        ),
        "cifar10": _Loaded(_prov("CIFAR-10", "train", False), _prov("CIFAR-10", "test", False)),
    }
    notes = provenance.provenance_notes(splits)
    assert notes.count("{note}") == 2 and notes.count(":class: warning") == 1
    only = provenance.provenance_notes(splits, only_unverified=True)
    assert only.count(":class: warning") == 1 and "{note}" not in only
    assert provenance.data_note(splits) == "an unverified copy of CIFAR-10"
    lines = provenance.provenance_lines(splits)
    assert len(lines) == 4 and "UNVERIFIED copy" in lines[2] and "(verified;" in lines[0]
    verified = {"mnist": splits["mnist"]}
    assert provenance.data_note(verified) == "verified copies of both datasets"
    assert provenance.provenance_notes(verified, only_unverified=True) == ""


# --------------------------------------------------------------------------- real data


def _real_root() -> Path | None:
    env = os.environ.get("NORMBOOK_DATA")
    root = Path(env) if env else REPO.parent / "shared" / "data"
    if not root.is_absolute():
        root = REPO / root
    return root if (root / "mnist").is_dir() else None


@pytest.mark.skipif(
    _real_root() is None, reason="no offline data (NORMBOOK_DATA or ../shared/data)"
)
def test_real_offline_data():
    root = _real_root()
    x, y, prov = datasets.load_mnist("test", root=root, download=False)
    assert x.shape == (10000, 28, 28) and y.shape == (10000,) and prov.verified
    archive = next((p for p in datasets._cifar_candidates(root) if p.is_file()), None)
    if archive is None or archive.parent.name != "cifar10-jpeg":
        pytest.skip("offline CIFAR-10 rebuild not present")
    with pytest.raises(datasets.DataError, match="NORMBOOK_ALLOW_UNVERIFIED"):
        datasets.load_cifar10("test", root=root, download=False)
    x, y, prov = datasets.load_cifar10("test", root=root, download=False, allow_unverified=True)
    assert x.shape == (10000, 3, 32, 32) and not prov.verified
    assert np.bincount(y, minlength=10).tolist() == [1000] * 10
    assert ":class: warning" in provenance.provenance_admonition(prov)


# --------------------------------------------------------------------------- a real HTTP server

_REAL_OPEN = data_files._open_url  # captured before the autouse fixture cuts the network


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves ``server.routes[path] = (mode, payload)``: ok, truncated, stall or an HTTP code."""

    def do_GET(self):
        mode, payload = self.server.routes.get(self.path, (404, b""))
        if isinstance(mode, int):
            self.send_error(mode, "test server says no")
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if mode == "ok":
            self.wfile.write(payload)
        elif mode == "truncated":
            self.wfile.write(payload[: len(payload) // 2])
        elif mode == "stall":
            self.wfile.write(payload[:10])
            self.wfile.flush()
            # no more bytes until the test has ended (the fixture's teardown): the client's
            # timeout is the only way out, however slow the machine (600 s: only a bound)
            self.server.release.wait(600)
        self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.fixture
def server(monkeypatch):
    """A local HTTP server on 127.0.0.1 (bounded, stopped after the test); downloads go to it,
    with the library's generous stall timeout (a slow machine never looks like a stall)."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads, srv.routes, srv.release = True, {}, threading.Event()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    monkeypatch.setattr(data_files, "_open_url", _REAL_OPEN)
    monkeypatch.setattr(datasets, "MNIST_MIRRORS", (f"{base}/mnist/",))
    monkeypatch.setattr(datasets, "CIFAR10_URL", f"{base}/{datasets.CIFAR10_ARCHIVE}")
    yield srv
    srv.release.set()
    srv.shutdown()
    srv.server_close()
    thread.join(5)


def _serve_mnist(srv, tmp_path, monkeypatch, mode="ok", wrong_md5=False):
    src = tmp_path / "src"
    images, _, md5 = fake_mnist(src, "test")
    for name, h in md5.items():
        monkeypatch.setitem(datasets.MNIST_MD5, name, "0" * 32 if wrong_md5 else h)
        payload = (src / "mnist" / f"{name}.gz").read_bytes()
        srv.routes[f"/mnist/{name}.gz"] = (mode, payload)
    return images


def test_server_good_transfer_installs_verified_files(server, tmp_path, monkeypatch):
    images = _serve_mnist(server, tmp_path, monkeypatch)
    x, _, prov = datasets.load_mnist("test", root=tmp_path / "root", download=True)
    np.testing.assert_array_equal(x, images)
    assert prov.verified
    assert sorted(p.name for p in (tmp_path / "root" / "mnist").iterdir()) == [
        "t10k-images-idx3-ubyte.gz",
        "t10k-labels-idx1-ubyte.gz",
    ]


def test_server_good_cifar_archive(server, tmp_path, monkeypatch):
    arrays, path = fake_cifar(tmp_path / "src")
    monkeypatch.setattr(datasets, "CIFAR10_MD5", md5_of(path))
    server.routes[f"/{datasets.CIFAR10_ARCHIVE}"] = ("ok", path.read_bytes())
    root = tmp_path / "root"
    x, _, prov = datasets.load_cifar10("test", root=root, download=True, records_per_file=None)
    np.testing.assert_array_equal(x, arrays["test"][0])
    assert prov.verified and [p.name for p in (root / "cifar10").iterdir()] == [path.name]


@pytest.mark.parametrize(
    "mode, wrong_md5, says",
    [
        ("ok", True, "expected 00000000"),  # a wrong checksum
        ("truncated", False, "truncated transfer"),
        (503, False, "HTTP Error 503"),
        ("stall", False, "stalled"),
    ],
)
def test_server_failures_leave_nothing_and_say_how_to_fix(
    server, tmp_path, monkeypatch, mode, wrong_md5, says
):
    """A download that fails (wrong checksum, cut short, HTTP error, stalled) installs nothing
    and its error says where to put the files instead."""
    if mode == "stall":  # a stalled server sends nothing until the test ends: time out soon
        monkeypatch.setattr(data_files, "DOWNLOAD_TIMEOUT", 1.0)
    _serve_mnist(server, tmp_path, monkeypatch, mode, wrong_md5)
    root = tmp_path / "root"
    with pytest.raises(datasets.DataError) as e:
        datasets.load_mnist("test", root=root, download=True)
    msg = str(e.value)
    assert says in msg and "NORMBOOK_DATA" in msg and "Place the files there" in msg, msg
    assert list((root / "mnist").iterdir()) == []  # no partial or unverified file
