"""Open every page of a built book in headless Chromium, as a reader would, and report what
a reader would see broken.

    python -m normbook.publish.browser _build/smoke/site/_build/html

Per page, at a 1280-px-wide window: console errors (a script that failed, a resource that did
not load), raw TeX delimiters left in the visible text (math that did not render), internal
links to a missing file or anchor, images that did not load, a horizontal scrollbar on the
page body, a figure caption that is a piece of its alt text, a table wider than the text column
that does not scroll, a bold word in a table cell (a verdict) broken across lines, "nan" or
"n/a" shown as a value, more than 3 progress lines, and other than one search box in sight;
then at 400 px (a phone), a horizontal scrollbar and the search boxes again. Two screenshots
per page (``<page>.png``, ``<page>.phone.png``) go to ``<html>/../screenshots/``. Needs Debian's
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

from normbook.publish import browser_code, browser_ledger, browser_live, sitecheck

WIDTH, HEIGHT = 1280, 1000
PHONE = 400  # a phone's width: the page must still fit it, with no sideways scrolling
CHROMIUM, DRIVER = "chromium", "chromedriver"
# \( ... \) and \[ ... \] (MathJax's delimiters) or $$ left in the text a reader sees
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$")
REDIRECT = re.compile(r'http-equiv="refresh"\s+content="\d+;\s*url=([^"]+)"', re.I)
SETTLE_S = 20.0  # the longest a page may take to finish typesetting its math
VIEW_S = 20.0  # the longest an explorable view may take to draw (its bundle loaded first)
# What one page may load (its HTML, scripts, styles and images; the Vega bundle, 0.9 MB, once a
# view is opened). Measured at smoke: the heaviest page, chapter A3, 5.6 MB with its view open.
PAGE_BUDGET_BYTES = 8_000_000
# a value that was never computed, shown as text: "nan" and "n/a" as whole words (in quotes,
# prose naming the word, as the ledger's key does, is not a value)
MISSING = re.compile(r"(?<![\w./“\"'‘])(?:nan|n/a)(?![\w/”\"'’])")
# a summary line of `normbook.runtime.progress` ("evaluate: 8 in 00:00", "fit probes: 4 of 5 in
# 1:02:03", without tqdm "train: 20 in 83 s"); a few explain a run, a page of them is a log
PROGRESS = re.compile(r"^[^\S\n]*\S[^\n]*?: \d+(?: of \d+)?(?: [a-z]+)? in "
                      r"(?:(?:\d+:)?\d{1,2}:\d{2}|\d+ s)[^\S\n]*$", re.M)  # fmt: skip
MAX_PROGRESS = 3  # progress lines one page may show
SKIP = {"search.html", "genindex.html", "py-modindex.html"}  # Sphinx's own pages: not the book's


@dataclass
class PageReport:
    page: str
    problems: list[str] = field(default_factory=list)
    weight: int = 0  # bytes the page loaded, views opened
    load_ms: float = 0.0  # navigation start to the load event
    views: int = 0  # explorable views driven
    controls: int = 0  # their controls moved, each shown to change its view
    live: list = field(default_factory=list)  # live views' timings (ms): first, slowest update


def raw_tex(text: str) -> list[str]:
    """Snippets of visible text that still contain TeX delimiters."""
    return [text[max(0, m.start() - 30) : m.end() + 30].replace("\n", " ")
            for m in RAW_TEX.finditer(text)]  # fmt: skip


def missing_values(text: str) -> list[str]:
    """One line per word of ``MISSING`` in ``text``: how often, and where first."""
    found: dict[str, list[re.Match]] = {}
    for m in MISSING.finditer(text):
        found.setdefault(m.group(), []).append(m)
    return [f"'{w}' shown {len(ms)} time(s), first: ..."
            + text[max(0, ms[0].start() - 40) : ms[0].end() + 20].replace("\n", " ") + "..."
            for w, ms in found.items()]  # fmt: skip


def progress_lines(text: str) -> list[str]:
    """The progress summary lines in ``text``."""
    return [m.group().strip() for m in PROGRESS.finditer(text)]


def content_problems(content: dict) -> list[str]:
    """What ``_CONTENT`` read from a page at 1280 px says is wrong: captions that are a piece of
    their alt text, tables wider than the text column outside a scrolling box, bold words in
    table cells broken across lines, "nan" / "n/a" in the text a reader sees, more than
    ``MAX_PROGRESS`` progress lines."""
    out = [sitecheck.caption_message(fid or str(i + 1), alt, cap)
           for i, (fid, alt, cap, legend) in enumerate(content["figures"])
           if sitecheck.caption_echoes_alt(alt, cap, legend)]  # fmt: skip
    for n, label, width, column, spills, scrolls in content["tables"]:
        if (spills or width > column + 1) and not scrolls:
            out.append(f"table {n} ('{label}') is {width} px wide, wider than the {column} px "
                       "text column, and does not scroll: it spills or is cut off")  # fmt: skip
    for n, word in content["broken"]:
        out.append(f"table {n}: the word '{word}' is broken across two lines (a cell that "
                   "wraps inside words: overflow-wrap: anywhere)")  # fmt: skip
    out += [f"missing value in the text: {m}" for m in missing_values(content["text"])]
    lines = progress_lines(content["text"])
    if len(lines) > MAX_PROGRESS:
        out.append(f"{len(lines)} progress lines (at most {MAX_PROGRESS}): "
                   + "; ".join(lines[:MAX_PROGRESS + 1]) + "; ...")  # fmt: skip
    return out


def search_problems(searches: list[int], width: int) -> list[str]:
    """One search box in sight at ``width`` where the page has any: ``searches`` is [the
    theme's search fields and buttons in the page, those in sight] (``_STATE``)."""
    present, seen = searches
    if present and seen != 1:
        return [f"{seen} search boxes in sight at {width} px (one expected)"]
    return []


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


def chromium_driver():
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
  searches: searches(),
};
function searches() {
  // the theme's search fields and buttons: [in the page, in sight] (its dialog stays closed)
  const all = Array.from(document.querySelectorAll(".search-button__button, form.bd-search"));
  const seen = all.filter(e => e.checkVisibility({checkVisibilityCSS: true}) &&
                               e.getBoundingClientRect().width > 0);
  return [all.length, seen.length];
}
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


