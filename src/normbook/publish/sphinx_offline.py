"""Sphinx extension: no page of the book refers to another host for its scripts.

Jupyter Book always loads sphinx-thebe, which writes the address of thebe's JavaScript on
unpkg.com into every page. The book offers no thebe launch button (thebe needs a live
kernel server, which an offline classroom does not have), so thebe's scripts are dropped.
The explorable figures' Vega bundle is written into the site's ``_static`` here too
(:func:`normbook.pages.views.write_bundle`), once per site, instead of being fetched from a CDN.
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


def setup(app):
    app.connect("env-before-read-docs", drop_thebe, priority=900)  # after sphinx-thebe's
    app.connect("build-finished", write_vega_bundle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
