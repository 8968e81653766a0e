"""Checks on the built HTML book that a reader offline depends on.

A page may *link* anywhere (an ``<a href>`` to arXiv is a citation), but everything it
*loads* (scripts, stylesheets, images, fonts, frames) must come from the built site, and
the math renderer must be there (a classroom without network otherwise sees raw LaTeX), and
only the MathJax build the pages load (the others are megabytes no reader fetches).
And no figure's caption may start with a fragment of its image's alt text: the mark of an
``:alt:`` option written over two lines, whose second line MyST reads as the caption's title.

    python -m normbook.publish.sitecheck _build/smoke/site/_build/html
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
MIN_FRAGMENT = 8  # the shortest alt fragment (characters) a caption is said to repeat
SENTENCE_END = ".!?…:;)]\"'”’"  # an alt that ends in none of these stops mid-sentence
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "wbr"}


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


def caption_echoes_alt(alt: str, caption: str, legend: bool = False) -> bool:
    """Whether a figure's caption title (the text after "Figure n") starts with a fragment of
    its image's alt text: the caption is part of the alt, or begins with a trailing part of it
    (at a word boundary), or the alt stops mid-sentence and the caption reads as its rest (it
    starts in lower case, or the real caption follows it as a legend). The last is what an
    ``:alt:`` option continued on a second line renders as."""
    a, c = " ".join(alt.split()), " ".join(caption.split())
    if not a or not c:
        return False
    if len(c) >= MIN_FRAGMENT and c in a:
        return True
    words = a.split(" ")
    for k in range(len(words)):
        tail = " ".join(words[k:])
        if len(tail) >= MIN_FRAGMENT and (c == tail or c.startswith(tail + " ")):
            return True
    return a[-1] not in SENTENCE_END and (legend or c[0].islower())


def caption_message(figure: str, alt: str, caption: str) -> str:
    """The one-line problem for a figure whose caption starts with a fragment of its alt."""
    cap, alt = " ".join(caption.split()), " ".join(alt.split())
    return (f"figure {figure}: caption title '{cap[:50]}' is a piece of its alt text "
            f"'...{alt[-50:]}' (an :alt: over two lines? use a --- options block)")  # fmt: skip


class _Figures(HTMLParser):
    """Each ``<figure>``'s id, first image's alt, caption text and whether it has a legend."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.figures: list[dict] = []
        self._fig: dict | None = None
        self._depth = 0  # elements open inside the figure's span.caption-text

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "figure":
            self._fig, self._depth = {"id": a.get("id") or "", "alt": None, "caption": "",
                                      "legend": False}, 0  # fmt: skip
            self.figures.append(self._fig)
        elif self._fig is not None:
            if tag == "img" and self._fig["alt"] is None:
                self._fig["alt"] = a.get("alt") or ""
            self._fig["legend"] |= "legend" in classes
            if self._depth and tag not in VOID:
                self._depth += 1
            elif not self._depth and tag == "span" and "caption-text" in classes:
                self._depth = 1

    def handle_endtag(self, tag):
        if tag == "figure":
            self._fig, self._depth = None, 0
        elif self._depth and tag not in VOID:
            self._depth -= 1

    def handle_data(self, data):
        if self._fig is not None and self._depth:
            self._fig["caption"] += data


def caption_problems(html: str) -> list[str]:
    """A line for each figure of the page whose caption starts with a fragment of its alt."""
    p = _Figures()
    p.feed(html)
    return [caption_message(f["id"] or f"{i + 1}", f["alt"] or "", f["caption"])
            for i, f in enumerate(p.figures)
            if caption_echoes_alt(f["alt"] or "", f["caption"], f["legend"])]  # fmt: skip


def check_site(html_dir: Path) -> list[str]:
    """Every problem of the built site, one line each (empty: the site works offline and no
    caption repeats its figure's alt text)."""
    html_dir = Path(html_dir)
    pages = sorted(html_dir.rglob("*.html"))
    if not pages:
        return [f"{html_dir}: no HTML pages (build the book first: make book)"]
    problems = []
    if not (html_dir / MATHJAX).is_file():
        problems.append(f"{html_dir / MATHJAX}: missing (the offline MathJax extension)")
    loaded = set()  # the MathJax scripts the pages load
    for page in pages:
        html = page.read_text(encoding="utf-8", errors="replace")
        rel = page.relative_to(html_dir)
        problems += [f"{rel}: loads {u}" for u in external_loads(html)]
        problems += [f"{rel}: {line}" for line in caption_problems(html)]
        p = _Loads()
        p.feed(html)
        for src in (s for s in p.mathjax_src if not EXTERNAL.match(s)):
            target = (page.parent / src.split("?")[0]).resolve()
            loaded.add(target)
            if not target.is_file():
                problems.append(f"{rel}: MathJax script {src} does not exist in the site")
    mathjax = (html_dir / MATHJAX).parent
    unused = sorted(f.name for f in mathjax.glob("*.js") if f.resolve() not in loaded)
    if loaded and unused:
        problems.append(
            f"{mathjax}: MathJax builds no page loads: {', '.join(unused)} "
            "(normbook.publish.sphinx_offline.prune_mathjax deletes them)"
        )
    return problems


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        print("usage: python -m normbook.publish.sitecheck HTML_DIR", file=sys.stderr)
        return 2
    problems = check_site(Path(args[0]))
    for line in problems:
        print(f"[sitecheck] {line}", file=sys.stderr)
    n = len(list(Path(args[0]).rglob("*.html")))
    print(f"[sitecheck] {n} pages, {len(problems)} problems", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
