"""Bundles of trained networks and analyses: the cache entries one build read, packed so that
another computer builds the same book without training.

    python -m normbook.publish.bundle export [--profile cpu] [--out FILE]   (make bundle)
    python -m normbook.publish.bundle import FILE_OR_URL [--profile cpu]    (make book BUNDLE=)

``export`` packs the entries the book's chapters read or computed in their last execution at
the profile (their logs, ``_build/<profile>/entries_read/<chapter>.txt``) into one
gzipped tar: ``manifest.json`` first (per entry its kind, key, configuration, the code hash its
key covers, the machine that computed it, and each file's size and SHA-256; for the bundle the
commit, the packing machine's versions and the profile's reference ledger), then each entry's
files as ``<kind>/<key>/<file>``. Beside it, ``<bundle>.sha256``. No data, no site.

``import`` fetches a URL (resuming a broken download; a path is read as it is), verifies every
file of the archive against the manifest before it writes anything (a corrupt or truncated
archive is refused with one line and nothing imported), then imports the entries whose keys this
checkout computes (the step's code hash and the key recomputed from the configuration must both
match), each atomically under the cache's lock; an entry already present is kept. It says how
many it imported, kept and left out (made with other code, by step), and writes
``_build/<profile>/bundle.json`` for the *Build and compute* page.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import io
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from normbook.publish import project
from normbook.publish.project import write_atomic
from normbook.runtime import cache, devices

FORMAT = 1
FILES = ("meta.json", "arrays.npz", "tensors.pt")  # what a cache entry holds (cache._write)
MEMBER = re.compile(r"^([a-z][a-z0-9_]{0,63})/([0-9a-f]{20})/(meta\.json|arrays\.npz|tensors\.pt)$")
# The modules that declare the cache's steps (cache.step): importing them fills cache.STEPS.
# Where the book declares its cached steps: a module does on import, "module:function" when
# called (tests/core/test_bundle.py checks that every declaring module is here: a step missing
# from this list makes an import leave its entries out, and the build retrain them)
STEP_MODULES = (
    "normbook.paper_a.cached.cache_keys",
    "normbook.paper_a.cached.grid2d",
    "normbook.paper_a.cached.unet",
    "normbook.paper_a.measures.detector_calibration",
    "normbook.paper_b.cached.cache_keys",
    "normbook.paper_b.cached.analysis",
    "normbook.paper_b.cached.projections",
    "normbook.paper_b.cached.stress_analyses",
    "normbook.book_pages.methods:power_step",
)
TIMEOUT = 60.0  # seconds without a byte before a download counts as broken


class BundleError(RuntimeError):
    """A bundle refused (one line: what is wrong, and what to do)."""


def steps() -> dict[str, cache.Step]:
    for name in STEP_MODULES:
        module, _, function = name.partition(":")
        loaded = importlib.import_module(module)
        if function:
            getattr(loaded, function)()
    return cache.STEPS


def logs(profile: str) -> Path:
    """Where each chapter's last execution logged the entries it read or computed, one file
    per chapter (:func:`.execution.execute`, :data:`normbook.runtime.cache.READ_LOG`)."""
    return project.build_dir(profile) / "entries_read"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


# --------------------------------------------------------------------------- export


def entries_read(profile: str) -> list[tuple[str, str]]:
    """The (kind, key) of every entry the book's chapters read or computed in their last
    execution at ``profile`` (a chapter up to date keeps its last log)."""
    folder, names = logs(profile), set()
    missing = []
    for ch in project.chapters():
        log = folder / f"{ch.stem}.txt"
        if not log.exists():
            missing.append(ch.stem)
            continue
        names |= {ln.strip() for ln in log.read_text().splitlines() if ln.strip()}
    if missing:
        raise BundleError(f"no log of the entries read by {', '.join(missing)} at {profile}: "
                          f"execute the book first (`make book PROFILE={profile}`)")  # fmt: skip
    return [tuple(n.split("/", 1)) for n in sorted(names)]


def bundle_name(profile: str, commit: str) -> str:
    """A bundle's name, without ``.tar.gz``: its profile and its commit's first 10 digits."""
    return f"normbook-{profile}-{commit[:10]}"


def published_url(repo_url: str, profile: str, commit: str) -> str:
    """Where the README says to publish the bundle of ``commit``: a release asset of the
    project's repository, in a release tagged with the bundle's name."""
    name = bundle_name(profile, commit)
    return f"{repo_url.rstrip('/')}/releases/download/{name}/{name}.tar.gz"


def export(profile: str, out: Path | None = None) -> Path:
    """Pack the entries of the profile's last build; returns the bundle's path."""
    root, commit = cache.cache_root(), devices.git_commit()
    listed = []
    for kind, key in entries_read(profile):
        d = root / kind / key
        if not (d / "meta.json").exists():
            raise BundleError(f"entry {kind}/{key} that the build read is gone from {root}: "
                              f"`make book PROFILE={profile}`, then pack again")  # fmt: skip
        meta = json.loads((d / "meta.json").read_text())
        files = {f: {"bytes": (d / f).stat().st_size, "sha256": file_sha256(d / f)}
                 for f in FILES if (d / f).exists()}  # fmt: skip
        listed.append({"kind": kind, "key": key, "config": meta.get("config"),
                       "code_hash": meta.get("code_hash"), "computed_by": meta.get("computed_by"),
                       "files": files})  # fmt: skip
    ref = project.ROOT / "results" / profile / "ledger.json"
    manifest = {
        "format": FORMAT, "profile": profile, "commit": commit,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "packed_by": devices.provenance(),
        "reference": json.loads(ref.read_text()) if ref.exists() else None,
        "entries": listed,
    }  # fmt: skip
    out = out or project.build_dir(profile) / f"{bundle_name(profile, commit)}.tar.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".part")
    os.close(fd)
    try:
        with tarfile.open(tmp, "w:gz") as tar:
            blob = json.dumps(manifest, indent=1).encode()
            info = tarfile.TarInfo("manifest.json")
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
            for e in listed:
                for f in e["files"]:
                    tar.add(root / e["kind"] / e["key"] / f, f"{e['kind']}/{e['key']}/{f}")
        os.chmod(tmp, 0o644)  # a file to publish (mkstemp made it readable by its owner only)
        os.replace(tmp, out)
    finally:
        Path(tmp).unlink(missing_ok=True)
    write_atomic(out.with_name(out.name + ".sha256"), f"{file_sha256(out)}  {out.name}\n")
    size = out.stat().st_size
    print(f"[bundle] {len(listed)} entries, {size / 1e6:.1f} MB: {out} (and {out.name}.sha256)")
    return out


# --------------------------------------------------------------------------- fetch


def _open(url: str, start: int):
    req = urllib.request.Request(url, headers={"Range": f"bytes={start}-"} if start else {})
    return urllib.request.urlopen(req, timeout=TIMEOUT)


def fetch(url: str, dest: Path) -> Path:
    """Download ``url`` to ``dest``, resuming a partial ``dest.part`` left by a broken
    connection (HTTP Range); a broken transfer keeps what arrived and says to run again."""
    from tqdm.auto import tqdm

    part = dest.with_name(dest.name + ".part")
    dest.parent.mkdir(parents=True, exist_ok=True)
    have = part.stat().st_size if part.exists() else 0
    try:
        resp = _open(url, have)
    except (urllib.error.URLError, OSError) as exc:
        raise BundleError(f"cannot fetch {url} ({exc}); check the address, or download it "
                          "and pass its path") from None  # fmt: skip
    with resp:
        if have and resp.status != 206:  # the server ignored the range: start over
            have = 0
        length = resp.headers.get("Content-Length")
        total = have + int(length) if length else None
        got = have
        try:
            with open(part, "ab" if have else "wb") as out, tqdm(
                total=total, initial=have, unit="B", unit_scale=True, desc=dest.name
            ) as bar:  # fmt: skip
                while chunk := resp.read(1 << 20):
                    out.write(chunk)
                    got += len(chunk)
                    bar.update(len(chunk))
        except (OSError, urllib.error.URLError) as exc:
            raise BundleError(f"the download of {url} broke at {got:,} bytes ({exc}); run the "
                              "same command again to resume") from None  # fmt: skip
    if total is not None and got != total:
        raise BundleError(f"the download of {url} broke at {got:,} of {total:,} bytes; run the "
                          "same command again to resume")  # fmt: skip
    os.replace(part, dest)
    return dest


def local(src: str, profile: str) -> Path:
    """The bundle as a local file: a path as it is, a URL fetched into the build folder."""
    if re.match(r"^https?://", src):
        name = Path(urllib.request.url2pathname(src.rsplit("/", 1)[-1])).name or "bundle.tar.gz"
        return fetch(src, project.build_dir(profile) / "bundles" / name)
    path = Path(src)
    if not path.is_file():
        raise BundleError(f"no bundle at {src}")
    return path


# --------------------------------------------------------------------------- verify + import


def verify(path: Path) -> tuple[dict, dict[str, bytes]]:
    """The manifest and every file's bytes, each checked against the manifest; nothing else
    may be in the archive. Raises :class:`BundleError` on the first problem."""
    try:
        with tarfile.open(path, "r:*") as tar:
            members = tar.getmembers()
            if not members or members[0].name != "manifest.json":
                raise BundleError(f"{path.name} is not a normbook bundle (no manifest first)")
            manifest = json.loads(tar.extractfile(members[0]).read())
            files: dict[str, bytes] = {}
            for m in members[1:]:
                if not m.isfile() or not MEMBER.match(m.name):
                    raise BundleError(f"{path.name}: refused member {m.name!r} (only "
                                      "<kind>/<key>/<entry file> inside the cache)")  # fmt: skip
                if m.name in files:
                    raise BundleError(f"{path.name}: member {m.name} appears twice")
                files[m.name] = tar.extractfile(m).read()
    except (tarfile.TarError, EOFError, OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BundleError(f"{path.name} is corrupt or truncated ({exc}); fetch it again") from None
    if manifest.get("format") != FORMAT:
        raise BundleError(f"{path.name}: bundle format {manifest.get('format')}, this checkout "
                          f"reads {FORMAT}")  # fmt: skip
    expected = set()
    for e in manifest["entries"]:
        for f, want in e["files"].items():
            name = f"{e['kind']}/{e['key']}/{f}"
            expected.add(name)
            data = files.get(name)
            if data is None or len(data) != want["bytes"] or sha256(data) != want["sha256"]:
                raise BundleError(f"{path.name}: {name} does not match its checksum; the bundle "
                                  "is damaged, download it again")  # fmt: skip
        meta = json.loads(files[f"{e['kind']}/{e['key']}/meta.json"])
        if (meta.get("kind"), meta.get("key")) != (e["kind"], e["key"]):
            raise BundleError(f"{path.name}: entry {e['kind']}/{e['key']} holds another entry")
    if extra := sorted(set(files) - expected):
        raise BundleError(f"{path.name}: {extra[0]} is not in its manifest")
    return manifest, files


def importable(e: dict, known: dict[str, cache.Step]) -> str:
    """Why this checkout would not compute entry ``e`` under its key ("": it would)."""
    step = known.get(e["kind"])
    if step is None:
        return "a step this checkout does not have"
    if e["code_hash"] != step.code_hash:
        return "other code"
    if cache.config_key(e["config"], step.code_hash) != e["key"]:
        return "a key that its configuration does not give"
    return ""


@contextmanager
def _entry_lock(path: Path):
    """The cache's own lock on one entry (the file a computing run holds, in the cache's layout
    ``.locks/<kind>/<key>.lock``): a build computing the entry and an import never both write it."""
    lock = path.parent.parent / ".locks" / path.parent.name / f"{path.name}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as f:
        cache.lock_or_wait(f, f"[bundle] a run is computing {path.parent.name}/{path.name}; "
                              "waiting for it")  # fmt: skip
        yield


def install(root: Path, e: dict, files: dict[str, bytes]) -> bool:
    """Write one entry atomically under its lock; False when it was already there (kept)."""
    path = root / e["kind"] / e["key"]
    if (path / "meta.json").exists():
        return False
    with _entry_lock(path):
        if (path / "meta.json").exists():
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=path.name + ".tmp-", dir=path.parent))
        try:
            for f in e["files"]:
                (tmp / f).write_bytes(files[f"{e['kind']}/{e['key']}/{f}"])
            os.rename(tmp, path)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return True


def import_bundle(src: str, profile: str) -> dict:
    """Verify, then import what this checkout computes; returns (and records) the summary."""
    path = local(src, profile)
    manifest, files = verify(path)  # every check before anything is written
    known, root = steps(), cache.cache_root()
    counts = {"imported": 0, "kept": 0}
    left: dict[str, int] = {}
    for e in manifest["entries"]:
        why = importable(e, known)
        if why:
            left[f"{e['kind']} ({why})"] = left.get(f"{e['kind']} ({why})", 0) + 1
            continue
        counts["imported" if install(root, e, files) else "kept"] += 1
    machines: dict[str, int] = {}
    for e in manifest["entries"]:
        m = devices.machine_text(e.get("computed_by")) if e.get("computed_by") else "unrecorded"
        machines[m] = machines.get(m, 0) + 1
    summary = {
        "source": src, "file": path.name, "sha256": file_sha256(path),
        "commit": manifest["commit"], "profile": manifest["profile"],
        "entries": len(manifest["entries"]), **counts, "left_out": left,
        "computed_on": machines, "imported_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }  # fmt: skip
    write_atomic(project.build_dir(profile) / "bundle.json", json.dumps(summary, indent=1) + "\n")
    print(f"[bundle] {path.name} (commit {manifest['commit'][:10]}): imported "
          f"{counts['imported']} of {len(manifest['entries'])} entries, kept {counts['kept']} "
          "already here")  # fmt: skip
    for what, n in sorted(left.items()):
        print(f"[bundle] left out {n} entries of {what}: the build computes them")
    return summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="pack the entries the last build read")
    e.add_argument("--profile", default="cpu")
    e.add_argument("--out", type=Path, default=None)
    i = sub.add_parser("import", help="verify a bundle (path or URL) and import its entries")
    i.add_argument("source")
    i.add_argument("--profile", default="cpu")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "export":
            export(a.profile, a.out)
        else:
            import_bundle(a.source, a.profile)
    except BundleError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
