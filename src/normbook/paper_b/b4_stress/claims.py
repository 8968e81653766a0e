"""The claim rows and checks of chapter B4's stress tests. The claim rules are in
:mod:`normbook.paper_b.grading.rules`; these ledgers apply them to the results of
:mod:`.factorial`, :mod:`.stress_analyses` and :mod:`.matching` (chapters B2's and B3's
direction rows, on other images and networks, by their own row builders), and state what holds
by construction.
"""

from __future__ import annotations

import numpy as np

from normbook.grading.claims import ClaimTest, t_interval
from normbook.grading.verdicts import Check, Control, Verdict, decide, sesoi_phrase
from normbook.pages.fmt import DASH, bracket, no_interval, sci
from normbook.paper_b.b2_sparsity.claims import PAPER_WAY, sparsity_row
from normbook.paper_b.b3_clusters.claims import class_dbi_row
from normbook.paper_b.b4_stress.factorial import (
    METRICS,
    Effects,
    Factorial,
    Metric,
    decomposition_error,
    is_paper_cell,
)
from normbook.paper_b.b4_stress.matching import Matched
from normbook.paper_b.cached import representations, stress_analyses, training
from normbook.paper_b.cached.analysis import Clusters, Sparsity
from normbook.paper_b.cached.stress_analyses import Silhouettes, Thresholds
from normbook.paper_b.grading import rules
from normbook.paper_b.grading.pairing import max_init_difference, seed_counts
from normbook.paper_b.grading.sesoi import DBI, SILHOUETTE, SPARSITY
from normbook.paper_b.runs import classify
from normbook.paper_b.runs.classify import DATASETS, Models, bn_label

NAMES = rules.DATASET_NAMES
VERBS = {"higher": "raises", "lower": "lowers"}
REVIEWERS = "not in the paper (the reviewers' question: BN, or its ten-times-higher learning rate)"


def seed_mean(values, unit: str) -> str:
    """The mean over seeds in ``unit``'s format, or "– (no seeds)" without seeds."""
    v = np.asarray(values, float)
    return f"{v.mean():{unit}}" if v.size else f"{DASH} (no seeds)"


def described(values) -> str:
    """A contrast nobody claimed a rules.direction for, described: mean [CLAIM_CONFIDENCE t
    interval] over seeds; ``–`` and why where fewer than two seeds give no interval."""
    v = np.asarray(values, float)
    if not v.size:
        return f"{DASH} (no seeds)"
    lo, hi = t_interval(v)
    return bracket(float(v.mean()), lo, hi, "+.3g", no_interval(v.size))


def cell_controls(f: Factorial, dataset: str, cells=None) -> tuple[Control, ...]:
    """The cells of ``dataset``'s 2 x 2 (``cells``: (BN, lr index) pairs; default all four)
    must have rules.learned (:func:`rules.learned`)."""
    cells = cells or [(bn, j) for bn in (True, False) for j in (0, 1)]
    acc = {(bn, j): np.array([t.test_acc for t in f.trained[dataset, bn, j]]) for bn, j in cells}
    return tuple(
        Control(
            f"{NAMES[dataset]} {bn_label(bn)} at lr {sci(f.lrs[dataset][j])}",
            c.check, c.passed, c.evidence,
        )
        for (bn, j), a in acc.items()
        for c in rules.learned({(dataset, bn): a}, [classify.Variant(dataset, bn)])
    )  # fmt: skip


_SIL = {"class_sil": "class_silhouette", "kmeans_sil": "kmeans_silhouette"}


def _signed(values, dataset: str, expect: str, contrast, relative: bool = False) -> np.ndarray:
    """Per seed, BN vs no BN of ``contrast`` over layers, rules.signed the claim's way (``relative``
    for DBI, as :func:`rules.direction` takes it)."""
    bn, nobn = (np.asarray(values[dataset, b], float) for b in (True, False))
    return rules.signed(contrast(bn), contrast(nobn), expect, relative)


