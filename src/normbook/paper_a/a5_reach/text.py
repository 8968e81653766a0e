"""Chapter A5's tables and prose (measured results in, a markdown table or a sentence out):
the reach per family, the predictions for paper A's network, the fitted law in words, the
families' controls, and what the norm-layer row decides for chapter A1's geometry."""

from __future__ import annotations

import numpy as np

from normbook.grading.claims import CLAIM_CONFIDENCE
from normbook.grading.verdicts import REFUTED, REPRODUCED, Verdict
from normbook.pages.fmt import bracket, interval, mean_sd, table
from normbook.paper_a import paper_values
from normbook.paper_a.grading.sesoi import LEARNED_R2
from normbook.paper_a.params import a1_training, shares_a1_models
from normbook.paper_a.runs import reach
from normbook.paper_a.runs.reach import Law, Reach


def reach_table(reaches: list[Reach], sesoi: float, alpha: float, paper_n: int) -> str:
    """Per family: geometry, budget, band slopes (seed mean ± SE), the share kept, and the
    reaches (units of R)."""
    rows = []
    for r in reaches:
        f = r.family
        rows.append({
            "family": f.label,
            "k, d, kernel-1 blocks": f"{f.cnn.kernel}, {f.cnn.depth}, {f.cnn.mix}",
            "R": r.bands.radius,
            "steps": f"{f.setup.train.steps:,}",
            "training s per model": f"{r.train_seconds:.0f}",
            "seeds": len(r.kept),
            "band slopes (mean ± SE)": "; ".join(
                f"{m:.4f} ± {s:.4f}" for m, s in zip(r.mean, r.se)),
            "share kept": mean_sd(r.kept, ".3f") if r.kept.size and np.isfinite(r.kept).any()
            else "– (no model kept a first-band slope to share)",
            f"effect reach (slope < {sesoi:g})": f"{r.effect_reach(sesoi):.1f}",
            "significance reach": f"{r.significance_reach(alpha):.1f}",
            f"at {paper_n:,} per index": f"{r.significance_reach(alpha, paper_n):.1f}",
        })  # fmt: skip
    return table(rows)


def prediction_table(share_law: Law, slope_row, flags_row) -> str:
    """The laws' predictions for paper A's network beside what the paper reports."""
    share = share_law.share(paper_values.NORM_LAYERS, paper_values.SEQ_LEN, CLAIM_CONFIDENCE)
    rows = [
        {"quantity": "share of the first band's slope kept beyond 3R",
         "predicted": bracket(*share, ".3f", why="the law could not be fitted"),
         "paper A": "not reported"},
        {"quantity": "slope beyond 3R (units of the ramp's)",
         "predicted": _interval(slope_row.test, ".3g"), "paper A": "not reported"},
        {"quantity": f"indices beyond 3R flagged at {paper_values.SAMPLES_PER_INDEX:,} per index",
         "predicted": _interval(flags_row.test, ".3f"),
         "paper A": "all of them (Fig. 1a: the whole sequence localized)"},
    ]  # fmt: skip
    return table(rows)


def law_text(law: Law) -> str:
    """The fitted law in words, with each coefficient's interval."""
    if not law.fitted:
        return "too few models to fit it"
    parts = [f"log2 E[share kept] = {law.coef[0]:.2f}"]
    for i, name in ((1, f"log2(N / {law.n0})"), (2, f"log2(l / {law.l0})")):
        if law.cov[i, i] > 0:
            lo, hi = law.interval(i, CLAIM_CONFIDENCE)
            parts.append(f"{law.coef[i]:+.2f} [{lo:.2f}, {hi:.2f}] × {name}")
    p, d_lof, d_pe = law.lack_of_fit
    fit = (f"lack of fit F test p = {p:.3g} on {d_lof} and {d_pe} degrees of freedom" if p == p
           else "lack of fit not testable (as many families as terms)")  # fmt: skip
    return (" ".join(parts) + f" ({CLAIM_CONFIDENCE:.0%} intervals, sandwich standard errors; "
            f"every one of {law.n_models} models kept, a multiplicative spread between models of "
            f"{law.tau:.2f}; {law.dof} residual degrees of freedom; {fit})")  # fmt: skip


