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
