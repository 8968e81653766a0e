"""``make reference`` (``python -m normbook.tools.reference [--profile cpu]``): write the reference
ledger, ``results/<profile>/ledger.json``, from the last build at that profile.

It refuses, with one line and before writing anything, a build that is not current (a chapter
executed with other code, parameters or records than the checkout's), a chapter run with other
parameters than the profile's, and a checkout whose code differs from its commit (the
reference names the commit it was made with). A plain build never writes it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from normbook.book_pages import ledger as claims_ledger
from normbook.book_pages import reference
from normbook.publish import project
from normbook.publish.execution import is_current
from normbook.runtime import devices
from normbook.runtime.devices import git_commit
from normbook.tools import fingerprint


class ReferenceError(RuntimeError):
    pass


def stale_chapters(profile: str) -> list[str]:
    """The checkout's chapters whose executed notebook at ``profile`` is not current."""
    return [p.stem for p in project.chapters() if not is_current(p, profile)]


def changed_code() -> list[str]:
    """Tracked files that differ from the commit, outside ``results/`` (the reference itself)."""
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                         cwd=project.ROOT, capture_output=True, text=True)  # fmt: skip
    files = [line[3:] for line in out.stdout.splitlines()]
    return [f for f in files if not f.startswith("results/")]


def build(profile: str, with_fingerprint: bool = True) -> dict:
    """The reference of the last build at ``profile`` (:func:`reference.snapshot`), with its
    provenance; a ReferenceError when that build cannot be one. ``with_fingerprint=False``
    leaves out the fingerprint (:mod:`normbook.tools.fingerprint`, about 20 s of training) that
    only the Build and compute page reads, never ``--check``."""
    stale = stale_chapters(profile)
    if stale:
        raise ReferenceError(f"chapters not current at profile {profile}: {', '.join(stale)}; "
                             f"run `make book PROFILE={profile}` first")  # fmt: skip
    recs = claims_ledger.records(profile)
    missing = claims_ledger.missing(recs)
    if missing:
        raise ReferenceError(f"no record for {', '.join(missing)} at profile {profile}")
    rerun = [f"{r['chapter']} ({r['overrides']})" for r in recs if r.get("overrides")]
    if rerun:
        raise ReferenceError(f"chapters run with other parameters than the profile's: "
                             f"{'; '.join(rerun)}; run `make book PROFILE={profile}` "
                             "first")  # fmt: skip
    unstamped = [r["chapter"] for r in recs if not r.get("code") or not r.get("machine")]
    if unstamped:
        raise ReferenceError(f"records without a code hash or machine (not executed by the "
                             f"build): {', '.join(unstamped)}")  # fmt: skip
    machines = {reference.machine_text(r["machine"]) for r in recs}
    if len(machines) > 1:
        raise ReferenceError(f"the build's chapters ran on several machines: {sorted(machines)}")
    provenance = {
        "commit": git_commit(),
        "date": time.strftime("%Y-%m-%d"),
        "machine": recs[0]["machine"],
        "versions": devices.versions(),
        "threads": "one per process (every kernel and worker single-threaded)",
        "data": sorted({line for r in recs for line in r.get("provenance", [])}),
        "made_by": f"{reference.COMMAND} (python -m normbook.tools.reference --profile {profile})",
    }
    if with_fingerprint:  # whether pinning the kernels makes another CPU compute this one's numbers
        provenance["fingerprint"] = fingerprint.measure()
    return reference.snapshot(recs, profile, provenance)


def check(profile: str, against: Path) -> int:
    """0 when the last build at ``profile`` gives every claim of the reference in ``against``
    the same verdict and the same effect, with the same code and parameters; 1, listing each
    difference, when not; 2 when there is no such reference."""
    try:
        ref = reference.load_file(against)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if ref is None:
        print(f"error: no reference ledger {against}", file=sys.stderr)
        return 2
    cmp = reference.compare(claims_ledger.records(profile), ref)
    problems = [f"{name}: {cause}" for name, cause in cmp.chapters.items()]
    problems += [f"{d.ident} ({d.chapter}): {d.kind} differs: reference "
                 f"{(d.ref or {}).get('verdict')} {(d.ref or {}).get('effect')!r}, this build "
                 f"{(d.this or {}).get('verdict')} {(d.this or {}).get('effect')!r}"
                 for d in cmp.differences]  # fmt: skip
    for line in problems:
        print(f"[reference] differs: {line}", file=sys.stderr)
    print(f"[reference] {profile} build against {against}: {cmp.agree} of {cmp.compared} "
          f"verdicts and {cmp.identical} effects the same, {len(problems)} "
          "differences")  # fmt: skip
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m normbook.tools.reference", description=__doc__)
    ap.add_argument("--profile", default="cpu", help="the build to make the reference of")
    ap.add_argument("--allow-changes", action="store_true",
                    help="accept tracked files that differ from the commit (the reference then "
                         "names the commit with '+changes')")  # fmt: skip
    ap.add_argument("--out", default=None,
                    help="where to write it (default results/<profile>/ledger.json; a study "
                         "of one commit on two instruction sets: results/<profile>/isa/"
                         "<commit>/reference.json and <name>.json)")  # fmt: skip
    ap.add_argument("--check", metavar="REFERENCE", default=None,
                    help="write nothing: compare the last build with this reference file and "
                         "fail on any difference (a rebuild from the cache on the same machine "
                         "must reproduce it exactly)")  # fmt: skip
    ap.add_argument("--no-fingerprint", action="store_true",
                    help="leave out the fingerprint (two small networks trained, about 20 s): "
                         "for a reference written with --out that only --check reads, as make "
                         "test's smoke checks write")  # fmt: skip
    args = ap.parse_args(argv)
    if args.no_fingerprint and not args.out and not args.check:
        ap.error(
            "--no-fingerprint is for a reference --check reads: give --out (the "
            "committed reference keeps its fingerprint for the Build and compute page)"
        )
    if args.check:
        return check(args.profile, Path(args.check))
    try:
        changed = changed_code()
        if changed and not args.allow_changes:
            more = ", …" if len(changed) > 3 else ""
            names = ", ".join(changed[:3]) + more
            raise ReferenceError(f"tracked files differ from the commit ({names}): commit "
                                 "them first")  # fmt: skip
        ref = build(args.profile, with_fingerprint=not args.no_fingerprint)
    except (ReferenceError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not changed:  # results/ alone differs: the commit is the code's
        ref["provenance"]["commit"] = ref["provenance"]["commit"].removesuffix("+changes")
    out = Path(args.out).resolve() if args.out else reference.path(args.profile)
    out.parent.mkdir(parents=True, exist_ok=True)
    project.write_atomic(out, reference.dumps(ref))
    n = len(ref["claims"])
    print(f"[reference] {out}: {n} claims, "
          f"{len(ref['checks'])} checks, {reference.reference_text(ref)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