def _moving(along, f: Factorial, m: Metric, dataset: str, a, b, expect: str):
    """Whether cell ``a`` vs cell ``b`` of one metric of the 2 x 2 ((BN, lr index) pairs),
    rules.signed the paper's way, may still be moving at the end of training (``along``: the
    effects at the kept states, :func:`.factorial.along`; only where the cap cut one of the
    two cells' networks, :func:`rules.moving`)."""
    return rules.moving_along(along, lambda fx: rules.signed(
        fx[m.key, dataset].cells[a], fx[m.key, dataset].cells[b], expect, m.sesoi is DBI),
        m.sesoi, nets=[*f.trained[(dataset, *a)], *f.trained[(dataset, *b)]])  # fmt: skip


def _simple(e: Effects, m: Metric, dataset: str, j: int) -> ClaimTest:
    """BN's simple effect at learning rate j, rules.signed the paper's way, as a claim test."""
    bn, nobn = e.cells[True, j], e.cells[False, j]
    return rules.direction(bn, nobn, m.expect[dataset],
                     f"{NAMES[dataset]} {m.describe(dataset)} at lr {sci(e.lrs[j])}",
                     m.sesoi, never=e.never)  # fmt: skip


def _lr_simple(e: Effects, m: Metric, bn: bool) -> ClaimTest:
    """The paper's BN learning rate (index 0) against the other (index 1), with or without
    BN, rules.signed the way the paper attributes to BN (CIFAR-10)."""
    return rules.direction(e.cells[bn, 0], e.cells[bn, 1], m.expect["cifar10"],
                     f"CIFAR-10 {m.describe('cifar10')}, {bn_label(bn)}: lr "
                     f"{sci(e.lrs[0])} vs {sci(e.lrs[1])}", m.sesoi, never=e.never)  # fmt: skip


def factorial_ledger(
    effects: dict[tuple[str, str], Effects], f: Factorial, along=None
) -> dict[tuple[str, str], Verdict]:
    """Per dataset and metric: does BatchNorm itself move the metric the paper's way? Graded
    at each learning rate of the 2 x 2 separately (BN's two simple effects, two parts of one
    claim: rules.both reproduced, "BN itself" holds; one, partly), never on the main effect, which
    averages simple effects that may have opposite signs. The interaction (BN's effect at the
    paper's BN rate minus at the other, rules.signed the paper's way) is shown with its interval.
    ``along``: the effects at the kept states (:func:`.factorial.along`), which tell whether
    each simple effect was still moving."""
    rows = {}
    for ds in f.datasets:
        controls = cell_controls(f, ds)
        for m in METRICS:
            e = effects[m.key, ds]
            tests = [_simple(e, m, ds, j) for j in (0, 1)]
            # each learning rate's part rests on that rate's two cells only
            parts = [(f"at lr {sci(e.lrs[j])}",
                      decide(t, cell_controls(f, ds, [(True, j), (False, j)]),
                             rising=_moving(along, f, m, ds, (True, j), (False, j),
                                            m.expect[ds])))
                     for j, t in enumerate(tests)]  # fmt: skip
            paper_way = [rules.signed(e.cells[True, j], e.cells[False, j], m.expect[ds],
                                m.sesoi is DBI) for j in (0, 1)]  # fmt: skip
            rows[ds, m.key] = _two_parts_row(
                f"{NAMES[ds]}: BN itself {VERBS[m.expect[ds]]} the {m.describe(ds)}, BN and no BN "
                "at the same learning rate, at each of two rates", m, parts, tests, controls,
                f"BN's effect the paper's way at lr {sci(e.lrs[0])}: "
                f"{described(paper_way[0])}, at {sci(e.lrs[1])}: {described(paper_way[1])}; "
                f"interaction {described(paper_way[0] - paper_way[1])}",
                f"b4_bn_itself_{m.key}_{ds}", factorial_ledger)  # fmt: skip
    return rows


