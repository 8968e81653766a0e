"""Chapter B4's BN x learning-rate 2 x 2: does BatchNorm itself, or the learning rate it
came with, move what paper B reports?

Paper B trains VGG-16 on CIFAR-10 with Adam at 1e-3 with BN and 1e-4 without, so BN and the
learning rate change together. Every (dataset, BN, lr) cell of a 2 x 2 is trained with the
paired seeds (:func:`run_factorial`); the two cells the paper trains are exactly chapter B1's
configs (cache hits, never retrained), only the two swapped cells train. Per seed: the BN main
effect, the lr main effect and their interaction, as contrasts of the four cells
(:func:`factorial_effects`). Computation only: the claims graded on it are in
:mod:`.claims`, its prose in :mod:`.text`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from normbook.grading.claims import Sesoi
from normbook.paper_b.cached import analysis
from normbook.paper_b.grading import rules
from normbook.paper_b.grading.sesoi import ACCURACY, DBI, SETTLE, SPARSITY
from normbook.paper_b.runs import classify
from normbook.paper_b.runs.classify import DATASETS, ClassifierConfig, Splits, TrainedModel
from normbook.runtime import cache

Cell = tuple[str, bool, int]  # (dataset, batchnorm, lr index); see factorial_lrs

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


def factorial_lrs(params) -> dict[str, tuple[float, float]]:
    """The two learning rates of each dataset's 2 x 2. Index 0 is the paper's BN learning
    rate; index 1 is the paper's no-BN one on CIFAR-10 and, on MNIST (where the paper trains
    both variants at one rate), the alternative ``mnist_lr_alt``."""
    return {
        "mnist": (params.mnist_lr, params.mnist_lr_alt),
        "cifar10": (params.cifar_lr_bn, params.cifar_lr_nobn),
    }


def factorial_configs(params) -> dict[Cell, ClassifierConfig]:
    """Every cell's config: chapter B1's config of the variant with the cell's learning rate
    (so the cells the paper trains *are* B1's configs)."""
    base, lrs = classify.Setup.from_params(params).configs, factorial_lrs(params)
    return {
        (ds, bn, j): replace(base[ds, bn], lr=lrs[ds][j])
        for ds in factorial_datasets(params.factorial_datasets)
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
    trained: dict[Cell, list[TrainedModel]]
    sparsity: dict[Cell, list[cache.Entry]]
    clusters: dict[Cell, list[cache.Entry]]
    accuracy: dict[Cell, np.ndarray] | None = None  # per seed; None: the models' test accuracy

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


def run_factorial(params, splits: dict[str, Splits]) -> Factorial:
    """Train (or load) every cell and seed, then analyse every model with the chapter's B2
    sparsity and B3 cluster configs (cache hits for models B2 / B3 analysed)."""
    cfgs = factorial_configs(params)
    cells = list(cfgs)
    done = classify.train_all(
        [(cfgs[c], s) for c in cells for s in params.seeds], splits, params.workers
    )
    n = len(params.seeds)
    sp = analysis.analyse_all(
        analysis.SparsityConfig.from_params(params), done, splits, params.workers
    )
    cl = analysis.analyse_all(
        analysis.ClusterConfig.from_params(params), done, splits, params.workers
    )

    def per_cell(items):
        return {c: items[i * n : (i + 1) * n] for i, c in enumerate(cells)}

    return Factorial(factorial_lrs(params), per_cell(done), per_cell(sp), per_cell(cl))


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
                out[bn, j] = (np.array([t.test_acc for t in f.trained[c]])
                              if f.accuracy is None else f.accuracy[c])  # fmt: skip
            elif metric == "sparsity":
                out[bn, j] = rules.layer_mean(_stack(f.sparsity[c], "layer"))
            elif metric == "class_dbi":
                out[bn, j] = rules.deeper_half(_stack(f.clusters[c], "class_dbi"))
            elif metric == "dbi_k_star":
                v = _stack(f.clusters[c], "dbi_k_star")
                out[bn, j] = (
                    rules.layer_mean(v[:, :-1]) if dataset == "mnist" else rules.deeper_half(v)
                )
            elif metric == "settle":
                out[bn, j] = rules.settling_layers(_stack(f.clusters[c], "k_star"))
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
    never: float | None = None  # the settling layer's "never" (layers + 1), where it is one


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
    """``factorial_effects`` of every (metric key, dataset); the settling layer's with its
    censoring point (a network whose k* never settles)."""
    out = {}
    for m in METRICS:
        for ds in f.datasets:
            e = factorial_effects(metric_values(f, m.key, ds), ds, f.lrs[ds])
            if m.key == "settle":
                layers = np.shape(f.clusters[ds, True, 0][0]["k_star"])[-1]
                e = replace(e, never=layers + 1)
            out[m.key, ds] = e
    return out


def decomposition_error(e: Effects, dataset: str) -> float:
    """Largest |paper contrast − (BN main + lr main · sign)| over seeds: 0 up to rounding on
    CIFAR-10 (lr 0 is BN's, lr 1 no BN's); on MNIST the paper's contrast is the simple BN
    effect at lr 0, BN main + interaction / 2."""
    if dataset == "cifar10":
        return float(np.max(np.abs(e.paper - (e.bn + e.lr))))
    return float(np.max(np.abs(e.paper - (e.bn + 0.5 * e.interaction))))


def along(params, f: Factorial, splits: dict[str, Splits]) -> analysis.Along:
    """The 2 x 2's effects (:func:`all_effects`) at the late states
    (:func:`.analysis.late_states`) and of the kept models, each measured alike on
    ``params.curve_images`` images with k-means (the configs of chapters B2's and B3's kept
    states, so the paper's cells are cache hits). The kept states have no test accuracy:
    accuracy is the validation accuracy at each state's epoch, and the kept model's (as
    chapter B1's accuracy curve)."""
    sp = replace(analysis.SparsityConfig.from_params(params), n_images=params.curve_images)
    cl = replace(
        analysis.ClusterConfig.from_params(params), n_images=params.curve_images, kmeans=True
    )
    cells, n = list(f.trained), len(f.seeds)
    fracs = f.trained[cells[0]][0].cfg.checkpoints

    def per_cell(items):
        return {c: items[i * n : (i + 1) * n] for i, c in enumerate(cells)}

    results, missing, kept = [], 0, analysis.late_states(fracs)
    for i in [*kept, len(fracs)]:
        last = i == len(fracs)
        done = [t if last else analysis.at_state(t, i) for c in cells for t in f.trained[c]]
        missing += 0 if last else sum(t.stage == {} for t in done)
        acc = [t.kept_val_acc if last else rules.val_acc_at(t, fracs[i])
               for c in cells for t in f.trained[c]]  # fmt: skip
        state = Factorial(
            f.lrs, per_cell(done), per_cell(analysis.analyse_all(sp, done, splits, params.workers)),
            per_cell(analysis.analyse_all(cl, done, splits, params.workers)),
            {c: np.asarray(a, float) for c, a in per_cell(acc).items()},
        )  # fmt: skip
        results.append(all_effects(state))
    return analysis.Along(np.array([*(fracs[i] for i in kept), 1.0]), results, missing)
