"""Launch buttons open files the repository (Binder) and the published site (Colab) hold."""

import json

from IPython.core.inputtransformer2 import TransformerManager

from normbook.publish import project, site, sphinx_launch


def test_binder_opens_the_jupytext_source():
    url = "https://mybinder.org/v2/gh/o/r/main?urlpath=lab/tree/book/a1_localization.ipynb"
    assert sphinx_launch.retarget(url, "Binder", "gh-pages") == url[: -len("ipynb")] + "py"


def test_colab_opens_the_executed_notebook_of_the_published_site():
    url = "https://colab.research.google.com/github/o/r/blob/main/book/a1_localization.ipynb"
    assert sphinx_launch.retarget(url, "Colab", "pages") == (
        "https://colab.research.google.com/github/o/r/blob/pages/_sources/book/a1_localization.ipynb"
    )


def test_colab_cell_is_hidden_valid_ipython_and_installs_from_the_repository():
    cell = sphinx_launch.colab_cell("https://github.com/o/r/", "dev")
    assert cell["metadata"]["tags"] == ["remove-cell"]
    code = TransformerManager().transform_cell(cell["source"])
    compile(code, "<cell>", "exec")
    assert "git+https://github.com/o/r.git@dev" in code and "google.colab" in code
    install = [line for line in code.splitlines() if "normbook @" in line]
    assert len(install) == 1 and "--no-deps" in install[0]  # never Colab's torch replaced
    assert f"myst-nb=={sphinx_launch.MYST_NB}" in code


def _config(root, url):
    (root / "_config.yml").write_text(f'repository:\n  url: "{url}"\n  branch: dev\n')


def test_site_notebook_gets_the_install_cell_only_with_a_repository(tmp_path, monkeypatch):
    nb = tmp_path / "a.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": "x"}]}))
    monkeypatch.setattr(project, "ROOT", tmp_path)
    _config(tmp_path, "")
    assert site.repository() is None and site.site_notebook(nb) is None
    _config(tmp_path, "https://github.com/o/r")
    assert site.repository() == ("https://github.com/o/r", "dev")
    cells = json.loads(site.site_notebook(nb))["cells"]
    assert cells[0]["id"] == "normbook-colab-install" and cells[1]["source"] == "x"


def test_the_bundle_is_linked_only_for_a_published_commit(tmp_path, monkeypatch):
    from normbook.publish import costs
    from normbook.runtime import devices

    config = {"repository": {"url": "https://github.com/o/r/"}}
    monkeypatch.setattr(devices, "git_commit", lambda: "0123456789abcdef")
    assert costs.bundle_link(config, "cpu") == (
        "https://github.com/o/r/releases/download/normbook-cpu-0123456789/"
        "normbook-cpu-0123456789.tar.gz"
    )
    assert costs.bundle_link({"repository": {"url": ""}}, "cpu") == ""
    for commit in ("0123456789abcdef+changes", "unknown"):  # no published bundle is its own
        monkeypatch.setattr(devices, "git_commit", lambda c=commit: c)
        assert costs.bundle_link(config, "cpu") == ""


def test_a_page_built_with_a_bundle_url_links_it_in_its_download_menu(tmp_path):
    """A one-page Sphinx project with the book's theme and this extension: the download menu
    holds the bundle's link beside the page's source; without a URL it does not."""
    from sphinx.application import Sphinx

    url = "https://github.com/o/r/releases/download/normbook-cpu-x/normbook-cpu-x.tar.gz"
    pages = {}
    for name, bundle in (("with", url), ("without", "")):
        src, out = tmp_path / name, tmp_path / name / "_build"
        src.mkdir()
        (src / "index.rst").write_text("Title\n=====\n\ntext\n")
        (src / "conf.py").write_text(
            "extensions = ['normbook.publish.sphinx_launch']\n"
            "html_theme = 'sphinx_book_theme'\n"
            "html_theme_options = {'use_download_button': True}\n"
            f"normbook_bundle_url = {bundle!r}\n"
        )
        Sphinx(str(src), str(src), str(out), str(out / ".doctrees"), "html",
               status=None, warning=None, freshenv=True).build()  # fmt: skip
        pages[name] = (out / "index.html").read_text()
    assert f'href="{url}"' in pages["with"] and "download-bundle-button" in pages["with"]
    assert "download-source-button" in pages["with"]  # beside the page's own download
    assert "download-bundle-button" not in pages["without"]
