"""Bundles (normbook.publish.bundle): the entries a build read, exported and imported into an
empty cache byte for byte; every damaged or foreign bundle refused with one line and the cache
left as it was; entries of other code left out; a URL fetched, and resumed after a broken
connection (a local HTTP server on the loopback)."""

import http.server
import io
import json
import re
import tarfile
import threading
from pathlib import Path

import numpy as np
import pytest

from normbook.publish import bundle, compute_page, project
from normbook.runtime import cache

KIND = "z_bundle_test"


def _test_step(monkeypatch) -> cache.Step:
    """A step whose key covers the bundle module's code, declared for one test only (the real
    steps are kept; nothing of it stays in the registry for other tests)."""
    bundle.steps()  # the book's own steps, before the copy
    for name in ("STEPS", "_USED", "_MACHINES"):
        monkeypatch.setattr(cache, name, dict(getattr(cache, name)))
    return cache.step(KIND, bundle)


@pytest.fixture
def built(tmp_path, monkeypatch):
    """A cache with three entries that a one-chapter 'book' read (its chapter's read log), in
    its own folders."""
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / "build"))
    monkeypatch.setattr(project, "chapters", lambda: [Path("book/x.py")])
    log = tmp_path / "build" / "cpu" / "entries_read" / "x.txt"
    log.parent.mkdir(parents=True)
    monkeypatch.setenv("NORMBOOK_READ_LOG", str(log))
    step = _test_step(monkeypatch)
    for seed in range(3):
        step.cached({"seed": seed}, lambda s=seed: cache.Entry({"x": np.arange(4.0) + s}))
    monkeypatch.delenv("NORMBOOK_READ_LOG")
    return tmp_path


def _entries(root):
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".locks" not in p.parts}  # fmt: skip


def _fresh_cache(tmp_path, monkeypatch, name="other"):
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path / name))
    return tmp_path / name


def test_a_bundle_imports_into_an_empty_cache_byte_for_byte(built, monkeypatch):
    out = bundle.export("cpu")
    assert out.name.endswith(".tar.gz") and out.with_name(out.name + ".sha256").exists()
    assert bundle.file_sha256(out) in out.with_name(out.name + ".sha256").read_text()
    manifest, _ = bundle.verify(out)
    assert len(manifest["entries"]) == 3 and manifest["entries"][0]["computed_by"]["cpu"]
    before = _entries(built / "cache")
    root = _fresh_cache(built, monkeypatch)
    got = bundle.import_bundle(str(out), "cpu")
    assert (got["imported"], got["kept"], got["left_out"]) == (3, 0, {})
    assert _entries(root) == before
    assert cache.STEPS[KIND].cached({"seed": 1}, lambda: pytest.fail("recomputed")).hit
    assert bundle.import_bundle(str(out), "cpu")["kept"] == 3  # present entries are kept
    assert json.loads((built / "build" / "cpu" / "bundle.json").read_text())["entries"] == 3
    page = compute_page.bundle_section("cpu")[0]  # Build and compute says where they came from
    assert f"imported `{out.name}`" in page and "0 of its 3 entries imported, 3 already" in page
    assert "(3 entries)" in page and "left out (this build computes them): none" in page
    # a fresh clone: no build folder yet, the import makes it (found by trying it as a user)
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(built / "fresh" / "_build"))
    _fresh_cache(built, monkeypatch, "fresh_cache")
    assert bundle.import_bundle(str(out), "cpu")["imported"] == 3
    assert (built / "fresh" / "_build" / "cpu" / "bundle.json").exists()
    assert out.stat().st_mode & 0o444 == 0o444  # readable by all, as a published file is


def test_without_a_bundle_the_page_says_how_to_make_and_use_one(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path))
    assert "`make book BUNDLE=<file or URL>`" in compute_page.bundle_section("cpu")[0]


def test_without_a_logged_build_export_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path))
    monkeypatch.setattr(project, "chapters", lambda: [Path("book/x.py")])
    with pytest.raises(bundle.BundleError, match=r"read by x at cpu.*make book PROFILE=cpu"):
        bundle.export("cpu")


