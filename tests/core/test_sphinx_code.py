"""The library's code in the book (:mod:`normbook.publish.sphinx_code`): an include shows the
definition as the build finds it, a renamed definition stops the build, and a verdict row whose
code links do not land on definitions fails ``make test``'s smoke checks. Nothing here reads a
build: each test builds what it needs in its own folder."""

import shutil
from pathlib import Path

import pytest
from sphinx.application import Sphinx
from sphinx.errors import SphinxError

from normbook.grading.verdicts import code_href
from normbook.publish import sphinx_code

NAME = "normbook.paper_a.measures.bands.interior_slope"


def _build(tmp: Path, body: str) -> Path:
    src, out = tmp / "src", tmp / "out"
    src.mkdir(parents=True)
    (src / "conf.py").write_text("extensions = ['normbook.publish.sphinx_code']\n")
    (src / "index.rst").write_text("Title\n=====\n\n" + body + "\n")
    app = Sphinx(str(src), str(src), str(out), str(tmp / "doctrees"), "html",
                 status=None, warning=None, freshenv=True)  # fmt: skip
    app.build()
    return out


def test_an_include_shows_the_definition_and_its_source_page_anchors_it(tmp_path):
    out = _build(tmp_path, f".. code-of:: {NAME}\n")
    page = (out / "index.html").read_text()
    assert "interior_slope" in page and "bands.py, lines" in page and "highlight" in page
    source = out / "_code/normbook/paper_a/measures/bands.html"
    assert 'id="interior_slope"' in source.read_text()
    assert code_href("normbook.paper_a.measures.bands", "interior_slope", 0) == (
        "_code/normbook/paper_a/measures/bands.html#interior_slope"
    )


def test_a_planted_rename_stops_the_build(tmp_path, monkeypatch):
    lib = tmp_path / "lib"
    shutil.copytree(sphinx_code.SRC / "normbook", lib / "normbook",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    bands = lib / "normbook/paper_a/measures/bands.py"
    bands.write_text(bands.read_text().replace("def interior_slope(", "def interior_slope_v2("))
    monkeypatch.setattr(sphinx_code, "SRC", lib)
    with pytest.raises(SphinxError, match="interior_slope"):
        sphinx_code.locate(NAME)
    with pytest.raises(SphinxError, match="interior_slope"):
        _build(tmp_path / "site", f".. code-of:: {NAME}\n")


def test_constants_and_methods_resolve():
    assert sphinx_code.locate("normbook.paper_a.grading.sesoi.SLOPE")[1] == "SLOPE"
    assert sphinx_code.locate("normbook.paper_a.cached.cnn.StackedCNN.forward")[1] == (
        "StackedCNN.forward"
    )


class _Driver:
    """Stands in for Chromium: the intro's row links, then each target page's anchor."""

    def __init__(self, links, anchors):
        self.links, self.anchors, self.at = links, anchors, None

    def execute_script(self, script):
        if "code-link" in script:
            return self.links
        return self.anchors.get(self.at)

    def get(self, url):
        self.at = url


def test_the_browser_walk_from_a_verdict_to_its_code_can_fail():
    from types import SimpleNamespace

    from normbook.publish import browser_code

    links = [["rule", "r#a"], ["effect", "e#b"], ["SESOI", "s#c"]]
    ok = SimpleNamespace(problems=[], controls=0)
    browser_code.drive_code_links(_Driver(links, {"r#a": "x", "e#b": "y", "s#c": "z"}), ok,
                                  "book/intro.html")  # fmt: skip
    assert ok.problems == [] and ok.controls == 3
    bad = SimpleNamespace(problems=[], controls=0)
    browser_code.drive_code_links(_Driver(links[:2], {"r#a": "x"}), bad, "book/intro.html")
    assert bad.problems == ["intro: the effect link lands on no anchor (e#b)",
                            "intro: the side-channel row has no link to its SESOI"]  # fmt: skip
    none = SimpleNamespace(problems=[], controls=0)
    browser_code.drive_code_links(_Driver(None, {}), none, "book/intro.html")
    assert none.problems == ["intro: the side-channel row links to no code"]


def _row(key, code, sesoi_name="SESOI_A1"):
    return {"section": "a1-verdict", "claim": f"claim {key}", "key": key,
            "sesoi_name": sesoi_name, "code": code}  # fmt: skip


def test_a_verdict_that_does_not_link_its_rule_effect_and_sesoi_fails_the_smoke_checks(
    monkeypatch, capsys
):
    """Every claim a chapter graded must name the rule that graded it and the function that
    measured its effect (and its SESOI, where it has one), each resolving to a definition the
    source pages anchor. ``make test`` checks the smoke build's own records after building it
    (``python -m normbook.tools.refutable smoke``); here the check runs on planted rows, so the
    test needs no build."""
    from normbook.tools import refutable

    rule = ["rule", "normbook.paper_a.a1_localization.claims", "a1_ledger"]
    effect = ["effect", "normbook.paper_a.measures.bands", "interior_slope"]
    sesoi = ["SESOI", "normbook.paper_a.grading.sesoi", "SLOPE"]
    ok = [{"chapter": "a1_localization",
           "claims": [_row("a1_side", [rule, effect, sesoi]),
                      _row("a1_band", [rule, effect], "paper's band")]}]  # fmt: skip
    assert refutable.unlinked(ok) == []
    bad = [{"chapter": "a1_localization",
            "claims": [_row("no_effect", [rule, sesoi]),
                       _row("a_line", [rule, effect, [*sesoi[:2], "L-12"]]),
                       _row("renamed", [rule, [*effect[:2], "interior_slope_v2"], sesoi]),
                       _row("none", [])]}]  # fmt: skip
    found = refutable.unlinked(bad)
    assert found[0] == "links rule, SESOI, not rule, effect, SESOI: a1-verdict: claim no_effect"
    assert "its SESOI link lands on no definition" in found[1] and "is a line" in found[1]
    assert "its effect link lands on no definition" in found[2] and "interior_slope_v2" in found[2]
    assert found[3] == "links no code, not rule, effect, SESOI: a1-verdict: claim none"
    assert len(found) == 4
    monkeypatch.setattr(refutable.claims_ledger, "records", lambda profile: bad)
    assert refutable.main(["smoke"]) == 1
    assert "claim renamed" in capsys.readouterr().out
    monkeypatch.setattr(refutable.claims_ledger, "records", lambda profile: ok)
    assert refutable.main(["smoke"]) == 0
    assert "every one linked to its rule, effect and SESOI" in capsys.readouterr().out
