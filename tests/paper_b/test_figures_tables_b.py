"""Every figure and table function of chapters B1-B3 runs on tiny trained models and shows
what its caption promises."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from normbook.paper_b import differences
from normbook.paper_b.b1_setup_accuracy import figures as b1_figures
from normbook.paper_b.b1_setup_accuracy import tables as b1_tables
from normbook.paper_b.b2_sparsity import figures as b2_figures
from normbook.paper_b.b2_sparsity import tables as b2_tables
from normbook.paper_b.b3_clusters import figures as b3_figures
from normbook.paper_b.b3_clusters import tables as b3_tables
from normbook.paper_b.cached import analysis


@pytest.fixture
def results(tiny_models):
    sparsity = analysis.sparsity(tiny_models, analysis.SparsityConfig(n_images=50))
    clusters = analysis.clusters(
        tiny_models,
        analysis.ClusterConfig(n_images=50, pca_components=5, k_min=2, k_max=6, fixed_k=4),
    )
    yield tiny_models, sparsity, clusters
    plt.close("all")


def _rows(markdown: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in markdown.splitlines()[2:]]


def test_figures_have_one_panel_per_dataset_and_quantity(results):
    models, sparsity, clusters = results
    fig = b1_figures.sample_images(models.splits)
    assert len(fig.axes) == 20 and fig.axes[10].get_title() == "airplane"
    fig = b1_figures.training_curves(models)
    assert len(fig.axes) == 4 and fig.axes[0].get_title() == "MNIST, standard CNN"
    assert len(fig.axes[0].lines) == 2 * 2 * 2  # BN / no BN x seeds x (train, validation)
    fig = b2_figures.sparsity_profiles(sparsity)
    assert len(fig.axes) == 4 and fig.axes[1].get_ylabel() == "layer sparsity"
    assert len(b3_figures.class_dbi(clusters).axes) == 2
    fig = b3_figures.k_means_profiles(clusters)
    assert len(fig.axes) == 6 and fig.axes[0].get_ylim() == (1.5, 6.5)
    fig = b3_figures.dbi_over_k(clusters)
    x, y = fig.axes[1].lines[0].get_data()
    assert x.tolist() == [2, 3, 4, 5, 6]
    np.testing.assert_allclose(y, clusters.dbi_curve["cifar10", True][:, -1].mean(axis=0))
    assert "conv13" in fig.axes[1].get_title()


def test_tables(results):
    models, sparsity, clusters = results
    rows = _rows(b1_tables.layer_shapes(models.configs))
    assert len(rows) == 4 + 1 + 13 + 1
    assert rows[0] == ["mnist", "conv1", "2×32×32", "64×32×32"]
    assert rows[4][:2] == ["mnist", "**parameters**"] and rows[-1][3] == "14,728,266"
    rows = _rows(b1_tables.training_runs(models))
    assert len(rows) == 8 and rows[0][:3] == ["mnist", "BN", "0"]
    assert rows[0][-1] == f"{models.trained['mnist', True][0].test_acc:.2%}"
    rows = _rows(b1_tables.table1(models))
    assert [r[-2] for r in rows] == ["not in our source"] * 2 + ["85.990%", "79.435%"]
    assert all("of the weights" in r[-1] and "of the training split" in r[-1] for r in rows)
    rows = _rows(b2_tables.sparsity_per_layer(sparsity))
    assert len(rows) == 4 + 13 and rows[-1][1] == "conv13"
    rows = _rows(b3_tables.clusters_per_layer(clusters))
    k = clusters.k_star["mnist", False][:, 0]
    assert len(rows) == 17 and rows[0][6] == f"{int(k[0])}, {int(k[1])}"


def test_layer_differences_are_paired_per_seed_with_t_intervals(results):
    _, sparsity, clusters = results
    rows = _rows(
        differences.layer_differences({"layer sparsity": sparsity.layer}, sparsity.layer_names)
    )
    assert len(rows) == 4 + 13 and rows[4][:2] == ["cifar10", "conv1"]
    d = sparsity.layer["mnist", True][:, 0] - sparsity.layer["mnist", False][:, 0]
    half = 12.7062 * d.std(ddof=1) / np.sqrt(2)  # t(0.975, 1 df): two seeds
    m = d.mean()
    assert rows[0][2] == f"{m:+.3f} [{m - half:+.3f}, {m + half:+.3f}]"
    text = differences.layer_differences(
        {"class DBI": clusters.class_dbi, "DBI(k*)": clusters.dbi_k_star},
        clusters.layer_names,
        spec="+.2f",
    )
    assert text.splitlines()[0] == (
        "| dataset | layer | class DBI: BN − no BN [95% CI] | DBI(k*): BN − no BN [95% CI] |"
    )
