"""The offline check of the built site: resources from other hosts and a missing MathJax fail
it; links to other hosts do not."""

from __future__ import annotations

from normbook.core import sitecheck

LOCAL = """<html><head>
<link rel="stylesheet" href="_static/theme.css">
<script src="_static/mathjax/tex-chtml.js"></script>
</head><body><a href="https://arxiv.org/abs/2507.04709">paper</a>
<img src="_images/fig.png"><script>var x = 1;</script></body></html>"""


def _site(tmp_path, page: str, mathjax: bool = True):
    (tmp_path / "index.html").write_text(page)
    if mathjax:
        (tmp_path / "_static" / "mathjax").mkdir(parents=True)
        (tmp_path / sitecheck.MATHJAX).write_text("// mathjax")
    return tmp_path


def test_a_self_contained_site_passes_and_links_may_point_anywhere(tmp_path):
    assert sitecheck.check_site(_site(tmp_path, LOCAL)) == []
    assert sitecheck.main([str(tmp_path)]) == 0


def test_each_kind_of_external_load_is_reported(tmp_path):
    page = LOCAL.replace(
        "</head>",
        '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>'
        '<link rel="preload" href="//fonts.example.org/a.woff2">'
        "<script>load('https://unpkg.com/thebe@0.8/lib/index.js')</script></head>",
    )
    problems = sitecheck.check_site(_site(tmp_path, page))
    assert len(problems) == 3
    assert any("cdn.jsdelivr.net" in p for p in problems)
    assert any("fonts.example.org" in p for p in problems)
    assert any("unpkg.com" in p for p in problems)
    assert sitecheck.main([str(tmp_path)]) == 1


def test_a_missing_mathjax_is_reported(tmp_path):
    problems = sitecheck.check_site(_site(tmp_path, LOCAL, mathjax=False))
    assert any("missing" in p for p in problems)
    assert any("does not exist" in p for p in problems)


def test_no_pages_says_how_to_build(tmp_path):
    assert "make book" in sitecheck.check_site(tmp_path)[0]


def test_the_sphinx_extension_drops_only_thebes_scripts():
    from types import SimpleNamespace

    from normbook.core import sphinx_offline

    js = SimpleNamespace
    app = SimpleNamespace(
        registry=SimpleNamespace(js_files=[
            (None, {"body": 'const THEBE_JS_URL = "https://unpkg.com/thebe"'}),
            ("sphinx-thebe.js", {"async": "async"}),
            ("copybutton.js", {}),
        ]),
        builder=SimpleNamespace(_js_files=[js(filename="sphinx-thebe.js", attributes={}),
                                           js(filename="doctools.js", attributes={})]),
    )  # fmt: skip
    sphinx_offline.drop_thebe(app)
    assert app.registry.js_files == [("copybutton.js", {})]
    assert [j.filename for j in app.builder._js_files] == ["doctools.js"]
