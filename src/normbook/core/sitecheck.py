"""Checks on the built HTML book that a reader offline depends on.

A page may *link* anywhere (an ``<a href>`` to arXiv is a citation), but everything it
*loads* (scripts, stylesheets, images, fonts, frames) must come from the built site, and
the math renderer must be there: a classroom without network otherwise sees raw LaTeX.

    python -m normbook.core.sitecheck _build/smoke/site/_build/html
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

# (tag, attribute) pairs whose URL the browser fetches when it renders the page
LOADED = {
    ("script", "src"),
    ("img", "src"),
    ("iframe", "src"),
    ("source", "src"),
    ("audio", "src"),
    ("video", "src"),
    ("embed", "src"),
    ("object", "data"),
}
LINK_LOADS = {"stylesheet", "preload", "modulepreload", "icon", "manifest", "prefetch"}
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.I)  # http://, https://, //host
# a URL inside inline script or style text (what a loader would fetch at run time)
INLINE_URL = re.compile(r"""(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^\s"')]*""", re.I)
MATHJAX = "_static/mathjax/tex-chtml.js"


class _Loads(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []
        self.mathjax_src: list[str] = []
        self._inline = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "link" and LINK_LOADS & set((a.get("rel") or "").lower().split()):
            self.urls.append(a.get("href") or "")
        for t, attr in LOADED:
            if tag == t and a.get(attr):
                self.urls.append(a[attr])
        if tag == "script" and "mathjax" in (a.get("src") or "").lower():
            self.mathjax_src.append(a["src"])
        self._inline = tag in ("script", "style") and not a.get("src")

    def handle_endtag(self, tag):
        self._inline = False

    def handle_data(self, data):
        if self._inline:
            self.urls += INLINE_URL.findall(data)


def external_loads(html: str) -> list[str]:
    """The URLs a page would fetch from another host when it renders."""
    p = _Loads()
    p.feed(html)
    return sorted({u for u in p.urls if EXTERNAL.match(u)})


def check_site(html_dir: Path) -> list[str]:
    """Every problem of the built site, one line each (empty: the site works offline)."""
    html_dir = Path(html_dir)
    pages = sorted(html_dir.rglob("*.html"))
    if not pages:
        return [f"{html_dir}: no HTML pages (build the book first: make book)"]
    problems = []
    if not (html_dir / MATHJAX).is_file():
        problems.append(f"{html_dir / MATHJAX}: missing (the offline MathJax extension)")
    for page in pages:
        html = page.read_text(encoding="utf-8", errors="replace")
        rel = page.relative_to(html_dir)
        problems += [f"{rel}: loads {u}" for u in external_loads(html)]
        p = _Loads()
        p.feed(html)
        for src in (s for s in p.mathjax_src if not EXTERNAL.match(s)):
            target = (page.parent / src.split("?")[0]).resolve()
            if not target.is_file():
                problems.append(f"{rel}: MathJax script {src} does not exist in the site")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        print("usage: python -m normbook.core.sitecheck HTML_DIR", file=sys.stderr)
        return 2
    problems = check_site(Path(args[0]))
    for line in problems:
        print(f"[sitecheck] {line}", file=sys.stderr)
    n = len(list(Path(args[0]).rglob("*.html")))
    print(f"[sitecheck] {n} pages, {len(problems)} problems", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