# Figures [id, alt, caption text, has a legend]; tables [n, label, width, text column width,
# sticks out of the column, inside a horizontally scrolling box]; bold words of table cells (the
# verdicts) that a line break cuts [table n, word]; the text a reader sees or can unfold (closed
# dropdowns included), without code-cell inputs and source code outside outputs.
_CONTENT = r"""
const col = ["article.bd-article", "[role=main]", "main", "body"]  // the first that exists
    .map(s => document.querySelector(s)).find(e => e);
const cs = getComputedStyle(col), box = col.getBoundingClientRect();
const left = box.left + parseFloat(cs.paddingLeft), right = box.right - parseFloat(cs.paddingRight);
const scrolls = t => {
  for (let p = t.parentElement; p; p = p === col ? null : p.parentElement)
    if (["auto", "scroll"].includes(getComputedStyle(p).overflowX)) return true;
  return false;
};
const figures = Array.from(document.querySelectorAll("figure")).map(f => {
  const img = f.querySelector("img"), cap = f.querySelector("figcaption .caption-text");
  return [f.id, img ? img.getAttribute("alt") || "" : "", cap ? cap.textContent : "",
          !!f.querySelector("figcaption .legend")];
});
const tables = Array.from(col.querySelectorAll("table")).map((t, i) => {
  const r = t.getBoundingClientRect(), head = t.querySelector("caption, th, td");
  return [i + 1, head ? head.textContent.trim().slice(0, 40) : "", Math.round(r.width),
          Math.round(right - left), r.right > right + 1 || r.left < left - 1, scrolls(t)];
});
// a word whose letters lie on two lines ("reproduce" / "d"): its range has two line boxes
const broken = [];
Array.from(col.querySelectorAll("table")).forEach((t, i) => {
  for (const b of t.querySelectorAll("td strong, td b")) {
    const walk = document.createTreeWalker(b, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      for (const m of n.data.matchAll(/\p{L}{2,}/gu)) {
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        const tops = new Set(Array.from(r.getClientRects()).filter(q => q.width > 0)
                             .map(q => Math.round(q.top)));
        if (tops.size > 1) broken.push([i + 1, m[0]]);
      }
    }
  }
});
const SKIP = "script, style, noscript, template, .cell_input, a.headerlink";
const SOURCE = "pre, code, div[class*=highlight-]";  // source, unless it is a cell's output
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT |
    NodeFilter.SHOW_TEXT, {acceptNode: n => n.nodeType === 3 ? NodeFilter.FILTER_ACCEPT :
      n.matches(SKIP) || (n.matches(SOURCE) && !n.closest(".cell_output")) ?
      NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP});
let text = "", last = null;
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const el = n.parentElement;
  if (!el.checkVisibility() && !el.closest("details, .dropdown, .toggle-hidden")) continue;
  let block = el;  // text nodes of one block run on; another block starts a line
  while (block.parentElement && getComputedStyle(block).display.startsWith("inline"))
    block = block.parentElement;
  if (block !== last) { text += "\n"; last = block; }
  text += n.data;
}
return {figures: figures, tables: tables, broken: broken, text: text};
"""


