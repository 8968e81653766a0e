"""Chapter B2's table: layer and channel sparsity per conv layer (the per-layer differences
are :func:`normbook.paper_b.differences.layer_differences`)."""

from __future__ import annotations

from normbook.pages.fmt import mean_sd, table
from normbook.paper_b.cached.analysis import Sparsity
from normbook.paper_b.runs.classify import DATASETS


def sparsity_per_layer(sparsity: Sparsity) -> str:
    """Layer and average channel sparsity per conv layer, BN and no BN, mean ± sd."""
    rows = []
    for ds in DATASETS:
        layer_bn, layer_no = sparsity.layer[ds, True], sparsity.layer[ds, False]
        for j, name in enumerate(sparsity.layer_names[ds]):
            b, n = layer_bn[:, j], layer_no[:, j]
            rows.append(
                {
                    "dataset": ds,
                    "layer": name,
                    "BN": mean_sd(b),
                    "no BN": mean_sd(n),
                    "channel: BN": mean_sd(sparsity.channel[ds, True][:, j]),
                    "channel: no BN": mean_sd(sparsity.channel[ds, False][:, j]),
                }
            )
    return table(rows)
