"""The README's picture: chapter A1's glued figure ``fig-a1-fig1a`` (paper A's Fig. 1a
reproduced), copied from the executed notebook of the last ``make book``, never drawn by hand.

    python -m normbook.tools.readme_figure [--profile cpu] [--figure fig-a1-fig1a]
"""

from __future__ import annotations

import argparse
import base64
import io
import json
from pathlib import Path

from normbook.publish.project import ROOT, build_dir

OUT = ROOT / "docs" / "figure.png"
MIME = "application/papermill.record/image/png"


def glued_png(notebook: Path, name: str) -> bytes:
    """The PNG glued under ``name`` in an executed notebook."""
    for cell in json.loads(notebook.read_text())["cells"]:
        for out in cell.get("outputs", []):
            if out.get("metadata", {}).get("scrapbook", {}).get("name") == name and MIME in out.get(
                "data", {}
            ):
                return base64.b64decode(out["data"][MIME])
    raise SystemExit(f"error: no figure {name!r} in {notebook} (run `make book` first)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--figure", default="fig-a1-fig1a")
    ap.add_argument("--width", type=int, default=665, help="pixels (the page's display width)")
    args = ap.parse_args(argv)
    nb = build_dir(args.profile) / "executed" / "book" / "a1_localization.ipynb"
    if not nb.is_file():
        raise SystemExit(f"error: {nb} does not exist (run `make book PROFILE={args.profile}`)")
    from PIL import Image

    image = Image.open(io.BytesIO(glued_png(nb, args.figure)))
    # the page shows it at its glued size; the stored PNG has twice the pixels (HiDPI)
    image.thumbnail((args.width, args.width * image.height // image.width))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    tmp = OUT.with_suffix(".tmp.png")
    image.save(tmp, optimize=True)
    tmp.replace(OUT)
    print(f"[readme-figure] {args.figure} of {nb.name} -> {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
