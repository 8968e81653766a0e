"""``python -m normbook.tools.pins CACHE``: did the kernels' pins reach every process that
computed? Every entry of a cache records the switches of the process that computed it
(``computed_by.flags``, :func:`normbook.runtime.devices.provenance`); a build run under the
Makefile's pins (``make pins``) must show them in every entry, whether a chapter's kernel or
one of its workers computed it. ``make test`` checks the smoke build's cache.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from normbook.runtime.devices import ISA_FLAGS


def expected() -> dict[str, str]:
    """The pins in this process's environment (what make exported)."""
    return {k: os.environ[k] for k in ISA_FLAGS if k in os.environ}


def unpinned(cache: Path, pins: dict[str, str]) -> list[str]:
    """The entries of ``cache`` whose computing process lacked one of ``pins`` (kind/key)."""
    bad = []
    for meta in sorted(cache.glob("*/*/meta.json")):
        flags = json.loads(meta.read_text()).get("computed_by", {}).get("flags", {})
        if any(flags.get(k) != v for k, v in pins.items()):
            bad.append(f"{meta.parent.parent.name}/{meta.parent.name}")
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m normbook.tools.pins", description=__doc__)
    ap.add_argument("cache", type=Path)
    a = ap.parse_args(argv)
    n = len(list(a.cache.glob("*/*/meta.json")))
    if not n:
        print(f"error: no cache entries under {a.cache}", file=sys.stderr)
        return 2
    pins = expected()
    bad = unpinned(a.cache, pins)
    if bad:
        print(f"error: {len(bad)} of {n} entries were computed without the pins {pins}, e.g. "
              f"{bad[0]}", file=sys.stderr)  # fmt: skip
        return 1
    what = ", ".join(f"{k}={v}" for k, v in pins.items()) or "no pins (ISA=native)"
    print(f"[pins] all {n} entries of {a.cache} computed with {what}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