def _damaged(path, how):
    data = bytearray(path.read_bytes())
    if how == "flip":
        data[len(data) // 2] ^= 0xFF
    else:
        data = data[: len(data) // 2]
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("how", ["flip", "truncate"])
def test_a_damaged_bundle_is_refused_and_nothing_is_imported(built, monkeypatch, how, capsys):
    out = _damaged(bundle.export("cpu"), how)
    root = _fresh_cache(built, monkeypatch)
    assert bundle.main(["import", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and len(err.splitlines()) == 1
    assert "corrupt or truncated" in err or "checksum" in err
    assert not root.exists() or not _entries(root)


def _repack(src, dest, edit_manifest=None, extra=None):
    """A bundle rebuilt from ``src`` with its manifest edited and/or a member added."""
    with tarfile.open(src) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
    with tarfile.open(dest, "w:gz") as tar:
        for m, data in members + ([extra] if extra else []):
            if m.name == "manifest.json" and edit_manifest:
                man = json.loads(data)
                edit_manifest(man)
                data = json.dumps(man).encode()
            info = tarfile.TarInfo(m.name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return dest


def test_a_member_outside_the_cache_is_refused(built, monkeypatch):
    evil = tarfile.TarInfo("../../escape.txt")
    evil.size = 4
    out = _repack(bundle.export("cpu"), built / "evil.tar.gz", extra=(evil, b"boo!"))
    root = _fresh_cache(built, monkeypatch)
    with pytest.raises(bundle.BundleError, match="refused member '../../escape.txt'"):
        bundle.import_bundle(str(out), "cpu")
    assert not (built / "escape.txt").exists() and not root.exists()


def test_entries_of_other_code_are_left_out_and_said(built, monkeypatch, capsys):
    def other_code(man):
        man["entries"][0]["code_hash"] = "0" * 16

    out = _repack(bundle.export("cpu"), built / "other.tar.gz", other_code)
    _fresh_cache(built, monkeypatch)
    got = bundle.import_bundle(str(out), "cpu")
    assert got["imported"] == 2 and got["left_out"] == {f"{KIND} (other code)": 1}
    assert "left out 1 entries of z_bundle_test (other code)" in capsys.readouterr().out


class _Server(http.server.BaseHTTPRequestHandler):
    """Serves ``body``; with ``cut`` set, the first GET stops after that many bytes."""

    body, cut, ranges = b"", None, []

    def do_GET(self):  # noqa: N802 - the http.server API
        start = int(self.headers.get("Range", "bytes=0-")[6:].rstrip("-") or 0)
        type(self).ranges.append(start)
        data = self.body[start:]
        self.send_response(206 if start else 200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if type(self).cut is not None:
            data, type(self).cut = data[: type(self).cut], None
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_a_url_is_fetched_and_a_broken_download_resumes(built, monkeypatch):
    out = bundle.export("cpu")
    _Server.body, _Server.cut, _Server.ranges = out.read_bytes(), 1000, []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/{out.name}"
    try:
        root = _fresh_cache(built, monkeypatch)
        with pytest.raises(bundle.BundleError, match="broke at 1,000 of .* run the same command"):
            bundle.import_bundle(url, "cpu")
        assert not root.exists()  # nothing imported from a partial download
        got = bundle.import_bundle(url, "cpu")  # resumes from byte 1,000
        assert _Server.ranges == [0, 1000] and got["imported"] == 3
        assert (built / "build" / "cpu" / "bundles" / out.name).read_bytes() == out.read_bytes()
    finally:
        server.shutdown()


@pytest.mark.heavy
def test_a_chapter_built_from_its_bundle_computes_nothing_and_gives_the_same_numbers(
    tmp_path, monkeypatch
):
    """Chapter A1 at smoke, executed, bundled, imported into an empty cache elsewhere and
    executed again: no entry computed, the same glued numbers bit for bit."""
    import re

    from normbook.publish import execution

    chapter = project.ROOT / "book" / "a1_localization.py"
    monkeypatch.setattr(project, "chapters", lambda: [chapter])
    wall = re.compile(r"_wall_s$")  # how long the run took: the one value that varies

    def run(i: int) -> dict:
        monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / f"build{i}"))
        nb, secs = execution.execute(chapter, "smoke", {}, force=True)
        assert secs is not None
        return {k: v for k, v in execution.glued_values(nb).items() if not wall.search(k)}

    _fresh_cache(tmp_path, monkeypatch, "cache0")
    first = run(0)
    packed = bundle.export("smoke")
    root = _fresh_cache(tmp_path, monkeypatch, "cache1")
    got = bundle.import_bundle(str(packed), "smoke")
    assert got["imported"] == got["entries"] > 0 and not got["left_out"]
    imported = _entries(root)
    again = run(1)
    assert _entries(root) == imported  # nothing computed, nothing rewritten
    assert len(first) > 20 and again == first


def test_every_module_that_declares_a_cached_step_is_imported_before_a_bundle_is():
    """A step the import does not know leaves its entries out, and the build retrains them (the
    U-Net's, the 2-D CNN's and the power simulation's did, found on a fresh clone): every
    module that declares one is listed, and its steps are known after ``steps()``."""
    listed = {name.partition(":")[0] for name in bundle.STEP_MODULES}
    declaring = set()
    for f in sorted(project.PACKAGE.rglob("*.py")):
        text = f.read_text()
        if re.search(r"cache\.step\(\s*\"", text) or re.search(r"^declare_steps\(", text, re.M):
            rel = f.relative_to(project.PACKAGE.parent).with_suffix("")
            declaring.add(".".join(rel.parts))
    assert declaring and declaring <= listed, sorted(declaring - listed)
    kinds = set(bundle.steps())
    assert {"a_train", "a_unet_train", "a_grid2d_eval", "m_power", "b_train"} <= kinds
