"""Chapter B4's prose: its settings, grades and descriptions as glue-able text, from the
results of :mod:`.factorial`, :mod:`.stress_analyses` and :mod:`.matching` and the rows of
:mod:`.claims`.
"""

from __future__ import annotations

import numpy as np

from normbook.grading.claims import ALPHA
from normbook.grading.verdicts import GRADES, PARTLY, REPRODUCED
from normbook.pages.fmt import join, sci, table
from normbook.paper_b import paper_values
from normbook.paper_b.b4_stress.claims import NAMES, seed_mean
from normbook.paper_b.b4_stress.factorial import METRICS, Effects, factorial_datasets, factorial_lrs
from normbook.paper_b.b4_stress.matching import Matched
from normbook.paper_b.cached.analysis import Clusters
from normbook.paper_b.cached.stress_analyses import edge_share
from normbook.paper_b.runs.classify import DATASETS, bn_label


def setup_glue(params) -> dict[str, object]:
    """The chapter's settings as prose, for its text: datasets and learning rates of the
    2 x 2, thresholds, image counts, the null's shape, the matched comparison's knobs and the
    smallest attainable p-values."""
    lrs, fact = factorial_lrs(params), factorial_datasets(params.factorial_datasets)
    return {
        "paper_lr_bn": sci(paper_values.LR["cifar10", True]),
        "paper_lr_nobn": sci(paper_values.LR["cifar10", False]),
        "paper_lr_mnist": sci(paper_values.LR["mnist", True]),
        "paper_k_range": "{}..{}".format(*paper_values.K_RANGE),
        "k_range": f"{params.k_min}..{params.k_max}",
        "fact_datasets": " and ".join(NAMES[d] for d in fact),
        "fact_lrs": "; ".join(f"{NAMES[d]} {sci(lrs[d][0])} and {sci(lrs[d][1])}" for d in fact),
        "seeds": join(params.seeds),
        "n_seeds": len(params.seeds),
        "scale": params.threshold_scale,
        "thresholds": join(sorted({0.0, *params.rel_thresholds}), "g"),
        "sil_images": f"{params.silhouette_images:,}",
        "cl_images": f"{params.cluster_images:,}",
        "null_shape": f"{params.cluster_images:,} points in "
        f"{params.pca_components or params.null_dim} dimensions",
        "null_draws": params.null_draws,
        "alpha": ALPHA,
        "fixed_k": params.fixed_k,
        "m_every": f"{params.match_check_every:,}",
        "m_tolerance": f"{params.match_tolerance:.1%}",
        "m_datasets": " and ".join(NAMES[d] for d in factorial_datasets(params.matched_datasets)),
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
            f"{seed_mean(e.paper, u)} = {seed_mean(e.bn, u)} (BN main effect, averaged over "
            f"the two rates) + {seed_mean(e.lr, u)} (learning-rate main effect)")  # fmt: skip
    return out


def split_numbers(effects: dict[tuple[str, str], Effects]) -> dict[str, float]:
    """The CIFAR-10 split of :func:`cifar_split` as raw means over seeds, for the ledger record
    (``sparsity_paper`` = ``sparsity_bn`` + ``sparsity_lr``): the intro reads it from there."""
    out = {}
    for m in METRICS:
        e = effects.get((m.key, "cifar10"))
        if e is not None:
            out |= {f"{m.key}_{part}": float(np.mean(getattr(e, part)))
                    for part in ("paper", "bn", "lr")}  # fmt: skip
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


def matched_glue(m: Matched, rows: dict) -> dict[str, str]:
    """Glue-able prose of the matched comparison: each row's grade ("not tested" for datasets
    not matched), per dataset which networks were taken at the matched accuracy, where, and the
    remaining accuracy difference (or that it was not matched, and the knob that would)."""
    out = {f"{ds}_{k}": "not tested (not matched in this run)" for ds in DATASETS
           for k in ("sparsity", "class_dbi")}  # fmt: skip
    out |= grades(rows) | {"summary": grade_summary(rows)}
    for ds in DATASETS:
        if ds not in m.datasets:
            out[f"{ds}_how"] = "not matched in this run (the knob matched_datasets)"
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
        R, PT = REPRODUCED, PARTLY
        bn_part = {R: "BatchNorm's at both learning rates", PT: "BatchNorm's at one learning "
                   "rate only"}.get(b)  # fmt: skip
        lr_part = {R: "the learning rate's, with BN and without", PT: "the learning rate's in "
                   "one variant only"}.get(c)  # fmt: skip
        if bn_part and lr_part:
            out[m.key] = f"both {bn_part} and {lr_part}"
        elif bn_part or lr_part:
            other = "the learning rate's own effect" if bn_part else "BatchNorm's own effect"
            out[m.key] = f"{bn_part or lr_part}; {other} is {c if bn_part else b}"
        else:
            out[m.key] = f"neither's by these tests (BatchNorm's: {b}; the learning rate's: {c})"
    return out


def not_run(dataset: str) -> str:
    """One sentence in place of a table with nothing run: ``dataset`` is outside this run's
    2 x 2, and how to run it."""
    return (f"*{NAMES[dataset]} is not in this run's BN × learning-rate 2 × 2 (the knob "
            f"`factorial_datasets`), so none of its {len(METRICS)} claims was graded. To run "
            f"it: `make chapter CHAPTER=book/b4_stress.py PARAMS='-p factorial_datasets "
            f"both'`.*")  # fmt: skip


def cifar_table(effects: dict, bn_rows: dict, conf_rows: dict) -> str:
    """CIFAR-10's attribution, one row per metric: the paper's contrast split into the two main
    effects (means over seeds), BN's own effect graded at each learning rate, the learning
    rate's graded with BN and without, and whose effect the paper's difference is; one
    sentence (:func:`not_run`) without a CIFAR-10 2 x 2."""
    if not any(ds == "cifar10" for ds, _ in bn_rows) and not conf_rows:
        return not_run("cifar10")
    split, whose = cifar_split(effects), attribution(bn_rows, conf_rows)
    g = factorial_grades(bn_rows, conf_rows)
    rows = [{
        "metric": m.label,
        "paper's contrast = BN main effect + learning-rate main effect": split[m.key],
        "BN itself (each rate)": g[f"bn_cifar10_{m.key}"],
        "learning rate alone (with BN and without)": g[f"conf_{m.key}"],
        "the paper's difference is": whose[m.key],
    } for m in METRICS]  # fmt: skip
    return table(rows)


def mnist_table(bn_rows: dict) -> str:
    """MNIST: BN's own effect the paper's way, graded at both learning rates, per metric; one
    sentence (:func:`not_run`) without an MNIST 2 x 2."""
    if not any(ds == "mnist" for ds, _ in bn_rows):
        return not_run("mnist")
    g = factorial_grades(bn_rows, {})
    return table([{"metric": m.label, "BN itself (each rate)": g[f"bn_mnist_{m.key}"]}
                  for m in METRICS])  # fmt: skip
