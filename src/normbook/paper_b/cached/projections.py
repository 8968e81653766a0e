"""Two-dimensional projections of every layer's representations, for chapter B3's explorable
view: PCA of one seed's network per (dataset, BatchNorm) variant, on class-balanced images
(cached per model, keyed like the other analyses plus this module)."""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass

import numpy as np
from sklearn.decomposition import PCA

from normbook.paper_b.cached import analysis, convnets, representations
from normbook.paper_b.cached.training import Variant
from normbook.runtime import cache
from normbook.runtime.workers import single_thread

STEP = cache.step("b_projection", *analysis.ANALYSIS_CODE, sys.modules[__name__])


@dataclass(frozen=True)
class ProjectionConfig:
    """Which images and which network: ``n_images`` class-balanced images of ``split``
    (drawn with ``image_seed``), the network of the variant's ``seed_index``-th seed."""

    n_images: int
    split: str
    image_seed: int
    features: str  # how a layer's activations become one vector per image (as for the DBI)
    seed_index: int = 0


@dataclass
class Projection:
    """One network's layers in 2-D: ``coords`` (layers, N, 2), ``explained`` (layers, 2) the
    variance share of each component, ``labels`` (N,) the images' classes."""

    variant: Variant
    seed: int
    seed_index: int  # the seed's position among the chapter's seeds
    layers: list[str]
    coords: np.ndarray
    explained: np.ndarray
    labels: np.ndarray


def project_layers(model, x, features: str, seed: int) -> dict[str, np.ndarray]:
    """PCA to two components of each conv layer's activations on ``x`` (one layer at a time,
    so only one layer's activations are held)."""
    names = model.conv_layer_names()
    coords, explained = [], []
    for name in names:
        acts = convnets.capture_activations(model, x, layers=[name])[name]
        feats = representations.to_features(acts, features).astype(np.float32)
        pca = PCA(n_components=2, random_state=seed).fit(feats)
        coords.append(pca.transform(feats))
        explained.append(pca.explained_variance_ratio_)
    return {"coords": np.stack(coords).astype(np.float32), "explained": np.stack(explained)}


def projections(models, config: ProjectionConfig) -> list[Projection]:
    """The :class:`Projection` of one network per variant of ``models`` (cached)."""
    out = []
    for variant, trained in models.trained.items():
        t = trained[config.seed_index]
        splits = models.splits[t.cfg.dataset].of(t.cfg)
        x, y = analysis.select_images(splits, config.split, config.n_images, config.image_seed)

        def compute(t=t, x=x, y=y):
            with single_thread():
                arrays = project_layers(t.model().eval(), x, config.features, config.image_seed)
            return cache.Entry({**arrays, "labels": np.asarray(y)})

        key = {"train": t.key(models.splits[t.cfg.dataset].data_id), "projection": asdict(config)}
        entry = STEP.cached(key, compute)
        out.append(
            Projection(
                Variant(*variant),
                t.seed,
                config.seed_index,
                t.model().conv_layer_names(),
                np.asarray(entry["coords"]),
                np.asarray(entry["explained"]),
                np.asarray(entry["labels"]),
            )
        )
    return out
