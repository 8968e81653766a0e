"""The browser check's own rules, on files (no browser needed): raw TeX in visible text, and
internal links to missing files or anchors. The browser run itself is part of `make test`."""

from __future__ import annotations

from normbook.core import browser


def test_raw_tex_finds_unrendered_delimiters_only():
    assert browser.raw_tex("a plain sentence with $5 and (brackets)") == []
    found = browser.raw_tex(r"so R = \(\lfloor k/2\rfloor\cdot d\) inputs")
    assert found and r"\(" in found[0]
    assert browser.raw_tex("display $$x^2$$ math")


def test_broken_links_checks_files_and_anchors(tmp_path):
    (tmp_path / "book").mkdir()
    a = tmp_path / "book" / "a.html"
    a.write_text('<h1 id="top">A</h1><section id="fig-1"></section>')
    (tmp_path / "index.html").write_text("<p>home</p>")
    hrefs = ["#top", "a.html#fig-1", "../index.html", "https://arxiv.org/abs/1",
             "a.html#nowhere", "missing.html", "mailto:x@y.z"]  # fmt: skip
    bad = browser.broken_links(a, hrefs, tmp_path)
    assert bad == ["link to a missing anchor: a.html#nowhere",
                   "link to a missing file: missing.html"]  # fmt: skip


def test_pages_leave_out_search_and_static(tmp_path):
    for rel in ("index.html", "search.html", "genindex.html", "book/a.html", "_static/x.html"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert [p.relative_to(tmp_path).as_posix() for p in browser.pages(tmp_path)] == [
        "book/a.html", "index.html"]  # fmt: skip


def test_missing_browser_gives_a_one_line_fix(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(browser, "CHROMIUM", "no-such-chromium-binary")
    assert browser.main([str(tmp_path)]) == 2
    assert "apt-get install chromium chromium-driver" in capsys.readouterr().err


def test_a_redirect_stub_is_checked_by_its_target(tmp_path):
    stub = tmp_path / "index.html"
    stub.write_text('<meta http-equiv="Refresh" content="0; url=book/intro.html" />')
    assert browser.check_page(None, stub, tmp_path, tmp_path).problems == [
        "link to a missing file: book/intro.html"]  # fmt: skip
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "intro.html").write_text("<p>intro</p>")
    assert browser.check_page(None, stub, tmp_path, tmp_path).problems == []
