"""The offline check of the built site: resources from other hosts, a missing MathJax and
MathJax builds no page loads fail it; links to other hosts do not."""

from __future__ import annotations

from normbook.publish import sitecheck

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


def test_a_mathjax_build_no_page_loads_is_reported(tmp_path):
    site = _site(tmp_path, LOCAL)
    (site / "_static" / "mathjax" / "tex-svg.js").write_text("// another build")
    (site / "_static" / "mathjax" / "a11y").mkdir()
    (site / "_static" / "mathjax" / "a11y" / "sre.js").write_text("// loaded at run time")
    problems = sitecheck.check_site(site)
    assert len(problems) == 1 and "MathJax builds no page loads: tex-svg.js (" in problems[0]


def test_the_sphinx_extension_keeps_only_the_mathjax_the_pages_load(tmp_path):
    from types import SimpleNamespace

    from normbook.publish import sphinx_offline

    kept = ["tex-chtml.js", "output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff",
            "output/svg.js", "input/tex/extensions/cancel.js", "input/mml.js",
            "a11y/explorer.js", "sre/mathmaps/en.json"]  # fmt: skip
    dropped = ["tex-svg.js", "tex-mml-chtml.js", "core.js", "input/tex-full.js",
               "input/mml/extensions/mml3.js", "ui/lazy.js", "adaptors/liteDOM.js"]  # fmt: skip
    root = tmp_path / "_static" / "mathjax"
    for rel in kept + dropped:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("//")

    def app(path):
        return SimpleNamespace(outdir=str(tmp_path), config=SimpleNamespace(mathjax_path=path),
                               builder=SimpleNamespace(format="html"))  # fmt: skip

    def files():
        return sorted(f.relative_to(root).as_posix() for f in root.rglob("*") if f.is_file())

    sphinx_offline.prune_mathjax(app("https://cdn.example.org/tex-chtml.js"), None)
    sphinx_offline.prune_mathjax(app("mathjax/tex-chtml.js"), RuntimeError("build failed"))
    assert files() == sorted(kept + dropped)  # a CDN's MathJax, a failed build: all kept
    sphinx_offline.prune_mathjax(app("mathjax/tex-chtml.js"), None)
    assert files() == sorted(kept)
    assert not (root / "ui").exists() and not (root / "input" / "mml").exists()


def test_no_pages_says_how_to_build(tmp_path):
    assert "make book" in sitecheck.check_site(tmp_path)[0]


def test_the_sphinx_extension_drops_only_thebes_scripts():
    from types import SimpleNamespace

    from normbook.publish import sphinx_offline

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


ALT = "Mean prediction against index for both networks, with the target ramp and a rug of"


def _figure(alt: str, caption: str, legend: str = "") -> str:
    """A figure as Sphinx writes a glue:figure (``legend``: a second caption paragraph)."""
    legend = f'<div class="legend"><p>{legend}</p></div>' if legend else ""
    return (f'<figure class="align-default" id="fig-a"><a href="_images/a.png"><img alt="{alt}" '
            'src="_images/a.png"></a><figcaption><p><span class="caption-number">Figure 4 '
            f'</span><span class="caption-text">{caption}</span><a class="headerlink" '
            f'href="#fig-a">#</a></p>{legend}</figcaption></figure>')  # fmt: skip


def test_a_caption_made_of_an_alts_second_line_fails_the_site(tmp_path):
    # the real defect: ":alt:" over two lines; the alt stops mid-sentence, its second line
    # becomes the caption title and the caption written below it a legend
    broken = _figure(ALT, "localized indices.", legend="Fig. 1a reproduced: mean prediction.")
    problems = sitecheck.check_site(_site(tmp_path, LOCAL.replace("</body>", broken + "</body>")))
    assert problems == [
        "index.html: " + sitecheck.caption_message("fig-a", ALT, "localized indices.")
    ]
    assert problems[0].startswith("index.html: figure fig-a: caption title 'localized indices.'")
    assert sitecheck.main([str(tmp_path)]) == 1


def test_a_caption_written_as_a_caption_passes(tmp_path):
    fixed = _figure(ALT + " localized indices.", "Fig. 1a reproduced: mean prediction per index.")
    assert sitecheck.check_site(_site(tmp_path, LOCAL.replace("</body>", fixed + "</body>"))) == []


def test_caption_echoes_alt_rules():
    echo = sitecheck.caption_echoes_alt
    full = ALT + " localized indices."
    # the caption starts with a trailing part of the alt, or is inside it
    assert echo(full, "localized indices. Fig. 1a reproduced: mean prediction.")
    assert echo(full, "a rug of localized indices.")
    assert echo(full, "target ramp and a rug")
    assert echo(full, full)
    # the alt stops mid-sentence: the caption continues it (lower case, or with a legend)
    assert echo(ALT, "localized indices.")
    assert echo("Class-based DBI per conv layer, BN and no BN, for MNIST and", "CIFAR-10.", True)
    # a separate caption, a short shared word, no alt or no caption: nothing to report
    assert not echo(full, "Fig. 1a reproduced: mean prediction per index.")
    assert not echo("Loss against step, per seed.", "Loss (running mean) per seed.")
    assert not echo("Accuracy per epoch.", "epoch.")  # under MIN_FRAGMENT characters
    assert not echo("Loss curves", "Training loss of every seed.")  # capitalised, no legend
    assert not echo("", "localized indices.")
    assert not echo(ALT, "")
    assert not echo(full, "Localized indices", legend=True)  # the alt ends a sentence


def test_caption_problems_reads_caption_text_only():
    # code inside the caption is caption text; "Figure 4" and the "#" link are not
    page = _figure("The loss per step.", "Loss per <code>step</code> and seed.")
    assert sitecheck.caption_problems(page) == []
    page = _figure("Loss per step, for", "<code>Adam</code> and SGD.", legend="The loss.")
    assert sitecheck.caption_problems(page) == [
        sitecheck.caption_message("fig-a", "Loss per step, for", "Adam and SGD.")]  # fmt: skip
