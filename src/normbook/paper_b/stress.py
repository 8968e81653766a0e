"""Stress tests of paper B's BatchNorm claims (chapter B4): does BatchNorm itself cause them?

1. **BN x learning rate** (:func:`run_factorial`, :func:`factorial_effects`). Paper B trains
   VGG-16 on CIFAR-10 with Adam at 1e-3 with BN and 1e-4 without, so BN and the learning rate
   change together. Every (dataset, BN, lr) cell of a 2 x 2 is trained with the paired seeds;
   the two cells the paper trains are exactly chapter B1's configs (cache hits, never
   retrained), only the two swapped cells train. Per seed: the BN main effect, the lr main
   effect and their interaction, as contrasts of the four cells.
2. **Cluster count** (:class:`SilhouetteConfig`, :func:`edge_share`). Silhouette scores of
   the class labels and of the k-means partition at the fixed k (the partition chapter B3
   scores with DBI), and how often k* sits at an end of its range, against isotropic noise
   (:func:`.null_clusters.isotropic_k_star`).
3. **Sparsity threshold** (:class:`ThresholdConfig`). The fraction of activations at most
   ``t`` times their layer's scale (mean absolute activation, or standard deviation), for a
   sweep of ``t``; ``t = 0`` counts exact zeros, the paper's measure.
4. **Held-out data**: chapter B2's and B3's analyses on test images
   (:mod:`.analysis` with ``split="test"``).
5. **Equal accuracy** (:class:`Matched`, :func:`run_matched`): chapter B2's and B3's
   analyses of BN and no-BN networks stopped at equal validation accuracy.

Analyses are cached per (trained model, config) as :mod:`.analysis` does, keyed by the code
of the analysis modules and of this module's analysis functions (``STRESS_CODE``). The claim
rules are in :mod:`.verdicts`; the ledgers that apply them to these results are at the end of
this module.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import torch
from sklearn.metrics import silhouette_score
from threadpoolctl import threadpool_limits

from ..core import cache
from ..core.claims import ALPHA, ClaimTest, Sesoi, t_interval
from ..core.fmt import join, sci
from ..core.verdicts import GRADES, decide, decide_parts
from ..core.workers import run_jobs, single_thread
from . import analysis, classify, convnets, reported, representations, verdicts
from .analysis import Clusters, Sparsity
from .classify import DATASETS, ClassifierConfig, Models, Splits, Trained, Variant, bn_label
from .sesoi import ACCURACY, DBI, SETTLE, SILHOUETTE, SPARSITY

Cell = tuple[str, bool, int]  # (dataset, batchnorm, lr index); see factorial_lrs

# --------------------------------------------------------------------- 1. BN x learning rate

# Which of the two learning rates (factorial_lrs) the paper trains each variant with.
PAPER_LR_INDEX = {("mnist", True): 0, ("mnist", False): 0, ("cifar10", True): 0,
                  ("cifar10", False): 1}  # fmt: skip


def factorial_datasets(choice: str) -> tuple[str, ...]:
    """The datasets of the 2 x 2 ("both", or one dataset's name)."""
    if choice == "both":
        return tuple(DATASETS)
    if choice not in DATASETS:
        raise ValueError(f"factorial datasets must be 'both' or one of {list(DATASETS)}")
    return (choice,)


def factorial_lrs(P) -> dict[str, tuple[float, float]]:
    """The two learning rates of each dataset's 2 x 2. Index 0 is the paper's BN learning
    rate; index 1 is the paper's no-BN one on CIFAR-10 and, on MNIST (where the paper trains
    both variants at one rate), the alternative ``mnist_lr_alt``."""
    return {"mnist": (P.mnist_lr, P.mnist_lr_alt), "cifar10": (P.cifar_lr_bn, P.cifar_lr_nobn)}


def factorial_configs(P) -> dict[Cell, ClassifierConfig]:
    """Every cell's config: chapter B1's config of the variant with the cell's learning rate
    (so the cells the paper trains *are* B1's configs)."""
    base, lrs = classify.configs(P).configs, factorial_lrs(P)
    return {
        (ds, bn, j): replace(base[ds, bn], lr=lrs[ds][j])
        for ds in factorial_datasets(P.factorial_datasets)
        for bn in (True, False)
        for j in (0, 1)
    }


def is_paper_cell(cell: Cell) -> bool:
    ds, bn, j = cell
    return PAPER_LR_INDEX[ds, bn] == j


@dataclass
class Factorial:
    """The 2 x 2 of every factorial dataset: trained models and their B2 / B3 analyses, per
    cell in seed order."""

    lrs: dict[str, tuple[float, float]]
    trained: dict[Cell, list[Trained]]
    sparsity: dict[Cell, list[cache.Entry]]
    clusters: dict[Cell, list[cache.Entry]]

    @property
    def datasets(self) -> list[str]:
        return sorted({c[0] for c in self.trained}, key=list(DATASETS).index)

    @property
    def seeds(self) -> list[int]:
        return [t.seed for t in next(iter(self.trained.values()))]

    def trained_here(self, paper: bool) -> int:
        """Models of the paper's cells (``paper``) or of the swapped cells trained by this run
        (the rest came from the cache)."""
        return sum(
            not t.hit for c, ts in self.trained.items() if is_paper_cell(c) == paper for t in ts
        )


def run_factorial(P, splits: dict[str, Splits]) -> Factorial:
    """Train (or load) every cell and seed, then analyse every model with the chapter's B2
    sparsity and B3 cluster configs (cache hits for models B2 / B3 analysed)."""
    cfgs = factorial_configs(P)
    cells = list(cfgs)
    done = classify.train_all([(cfgs[c], s) for c in cells for s in P.seeds], splits, P.workers)
    n = len(P.seeds)
    sp = analysis.analyse_all(analysis.SparsityConfig.of(P), done, splits, P.workers)
    cl = analysis.analyse_all(analysis.ClusterConfig.of(P), done, splits, P.workers)

    def per_cell(items):
        return {c: items[i * n : (i + 1) * n] for i, c in enumerate(cells)}

    return Factorial(factorial_lrs(P), per_cell(done), per_cell(sp), per_cell(cl))


@dataclass(frozen=True)
class Metric:
    """One outcome of the 2 x 2, reduced to one value per seed as chapters B1-B3 test it."""

    key: str
    label: str
    where: dict[str, str]  # the per-seed contrast, per dataset
    expect: dict[str, str]  # the paper's direction of BN's effect, per dataset
    unit: str = ".3f"
    sesoi: Sesoi = SPARSITY

    def describe(self, dataset: str) -> str:
        """``"layer sparsity (mean over conv layers)"``."""
        where = self.where[dataset]
        return f"{self.label} ({where})" if where else self.label


_ALL = "mean over conv layers"
METRICS = (
    Metric("accuracy", "test accuracy", {"mnist": "", "cifar10": ""},
           {"mnist": "higher", "cifar10": "higher"}, "+.2%", ACCURACY),
    Metric("sparsity", "layer sparsity", {"mnist": _ALL, "cifar10": _ALL},
           {"mnist": "lower", "cifar10": "higher"}, ".3f", SPARSITY),
    Metric("class_dbi", "class-based DBI", {"mnist": "deeper half", "cifar10": "deeper half"},
           {"mnist": "lower", "cifar10": "lower"}, ".2f", DBI),
    Metric("dbi_k_star", "DBI(k*)", {"mnist": "all layers but the last",
                                     "cifar10": "deeper half"},
           {"mnist": "higher", "cifar10": "lower"}, ".2f", DBI),
    Metric("settle", "layer where k* settles at the classes", {"mnist": "", "cifar10": ""},
           {"mnist": "lower", "cifar10": "lower"}, ".2f", SETTLE),
)  # fmt: skip
VERBS = {"higher": "raises", "lower": "lowers"}


def _stack(entries: list[cache.Entry], name: str) -> np.ndarray:
    return np.stack([np.asarray(e[name], float) for e in entries])


def metric_values(f: Factorial, metric: str, dataset: str) -> dict[tuple[bool, int], np.ndarray]:
    """One value per seed of every (BN, lr index) cell of ``dataset``: the per-seed contrast
    chapters B1-B3 test (mean over layers, deeper half, settling layer)."""
    out = {}
    for bn in (True, False):
        for j in (0, 1):
            c = (dataset, bn, j)
            if metric == "accuracy":
                out[bn, j] = np.array([t.test_acc for t in f.trained[c]])
            elif metric == "sparsity":
                out[bn, j] = verdicts.layer_mean(_stack(f.sparsity[c], "layer"))
            elif metric == "class_dbi":
                out[bn, j] = verdicts.deeper_half(_stack(f.clusters[c], "class_dbi"))
            elif metric == "dbi_k_star":
                v = _stack(f.clusters[c], "dbi_k_star")
                out[bn, j] = (
                    verdicts.layer_mean(v[:, :-1])
                    if dataset == "mnist"
                    else verdicts.deeper_half(v)
                )
            elif metric == "settle":
                out[bn, j] = verdicts.settling_layers(_stack(f.clusters[c], "k_star"))
            else:
                raise ValueError(f"unknown metric {metric!r}")
    return out


@dataclass(frozen=True)
class Effects:
    """Per seed, the contrasts of one metric's 2 x 2 (lr index 0 = the paper's BN rate)."""

    bn: np.ndarray  # BN − no BN, averaged over both learning rates (BN main effect)
    lr: np.ndarray  # lr 0 − lr 1, averaged over BN and no BN (learning-rate main effect)
    interaction: np.ndarray  # (BN − no BN at lr 0) − (BN − no BN at lr 1)
    paper: np.ndarray  # the paper's contrast: BN at its learning rate − no BN at its own
    bn_at: tuple[np.ndarray, np.ndarray]  # BN − no BN at lr 0 and at lr 1 (simple effects)
    lrs: tuple[float, float] = (float("nan"), float("nan"))  # the two learning rates
    cells: dict = field(default_factory=dict)  # (BN, lr index) -> the cell's per-seed values


def factorial_effects(
    y: dict[tuple[bool, int], np.ndarray], dataset: str, lrs=(float("nan"), float("nan"))
) -> Effects:
    """The contrasts of the cells ``y[bn, j]`` (one value per seed, paired by seed). On
    CIFAR-10 the paper's contrast is exactly the BN main effect plus the lr main effect."""
    at = tuple(np.asarray(y[True, j], float) - np.asarray(y[False, j], float) for j in (0, 1))
    lr = 0.5 * (y[True, 0] - y[True, 1] + y[False, 0] - y[False, 1])
    paper = y[True, PAPER_LR_INDEX[dataset, True]] - y[False, PAPER_LR_INDEX[dataset, False]]
    return Effects(0.5 * (at[0] + at[1]), np.asarray(lr, float), at[0] - at[1],
                   np.asarray(paper, float), at, tuple(lrs),
                   {k: np.asarray(v, float) for k, v in y.items()})  # fmt: skip


def all_effects(f: Factorial) -> dict[tuple[str, str], Effects]:
    """``factorial_effects`` of every (metric key, dataset)."""
    return {(m.key, ds): factorial_effects(metric_values(f, m.key, ds), ds, f.lrs[ds])
            for m in METRICS for ds in f.datasets}  # fmt: skip


def decomposition_error(e: Effects, dataset: str) -> float:
    """Largest |paper contrast − (BN main + lr main · sign)| over seeds: 0 up to rounding on
    CIFAR-10 (lr 0 is BN's, lr 1 no BN's); on MNIST the paper's contrast is the simple BN
    effect at lr 0, BN main + interaction / 2."""
    if dataset == "cifar10":
        return float(np.max(np.abs(e.paper - (e.bn + e.lr))))
    return float(np.max(np.abs(e.paper - (e.bn + 0.5 * e.interaction))))


# --------------------------------------------------------------------- 2-3. cached analyses


@dataclass(frozen=True)
class ThresholdConfig:
    """Sparsity at relative thresholds: |a| <= t * scale counts as zero, scale the layer's
    mean absolute activation ("mean_abs") or standard deviation ("std") over the measured
    images; t = 0 counts exact zeros."""

    split: str = "train"
    n_images: int = 5_000
    image_seed: int = 0
    thresholds: tuple[float, ...] = (0.0, 0.01, 0.1)
    scale: str = "mean_abs"
    batch_size: int = 500

    kind = "b_threshold"

    def __post_init__(self):
        if self.scale not in ("mean_abs", "std"):
            raise ValueError(f"scale must be 'mean_abs' or 'std', got {self.scale!r}")
        if min(self.thresholds) < 0:
            raise ValueError(f"thresholds must be >= 0, got {self.thresholds}")

    @classmethod
    def of(cls, P) -> ThresholdConfig:
        return cls(P.sparsity_split, P.sparsity_images,
                   thresholds=tuple(sorted({0.0, *map(float, P.rel_thresholds)})),
                   scale=P.threshold_scale)  # fmt: skip


@dataclass(frozen=True)
class SilhouetteConfig:
    """Silhouette scores on raw layer features of ``silhouette_images`` of chapter B3's cluster
    images: of the class labels, and of B3's own k-means partition at its fixed k (read from
    its cached analysis, ``clusters``, not fitted again)."""

    clusters: analysis.ClusterConfig = analysis.ClusterConfig()
    silhouette_images: int = 1_000
    batch_size: int = 500

    kind = "b_silhouette"

    @property
    def split(self) -> str:
        return self.clusters.split

    @property
    def n_images(self) -> int:
        return self.clusters.n_images

    @property
    def image_seed(self) -> int:
        return self.clusters.image_seed

    @classmethod
    def of(cls, P) -> SilhouetteConfig:
        return cls(analysis.ClusterConfig.of(P), P.silhouette_images)

    def subset(self) -> np.ndarray:
        """Which of the cluster images are scored (sorted indices)."""
        m = min(self.silhouette_images, self.n_images)
        return np.sort(np.random.default_rng(self.image_seed).choice(self.n_images, m, False))


def _at_most(limit: float) -> np.float32:
    """The largest float32 not above ``limit``: for float32 ``a``, ``a <= limit`` exactly when
    ``a <= _at_most(limit)``, so the counts compare float32 arrays without a float64 copy."""
    f = np.float32(limit)
    return f if f <= limit else np.nextafter(f, np.float32(-np.inf))


def threshold_stats(model, x: torch.Tensor, cfg: ThresholdConfig) -> dict[str, np.ndarray]:
    """Per layer: ``scale`` [L] and ``sparsity`` [L, thresholds] (two streamed passes: the
    scale, summed in float64, then the counts)."""
    names = model.conv_layer_names()
    sums = np.zeros((len(names), 3))  # sum a, sum |a|, sum a^2
    counts = np.zeros(len(names))

    def batches():
        for i in range(0, len(x), cfg.batch_size):
            acts = convnets.capture_activations(model, x[i : i + cfg.batch_size])
            yield [np.asarray(acts[n], np.float32) for n in names]

    for acts in batches():
        for j, a in enumerate(acts):
            if cfg.scale == "mean_abs":
                sums[j, 1] += np.abs(a).sum(dtype=np.float64)
            else:
                sums[j, 0] += a.sum(dtype=np.float64)
                sums[j, 2] += np.square(a, dtype=np.float64).sum()
            counts[j] += a.size
    mean, mean_abs, sq = (sums / counts[:, None]).T
    scale = mean_abs if cfg.scale == "mean_abs" else np.sqrt(np.maximum(sq - mean**2, 0.0))
    limits = [[_at_most(t * s) for t in cfg.thresholds] for s in scale]
    zeros = np.zeros((len(names), len(cfg.thresholds)))
    for acts in batches():
        for j, a in enumerate(acts):
            size = np.abs(a)
            for i, t in enumerate(cfg.thresholds):
                zeros[j, i] += np.count_nonzero(a == 0 if t == 0 else size <= limits[j][i])
    return {"scale": scale, "sparsity": zeros / counts[:, None],
            "thresholds": np.asarray(cfg.thresholds)}  # fmt: skip


def silhouette_stats(
    model, x: torch.Tensor, y: np.ndarray, partition: np.ndarray, cfg: SilhouetteConfig
) -> dict:
    """Per layer [L]: ``class_silhouette`` (labels as clusters) and ``kmeans_silhouette`` (of
    ``partition`` [L, N], chapter B3's k-means labels of the N cluster images ``x``), on
    ``cfg.subset()`` of the images."""
    names, sub = model.conv_layer_names(), cfg.subset()
    out = {k: np.zeros(len(names)) for k in ("class_silhouette", "kmeans_silhouette")}
    acts = convnets.capture_activations(model, x[sub], batch_size=cfg.batch_size)
    for j, name in enumerate(names):
        feats = representations.to_features(acts.pop(name), cfg.clusters.features)
        feats = feats.astype(np.float32)
        out["class_silhouette"][j] = silhouette_score(feats, y[sub])
        labels = partition[j][sub]
        ok = len(np.unique(labels)) > 1
        out["kmeans_silhouette"][j] = silhouette_score(feats, labels) if ok else 0.0
    return out


StressConfig = ThresholdConfig | SilhouetteConfig


def _compute(
    acfg: StressConfig, cfg: ClassifierConfig, state: dict, splits: Splits, partition=None
) -> dict:
    t0 = time.perf_counter()
    with single_thread(), threadpool_limits(1):
        model = classify.model_from_state(cfg, state).to(cfg.device)
        x, y = analysis.select_images(splits, acfg.split, acfg.n_images, acfg.image_seed)
        if isinstance(acfg, ThresholdConfig):
            arrays = threshold_stats(model, x, acfg)
        else:
            arrays = silhouette_stats(model, x, y, partition, acfg)
    arrays["seconds"] = np.array(time.perf_counter() - t0)
    return arrays


def _job(subsets: dict, acfg: StressConfig, cfg: ClassifierConfig, state: dict, key: tuple,
         partition=None):  # fmt: skip
    return _compute(acfg, cfg, state, subsets[key], partition)


# The code that determines these analyses' results keys their cache entries: the analysis
# modules and this module's analysis code (inspect.getsource of each), so editing the rules
# or ledgers below never recomputes an analysis.
STRESS_CODE = analysis.ANALYSIS_CODE + (
    ThresholdConfig, SilhouetteConfig, _at_most, threshold_stats, silhouette_stats, _compute,
)  # fmt: skip
STRESS_STEPS = {kind: cache.step(kind, *STRESS_CODE) for kind in ("b_threshold", "b_silhouette")}


def analyse_all(
    acfg: StressConfig,
    trained: list[Trained],
    splits: dict[str, Splits],
    workers: int = 1,
    partitions: list[np.ndarray] | None = None,
) -> list[cache.Entry]:
    """As :func:`.analysis.analyse_all`, for this module's analyses; the silhouettes take
    each model's k-means partition from chapter B3's analysis (``partitions``, one per
    model; ``acfg.clusters`` made them, so it is part of the key)."""
    if isinstance(acfg, SilhouetteConfig) and partitions is None:
        raise ValueError("silhouettes need each model's fixed-k partition (``partitions``)")
    keys = [{"train": t.key(splits[t.cfg.dataset].data_id), "analysis": asdict(acfg)}
            for t in trained]  # fmt: skip

    def analyse_missing(idx: list[int]):
        subsets = {classify.split_key(trained[i].cfg): splits[trained[i].cfg.dataset].of(
            trained[i].cfg) for i in idx}  # fmt: skip
        jobs = [(acfg, trained[i].cfg, {k: v.numpy() for k, v in trained[i].state.items()},
                 classify.split_key(trained[i].cfg), None if partitions is None else partitions[i])
                for i in idx]  # fmt: skip
        for j, arrays in run_jobs(_job, jobs, subsets, workers, desc=f"{acfg.kind[2:]} analysis"):
            yield idx[j], cache.Entry(arrays)

    return STRESS_STEPS[acfg.kind].cached_each(keys, analyse_missing)


@dataclass
class Thresholds:
    """Sparsity at every relative threshold: arrays [seeds, layers, thresholds] per variant."""

    config: ThresholdConfig
    sparsity: dict[Variant, np.ndarray]
    scale: dict[Variant, np.ndarray]  # [seeds, layers]
    layer_names: dict[str, list[str]]
    n_models: int
    cache_hits: int
    seconds: float

    @property
    def thresholds(self) -> np.ndarray:
        return np.asarray(self.config.thresholds)

    def layer_mean(self, dataset: str, bn: bool) -> np.ndarray:
        """Mean over conv layers: [seeds, thresholds]."""
        return self.sparsity[dataset, bn].mean(axis=1)


@dataclass
class Silhouettes:
    """Silhouette scores, arrays [seeds, layers] per variant."""

    config: SilhouetteConfig
    class_silhouette: dict[Variant, np.ndarray]
    kmeans_silhouette: dict[Variant, np.ndarray]
    layer_names: dict[str, list[str]]
    n_models: int
    cache_hits: int
    seconds: float


def _per_variant(acfg: StressConfig, models: Models, workers: int, partitions=None) -> dict:
    entries = iter(analyse_all(acfg, models.all, models.splits, workers, partitions))
    return {v: [next(entries) for _ in ts] for v, ts in models.trained.items()}


def thresholds(models: Models, config: ThresholdConfig, workers: int = 1) -> Thresholds:
    """The threshold sweep of every trained model (cached per model and config)."""
    e = _per_variant(config, models, workers)
    return Thresholds(config, analysis._stack(e, "sparsity"), analysis._stack(e, "scale"),
                      **analysis._bookkeeping(models, e))  # fmt: skip


def silhouettes(
    models: Models, clusters: Clusters, config: SilhouetteConfig, workers: int = 1
) -> Silhouettes:
    """Silhouette scores of every trained model (cached per model and config), of the k-means
    partitions in ``clusters`` (chapter B3's analysis of the same models with
    ``config.clusters``)."""
    shape = {v: len(ts) for v, ts in models.trained.items()}
    if (
        clusters.config != config.clusters
        or {v: len(p) for v, p in clusters.fixed_k_labels.items()} != shape
    ):
        raise ValueError("silhouettes need the clusters of the same models and cluster config")
    parts = [p for v in models.trained for p in clusters.fixed_k_labels[v]]
    e = _per_variant(config, models, workers, parts)
    names = ("class_silhouette", "kmeans_silhouette")
    return Silhouettes(config, *(analysis._stack(e, n) for n in names),
                       **analysis._bookkeeping(models, e))  # fmt: skip


def edge_share(
    k_star: dict[Variant, np.ndarray], dataset: str, ends: tuple[int, int]
) -> np.ndarray:
    """Per seed: the share of (layer, variant) whose k* is an end of the searched range."""
    return np.mean([np.isin(k_star[dataset, bn], ends).mean(axis=1) for bn in (True, False)], 0)


def noise_edge_share(noise, ends: tuple[int, int]) -> float:
    """The share of isotropic-noise draws whose k* is an end of the range."""
    return float(np.isin(noise.k_star, ends).mean())


def on_test_images(config):
    """The same analysis config on the held-out test images; for clusters, the class-based
    DBI only (the held-out claims need no k-means)."""
    if isinstance(config, analysis.ClusterConfig):
        return replace(config, split="test", kmeans=False)
    return replace(config, split="test")


def described(values) -> str:
    """A contrast nobody claimed a direction for, described: mean [CLAIM_CONFIDENCE t
    interval] over seeds."""
    v = np.asarray(values, float)
    lo, hi = t_interval(v)
    return f"{v.mean():+.3g} [{lo:+.3g}, {hi:+.3g}]" if v.size else "n/a"


# --------------------------------------------------------------------- 5. accuracy-matched


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

    def stopped_early(self) -> list[tuple[Trained, Trained]]:
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


def match_window(t: Trained, target: float) -> tuple[float, float]:
    """Where to look for ``t``'s run at ``target`` validation accuracy: between the last of
    the rule's evaluations below it and the first at or above it (in epochs, from the full
    run's curve; an earlier dip above and back below the target is not searched)."""
    epoch, acc = t.curves["epoch"], t.curves["val_acc"]
    if not (acc >= target).any():
        raise ValueError(f"the run never reaches validation accuracy {target:.4f}")
    r = int(np.flatnonzero(acc >= target)[0])
    return (float(epoch[r - 1]) if r else 0.0), float(epoch[r])


def run_matched(P, models: Models) -> Matched:
    """Match every seed's BN and no-BN networks of ``P.matched_datasets`` at the lower of
    their kept validation accuracies (:class:`Matched`): the more accurate network's run is
    replayed and checked every ``P.match_check_every`` steps in its :func:`match_window`,
    keeping the check closest to the target. The matched networks are analysed with the
    chapter's B2 and B3 configs (cache hits for the networks that keep their weights)."""
    ds_list = factorial_datasets(P.matched_datasets)
    target, todo = match_plan(models, ds_list)
    variants = [Variant(ds, bn) for ds in ds_list for bn in (True, False)]
    done = classify.train_all(
        [(models.trained[v][i].cfg, models.trained[v][i].seed) for v, i in todo],
        models.splits,
        P.workers,
        [{"until_val_acc": float(target[v.dataset][i]), "check_every": P.match_check_every,
          "window": match_window(models.trained[v][i], float(target[v.dataset][i]))}
         for v, i in todo],
    )  # fmt: skip
    trained = {v: list(models.trained[v]) for v in variants}
    for (v, i), t in zip(todo, done):
        trained[v][i] = t
    matched = Models(trained, models.splits)
    kept = Models({v: models.trained[v] for v in variants}, models.splits)
    return Matched(matched, kept, target,
                   analysis.sparsity(matched, analysis.SparsityConfig.of(P), P.workers),
                   analysis.clusters(matched, analysis.ClusterConfig.of(P), P.workers))  # fmt: skip


def matched_glue(m: Matched, rows: dict) -> dict[str, str]:
    """Glue-able prose of the matched comparison: each row's grade ("not run" for datasets not
    matched), per dataset which networks were taken at the matched accuracy, where, and the
    remaining accuracy difference."""
    out = {f"{ds}_{k}": "not run" for ds in DATASETS for k in ("sparsity", "class_dbi")}
    out |= grades(rows) | {"summary": grade_summary(rows)}
    for ds in DATASETS:
        if ds not in m.datasets:
            out[f"{ds}_how"] = "not run"
            continue
        parts = []
        for bn in (True, False):
            pairs = [(t, k) for t, k in zip(m.models.trained[ds, bn], m.kept.trained[ds, bn])
                     if t.stage]  # fmt: skip
            if pairs:
                at = np.mean([t.reached[0] if t.reached else np.nan for t, _ in pairs])
                kept = np.mean([k.best_epoch for _, k in pairs])
                parts.append(f"{bn_label(bn)} taken at the matched accuracy in {len(pairs)} "
                             f"of {len(m.models.seeds)} seeds, at epoch {at:.2f} on average "
                             f"instead of its kept epoch {kept:.2f}")  # fmt: skip
        out[f"{ds}_how"] = (
            f"{'; '.join(parts) or 'no network needed matching'}; matched validation accuracy "
            f"{m.target[ds].mean():.1%} on average (largest remaining difference "
            f"{m.gap(ds).max():.2%})"
        )
    return out


def matched_checks(m: Matched, tolerance: float) -> list[verdicts.Check]:
    """The matched networks are the full runs replayed (their validation curves are a prefix
    of chapter B1's, bit for bit; vacuously true when no pair needed a replay), and every pair
    is matched within ``tolerance``."""
    pairs = m.stopped_early()
    same = all(np.array_equal(t.curves[c], k.curves[c][: len(t.curves[c])])
               for t, k in pairs for c in ("train_loss", "val_loss"))  # fmt: skip
    gap = max(float(m.gap(ds).max()) for ds in m.datasets)
    missed = sum(t.reached is None for t, _ in pairs)
    replayed = "no network needed a replay (each pair's kept accuracies are equal)"
    if pairs:
        replayed = (
            f"{len(pairs)} networks replayed; training and validation losses "
            f"{'identical' if same else 'differ'} at every shared evaluation"
        )
    return [
        verdicts.Check("B", "Each network taken at the matched accuracy retraces its full "
                       "run (chapter B1's) bit for bit up to that step", same, replayed),
        verdicts.Check("B", f"Every pair is matched: validation accuracies differ by at most "
                       f"{tolerance:.1%}", gap <= tolerance and not missed,
                       f"largest difference {gap:.2%}; {missed} networks without a check "
                       "in their window"),
    ]  # fmt: skip


# --------------------------------------------------------------------- ledgers and checks

NAMES = verdicts.DATASET_NAMES


def cell_controls(f: Factorial, dataset: str, cells=None) -> tuple[verdicts.Control, ...]:
    """The cells of ``dataset``'s 2 x 2 (``cells``: (BN, lr index) pairs; default all four)
    must have learned (:func:`verdicts.learned`)."""
    cells = cells or [(bn, j) for bn in (True, False) for j in (0, 1)]
    acc = {(bn, j): np.array([t.test_acc for t in f.trained[dataset, bn, j]]) for bn, j in cells}
    return tuple(
        verdicts.Control(
            f"{NAMES[dataset]} {bn_label(bn)} at lr {sci(f.lrs[dataset][j])}",
            c.check, c.passed, c.evidence,
        )
        for (bn, j), a in acc.items()
        for c in verdicts.learned({(dataset, bn): a}, [verdicts.Variant(dataset, bn)])
    )  # fmt: skip


def _simple(e: Effects, m: Metric, dataset: str, j: int) -> ClaimTest:
    """BN's simple effect at learning rate j, signed the paper's way, as a claim test."""
    bn, nobn = e.cells[True, j], e.cells[False, j]
    return verdicts.direction(bn, nobn, m.expect[dataset],
                              f"{NAMES[dataset]} {m.describe(dataset)} at lr {sci(e.lrs[j])}",
                              m.sesoi)  # fmt: skip


def _lr_simple(e: Effects, m: Metric, bn: bool) -> ClaimTest:
    """The paper's BN learning rate (index 0) against the other (index 1), with or without
    BN, signed the way the paper attributes to BN (CIFAR-10)."""
    return verdicts.direction(e.cells[bn, 0], e.cells[bn, 1], m.expect["cifar10"],
                              f"CIFAR-10 {m.describe('cifar10')}, {bn_label(bn)}: lr "
                              f"{sci(e.lrs[0])} vs {sci(e.lrs[1])}", m.sesoi)  # fmt: skip


def factorial_ledger(
    effects: dict[tuple[str, str], Effects], f: Factorial
) -> dict[tuple[str, str], verdicts.Verdict]:
    """Per dataset and metric: does BatchNorm itself move the metric the paper's way? Graded
    at each learning rate of the 2 x 2 separately (BN's two simple effects, two parts of one
    claim: both reproduced, "BN itself" holds; one, partly), never on the main effect, which
    averages simple effects that may have opposite signs. The interaction (BN's effect at the
    paper's BN rate minus at the other, signed the paper's way) is shown with its interval."""
    rows = {}
    for ds in f.datasets:
        controls = cell_controls(f, ds)
        for m in METRICS:
            e = effects[m.key, ds]
            tests = [_simple(e, m, ds, j) for j in (0, 1)]
            # each learning rate's part rests on that rate's two cells only
            parts = [(f"at lr {sci(e.lrs[j])}",
                      decide(t, cell_controls(f, ds, [(True, j), (False, j)]), rising=None))
                     for j, t in enumerate(tests)]  # fmt: skip
            signed = [verdicts.signed(e.cells[True, j], e.cells[False, j], m.expect[ds],
                                      m.sesoi is DBI) for j in (0, 1)]  # fmt: skip
            rows[ds, m.key] = verdicts.Verdict(
                "B", f"{NAMES[ds]}: BN itself {VERBS[m.expect[ds]]} the {m.describe(ds)}, BN and "
                "no BN at the same learning rate, at each of two rates", decide_parts(parts),
                max(tests, key=lambda t: t.p if t.p == t.p else 2), m.sesoi,
                f"BN's effect the paper's way at lr {sci(e.lrs[0])}: "
                f"{described(signed[0])}, at {sci(e.lrs[1])}: {described(signed[1])}; "
                f"interaction {described(signed[0] - signed[1])}; "
                + "; ".join(f"{n}: {g.verdict}" for n, g in parts),
                unit=m.unit, controls=controls,
            )  # fmt: skip
    return rows


def confound_ledger(
    effects: dict[tuple[str, str], Effects], f: Factorial
) -> dict[str, verdicts.Verdict]:
    """On CIFAR-10 (if in the 2 x 2): per metric, does the learning rate the paper gives BN,
    by itself, move the metric the way the paper attributes to BN? Graded with BN and without
    BN separately (two parts: both reproduced, the confound is real for either variant)."""
    rows = {}
    if "cifar10" not in f.datasets:
        return rows
    controls = cell_controls(f, "cifar10")
    for m in METRICS:
        e = effects[m.key, "cifar10"]
        tests = [_lr_simple(e, m, bn) for bn in (True, False)]
        parts = [(bn_label(bn), decide(t, cell_controls(f, "cifar10", [(bn, 0), (bn, 1)]),
                                       rising=None))
                 for bn, t in zip((True, False), tests)]  # fmt: skip
        rows[m.key] = verdicts.Verdict(
            "B", "Critics' confound, CIFAR-10: the paper's higher BN learning rate by itself "
            f"{VERBS[m.expect['cifar10']]} the {m.describe('cifar10')}, with BN and without",
            decide_parts(parts), max(tests, key=lambda t: t.p if t.p == t.p else 2), m.sesoi,
            f"paper's contrast {_mean(e.paper, m.unit)} = BN main {_mean(e.bn, m.unit)} + "
            f"lr main {_mean(e.lr, m.unit)} (mean over seeds); "
            + "; ".join(f"{n}: {g.verdict}" for n, g in parts),
            unit=m.unit, controls=controls,
        )  # fmt: skip
    return rows


def _mean(values, unit: str) -> str:
    v = np.asarray(values, float)
    return f"{v.mean():{unit}}" if v.size else "n/a"


def cluster_count_ledger(
    sil: Silhouettes, models: Models
) -> dict[tuple[str, str], verdicts.Verdict]:
    """Per dataset: purer clusters with BN by the silhouette score (class labels, and the
    k-means partition at the fixed k), deeper half, higher with BN, against
    :data:`.sesoi.SILHOUETTE`."""
    rows, k = {}, sil.config.clusters.fixed_k
    for ds in DATASETS:
        controls = verdicts.learned(models.accuracy, verdicts.both(ds))
        for key, values, what in (
            ("class_sil", sil.class_silhouette, "class-based silhouette"),
            ("kmeans_sil", sil.kmeans_silhouette, f"silhouette of k-means at k = {k}"),
        ):
            c = verdicts.Contrast.of(values, ds)
            test = c.test("deeper", "higher", f"{NAMES[ds]} {what}", SILHOUETTE)
            rows[ds, key] = verdicts.Verdict(
                "B (ours)", f"(ours) {NAMES[ds]}: clusters are purer with BN by the {what} "
                "(higher), deeper half", decide(test, controls, rising=None), test, SILHOUETTE,
                verdicts._seed_counts(verdicts.deeper_half(c.bn), verdicts.deeper_half(c.nobn),
                                      "higher", ".3f"), unit=".3f", controls=controls,
            )  # fmt: skip
    return rows


def threshold_ledger(thr: Thresholds, models: Models) -> dict[str, verdicts.Verdict]:
    """Per dataset: the paper's sparsity direction (MNIST BN less sparse, CIFAR-10 more) at
    every relative threshold, one part per threshold (every part reproduced: it survives
    every threshold; some: partly, naming which)."""
    rows = {}
    for ds, expect in (("mnist", "lower"), ("cifar10", "higher")):
        bn, nobn = thr.layer_mean(ds, True), thr.layer_mean(ds, False)
        controls = verdicts.learned(models.accuracy, verdicts.both(ds))
        tests = [verdicts.direction(bn[:, i], nobn[:, i], expect,
                                    f"{NAMES[ds]} layer sparsity at t = {t:g}", SPARSITY)
                 for i, t in enumerate(thr.thresholds)]  # fmt: skip
        parts = [(f"t = {t:g}", decide(test, controls, rising=None))
                 for t, test in zip(thr.thresholds, tests)]  # fmt: skip
        rows[ds] = verdicts.Verdict(
            "B", f"{NAMES[ds]}: BN representations are {'less' if expect == 'lower' else 'more'}"
            f" sparse at every threshold t × {thr.config.scale} (t = "
            f"{', '.join(f'{t:g}' for t in thr.thresholds)})", decide_parts(parts),
            max(tests, key=lambda t: t.p if t.p == t.p else 2), SPARSITY,
            "; ".join(f"{n}: {g.verdict}" for n, g in parts), controls=controls,
        )  # fmt: skip
    return rows


def direction_ledger(
    sparsity: Sparsity, clusters: Clusters, where: str, models: Models
) -> dict[tuple[str, str], verdicts.Verdict]:
    """Chapters B2's and B3's direction claims on other networks or images (``where``: "test
    images", "equal validation accuracy"): layer sparsity (MNIST BN lower, CIFAR-10 higher;
    mean over conv layers) and class-based DBI (BN lower, deeper half, relative), each by
    :func:`verdicts.direction`, for every dataset the analyses cover."""
    rows, dss = {}, sorted({v[0] for v in sparsity.layer}, key=list(DATASETS).index)
    for ds in dss:
        expect = "lower" if ds == "mnist" else "higher"
        controls = verdicts.learned(models.accuracy, verdicts.both(ds))
        c = verdicts.Contrast.of(sparsity.layer, ds)
        test = c.test("layers", expect, f"{NAMES[ds]} layer sparsity ({where})", SPARSITY)
        rows[ds, "sparsity"] = verdicts.Verdict(
            "B", f"{NAMES[ds]} ({where}): BN representations are "
            f"{'less' if expect == 'lower' else 'more'} sparse",
            decide(test, controls, rising=None), test, SPARSITY,
            verdicts._seed_counts(verdicts.layer_mean(c.bn), verdicts.layer_mean(c.nobn), expect),
            controls=controls,
        )  # fmt: skip
    for ds in dss:
        controls = verdicts.learned(models.accuracy, verdicts.both(ds))
        c = verdicts.Contrast.of(clusters.class_dbi, ds)
        test = c.test("deeper", "lower", f"{NAMES[ds]} class-based DBI ({where})", DBI)
        rows[ds, "class_dbi"] = verdicts.Verdict(
            "B", f"{NAMES[ds]} ({where}): class-based clusters are purer with BN, deeper "
            "half", decide(test, controls, rising=None), test, DBI,
            verdicts._seed_counts(verdicts.deeper_half(c.bn), verdicts.deeper_half(c.nobn),
                                  "lower", ".2f"), unit=".2f", controls=controls,
        )  # fmt: skip
    return rows


def checks(
    P,
    f: Factorial,
    effects: dict,
    thr: Thresholds,
    sparsity: Sparsity,
) -> list[verdicts.Check]:
    """What holds by construction: the paper's cells are chapter B1's configs; the paper's
    contrast decomposes into the 2 x 2's effects; the sweep at t = 0 is B2's exact-zero
    sparsity."""
    b1 = classify.configs(P).configs
    same = all(f.trained[c][0].cfg == b1[c[0], c[1]] for c in f.trained if is_paper_cell(c))
    worst = max(decomposition_error(e, ds) for (_, ds), e in effects.items())
    zero = max(float(np.abs(thr.sparsity[v][..., 0] - sparsity.layer[v]).max())
               for v in sparsity.layer) if sparsity.config.eps == 0 else 0.0  # fmt: skip
    cfgs = {c: ts[0].cfg for c, ts in f.trained.items()}
    init = max(verdicts._max_init_difference(cfgs[ds, True, 0], cfgs[c], s)[0]
               for c in cfgs for ds in [c[0]] for s in f.seeds)  # fmt: skip
    splits = {(classify.split_key(cfg), cfg.batch_size) for cfg in cfgs.values()}
    return [
        verdicts.Check("B", "The four cells of each seed start from identical conv and linear "
                       "weights and train on the same images, in the same minibatch order",
                       init == 0.0 and len(splits) == len(f.datasets),
                       f"largest initial-weight difference from the BN cell at lr₁: {init:g}; "
                       "one training subset and minibatch size per dataset: "
                       f"{'yes' if len(splits) == len(f.datasets) else 'no'}"),
        verdicts.Check("B", "The cells the paper trains are chapter B1's configs (its cached "
                       "models, not retrained)", same,
                       f"{f.trained_here(paper=True)} paper-cell models trained by this run, "
                       f"{f.trained_here(paper=False)} swapped-cell models"),
        verdicts.Check("B", "The paper's contrast = BN main + lr main effect (CIFAR-10), "
                       "= BN main + interaction / 2 (MNIST), per seed", worst < 1e-9,
                       f"largest deviation {worst:.2g}"),
        verdicts.Check("B", "The threshold sweep at t = 0 is chapter B2's exact-zero sparsity",
                       zero < 1e-12, f"largest difference {zero:.2g} (rounding: B2 sums "
                       "per-batch fractions, the sweep counts)"),
    ]  # fmt: skip


def setup_glue(P) -> dict[str, object]:
    """The chapter's settings as prose, for its text: datasets and learning rates of the
    2 x 2, thresholds, image counts, the null's shape, the matched comparison's knobs and the
    smallest attainable p-values."""
    lrs, fact = factorial_lrs(P), factorial_datasets(P.factorial_datasets)
    return {
        "paper_lr_bn": sci(reported.LR["cifar10", True]),
        "paper_lr_nobn": sci(reported.LR["cifar10", False]),
        "paper_lr_mnist": sci(reported.LR["mnist", True]),
        "paper_k_range": "{}..{}".format(*reported.K_RANGE),
        "k_range": f"{P.k_min}..{P.k_max}",
        "fact_datasets": " and ".join(NAMES[d] for d in fact),
        "fact_lrs": "; ".join(f"{NAMES[d]} {sci(lrs[d][0])} and {sci(lrs[d][1])}" for d in fact),
        "seeds": join(P.seeds),
        "n_seeds": len(P.seeds),
        "scale": P.threshold_scale,
        "thresholds": join(sorted({0.0, *P.rel_thresholds}), "g"),
        "sil_images": f"{P.silhouette_images:,}",
        "cl_images": f"{P.cluster_images:,}",
        "null_shape": f"{P.cluster_images:,} points in {P.pca_components or P.null_dim} dimensions",
        "null_draws": P.null_draws,
        "alpha": ALPHA,
        "fixed_k": P.fixed_k,
        "m_every": f"{P.match_check_every:,}",
        "m_tolerance": f"{P.match_tolerance:.1%}",
        "m_datasets": " and ".join(NAMES[d] for d in factorial_datasets(P.matched_datasets)),
    }


def cluster_count_glue(rows: dict, clusters: Clusters, noise, noise_share: float) -> dict[str, str]:
    """Section 2's prose: each row's grade, the noise null's k* and share at an end of the
    range, and per dataset the share of (layer, variant, seed) cases whose k* is at an end."""
    ends = (clusters.config.k_min, clusters.config.k_max)
    return grades(rows) | {
        "noise_k": join(noise.k_star),
        "noise_share": f"{noise_share:.0%}",
        "summary": grade_summary(rows),
        **{f"edge_{ds}": f"{edge_share(clusters.k_star, ds, ends).mean():.0%}" for ds in DATASETS},
    }


def grade_summary(rows) -> str:
    """How the rows (a list, or a dict's values) graded: ``"6 claims: 3 reproduced, 2 refuted,
    1 not shown at this budget"``."""
    rows = list(rows.values()) if isinstance(rows, dict) else list(rows)
    counts = {g: sum(r.verdict == g for r in rows) for g in GRADES}
    parts = [f"{n} {g}" for g, n in counts.items() if n]
    return f"{len(rows)} claims: " + ", ".join(parts) if rows else "no claims"


def sign_flips(effects: dict[tuple[str, str], Effects]) -> str:
    """The (dataset, metric) pairs whose mean BN − no BN difference has opposite signs at the
    two learning rates, or "none"."""
    labels = {m.key: m.label for m in METRICS}
    flips = [f"{NAMES[ds]} {labels[key]}" for (key, ds), e in effects.items()
             if np.sign(e.bn_at[0].mean()) * np.sign(e.bn_at[1].mean()) < 0]  # fmt: skip
    return ", ".join(flips) or "none"


def cifar_split(effects: dict[tuple[str, str], Effects]) -> dict[str, str]:
    """Per metric: the paper's CIFAR-10 contrast split into the BN and the learning-rate main
    effects (means over seeds), as prose; "not run" without a CIFAR-10 2 x 2."""
    out = {}
    for m in METRICS:
        e = effects.get((m.key, "cifar10"))
        u = m.unit.replace("+", "")
        out[m.key] = "not run" if e is None else (
            f"{_mean(e.paper, u)} = {_mean(e.bn, u)} (BN main effect, averaged over the two "
            f"rates) + {_mean(e.lr, u)} (learning-rate main effect)")  # fmt: skip
    return out


def factorial_grades(bn_rows: dict, conf_rows: dict) -> dict[str, str]:
    """Each 2 x 2 row's grade under a glue-able name (``bn_cifar10_accuracy``,
    ``conf_accuracy``), "not run" for datasets outside the 2 x 2."""
    out = {f"bn_{ds}_{m.key}": "not run" for ds in DATASETS for m in METRICS}
    out |= {f"conf_{m.key}": "not run" for m in METRICS}
    out |= {f"bn_{ds}_{key}": v.verdict for (ds, key), v in bn_rows.items()}
    return out | {f"conf_{key}": v.verdict for key, v in conf_rows.items()}


def grades(rows: dict) -> dict[str, str]:
    """Each row's grade under a glue-able name: key ``("mnist", "edge")`` -> ``mnist_edge``."""
    return {"_".join([k] if isinstance(k, str) else k): v.verdict for k, v in rows.items()}


def attribution(bn_rows: dict, conf_rows: dict) -> dict[str, str]:
    """Per metric, whose effect the paper's CIFAR-10 difference is, by the graded claims: BN's
    own effect at each learning rate and the learning rate's with BN and without, each the
    paper's way; a grade short of reproduced is named, never read as the other side's. "not
    run" without a CIFAR-10 2 x 2."""
    out = {}
    for m in METRICS:
        bn, lr = bn_rows.get(("cifar10", m.key)), conf_rows.get(m.key)
        if bn is None or lr is None:
            out[m.key] = "not run"
            continue
        b, c = bn.verdict, lr.verdict
        R, P = verdicts.REPRODUCED, verdicts.PARTLY
        bn_part = {R: "BatchNorm's at both learning rates", P: "BatchNorm's at one learning "
                   "rate only"}.get(b)  # fmt: skip
        lr_part = {R: "the learning rate's, with BN and without", P: "the learning rate's in "
                   "one variant only"}.get(c)  # fmt: skip
        if bn_part and lr_part:
            out[m.key] = f"both {bn_part} and {lr_part}"
        elif bn_part or lr_part:
            other = "the learning rate's own effect" if bn_part else "BatchNorm's own effect"
            out[m.key] = f"{bn_part or lr_part}; {other} is {c if bn_part else b}"
        else:
            out[m.key] = f"neither's by these tests (BatchNorm's: {b}; the learning rate's: {c})"
    return out