# the function behind each 2 x 2 metric's per-network value (what a row's "effect" link opens)
MEASURES = {"accuracy": training.evaluate, "sparsity": representations.layer_sparsity,
            "class_dbi": representations.class_dbi, "dbi_k_star": representations.kmeans_sweep,
            "settle": representations.kmeans_sweep}  # fmt: skip


def _two_parts_row(claim, m, parts, tests, controls, evidence, key, rule) -> Verdict:
    """A B4 claim of two parts (two learning rates, or BN and no BN): its row shows the less
    significant part's test, and its evidence ends with each part's grade. ``rule``: the
    ledger that tested and graded the parts (linked from the row)."""
    return Verdict.in_parts(
        "B", f"{claim}, by at least {sesoi_phrase(m.sesoi, m.unit)}", parts,
        max(tests, key=lambda t: t.p if t.p == t.p else 2), m.sesoi, controls=controls,
        evidence=f"{evidence}; " + "; ".join(f"{n}: {g.verdict}" for n, g in parts),
        unit=m.unit, paper_says=REVIEWERS, key=key, rule=rule, measure=MEASURES[m.key],
    )  # fmt: skip


def confound_ledger(
    effects: dict[tuple[str, str], Effects], f: Factorial, along=None
) -> dict[str, Verdict]:
    """On CIFAR-10 (if in the 2 x 2): per metric, does the learning rate the paper gives BN,
    by itself, move the metric the way the paper attributes to BN? Graded with BN and without
    BN separately (two parts: rules.both reproduced, the confound is real for either variant)."""
    rows = {}
    if "cifar10" not in f.datasets:
        return rows
    controls = cell_controls(f, "cifar10")
    for m in METRICS:
        e = effects[m.key, "cifar10"]
        tests = [_lr_simple(e, m, bn) for bn in (True, False)]
        parts = [(bn_label(bn), decide(t, cell_controls(f, "cifar10", [(bn, 0), (bn, 1)]),
                                       rising=_moving(along, f, m, "cifar10", (bn, 0), (bn, 1),
                                                      m.expect["cifar10"])))
                 for bn, t in zip((True, False), tests)]  # fmt: skip
        rows[m.key] = _two_parts_row(
            "Critics' confound, CIFAR-10: the paper's higher BN learning rate by itself "
            f"{VERBS[m.expect['cifar10']]} the {m.describe('cifar10')}, with BN and without",
            m, parts, tests, controls,
            f"paper's contrast {seed_mean(e.paper, m.unit)} = BN main "
            f"{seed_mean(e.bn, m.unit)} + lr main {seed_mean(e.lr, m.unit)} (mean over seeds)",
            f"b4_lr_confound_{m.key}", confound_ledger)  # fmt: skip
    return rows


def cluster_count_ledger(
    sil: Silhouettes, models: Models, along=None
) -> dict[tuple[str, str], Verdict]:
    """Per dataset: purer clusters with BN by the silhouette score (class labels, and the
    k-means partition at the fixed k), deeper half, higher with BN, against
    :data:`.sesoi.SILHOUETTE`; ``along``: the silhouettes at the kept states."""
    rows, k = {}, sil.config.clusters.fixed_k
    for ds in DATASETS:
        controls = rules.learned(models.accuracy, rules.both(ds))
        for key, values, what in (
            ("class_sil", sil.class_silhouette, "class-based silhouette"),
            ("kmeans_sil", sil.kmeans_silhouette, f"silhouette of k-means at k = {k}"),
        ):
            c = rules.Contrast.of(values, ds)
            test = c.test("deeper", "higher", f"{NAMES[ds]} {what}", SILHOUETTE)
            up = rules.moving_along(along, lambda r, a=key, d=ds: _signed(
                getattr(r, _SIL[a]), d, "higher", rules.deeper_half), SILHOUETTE,
                nets=rules.compared(models, ds))  # fmt: skip
            rows[ds, key] = Verdict.graded(
                "B (ours)", f"(ours) {NAMES[ds]}: clusters are purer with BN by the {what} "
                f"(higher), deeper half, by at least {sesoi_phrase(SILHOUETTE)}",
                test, SILHOUETTE, rising=up, controls=controls,
                evidence=seed_counts(rules.deeper_half(c.bn), rules.deeper_half(c.nobn), "higher",
                                     ".3f"),
                unit=".3f", key=f"b4_purer_{key}_{ds}", rule=cluster_count_ledger,
                measure=stress_analyses.silhouette_stats,
            )  # fmt: skip
    return rows


