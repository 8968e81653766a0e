"""Chapter B3's parameters: chapter B1's training knobs, the cluster analysis's
(:mod:`..params`) and the explorable layer view's (registered in
normbook.publish.chapters.SPECS)."""

from __future__ import annotations

from normbook.paper_b.params import (
    CLUSTER_PARAMS,
    CLUSTER_PROFILES,
    TRAIN_CHECKS,
    TRAIN_PARAMS,
    TRAIN_PROFILES,
    check_k_range,
    images_available,
    merge,
)
from normbook.runtime.params import Param, Spec, profiles

VIEW_PARAMS = [
    Param(
        "view_images",
        int,
        "images per network in the explorable layer view (PCA to 2-D)",
        min=20,
        max=5_000,
        shape=64,
    ),
]
VIEW_PROFILES = profiles(
    {}, smoke=dict(view_images=100), cpu=dict(view_images=300), paper=dict(view_images=300)
)


def _view_images(params) -> str | None:
    if params.view_images > params.cluster_images:
        return (
            f"parameter 'view_images': must be <= cluster_images = {params.cluster_images} (the "
            f"view draws from the same class-balanced pool), got {params.view_images}"
        )
    return None


B3 = Spec(
    chapter="b3_clusters",
    params=TRAIN_PARAMS + CLUSTER_PARAMS + VIEW_PARAMS,
    profiles=merge(TRAIN_PROFILES, CLUSTER_PROFILES, VIEW_PROFILES),
    checks=TRAIN_CHECKS + [images_available("cluster"), check_k_range, _view_images],
)
