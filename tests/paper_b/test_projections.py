"""Chapter B3's explorable layer view: projections of tiny trained models, cached, and the view
built from them."""

from __future__ import annotations

import numpy as np

from normbook.paper_b.b3_clusters import views
from normbook.paper_b.cached import projections


def test_projections_and_their_view(tiny_models, tmp_path, monkeypatch):
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path))
    cfg = projections.ProjectionConfig(n_images=30, split="test", image_seed=0, features="flatten")
    projs = projections.projections(tiny_models, cfg)
    assert len(projs) == 4  # one network per (dataset, BN) variant
    for p in projs:
        n_layers = len(p.layers)
        assert p.coords.shape == (n_layers, 30, 2) and p.explained.shape == (n_layers, 2)
        assert np.all(p.explained >= 0) and np.all(p.explained.sum(axis=1) <= 1 + 1e-6)
        assert sorted(np.unique(p.labels)) == list(range(10))  # class-balanced: 3 per class
    again = projections.projections(tiny_models, cfg)  # from the cache: the same numbers
    assert all(np.array_equal(a.coords, b.coords) for a, b in zip(projs, again))
    dbi = {v: np.full((2, len(projs[0].layers)), 1.5) for v in tiny_models.trained}
    v = views.layer_projections(projs, dbi, "mnist")
    layer = v.spec["params"][0]
    assert layer["name"] == "layer" and layer["bind"]["max"] == len(projs[0].layers)
    rows = next(iter(v.spec["datasets"].values()))
    assert len(rows) == 2 * len(projs[0].layers) * 30  # BN and no BN, every layer and image
