"""Chapter B3's table: class-based DBI, k* and DBI(k*) per conv layer (the per-layer
differences are :func:`normbook.paper_b.differences.layer_differences`)."""

from __future__ import annotations

from normbook.pages.fmt import mean_sd, table
from normbook.paper_b.cached.analysis import Clusters
from normbook.paper_b.runs.classify import DATASETS, bn_label


def clusters_per_layer(clusters: Clusters) -> str:
    """Class-based DBI, k* per seed and DBI(k*) per conv layer, BN and no BN."""
    rows = []
    for ds in DATASETS:
        for j, name in enumerate(clusters.layer_names[ds]):
            row = {"dataset": ds, "layer": name}
            for bn, label in ((bn, bn_label(bn)) for bn in (True, False)):
                row[f"class DBI {label}"] = mean_sd(clusters.class_dbi[ds, bn][:, j], ".2f")
                row[f"k* {label}"] = ", ".join(str(int(k)) for k in clusters.k_star[ds, bn][:, j])
                row[f"DBI(k*) {label}"] = mean_sd(clusters.dbi_k_star[ds, bn][:, j], ".2f")
            rows.append(row)
    return table(rows)
