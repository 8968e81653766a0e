"""Chapter B2's figure: layer and channel sparsity per conv layer (the effect through
training is :func:`normbook.paper_b.plots.difference_through_training`). No computation
happens here.
"""

from __future__ import annotations

from normbook.pages.figures import canvas, shared_legend
from normbook.paper_b.cached.analysis import Sparsity
from normbook.paper_b.plots import DATASET_TITLES, by_label, layer_profile
from normbook.paper_b.runs.classify import DATASETS


def sparsity_profiles(sparsity: Sparsity):
    """Per dataset (column): layer sparsity (top) and average channel sparsity (bottom) per
    conv layer, mean ± sd over seeds and single seeds."""
    fig, axes = canvas(ncols=2, nrows=2, height=3.0)
    for col, ds in enumerate(DATASETS):
        names = sparsity.layer_names[ds]
        layer_profile(axes[0, col], by_label(sparsity.layer, ds), "layer sparsity", names)
        layer_profile(
            axes[1, col], by_label(sparsity.channel, ds), "average channel sparsity", names
        )
        axes[0, col].set_title(DATASET_TITLES[ds])
    shared_legend(fig)
    return fig