_OPEN_VIEWS = r"""
const views = Array.from(document.querySelectorAll("details.nb-view"));
views.forEach(d => { d.open = true; });
return views.length;
"""
_VIEW_STATES = r"""
return Array.from(document.querySelectorAll("details.nb-view")).map(d => d.dataset.state || "");
"""
# Move control ``c`` of view ``v`` to another value; return its name (or null: no such control).
_MOVE = r"""
const [v, c] = arguments;
const d = document.querySelectorAll("details.nb-view")[v];
const bind = d.querySelectorAll(".vega-bind")[c];
if (!bind) return null;
const name = (bind.querySelector(".vega-bind-name") || bind).textContent.trim();
const range = bind.querySelector("input[type=range]");
const select = bind.querySelector("select");
const radios = Array.from(bind.querySelectorAll("input[type=radio]"));
if ((range && Number(range.min) === Number(range.max)) || (select && select.options.length < 2) ||
    (!range && !select && radios.length < 2)) return "";  // one value: nothing to move
if (range) {
  range.value = Number(range.value) === Number(range.min) ? range.max : range.min;
  range.dispatchEvent(new Event("input", {bubbles: true}));
} else if (select) {
  select.selectedIndex = (select.selectedIndex + 1) % select.options.length;
  select.dispatchEvent(new Event("change", {bubbles: true}));
} else if (radios.length) {
  radios.find(r => !r.checked).click();
}
d.scrollIntoView();
return name;
"""
_VIEW_SVG = r"""
const svg = document.querySelectorAll("details.nb-view")[arguments[0]].querySelector("svg");
return svg ? svg.outerHTML : "";
"""
# Chromium keeps no resource timings for file:// pages: what the page loaded is read from its
# DOM (the page, its scripts, including the Vega bundle added when a view opens, stylesheets
# and images; fonts named inside stylesheets are not counted).
_WEIGHT = r"""
const nav = performance.getEntriesByType("navigation")[0];
const urls = [location.href,
  ...Array.from(document.scripts).filter(e => e.src).map(e => e.src),
  ...Array.from(document.querySelectorAll("link[rel=stylesheet]")).map(e => e.href),
  ...Array.from(document.images).map(e => e.currentSrc || e.src)];
return {urls: urls, load_ms: nav ? nav.loadEventEnd - nav.startTime : 0};
"""


def page_weight(urls: list[str]) -> int:
    """Bytes of every local file among ``urls`` (each counted once)."""
    files = {Path(unquote(urlparse(u).path)) for u in urls if urlparse(u).scheme == "file"}
    return sum(f.stat().st_size for f in files if f.is_file())


def drive_views(driver, report: PageReport, shots: Path, name: str) -> None:
    """Open every explorable view of the loaded page, wait for it to draw, then move each of
    its controls and require the drawing to change; screenshots before and after."""
    report.views = driver.execute_script(_OPEN_VIEWS)
    if not report.views:
        return
    deadline = time.time() + VIEW_S
    states = driver.execute_script(_VIEW_STATES)
    while any(s in ("", "loading") for s in states) and time.time() < deadline:
        time.sleep(0.1)
        states = driver.execute_script(_VIEW_STATES)
    for v, state in enumerate(states):
        if state != "rendered":
            report.problems.append(f"explorable view {v + 1} not drawn (state {state or 'none'})")
            continue
        for c in range(20):
            before = driver.execute_script(_VIEW_SVG, v)
            if c == 0:
                driver.save_screenshot(str(shots / f"{name}.view{v + 1}.before.png"))
            control = driver.execute_script(_MOVE, v, c)
            if control is None:
                break
            if control == "":
                continue
            changed, until = False, time.time() + 3.0
            while not changed and time.time() < until:
                time.sleep(0.05)
                changed = driver.execute_script(_VIEW_SVG, v) != before
            if not changed:
                report.problems.append(
                    f"explorable view {v + 1}: moving its control '{control}' did not change it"
                )
            report.controls += 1
            driver.save_screenshot(str(shots / f"{name}.view{v + 1}.after{c + 1}.png"))


