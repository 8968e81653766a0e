"""Chapter B4's table: the BN x learning-rate 2 x 2's effects, as description."""

from __future__ import annotations

import numpy as np

from normbook.pages.fmt import table
from normbook.paper_b.differences import NO_CI, mean_ci


def factorial_effects(effects: dict, metrics) -> str:
    """The BN x learning-rate 2 x 2 per dataset and metric, as description: BN − no BN at each
    learning rate (lr₁ = the paper's BN rate), their difference (the interaction), the
    learning-rate main effect and the paper's own contrast; mean over seeds [95% t
    interval]. The claims grade BN's effect at each rate separately (chapter B4)."""
    rows = []
    for (key, ds), e in effects.items():
        m = next(m for m in metrics if m.key == key)
        spec = m.unit.replace("+", "").replace("%", "f") if "%" in m.unit else m.unit
        scale = 100.0 if "%" in m.unit else 1.0
        label = m.describe(ds) + (" (points)" if "%" in m.unit else "")
        row = {"dataset": ds, "metric": label, "lr₁ / lr₂": f"{e.lrs[0]:g} / {e.lrs[1]:g}"}
        for name, v in (("BN − no BN at lr₁", e.bn_at[0]), ("at lr₂", e.bn_at[1]),
                        ("BN × lr", e.interaction), ("lr main", e.lr),
                        ("paper's contrast", e.paper)):  # fmt: skip
            row[name] = mean_ci(scale * np.asarray(v), "+" + spec)
        rows.append(row)
    return table(rows, missing=NO_CI)
