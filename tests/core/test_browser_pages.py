"""The browser check on tiny pages in headless Chromium: each page plants one defect a reader
would see (a caption that is a piece of the alt text, "nan" in a table cell, four progress
lines, a table wider than the text column that does not scroll, a verdict broken inside its
word, two search boxes) and must fail the check; the same page without it must pass. Skipped
where Chromium, its driver or selenium is missing."""

from __future__ import annotations

import importlib.util
import shutil

import pytest

from normbook.publish import browser

pytestmark = pytest.mark.skipif(
    not (shutil.which(browser.CHROMIUM) and shutil.which(browser.DRIVER))
    or importlib.util.find_spec("selenium") is None,
    reason="needs Debian's chromium and chromium-driver, and selenium",
)

# a 1 x 1 PNG, so the figure's image loads
PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8"
    "AAAAASUVORK5CYII="
)
# the theme's text column: 700 px of a 1280-px window
PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title><style>
body {{ margin: 0 }} article.bd-article {{ max-width: 700px; padding: 0 20px }}
</style></head><body><main role="main"><article class="bd-article">
<h1>A page</h1><p>Prose with <code>np.nan</code> in code and a quoted “n/a” as a word.</p>
<div class="cell docutils container"><div class="cell_input docutils container">
<pre>x = float("nan")  # n/a</pre></div></div>
{body}
</article></main></body></html>"""
ALT = "Mean prediction against index for both networks, with the target ramp and a rug of"


def _figure(alt: str, caption: str, legend: str = "") -> str:
    legend = f'<div class="legend"><p>{legend}</p></div>' if legend else ""
    return (f'<figure id="fig-a"><img alt="{alt}" src="{PNG}" width="200" height="100">'
            '<figcaption><p><span class="caption-number">Figure 4 </span><span '
            f'class="caption-text">{caption}</span></p>{legend}</figcaption></figure>')  # fmt: skip


def _output(text: str) -> str:
    return ('<div class="cell_output docutils container"><div class="output stream '
            f'highlight-myst-ansi"><div class="highlight"><pre><span></span>{text}</pre></div>'
            "</div></div>")  # fmt: skip


def _table(cell: str, width: str = "", scroll: bool = False) -> str:
    style = f' style="width: {width}"' if width else ""
    table = f"<table{style}><tr><th>seed</th><th>slope</th></tr><tr><td>0</td><td>{cell}</td>"
    table += "</tr></table>"
    return f'<div style="overflow-x: auto">{table}</div>' if scroll else table


@pytest.fixture(scope="module")
def driver():
    d = browser.chromium_driver()
    yield d
    d.quit()


def _problems(driver, tmp_path, body: str) -> list[str]:
    page = tmp_path / "page.html"
    page.write_text(PAGE.format(body=body), encoding="utf-8")
    return browser.check_page(driver, page, tmp_path, tmp_path / "shots").problems


def test_a_clean_page_passes(driver, tmp_path):
    body = (_figure(ALT + " localized indices.", "Fig. 1a reproduced.") + _table("0.12")
            + _table("0.3", width="1000px", scroll=True)
            + _output("\n".join(["evaluate: 8 in 00:00"] * 3)))  # fmt: skip
    assert _problems(driver, tmp_path, body) == []


def test_a_caption_that_is_a_piece_of_the_alt_fails(driver, tmp_path):
    body = _figure(ALT, "localized indices.", legend="Fig. 1a reproduced.")
    problems = _problems(driver, tmp_path, body)
    assert len(problems) == 1
    assert problems[0].startswith("figure fig-a: caption title 'localized indices.'")


def test_nan_in_a_table_cell_fails(driver, tmp_path):
    problems = _problems(driver, tmp_path, _table("nan"))
    assert len(problems) == 1 and problems[0].startswith("missing value in the text: 'nan'")


def test_n_a_in_a_cell_output_fails(driver, tmp_path):
    problems = _problems(driver, tmp_path, _output("interval [n/a, n/a]"))
    assert len(problems) == 1 and "'n/a' shown 2 time(s)" in problems[0]


def test_four_progress_lines_fail(driver, tmp_path):
    lines = ["train 4 networks in 2 stacks: 2 in 00:07"] + ["evaluate: 8 in 00:00"] * 3
    problems = _problems(driver, tmp_path, _output("\n".join(lines)))
    assert len(problems) == 1 and problems[0].startswith("4 progress lines (at most 3)")


def test_a_wide_table_that_does_not_scroll_fails(driver, tmp_path):
    # at 1280 px the page itself does not scroll sideways: only the new rule sees the table
    # (at 400 px the old one does too)
    problems = _problems(driver, tmp_path, _table("0.12", width="1000px"))
    assert problems[0].startswith("table 1 ('seed') is 1000 px wide, wider than the 700 px")
    assert [p for p in problems[1:] if "1280 px" in p or p.startswith("table")] == []


def _verdict_table(wrap: str) -> str:
    """A verdict column narrower than its word: 40 px for a bold "reproduced"."""
    return ('<table style="table-layout: fixed; width: 300px"><thead><tr><th style="width: 40px">'
            f'verdict</th><th>claim</th></tr></thead><tbody><tr><td style="overflow-wrap: {wrap}">'
            "<strong>reproduced</strong></td><td>a claim</td></tr></tbody></table>")  # fmt: skip


def test_a_verdict_broken_inside_its_word_fails(driver, tmp_path):
    problems = _problems(driver, tmp_path, _verdict_table("anywhere"))
    assert problems == [
        "table 1: the word 'reproduced' is broken across two lines (a cell that wraps inside "
        "words: overflow-wrap: anywhere)"]  # fmt: skip
    # wrapped only between words, the word runs past its narrow cell but stays whole
    assert _problems(driver, tmp_path, _verdict_table("normal")) == []


def test_two_search_boxes_in_sight_fail(driver, tmp_path):
    button = '<button class="search-button__button">Search</button>'
    dialog = '<dialog><form class="bd-search"><input type="search"></form></dialog>'  # closed
    assert _problems(driver, tmp_path, dialog + button) == []
    assert _problems(driver, tmp_path, dialog + button * 2) == [
        "2 search boxes in sight at 1280 px (one expected)",
        "2 search boxes in sight at 400 px (one expected)",
    ]
