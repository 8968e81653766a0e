"""Chapter B1's tables, one function each, returned as markdown: the layer shapes, the
training runs and Table 1."""

from __future__ import annotations

from normbook.pages.fmt import mean_sd, table
from normbook.paper_b import paper_values
from normbook.paper_b.cached import convnets
from normbook.paper_b.grading import rules
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
    """Per model: optimizer, when training stopped and what ended it (early stopping, the
    epoch cap), which weights were kept, test accuracy."""
    return table(
        [
            {
                "dataset": t.cfg.dataset,
                "variant": t.cfg.label,
                "seed": t.seed,
                "optimizer": f"{t.cfg.optimizer} lr {t.cfg.lr:g}",
                "stopped (epoch)": f"{t.stopped_epoch:.2f}",
                "kept (epoch)": f"{t.best_epoch:.2f}",
                "ended by": t.ended_by,
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


def gain_through_training(models: Models, dataset: str) -> str:
    """BN's validation-accuracy gain (BN - no BN, mean over seeds, in points) at each kept
    state's epoch and with every network finished (its kept weights), in words: what training
    the networks to their stopping rule did to the gain (:func:`.rules.accuracy_curve`; a
    network that had stopped before a state counts with its kept weights there)."""
    curve = rules.accuracy_curve(models, dataset)
    if curve is None:
        return "no states were kept along training, so the gain is known only at the end"
    fracs, gains = curve
    cap = models.trained[dataset, True][0].cfg.max_epochs
    at = [f"{100 * g.mean():+.1f} points at epoch {f * cap:g}" for f, g in
          zip(fracs[:-1], gains[:-1])]  # fmt: skip
    nets = rules.compared(models, dataset)
    cut = sum(t.capped for t in nets)
    end = ("with every network finished by early stopping" if not cut else
           f"at the end, where the epoch cap cut {cut} of the {len(nets)} networks")  # fmt: skip
    return f"{', '.join(at)}, and {100 * gains[-1].mean():+.1f} points {end}"
