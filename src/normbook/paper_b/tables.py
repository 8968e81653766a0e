"""Every table of chapters B1-B3, one function each, returned as markdown."""

from __future__ import annotations

import numpy as np
from scipy import stats as sps

from normbook.grading.stats import CONFIDENCE
from normbook.pages.fmt import bracket, mean_sd, table
from normbook.paper_b import paper_values as reported
from normbook.paper_b.cached import convnets
from normbook.paper_b.cached.analysis import Clusters, Sparsity
from normbook.paper_b.runs.classify import DATASETS, ClassifierConfig, Models, Variant, bn_label

MODEL_NAMES = {"mnist": "standard CNN", "cifar10": "VGG-16"}


def _shape(shape) -> str:
    return "×".join(map(str, shape))


def layer_shapes(configs: dict[Variant, ClassifierConfig]) -> str:
    """Output shape of every conv layer and the parameter count, at this run's widths and at
    the paper's, per dataset."""
    rows = []
    for ds in DATASETS:
        cfg = configs[ds, True]
        ours, n_ours = convnets.geometry(cfg.build(0), cfg.in_channels)
        paper, n_paper = convnets.geometry(cfg.at_paper_width().build(0), cfg.in_channels)
        rows += [
            {
                "dataset": ds,
                "layer": name,
                "ours (C×H×W)": _shape(ours[name]),
                "paper (C×H×W)": _shape(paper[name]),
            }
            for name in ours
        ]
        rows.append(
            {
                "dataset": ds,
                "layer": "**parameters**",
                "ours (C×H×W)": f"{n_ours:,}",
                "paper (C×H×W)": f"{n_paper:,}",
            }
        )
    return table(rows)


def training_runs(models: Models) -> str:
    """Per model: optimizer, when training stopped, which weights were kept, test accuracy."""
    return table(
        [
            {
                "dataset": t.cfg.dataset,
                "variant": t.cfg.label,
                "seed": t.seed,
                "optimizer": f"{t.cfg.optimizer} lr {t.cfg.lr:g}",
                "stopped (epoch)": f"{t.stopped_epoch:.2f}",
                "kept (epoch)": f"{t.best_epoch:.2f}",
                "early-stopped": "yes" if t.early_stopped else "no",
                "test accuracy": f"{t.test_acc:.2%}",
            }
            for t in models.all
        ]
    )


def _scale(cfg: ClassifierConfig) -> str:
    """How far a config is from the paper's scale: share of the weights and of the images."""
    n_ours = sum(p.numel() for p in cfg.build(0).parameters())
    n_paper = sum(p.numel() for p in cfg.at_paper_width().build(0).parameters())
    full = DATASETS[cfg.dataset][3]
    return f"{n_ours / n_paper:.1%} of the weights, {cfg.n_train / full:.1%} of the training split"


def table1(models: Models) -> str:
    """The paper's Table 1 (test accuracy) next to ours, mean ± sd over seeds, with each row's
    distance from the paper's scale."""
    acc, cfgs = models.accuracy, models.configs
    rows = []
    for ds in DATASETS:
        for bn in (True, False):
            paper = reported.TABLE1_ACCURACY.get((ds, bn))
            rows.append(
                {
                    "dataset": ds,
                    "model": MODEL_NAMES[ds],
                    "variant": cfgs[ds, bn].label,
                    "lr": f"{cfgs[ds, bn].lr:g}",
                    f"ours (mean ± sd, {len(models.seeds)} seeds)": mean_sd(acc[ds, bn], ".2%"),
                    "paper": f"{paper:.3%}" if paper else "not in our source",
                    "our scale vs the paper's": _scale(cfgs[ds, bn]),
                }
            )
    return table(rows)


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


# under a table of :func:`_mean_ci` cells that show "–"
NO_CI = "fewer than two seeds with a value, so no t interval (and without any, no mean)"


def _mean_ci(d: np.ndarray, spec: str) -> str:
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
                row[f"{label}: BN − no BN [95% CI]"] = _mean_ci(d, spec)
            rows.append(row)
    return table(rows, missing=NO_CI)


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
            row[name] = _mean_ci(scale * np.asarray(v), "+" + spec)
        rows.append(row)
    return table(rows, missing=NO_CI)
