"""Explorable views: what a page receives (escaped, budgeted, no other host), the bundle a site
serves, and paper A's and B's views built from small synthetic results."""

from __future__ import annotations

import json
import re

import altair as alt
import pandas as pd
import pytest

from normbook.pages import views


def _chart():
    data = pd.DataFrame({"x": [0, 1, 2], "y": [0.0, 0.5, 1.0], "s": ["a</script>", "b", "c"]})
    state = alt.param(name="k", value=0, bind=alt.binding_range(min=0, max=2, step=1))
    return alt.Chart(data).mark_line().encode(x="x:Q", y="y:Q").add_params(state)


def test_a_view_embeds_its_spec_safely_and_names_no_other_host():
    v = views.view("t-view", _chart(), "a slider", 'a "quoted" description')
    page = v._repr_html_()
    assert "$schema" not in v.spec  # vega.github.io: the site check would flag it
    assert not re.search(r"https?://", page)
    assert "</script>" not in page.split('class="nb-view-spec">')[1].split("</script>", 1)[0]
    spec = page.split('class="nb-view-spec">')[1].split("</script>", 1)[0]
    assert "a<\\/script>" in spec  # the data's "</script>" escaped, so the tag ends after it
    assert json.loads(spec.replace("<\\/", "</"))["params"][0]["name"] == "k"
    assert 'aria-label="a &quot;quoted&quot; description"' in page
    assert page.startswith('<details class="nb-view" data-view="t-view">')


def test_a_view_over_the_spec_budget_is_refused(monkeypatch):
    monkeypatch.setattr(views, "MAX_SPEC_BYTES", 100)
    with pytest.raises(ValueError, match="over the 100-byte budget"):
        views.view("big", _chart(), "c", "d").spec_json()


def test_the_bundle_is_a_classic_script_that_sets_vega_embed(tmp_path):
    path = views.write_bundle(tmp_path)
    text = path.read_text()
    assert text.startswith("(function () {") and text.rstrip().endswith("})();")
    assert "window.vegaEmbed=" in text.replace(" ", "")
    mtime = path.stat().st_mtime_ns
    assert views.write_bundle(tmp_path).stat().st_mtime_ns == mtime  # written once per site
