"""Per-layer differences BN − no BN as description (chapters B2 and B3), and the mean with its
t interval that chapter B4's effect table shows too; returned as markdown."""

from __future__ import annotations

import numpy as np
from scipy import stats as sps

from normbook.grading.stats import CONFIDENCE
from normbook.pages.fmt import bracket, table
from normbook.paper_b.runs.classify import DATASETS, Variant

# under a table of :func:`mean_ci` cells that show "–"
NO_CI = "fewer than two seeds with a value, so no t interval (and without any, no mean)"


def mean_ci(d: np.ndarray, spec: str) -> str:
    """``"m [lo, hi]"``: the mean of ``d`` with its Student t interval (CONFIDENCE); ``–``
    for what fewer than two seeds cannot give (:data:`NO_CI` says so under the table)."""
    m = float(d.mean()) if d.size else float("nan")
    if d.size < 2:
        return bracket(m, float("nan"), float("nan"), spec)
    half = sps.t.ppf(0.5 + CONFIDENCE / 2, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size)
    return bracket(m, m - half, m + half, spec)


def layer_differences(
    metrics: dict[str, dict[Variant, np.ndarray]],
    layer_names: dict[str, list[str]],
    spec: str = "+.3f",
) -> str:
    """Description, not a test: per conv layer, the mean over seeds of the paired difference
    BN − no BN (same seed) of every metric (arrays [seeds, layers]), with its 95% t
    interval over seeds."""
    rows = []
    for ds in DATASETS:
        for j, name in enumerate(layer_names[ds]):
            row = {"dataset": ds, "layer": name}
            for label, values in metrics.items():
                d = np.asarray(values[ds, True], float)[:, j] - np.asarray(values[ds, False])[:, j]
                row[f"{label}: BN − no BN [95% CI]"] = mean_ci(d, spec)
            rows.append(row)
    return table(rows, missing=NO_CI)
