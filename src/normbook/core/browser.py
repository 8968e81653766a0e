"""Open every page of a built book in headless Chromium, as a reader would, and report what
a reader would see broken.

    python -m normbook.core.browser _build/smoke/site/_build/html

Per page, at a 1280-px-wide window: console errors (a script that failed, a resource that did
not load), raw TeX delimiters left in the visible text (math that did not render), internal
links to a missing file or anchor, images that did not load, and a horizontal scrollbar on the
page body; then at 400 px (a phone), a horizontal scrollbar again. Two screenshots per page
(``<page>.png``, ``<page>.phone.png``) go to ``<html>/../screenshots/``. Needs Debian's
``chromium`` and ``chromium-driver`` (``.ci/run`` installs them when missing) and selenium.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

WIDTH, HEIGHT = 1280, 1000
PHONE = 400  # a phone's width: the page must still fit it, with no sideways scrolling
CHROMIUM, DRIVER = "chromium", "chromedriver"
# \( ... \) and \[ ... \] (MathJax's delimiters) or $$ left in the text a reader sees
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$")
REDIRECT = re.compile(r'http-equiv="refresh"\s+content="\d+;\s*url=([^"]+)"', re.I)
SETTLE_S = 20.0  # the longest a page may take to finish typesetting its math


@dataclass
class PageReport:
    page: str
    problems: list[str] = field(default_factory=list)


def raw_tex(text: str) -> list[str]:
    """Snippets of visible text that still contain TeX delimiters."""
    return [text[max(0, m.start() - 30) : m.end() + 30].replace("\n", " ")
            for m in RAW_TEX.finditer(text)]  # fmt: skip


def broken_links(page: Path, hrefs: list[str], root: Path) -> list[str]:
    """Internal links of ``page`` whose file, or whose #anchor in that file, does not exist."""
    bad, ids = [], {}
    for href in hrefs:
        url = urlparse(href)
        if url.scheme not in ("", "file") or href.startswith(("mailto:", "javascript:")):
            continue  # another host: a citation, not part of the site
        path = unquote(url.path)
        target = page if not path else (
            Path(path) if url.scheme == "file" else (page.parent / path)
        ).resolve()  # fmt: skip
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            bad.append(f"link to a missing file: {href}")
            continue
        if url.fragment and target.suffix == ".html":
            if target not in ids:
                html = target.read_text(encoding="utf-8", errors="replace")
                ids[target] = set(re.findall(r'\bid="([^"]+)"', html))
            if unquote(url.fragment) not in ids[target]:
                bad.append(f"link to a missing anchor: {href}")
    return sorted(set(bad))


def _driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which(CHROMIUM) or CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={WIDTH},{HEIGHT}", "--allow-file-access-from-files"):  # fmt: skip
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # an explicit driver path: selenium's own driver manager would try the network
    return webdriver.Chrome(service=Service(shutil.which(DRIVER) or DRIVER), options=opts)


_STATE = r"""
const body = document.body, root = document.documentElement;
return {
  text: body ? body.innerText : "",
  hrefs: Array.from(document.querySelectorAll("a[href]")).map(a => a.getAttribute("href")),
  images: Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))
                .map(i => i.getAttribute("src")),
  overflow: Math.max(root.scrollWidth, body ? body.scrollWidth : 0) - root.clientWidth,
  widest: widest(),
  mathjax: !!window.MathJax,
};
function widest() {
  // the element that sticks out furthest on the right, outside any scrolling box
  const limit = document.documentElement.clientWidth + 1;
  let worst = null, right = limit;
  for (const el of document.body ? document.body.querySelectorAll("*") : []) {
    const r = el.getBoundingClientRect();
    if (r.right <= right || r.width === 0 || getComputedStyle(el).position === "fixed") continue;
    let clipped = false;
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (getComputedStyle(p).overflowX !== "visible") { clipped = true; break; }
    }
    if (!clipped) { worst = el; right = r.right; }
  }
  if (!worst) return "";
  const cls = typeof worst.className === "string" && worst.className ? "." +
      worst.className.trim().split(/\s+/).join(".") : "";
  return worst.tagName.toLowerCase() + cls;
}
"""


def check_page(driver, page: Path, root: Path, shots: Path) -> PageReport:
    """Load one page, wait for its math, and report what is broken."""
    rel = str(page.relative_to(root))
    refresh = REDIRECT.search(page.read_text(encoding="utf-8", errors="replace"))
    if refresh:  # a redirect stub (the site's index.html): its target must exist
        return PageReport(rel, broken_links(page, [refresh.group(1)], root))
    driver.get(page.resolve().as_uri())
    deadline = time.time() + SETTLE_S
    state = driver.execute_script(_STATE)
    while state["mathjax"] and raw_tex(state["text"]) and time.time() < deadline:
        time.sleep(0.25)
        state = driver.execute_script(_STATE)
    report = PageReport(rel)
    for entry in driver.get_log("browser"):
        if entry.get("level") == "SEVERE":
            report.problems.append(f"console error: {entry.get('message', '')[:200]}")
    report.problems += [f"raw TeX in the text: ...{s}..." for s in raw_tex(state["text"])]
    report.problems += broken_links(page, state["hrefs"], root)
    report.problems += [f"image did not load: {src}" for src in state["images"]]
    shots.mkdir(parents=True, exist_ok=True)
    name = rel.replace("/", "__").removesuffix(".html")
    for width in (WIDTH, PHONE):
        if width != WIDTH:
            driver.set_window_size(width, HEIGHT)
            time.sleep(0.3)  # let the theme re-lay the page out
            state = driver.execute_script(_STATE)
        if state["overflow"] > 1:
            report.problems.append(
                f"horizontal scrollbar at {width} px: the page is {state['overflow']} px too "
                f"wide (widest: {state['widest'] or '?'})"
            )
        driver.save_screenshot(str(shots / f"{name}{'' if width == WIDTH else '.phone'}.png"))
    driver.set_window_size(WIDTH, HEIGHT)
    return report


def pages(html_dir: Path) -> list[Path]:
    """The book's pages (Sphinx's search and index pages left out)."""
    skip = {"search.html", "genindex.html", "py-modindex.html"}
    return sorted(p for p in html_dir.rglob("*.html")
                  if p.name not in skip and "_static" not in p.parts)  # fmt: skip


def check_site(html_dir: Path) -> list[PageReport]:
    html_dir = Path(html_dir).resolve()
    shots = html_dir.parent / "screenshots"
    driver = _driver()
    try:
        return [check_page(driver, p, html_dir, shots) for p in pages(html_dir)]
    finally:
        driver.quit()


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        print("usage: python -m normbook.core.browser HTML_DIR", file=sys.stderr)
        return 2
    missing = [b for b in (CHROMIUM, DRIVER) if not shutil.which(b)]
    if missing:
        print(f"[browser] {', '.join(missing)} not found: install Debian's chromium and "
              "chromium-driver (apt-get install chromium chromium-driver)",
              file=sys.stderr)  # fmt: skip
        return 2
    reports = check_site(Path(args[0]))
    bad = [r for r in reports if r.problems]
    for r in bad:
        for p in r.problems:
            print(f"[browser] {r.page}: {p}", file=sys.stderr)
    print(f"[browser] {len(reports)} pages opened in Chromium at {WIDTH} and {PHONE} px, "
          f"{len(bad)} with problems; screenshots in "
          f"{Path(args[0]).resolve().parent / 'screenshots'}", flush=True)  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
