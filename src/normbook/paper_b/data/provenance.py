"""How the data a chapter used is shown: admonitions for verified and unverified copies, and
the run record's lines (presentation only; :mod:`.datasets` reads and verifies the files)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from normbook.paper_b.data.datasets import Provenance


def run_record(prov: Provenance) -> str:
    """One line of a chapter's run record: the files, whether verified, their SHA-256."""
    # an unverified copy says what it is (its note's first clause: "rebuilt from a JPEG export")
    origin = prov.note.split(",")[0].split(": ", 1)[-1]
    origin = origin if "rebuilt" in origin else ""
    status = "verified" if prov.verified else "UNVERIFIED copy" + (f"; {origin}" if origin else "")
    files = ", ".join(f"`{os.path.basename(f)}`" for f in prov.files)
    return (
        f"{prov.dataset} {prov.split}: {files} ({status}; SHA-256 "
        f"{', '.join(s[:16] + '…' for s in prov.sha256)})"
    )


def provenance_admonition(prov: Provenance) -> str:
    """MyST markdown for a chapter: for unverified data a warning titled "Unverified <dataset>
    data" (an ``{admonition}`` of class ``warning``: ``{warning}`` takes no title, and its
    argument would become the first words of the text), else a ``{note}``."""
    if prov.verified:
        files = ", ".join(f"`{Path(p).name}`" for p in prov.files)
        return (
            f"```{{note}}\n{prov.dataset} ({prov.split} split) verified against the "
            f"published MD5 checksums: {files}.\n```\n"
        )
    rows = "\n".join(
        f"- `{c.path}`: MD5 `{c.md5}` (expected `{c.expected_md5}`), SHA-256 `{c.sha256}`"
        for c in prov.checks
        if not c.verified
    )
    note = prov.note or (
        "This copy is not the original data; results on it are close to, "
        "not equal to, results on the original data."
    )
    return (
        f"```{{admonition}} Unverified {prov.dataset} data\n:class: warning\n\n"
        f"The {prov.dataset} {prov.split} split used here failed checksum verification "
        f"and was used only because unverified data was explicitly allowed.\n{note}\n\n"
        f"{rows}\n```\n"
    )


def _provenances(splits: Mapping) -> list[Provenance]:
    return [p for sp in splits.values() for p in sp.provenance]


def provenance_notes(splits: Mapping, only_unverified: bool = False) -> str:
    """One admonition per distinct file set behind ``splits`` (dataset -> an object with a
    ``provenance`` tuple, such as :class:`..classify.Splits`); CIFAR-10's one archive serves
    both of its splits and is shown once."""
    seen, notes = set(), []
    for p in _provenances(splits):
        if (only_unverified and p.verified) or (p.dataset, p.sha256) in seen:
            continue
        seen.add((p.dataset, p.sha256))
        notes.append(provenance_admonition(p))
    return "\n".join(notes)


def provenance_lines(splits: Mapping) -> list[str]:
    """The run-record lines of every loaded file set (:meth:`Provenance.run_record`)."""
    return [run_record(p) for p in _provenances(splits)]


def data_note(splits: Mapping) -> str:
    """Prose: which datasets are unverified copies, or that both are verified."""
    unverified = sorted({p.dataset for p in _provenances(splits) if not p.verified})
    if unverified:
        return "an unverified copy of " + " and ".join(unverified)
    return "verified copies of both datasets"
