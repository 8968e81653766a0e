"""Chapter B4's accuracy-matched comparison: chapter B2's and B3's analyses of BN and no-BN
networks stopped at equal validation accuracy (:class:`Matched`, :func:`run_matched`).
Computation only: its checks are in :mod:`.claims`, its prose in :mod:`.text`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from normbook.paper_b.b4_stress.factorial import factorial_datasets
from normbook.paper_b.cached import analysis
from normbook.paper_b.cached.analysis import Clusters, Sparsity
from normbook.paper_b.runs import classify
from normbook.paper_b.runs.classify import DATASETS, Models, TrainedModel, Variant


@dataclass
class Matched:
    """BN and no-BN networks at equal validation accuracy. Of each seed's pair, the network
    whose kept weights are more accurate on the validation split is trained again (same
    config and seed, so the same run) and taken at the check whose validation accuracy is
    closest to the other's (:func:`run_matched`); the other keeps its weights. Per matched
    dataset."""

    models: Models  # the matched pair of every seed: one replayed to the matched accuracy, one kept
    kept: Models  # chapter B1's models of the same variants
    target: dict[str, np.ndarray]  # per dataset: the matched validation accuracy per seed
    sparsity: Sparsity  # of ``models``, chapter B2's analysis
    clusters: Clusters  # of ``models``, chapter B3's analysis

    @property
    def datasets(self) -> list[str]:
        return sorted({v[0] for v in self.models.trained}, key=list(DATASETS).index)

    def val_acc(self) -> dict[Variant, np.ndarray]:
        """Validation accuracy of every matched network, per variant and seed."""
        return {v: np.array([t.reached[1] if t.reached else t.kept_val_acc for t in ts])
                for v, ts in self.models.trained.items()}  # fmt: skip

    def gap(self, dataset: str) -> np.ndarray:
        """Per seed: |BN − no BN| validation accuracy after matching."""
        acc = self.val_acc()
        return np.abs(acc[dataset, True] - acc[dataset, False])

    def stopped_early(self) -> list[tuple[TrainedModel, TrainedModel]]:
        """(stopped-early network, the kept network of the same run) pairs."""
        return [(t, k) for v, ts in self.models.trained.items()
                for t, k in zip(ts, self.kept.trained[v]) if t.stage]  # fmt: skip


def match_plan(models: Models, datasets) -> tuple[dict[str, np.ndarray], list[tuple[Variant, int]]]:
    """Per dataset, each seed's matched validation accuracy (the lower of the pair's kept
    accuracies), and the (variant, seed index) networks to stop there (the more accurate
    of each pair; none when the two are equal)."""
    target = {ds: np.array([min(b.kept_val_acc, n.kept_val_acc) for b, n in
                            zip(models.trained[ds, True], models.trained[ds, False])])
              for ds in datasets}  # fmt: skip
    todo = [
        (Variant(ds, bn), i)
        for ds in datasets
        for bn in (True, False)
        for i, t in enumerate(models.trained[ds, bn])
        if t.kept_val_acc > target[ds][i]
    ]
    return target, todo  # fmt: skip


def match_window(t: TrainedModel, target: float) -> tuple[float, float]:
    """Where to look for ``t``'s run at ``target`` validation accuracy: between the last of
    the rule's evaluations below it and the first at or above it (in epochs, from the full
    run's curve; an earlier dip above and back below the target is not searched)."""
    epoch, acc = t.curves["epoch"], t.curves["val_acc"]
    if not (acc >= target).any():
        raise ValueError(f"the run never reaches validation accuracy {target:.4f}")
    r = int(np.flatnonzero(acc >= target)[0])
    return (float(epoch[r - 1]) if r else 0.0), float(epoch[r])


def run_matched(params, models: Models) -> Matched:
    """Match every seed's BN and no-BN networks of ``params.matched_datasets`` at the lower of
    their kept validation accuracies (:class:`Matched`): the more accurate network's run is
    replayed and checked every ``params.match_check_every`` steps in its :func:`match_window`,
    keeping the check closest to the target. The matched networks are analysed with the
    chapter's B2 and B3 configs (cache hits for the networks that keep their weights)."""
    ds_list = factorial_datasets(params.matched_datasets)
    target, todo = match_plan(models, ds_list)
    variants = [Variant(ds, bn) for ds in ds_list for bn in (True, False)]
    done = classify.train_all(
        [(models.trained[v][i].cfg, models.trained[v][i].seed) for v, i in todo],
        models.splits,
        params.workers,
        [{"until_val_acc": float(target[v.dataset][i]), "check_every": params.match_check_every,
          "window": match_window(models.trained[v][i], float(target[v.dataset][i]))}
         for v, i in todo],
    )  # fmt: skip
    trained = {v: list(models.trained[v]) for v in variants}
    for (v, i), t in zip(todo, done):
        trained[v][i] = t
    matched = Models(trained, models.splits)
    kept = Models({v: models.trained[v] for v in variants}, models.splits)
    sparsity = analysis.SparsityConfig.from_params(params)
    clusters = analysis.ClusterConfig.from_params(params)
    return Matched(matched, kept, target,
                   analysis.sparsity(matched, sparsity, params.workers),
                   analysis.clusters(matched, clusters, params.workers))  # fmt: skip