def threshold_ledger(thr: Thresholds, models: Models, along=None) -> dict[str, Verdict]:
    """Per dataset: the paper's sparsity rules.direction (MNIST BN less sparse, CIFAR-10 more) at
    every relative threshold, one part per threshold (every part reproduced: it survives
    every threshold; some: partly, naming which); ``along``: the sweep at the kept states."""
    rows = {}
    for ds, (expect, word) in PAPER_WAY.items():
        bn, nobn = thr.layer_mean(ds, True), thr.layer_mean(ds, False)
        controls = rules.learned(models.accuracy, rules.both(ds))
        tests = [rules.direction(bn[:, i], nobn[:, i], expect,
                           f"{NAMES[ds]} layer sparsity at t = {t:g}", SPARSITY)
                 for i, t in enumerate(thr.thresholds)]  # fmt: skip
        ups = [rules.moving_along(along, lambda r, i=i, d=ds, e=expect: rules.signed(
                   r.layer_mean(d, True)[:, i], r.layer_mean(d, False)[:, i], e), SPARSITY,
                   nets=rules.compared(models, ds))
               for i in range(len(thr.thresholds))]  # fmt: skip
        parts = [(f"t = {t:g}", decide(test, controls, rising=up))
                 for t, test, up in zip(thr.thresholds, tests, ups)]  # fmt: skip
        rows[ds] = Verdict.in_parts(
            "B", f"{NAMES[ds]}: BN representations are {word} sparse at every threshold "
            f"t × {thr.config.scale} (t = {', '.join(f'{t:g}' for t in thr.thresholds)}), each "
            f"by at least {sesoi_phrase(SPARSITY)}", parts,
            max(tests, key=lambda t: t.p if t.p == t.p else 2), SPARSITY, controls=controls,
            evidence="; ".join(f"{n}: {g.verdict}" for n, g in parts),
            paper_says=f"{NAMES[ds]}: BN representations are {word} sparse (activations exactly "
            "zero)", key=f"b4_{word}_sparse_every_threshold_{ds}",
            rule=threshold_ledger, measure=stress_analyses.threshold_stats,
        )  # fmt: skip
    return rows


def direction_ledger(
    sparsity: Sparsity,
    clusters: Clusters,
    where: str,
    models: Models,
    along=None,
    matched: bool = False,
    *,
    key: str,
) -> dict[tuple[str, str], Verdict]:
    """Chapters B2's and B3's rules.direction claims on other networks or images (``where``: "test
    images", "equal validation accuracy"), by those chapters' own rows
    (:func:`normbook.paper_b.b2_sparsity.claims.sparsity_row`,
    :func:`normbook.paper_b.b3_clusters.claims.class_dbi_row`): layer sparsity (MNIST BN lower,
    CIFAR-10 higher; mean over conv layers) and class-based DBI (BN lower, deeper half,
    relative), for every dataset the analyses cover, keyed ``{key}_less_sparse_mnist``,
    ``{key}_more_sparse_cifar10`` and ``{key}_purer_classes_{dataset}``. ``along``: (sparsity,
    clusters) :class:`.analysis.Along` at the kept states. ``matched``: networks taken at a
    matched validation accuracy, a state fixed by accuracy rather than by a budget, so there is
    no "still moving" to wait for (``rising=False``)."""

    def up(runs, attr, ds, expect, contrast, sesoi):
        if matched:
            return False
        return rules.moving_along(
            runs,
            lambda r: _signed(getattr(r, attr), ds, expect, contrast, sesoi is DBI),
            sesoi,
            nets=rules.compared(models, ds),
        )

    sp_along, cl_along = along or (None, None)
    rows, dss = {}, sorted({v[0] for v in sparsity.layer}, key=list(DATASETS).index)
    for ds in dss:
        rows[ds, "sparsity"] = sparsity_row(
            rules.Contrast.of(sparsity.layer, ds), ds, where=where,
            rising=up(sp_along, "layer", ds, PAPER_WAY[ds][0], rules.layer_mean, SPARSITY),
            controls=rules.learned(models.accuracy, rules.both(ds)),
            key=f"{key}_{PAPER_WAY[ds][1]}_sparse_{ds}",
        )  # fmt: skip
    for ds in dss:
        rows[ds, "class_dbi"] = class_dbi_row(
            rules.Contrast.of(clusters.class_dbi, ds), ds, where=where,
            rising=up(cl_along, "class_dbi", ds, "lower", rules.deeper_half, DBI),
            controls=rules.learned(models.accuracy, rules.both(ds)),
            key=f"{key}_purer_classes_{ds}",
        )  # fmt: skip
    return rows


