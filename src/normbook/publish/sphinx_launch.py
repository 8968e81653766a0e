"""Sphinx extension: Binder and Colab buttons that open a chapter the repository can serve.

One setting turns them on: ``repository.url`` in ``_config.yml`` (empty: no launch buttons).
The theme would point both at ``book/<chapter>.ipynb`` in the repository, which holds the
chapters as jupytext ``.py`` files only, so the buttons are retargeted:

- Binder opens ``book/<chapter>.py``; the repository's ``postBuild`` makes JupyterLab open
  jupytext files as notebooks.
- Colab opens ``.ipynb`` files from GitHub only: it opens the executed notebook that the
  published site holds (``_sources/book/<chapter>.ipynb`` on the branch named by
  ``normbook_pages_branch``, where the site is published); the build gives that copy a first,
  hidden cell that installs the library when it runs in Colab (:func:`colab_cell`).

With the project's URL set, the download menu of every page also links the build's bundle of
trained networks and analyses (``normbook_bundle_url``, set by :func:`.costs.bundle_link`: a
release asset of the build's commit, as the README says to publish it).
"""

from __future__ import annotations

import re
from importlib.metadata import version

PAGES_BRANCH = "gh-pages"
MYST_NB = version("myst-nb")  # the build's own (pinned) version, for Colab's install


def colab_cell(repo_url: str, branch: str) -> dict:
    """A notebook cell, hidden in the book's pages, that installs normbook in Colab."""
    source = (
        "# In Google Colab, install this book's library (normbook) from its repository first:\n"
        "# without its pinned dependencies (they would replace Colab's torch, a download of\n"
        "# several GB), plus myst-nb, the one library it uses that Colab lacks. Colab's\n"
        "# versions differ from the pins, so numbers may differ in their last digits.\n"
        "import sys\n\n"
        'if "google.colab" in sys.modules:\n'
        f'    %pip install --quiet --no-deps "normbook @ git+{repo_url.rstrip("/")}.git@{branch}"\n'
        f'    %pip install --quiet "myst-nb=={MYST_NB}"'
    )
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": "normbook-colab-install",
        "metadata": {"tags": ["remove-cell"]},
        "outputs": [],
        "source": source,
    }


def _launch_needs_repository(app, config) -> None:
    """Without a repository the theme cannot build launch links (and fails): no buttons."""
    options = config.html_theme_options
    if not options.get("repository_url"):
        options.pop("launch_buttons", None)


def retarget(url: str, text: str, pages_branch: str) -> str:
    """The launch link of one button, pointed at a file the repository (or site) holds."""
    if text == "Binder":
        return re.sub(r"(urlpath=[^&]*?)\.ipynb$", r"\1.py", url)
    if text == "Colab":
        return re.sub(r"/blob/[^/]+/(.*\.ipynb)$", rf"/blob/{pages_branch}/_sources/\1", url)
    return url


def _retarget_buttons(app, pagename, templatename, context, doctree) -> None:
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group["buttons"]:
            if "url" in button:
                button["url"] = retarget(
                    button["url"], button["text"], app.config.normbook_pages_branch
                )


def bundle_button(url: str) -> dict:
    """The download menu's entry for the build's bundle (the theme's button format)."""
    return {"type": "link", "url": url, "text": "bundle", "icon": "fas fa-box-archive",
            "tooltip": "Download this build's trained networks and analyses (make book BUNDLE=)",
            "label": "download-bundle-button"}  # fmt: skip


def _add_bundle(app, pagename, templatename, context, doctree) -> None:
    url = app.config.normbook_bundle_url
    for group in context.get("header_buttons", []) if url else []:
        if group.get("label") == "download-buttons":
            group["buttons"].append(bundle_button(url))


def setup(app):
    app.add_config_value("normbook_pages_branch", PAGES_BRANCH, "html")
    app.add_config_value("normbook_bundle_url", "", "html")
    app.connect("html-page-context", _add_bundle, priority=600)
    app.connect("config-inited", _launch_needs_repository, priority=900)
    app.connect("html-page-context", _retarget_buttons, priority=600)  # after the theme's 501
    return {"parallel_read_safe": True, "parallel_write_safe": True}
