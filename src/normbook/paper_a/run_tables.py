"""Tables several of paper A's chapters show, returned as markdown: the shift-equivariance
check per network and seed, and why a dead network's R² shows "–"."""

from __future__ import annotations

from normbook.pages.fmt import table
from normbook.paper_a.measures.equivariance import Equivariance

# why a table's R² shows "–" (a dead network's fit against the ramp has no R²)
NO_R2 = ("a network whose mean prediction is the same at every index (a dead network) "
         "explains no variance, so its R² is undefined")  # fmt: skip


R2_NOTES = {"R² (interior)": NO_R2, "R² (all)": NO_R2}


def equivariance(checks: list[Equivariance]) -> str:
    """Gradient reach and the largest interior change under a shift, per network and seed."""
    return table(
        [
            {
                "norm": c.name,
                "seed": seed,
                "gradient reach": int(c.reach[s]),
                "R": c.radius,
                f"max abs change, shift {c.shift}": float(c.max_change[s]),
            }
            for c in checks
            for s, seed in enumerate(c.seeds)
        ]
    )