def exponents_text(law: Law) -> str:
    """The fitted exponents held against the symmetry argument's b1 = 1 and b2 = -1."""
    if not law.fitted:
        return "no law was fitted"
    out = []
    for i, name, predicted in ((1, "b1", 1.0), (2, "b2", -1.0)):
        if law.cov[i, i] <= 0:
            out.append(f"{name} is not measured (its axis has one value)")
            continue
        lo, hi = law.interval(i, CLAIM_CONFIDENCE)
        where = "contains" if lo <= predicted <= hi else "excludes"
        out.append(f"{name}'s interval [{lo:.2f}, {hi:.2f}] {where} the predicted {predicted:g}")
    return "; ".join(out)


def _interval(test, spec: str) -> str:
    return interval(test, spec, unit="family")


def band_text(study) -> str:
    """The band beyond one hop, for prose."""
    lo, hi = (x / study.reaches[0].bands.radius for x in reach.beyond_band(study.families))
    return f"distances {lo:.3g}R to {hi:.3g}R from the nearer end"


def control_table(controls) -> str:
    """Every family's positive controls."""
    return table([{"family": c.family, "control": c.check, "passed": "yes" if c.passed else "no",
                   "values": c.evidence} for c in controls])  # fmt: skip


def length_note(n_lens: int) -> str:
    """What the number of lengths lets the length axis say, for the chapter's prose."""
    if n_lens >= 3:
        return f"{n_lens} lengths give the length exponent and the rank trend over l room to show"
    if n_lens == 1:
        return (
            "with one length at this profile there is no length axis: the length row is not "
            "testable here, and the law has no length term, so its predictions for paper A's "
            "network are not testable either; the `paper` profile trains three lengths"
        )
    return (f"with {n_lens} lengths the length exponent rests on them alone and a rank trend over "
            "lengths is weak evidence (two lengths bound Spearman's ρ over every model well "
            "below 1); a third length needs more training than the `cpu` budget holds, so the "
            "`paper` profile trains three")  # fmt: skip


def base_note(params) -> str:
    """Whether the base family is chapter A1's InstanceNorm networks, for prose."""
    if shares_a1_models(params):
        return "chapter A1's networks at this profile, loaded from the cache when A1 has run"
    a1 = a1_training(params.profile)
    return (f"its own networks: chapter A1 uses l = {a1.seq_len}, d = {a1.depth} and "
            f"{a1.steps:,} steps at this profile")  # fmt: skip


# ----------------------------------------------------------------------------- for chapter A1


def cost_ratio(study) -> float:
    """Training seconds per model of the family with the most normalization layers on the
    norm-layer axis, over the base family's (same steps, same machine, one build)."""
    on = study.on("norm layers")
    top = max(range(len(on.families)), key=lambda i: on.families[i].norm_layers)
    return on.reaches[top].train_seconds / study.reaches[study.base].train_seconds


def a1_decision(layers_row: Verdict, study) -> str:
    """What the norm-layer row decides for chapter A1's geometry, in one sentence."""
    base = study.families[study.base].norm_layers
    most = max(f.norm_layers for f in study.on("norm layers").families)
    cost = (f"a network with {most} normalization layers costs {cost_ratio(study):.1f} times "
            f"the training time per model of one with {base} here")  # fmt: skip
    if layers_row.verdict == REPRODUCED:
        return (
            "reach grows with the number of normalization layers, so chapter A1's networks, "
            f"with {base} of the paper's {paper_values.NORM_LAYERS}, show only part of the "
            f"mechanism the paper describes; {cost}, and chapters A1, A3 and A4 train every "
            "network at that geometry, which this profile's budget cannot afford: it keeps "
            "A1's geometry, this chapter shows the mechanism at more layers, and the paper "
            f"profile runs the paper's {paper_values.NORM_LAYERS}"
        )
    if layers_row.verdict == REFUTED:
        return (
            "more normalization layers do not carry the signal farther at this budget, so "
            f"chapter A1's {base} show the reach a deeper stack would; {cost}: its geometry stays"
        )
    return (
        "this budget cannot tell whether more normalization layers carry the signal farther, "
        f"so chapter A1's geometry stays ({cost}), and the paper profile decides"
    )


def learned_r2() -> str:
    """The learning control's threshold, for prose."""
    return f"{LEARNED_R2:g}"
