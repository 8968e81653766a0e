"""The browser check's own rules, on files (no browser needed): raw TeX in visible text, and
internal links to missing files or anchors. The browser run itself is part of `make test`."""

from __future__ import annotations

from normbook.publish import browser


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


def test_missing_values_are_whole_unquoted_words():
    assert (
        browser.missing_values("slope 0.12, interval [0.1, 0.3]; NaN and N/A are other words") == []
    )
    assert browser.missing_values("banana nanometre x.nan 'nan' “n/a” marks a gap, n/ab") == []
    found = browser.missing_values("slope nan, interval [n/a, n/a]")
    assert [f.split(" shown")[0] for f in found] == ["'nan'", "'n/a'"]
    assert "'n/a' shown 2 time(s)" in found[1]


def test_progress_lines_match_the_progress_summaries():
    text = ("evaluate: 8 in 00:00\ntrain 4 networks in 2 stacks: 2 in 00:07\n"
            "fit probes: 4 of 5 in 1:02:03\ntrain: 20 models in 01:23\ntrain: 20 in 83 s\n"
            "The run took 3 in 00:10 of wall time: not a line of its own.\n"
            "evaluate: 8 in 00:00 each, said the text")  # fmt: skip
    assert browser.progress_lines(text) == [
        "evaluate: 8 in 00:00",
        "train 4 networks in 2 stacks: 2 in 00:07",
        "fit probes: 4 of 5 in 1:02:03",
        "train: 20 models in 01:23",
        "train: 20 in 83 s",
    ]


def _content(figures=(), tables=(), text="", broken=()):
    return {"figures": list(figures), "tables": list(tables), "broken": list(broken), "text": text}


def test_content_problems_each_rule():
    assert browser.content_problems(_content(text="a clean page")) == []
    caption = browser.content_problems(
        _content(figures=[["fig-a", "Mean prediction, with a rug of", "localized indices.", True]])
    )
    assert len(caption) == 1 and caption[0].startswith("figure fig-a: caption title")
    table = [1, "seed", 900, 700, True, False]
    assert "wider than the 700 px text column" in browser.content_problems(
        _content(tables=[table]))[0]  # fmt: skip
    assert browser.content_problems(_content(tables=[table[:5] + [True]])) == []  # it scrolls
    assert browser.content_problems(_content(tables=[[1, "seed", 600, 700, False, False]])) == []
    assert browser.content_problems(_content(broken=[[2, "reproduced"]])) == [
        "table 2: the word 'reproduced' is broken across two lines (a cell that wraps inside "
        "words: overflow-wrap: anywhere)"]  # fmt: skip
    assert browser.content_problems(_content(text="slope nan"))[0].startswith("missing value")
    lines = "\n".join(["evaluate: 8 in 00:00"] * 3)
    assert browser.content_problems(_content(text=lines)) == []
    assert "6 progress lines (at most 3)" in browser.content_problems(
        _content(text=lines + "\n" + lines))[0]  # fmt: skip


def test_one_search_box_in_sight_where_the_page_has_any():
    assert browser.search_problems([5, 1], 1280) == []
    assert browser.search_problems([0, 0], 1280) == []  # a page without the theme's search
    assert browser.search_problems([5, 2], 1280) == [
        "2 search boxes in sight at 1280 px (one expected)"]  # fmt: skip
    assert browser.search_problems([5, 0], 400) == [
        "0 search boxes in sight at 400 px (one expected)"]  # fmt: skip
