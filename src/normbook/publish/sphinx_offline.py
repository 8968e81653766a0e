"""Sphinx extension: no page of the book refers to another host for its scripts.

Jupyter Book always loads sphinx-thebe, which writes the address of thebe's JavaScript on
unpkg.com into every page. The book offers no thebe launch button (thebe needs a live
kernel server, which an offline classroom does not have), so thebe's scripts are dropped.
The explorable figures' Vega bundle is written into the site's ``_static`` here too
(:func:`normbook.pages.views.write_bundle`), once per site, instead of being fetched from a CDN.
And of the MathJax that sphinx-mathjax-offline copies (every build of it, 24 MB), the site keeps
the one build its pages load and what that build fetches at run time (:func:`prune_mathjax`).
Checked by :mod:`normbook.publish.sitecheck`.
"""

from __future__ import annotations

from pathlib import Path


def _is_thebe(filename, attributes: dict) -> bool:
    return "thebe" in str(filename or "").lower() or "THEBE_JS_URL" in attributes.get("body", "")


def drop_thebe(app, env=None, docnames=None) -> None:
    """Remove thebe's script entries from the registry and the HTML builder."""
    app.registry.js_files = [
        (f, a) for f, a in app.registry.js_files if not _is_thebe(f, a)
    ]  # fmt: skip
    builder = getattr(app, "builder", None)
    if builder is not None and hasattr(builder, "_js_files"):
        builder._js_files = [js for js in builder._js_files
                             if not _is_thebe(js.filename, js.attributes)]  # fmt: skip


def write_vega_bundle(app, exception) -> None:
    """After an HTML build: ``_static/vega-bundle.js`` for the explorable views."""
    if exception is None and app.builder.format == "html":
        from normbook.pages.views import write_bundle

        write_bundle(Path(app.outdir) / "_static")


# What the pages' MathJax build (``mathjax_path``, a combined file such as tex-chtml.js) may
# fetch at run time, under _static/mathjax: its fonts and the other renderer its menu offers
# (output/), the TeX extensions \require and autoload load (input/tex/extensions/), and the
# menu's accessibility tools (a11y/, sre/, and input/mml.js, which they need). The other builds
# and the parts they bundle, 16 of the 24 MB, are never loaded.
MATHJAX_RUNTIME = ("output", "input/tex/extensions", "input/mml.js", "a11y", "sre")


def prune_mathjax(app, exception) -> None:
    """After an HTML build: delete the MathJax files the pages' build never loads."""
    path = str(app.config.mathjax_path)
    if exception is not None or app.builder.format != "html" or not path.startswith("mathjax/"):
        return  # a MathJax from elsewhere (a CDN's): nothing here is known to be unused
    static = Path(app.outdir) / "_static"
    root, used = static / "mathjax", static / path
    if not used.is_file():
        return
    keep = [used] + [root / k for k in MATHJAX_RUNTIME]
    for f in sorted(root.rglob("*"), reverse=True):  # a folder's files before the folder
        if f.is_dir():
            if not any(f.iterdir()):
                f.rmdir()
        elif not any(f == k or k in f.parents for k in keep):
            f.unlink()


def setup(app):
    app.connect("env-before-read-docs", drop_thebe, priority=900)  # after sphinx-thebe's
    app.connect("build-finished", write_vega_bundle)
    # after sphinx-mathjax-offline's copy (its build-finished listener has the default 500)
    app.connect("build-finished", prune_mathjax, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
