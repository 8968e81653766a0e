"""Chapter B1's tables, one function each, returned as markdown: the layer shapes, the
training runs and Table 1."""

from __future__ import annotations

from normbook.pages.fmt import mean_sd, table
from normbook.paper_b import paper_values
from normbook.paper_b.cached import convnets
from normbook.paper_b.runs.classify import DATASETS, ClassifierConfig, Models, Variant

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
            paper = paper_values.TABLE1_ACCURACY.get((ds, bn))
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
