"""Chapter A2's tables, one function each, returned as markdown: Fig. 3's accuracies and the
probes against the hop bounds."""

from __future__ import annotations

from normbook.pages.fmt import join, table
from normbook.paper_a.measures.multihop import HopComparison
from normbook.paper_a.runs.packnorm import PackResult


def packnorm(res: PackResult) -> str:
    """Fig. 3's accuracies per overlap: per seed and pooled, with Wilson 95 % intervals."""
    p = res.pack
    (lo, hi), (plo, phi) = p.ci, p.pooled_ci
    return table(
        [
            {
                "overlap o": o,
                "o / l'": o / res.setup.path_len,
                **{
                    f"acc seed {s}": f"{p.acc[i, j]:.3f} [{lo[i, j]:.3f}, {hi[i, j]:.3f}]"
                    for j, s in enumerate(p.seeds)
                },
                "pooled": f"{p.pooled_acc[i]:.3f} [{plo[i]:.3f}, {phi[i]:.3f}]",
            }
            for i, o in enumerate(p.overlaps)
        ]
    )


def hops(cmp: HopComparison, normed, none, factor: float) -> str:
    """Per depth: R(d), the hop bounds, the probes' distances and the hops they need."""
    return table(
        [
            {
                "depth": d + 1,
                "R(d)": int(cmp.radius[d]),
                f"{factor:g}R(d)": float(cmp.single_hop[d]),
                "iterated": float(cmp.iterated[d]),
                f"distance {normed.name} (per seed)": join(cmp.measured[d]),
                "hops needed": join(cmp.hops[d]),
                "distance none": join(none.probe_distances[d]),
            }
            for d in range(len(cmp.radius))
        ]
    )