# The drawing a sweep view shows now (its visible point's), and moving its point slider.
_SWEEP_SVG = r"""
const c = document.querySelectorAll(".nb-sweep-view")[arguments[0]];
const p = Array.from(c.querySelectorAll(".nb-sweep-point")).find(e => !e.hidden);
const svg = p && p.querySelector("svg");
return svg ? svg.outerHTML : "";
"""
_SWEEP_MOVE = r"""
const c = document.querySelectorAll(".nb-sweep-view")[arguments[0]];
const s = c && c.querySelector("input.nb-sweep-slider");
if (!s) return false;
s.value = Number(s.value) === Number(s.max) ? s.min : s.max;
s.dispatchEvent(new Event("input", {bubbles: true}));
return true;
"""


def drive_sweeps(driver, report: PageReport) -> None:
    """On a sweep page: each view's point slider must show another point's drawing."""
    n = driver.execute_script("return document.querySelectorAll('.nb-sweep-view').length")
    for v in range(n):
        before = driver.execute_script(_SWEEP_SVG, v)
        if not driver.execute_script(_SWEEP_MOVE, v):
            report.problems.append(f"sweep view {v + 1} has no point slider")
            continue
        report.controls += 1
        after, until = before, time.time() + VIEW_S
        while (after == before or not after) and time.time() < until:
            time.sleep(0.1)
            after = driver.execute_script(_SWEEP_SVG, v)
        if after == before or not after:
            report.problems.append(f"sweep view {v + 1}: its point slider did not change it")


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
    report.problems += content_problems(driver.execute_script(_CONTENT))
    shots.mkdir(parents=True, exist_ok=True)
    name = rel.replace("/", "__").removesuffix(".html")
    drive_views(driver, report, shots, name)
    drive_sweeps(driver, report)
    browser_live.drive_live(driver, report)
    browser_ledger.drive_ledger(driver, report)
    for entry in driver.get_log("browser"):  # a view or control that raised
        if entry.get("level") == "SEVERE":
            report.problems.append(f"console error: {entry.get('message', '')[:200]}")
    loaded = driver.execute_script(_WEIGHT)
    report.weight, report.load_ms = page_weight(loaded["urls"]), float(loaded["load_ms"])
    if report.weight > PAGE_BUDGET_BYTES:
        report.problems.append(
            f"page weight {report.weight / 1e6:.1f} MB over the {PAGE_BUDGET_BYTES / 1e6:.0f} MB "
            "budget"
        )
    driver.execute_script("window.scrollTo(0, 0)")
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
        report.problems += search_problems(state["searches"], width)
        driver.save_screenshot(str(shots / f"{name}{'' if width == WIDTH else '.phone'}.png"))
    driver.set_window_size(WIDTH, HEIGHT)
    browser_code.drive_code_links(driver, report, rel)  # last: it leaves the page
    return report


def pages(top: Path) -> list[Path]:
    """The book's pages under ``top`` (Sphinx's search and index pages left out)."""
    return sorted(p for p in top.rglob("*.html") if p.name not in SKIP and "_static" not in p.parts)


def check_site(html_dir: Path) -> list[PageReport]:
    html_dir = Path(html_dir).resolve()
    shots = html_dir.parent / "screenshots"
    driver = chromium_driver()
    try:
        return [check_page(driver, p, html_dir, shots) for p in pages(html_dir)]
    finally:
        driver.quit()


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        print("usage: python -m normbook.publish.browser HTML_DIR", file=sys.stderr)
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
    heaviest = max(reports, key=lambda r: r.weight)
    slowest = max(reports, key=lambda r: r.load_ms)
    print(f"[browser] {sum(r.views for r in reports)} explorable views opened, "
          f"{sum(r.controls for r in reports)} controls moved (views, sweeps, the ledger); "
          f"heaviest page "
          f"{heaviest.page} {heaviest.weight / 1e6:.2f} MB (budget "
          f"{PAGE_BUDGET_BYTES / 1e6:.0f} MB), slowest load {slowest.page} "
          f"{slowest.load_ms:.0f} ms", flush=True)  # fmt: skip
    live = [t for r in reports for t in r.live]
    if live:
        print(
            f"[browser] {len(live)} live views run, each checked against PyTorch: first "
            f"result after {max(t['first'] for t in live):.0f} ms at most, the slowest update "
            f"{max(t['update'] or 0 for t in live):.0f} ms",
            flush=True,
        )
    print(f"[browser] {len(reports)} pages opened in Chromium at {WIDTH} and {PHONE} px, "
          f"{len(bad)} with problems; screenshots in "
          f"{Path(args[0]).resolve().parent / 'screenshots'}", flush=True)  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
