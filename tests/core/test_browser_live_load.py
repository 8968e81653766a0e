"""A live view whose script never loads, in headless Chromium and the real check (nothing
monkeypatched): the page says so in the view, the check reports it as that view's problem
without waiting out a timeout, and goes on, to the page's other view, the rest of the page
and the next page. A view that loads but never answers is given up after its bounded wait, and
the check goes on as well. Skipped where Chromium, its driver or selenium is missing."""

from __future__ import annotations

import importlib.util
import shutil

import pytest

from normbook.pages.live import LiveView
from normbook.pages.views import write_bundle
from normbook.publish import browser, browser_live
from normbook.publish.project import ROOT

pytestmark = pytest.mark.skipif(
    not (shutil.which(browser.CHROMIUM) and shutil.which(browser.DRIVER))
    or importlib.util.find_spec("selenium") is None,
    reason="needs Debian's chromium and chromium-driver, and selenium",
)

HEAD = '<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title>'


def _site(html, missing: str) -> None:
    """Two pages: one with two live views and a block too wide for a phone (a problem the
    check finds only after the live views), one plain; ``missing`` left out of _static."""
    static = html / "_static"
    static.mkdir(parents=True)
    for name in ("views.js", "live.js"):
        shutil.copy(ROOT / "book" / "_static" / name, static / name)
    write_bundle(static)
    (static / missing).unlink()
    views = "".join(LiveView(n, {"nets": []}, f"view {n}")._repr_html_() for n in ("a", "b"))
    (html / "live.html").write_text(
        f'{HEAD}<script src="_static/views.js"></script></head><body><h1>Live</h1>{views}'
        '<div style="width: 600px">wider than a phone</div></body></html>',
        encoding="utf-8",
    )
    (html / "plain.html").write_text(f"{HEAD}</head><body><p>plain</p></body></html>")


@pytest.mark.parametrize("missing", ["live.js", "vega-bundle.js"])
def test_a_live_view_whose_script_is_missing_is_its_problem(tmp_path, missing):
    html = tmp_path / "html"
    _site(html, missing)
    reports = {r.page: r for r in browser.check_site(html)}
    assert sorted(reports) == ["live.html", "plain.html"]  # the next page was checked
    assert reports["plain.html"].problems == []
    problems = reports["live.html"].problems
    for v in (1, 2):  # each view, the second after the first failed
        assert [p for p in problems if p.startswith(f"live view {v} ")] == [
            f"live view {v} did not run (failed: could not load "
            f"{(html / '_static' / missing).as_uri()})"
        ]
    assert not [p for p in problems if "Uncaught" in p]  # the page handled its failure
    assert any(p.startswith("horizontal scrollbar at 400 px") for p in problems)  # page went on
    assert reports["live.html"].live == []  # a view that did not run has no timings
    shot = tmp_path / "screenshots" / "live.phone.png"
    assert shot.is_file()  # the page's last screenshot: the check finished it


def test_the_reader_is_told_the_view_did_not_load(tmp_path):
    html = tmp_path / "html"
    _site(html, "live.js")
    driver = browser.chromium_driver()
    try:
        driver.get((html / "live.html").as_uri())
        problems, timings = browser_live.check_view(driver, 0)
        shown = driver.execute_script(
            "return document.querySelector('details.nb-live .nb-live-body').innerText"
        )
    finally:
        driver.quit()
    assert problems[0].startswith("live view 1 did not run (failed: could not load") and not timings
    assert shown.startswith("This view could not run (could not load ") and "live.js" in shown


def test_a_live_view_that_never_answers_is_its_problem(tmp_path, monkeypatch):
    # the runtime loads but its first drawing never comes: each view's step is given up after
    # SCRIPT_S (shortened here; a never-settling promise times out however fast the machine)
    monkeypatch.setattr(browser_live, "SCRIPT_S", 2.0)
    html = tmp_path / "html"
    _site(html, "live.js")
    (html / "_static" / "live.js").write_text(
        "window.normbookLive = {mount: function () { return new Promise(function () {}); }};"
    )
    reports = {r.page: r for r in browser.check_site(html)}
    assert sorted(reports) == ["live.html", "plain.html"] and reports["plain.html"].problems == []
    problems = reports["live.html"].problems
    for v in (1, 2):
        assert [p for p in problems if p.startswith(f"live view {v}")] == [
            f"live view {v}: its check gave no answer in 2 s (script timeout)"
        ]
    assert any(p.startswith("horizontal scrollbar at 400 px") for p in problems)