def checks(
    params,
    f: Factorial,
    effects: dict,
    thr: Thresholds,
    sparsity: Sparsity,
) -> list[Check]:
    """What holds by construction: the paper's cells are chapter B1's configs; the paper's
    contrast decomposes into the 2 x 2's effects; the sweep at t = 0 is B2's exact-zero
    sparsity."""
    b1 = classify.Setup.from_params(params).configs
    same = all(f.trained[c][0].cfg == b1[c[0], c[1]] for c in f.trained if is_paper_cell(c))
    worst = max(decomposition_error(e, ds) for (_, ds), e in effects.items())
    zero = max(float(np.abs(thr.sparsity[v][..., 0] - sparsity.layer[v]).max())
               for v in sparsity.layer) if sparsity.config.eps == 0 else 0.0  # fmt: skip
    cfgs = {c: ts[0].cfg for c, ts in f.trained.items()}
    init = max(max_init_difference(cfgs[ds, True, 0], cfgs[c], s)[0]
               for c in cfgs for ds in [c[0]] for s in f.seeds)  # fmt: skip
    splits = {(classify.split_key(cfg), cfg.batch_size) for cfg in cfgs.values()}
    return [
        Check("B", "The four cells of each seed start from identical conv and linear "
              "weights and train on the same images, in the same minibatch order",
              init == 0.0 and len(splits) == len(f.datasets),
              f"largest initial-weight difference from the BN cell at lr₁: {init:g}; "
              "one training subset and minibatch size per dataset: "
              f"{'yes' if len(splits) == len(f.datasets) else 'no'}"),
        Check("B", "The cells the paper trains are chapter B1's configs (its cached "
              "models, not retrained)", same,
              f"{f.trained_here(paper=True)} paper-cell models trained by this run, "
              f"{f.trained_here(paper=False)} swapped-cell models"),
        Check("B", "The paper's contrast = BN main + lr main effect (CIFAR-10), "
              "= BN main + interaction / 2 (MNIST), per seed", worst < 1e-9,
              f"largest deviation {worst:.2g}"),
        Check("B", "The threshold sweep at t = 0 is chapter B2's exact-zero sparsity",
              zero < 1e-12, f"largest difference {zero:.2g} (rounding: B2 sums "
              "per-batch fractions, the sweep counts)"),
    ]  # fmt: skip


def matched_checks(m: Matched, tolerance: float) -> list[Check]:
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
        Check("B", "Each network taken at the matched accuracy retraces its full "
              "run (chapter B1's) bit for bit up to that step", same, replayed),
        Check("B", f"Every pair is matched: validation accuracies differ by at most "
              f"{tolerance:.1%}", gap <= tolerance and not missed,
              f"largest difference {gap:.2%}; {missed} networks without a check "
              "in their window"),
    ]  # fmt: skip
