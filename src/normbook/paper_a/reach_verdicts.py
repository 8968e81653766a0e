"""Verdict rules of chapter A5, the reach of the side channel. Every family must pass its
positive controls (it learned the task, and it shows the side channel in its own first hop
band) before any row grades it; the share kept is the quantity every row tests, so its
compute-to-effect curves decide whether a row can be refuted."""

from __future__ import annotations

import numpy as np

from ..core.claims import ALPHA, mapped_estimate, mean_test, rank_trend
from ..core.fmt import join
from ..core.verdicts import REFUTED, REPRODUCED, Control, Verdict, decide
from . import bands, reach, reported
from .sesoi import FLAGGED, SHARE, SLOPE, TREND
from .verdicts import learned, rising, side_channel

REACH_ALPHA = ALPHA  # one-sided level of the significance reach (the claims' level)


def controls(study) -> tuple[Control, ...]:
    """Both positive controls of every family of ``study``."""
    return tuple(c for f, r in zip(study.families, study.runs)
                 for c in (learned(r, f.label), side_channel(r, f.label)))  # fmt: skip


def share_may_rise(curves) -> bool:
    """Whether any family's share kept may still be rising at the end of its budget."""
    return any(rising(c, lambda r: bands.hop_bands(r).attenuation, SHARE) for c in curves)


def _per_model(reaches, x) -> tuple[np.ndarray, np.ndarray]:
    xs = np.concatenate([np.full(len(r.kept), x(r)) for r in reaches])
    kept = np.concatenate([r.kept for r in reaches])
    ok = np.isfinite(kept)
    return xs[ok], kept[ok]


def _kept_detail(reaches, name) -> str:
    return "; ".join(f"{name(r)}: kept {join(r.kept, '.3f')}" for r in reaches)


def undiminished(study) -> Verdict:
    """Paper A: InstanceNorm localizes the whole sequence, undiminished. Test: per seed of the
    base family, the share of the first hop band's slope that the second (3R to 5R) keeps,
    against ``SHARE``; its curve must have flattened for *refuted*."""
    i = study.base
    r, run, curve = study.reaches[i], study.runs[i], study.curves[i]
    test = mean_test(r.kept, SHARE.value, null="the first hop band's slope (same networks)")
    ctrl = (learned(run, r.family.label), side_channel(run, r.family.label))
    return Verdict(
        "A",
        f"The second hop band (3R to 5R) keeps at least {SHARE.value:.0%} of the first band's "
        "slope (paper A: the position signal carries past one hop undiminished)",
        decide(test, ctrl, rising=share_may_rise([curve])),
        test,
        SHARE,
        f"{r.family.label}: second-band slope {join(r.bands.slope[:, 1], '.4f')} vs first "
        f"{join(r.bands.slope[:, 0], '.3f')}",
        unit=".3f",
        controls=ctrl,
    )


def grows_with_norm_layers(study) -> Verdict:
    """Paper A's multi-hop reading: each normalization layer relays one hop, so at a fixed
    receptive field more normalization layers carry the signal farther. Test: Spearman over
    every model of the number of normalization layers against the share of the first band's
    slope the second keeps, against ``TREND``."""
    n, kept = _per_model(study.reaches, lambda r: r.family.norm_layers)
    null = f"rank correlation of the share kept with the number of norm layers, ρ = {TREND.value:g}"
    test = rank_trend(n, kept, TREND.value, null=null)
    ctrl = controls(study)
    return Verdict(
        "A",
        "At a fixed receptive field, more normalization layers carry the position signal "
        "farther (the second hop band keeps more of the first's slope)",
        decide(test, ctrl, rising=share_may_rise(study.curves)),
        test,
        TREND,
        _kept_detail(study.reaches, lambda r: f"{r.family.norm_layers} norm layers"),
        unit=".2f",
        controls=ctrl,
    )


def falls_with_length(study) -> Verdict:
    """The critics' reading: every statistic averages over l positions, so each hop keeps less
    of the signal for longer sequences. Test: Spearman of l against the share lost (1 - kept),
    against ``TREND``."""
    n, kept = _per_model(study.reaches, lambda r: r.family.seq_len)
    test = rank_trend(
        n,
        1 - kept,
        TREND.value,
        null=f"rank correlation of the share lost with l, ρ = {TREND.value:g}",
    )
    ctrl = controls(study)
    return Verdict(
        "A",
        "At a fixed receptive field and depth, each hop keeps less of the signal for longer "
        "sequences",
        decide(test, ctrl, rising=share_may_rise(study.curves)),
        test,
        TREND,
        _kept_detail(study.reaches, lambda r: f"l = {r.family.seq_len}"),
        unit=".2f",
        controls=ctrl,
    )


def _paper_estimate(law):
    return law.predict(reported.NORM_LAYERS, reported.SEQ_LEN)


def predicted_slope(law, first_band: float, ctrl, up: bool) -> Verdict:
    """The fitted law's prediction for paper A's network, by effect size: the slope beyond 3R
    (first-band slope times the predicted share kept) against ``SLOPE``."""
    est, se = _paper_estimate(law)
    test = mapped_estimate(est, se, law.dof, lambda x: first_band * 2.0**x, SLOPE.value,
                           law.n_models, null=f"a slope of {SLOPE.value:g} beyond 3R",
                           what="OLS prediction of log2 share kept")  # fmt: skip
    return Verdict(
        "A",
        f"Extrapolated to paper A's network ({reported.NORM_LAYERS} norm layers, "
        f"l = {reported.SEQ_LEN}), the fitted law predicts a slope beyond 3R of at least "
        f"{SLOPE.value:g} (whole-sequence localization by effect size; a prediction the paper "
        "profile tests)",
        decide(test, ctrl, rising=up),
        test,
        SLOPE,
        f"predicted share kept 2^({est:.2f} ± {se:.2f} SE) × first-band slope {first_band:.3f}",
        unit=".4f",
        controls=ctrl,
    )


def paper_flag_share(first_band: float, sigma: float, alpha: float):
    """log2 share kept -> the fraction of indices beyond 3R the span test flags at the
    paper's geometry and number of predictions (one band's slope beyond 3R;
    :func:`reach.flag_rate`)."""
    return lambda x: float(reach.flag_rate(first_band * 2.0**x, reported.SEQ_LEN, sigma,
                                           reported.SAMPLES_PER_INDEX, alpha))  # fmt: skip


def predicted_flags(law, first_band: float, sigma: float, ctrl, up: bool) -> Verdict:
    """The same prediction by significance: the fraction of indices beyond 3R that the test at
    the paper's level and 3.2 x 10^6 predictions per index would flag, against ``FLAGGED``."""
    est, se = _paper_estimate(law)
    fn = paper_flag_share(first_band, sigma, reported.WELCH_ALPHA)
    test = mapped_estimate(
        est,
        se,
        law.dof,
        fn,
        FLAGGED.value,
        law.n_models,
        null=f"{FLAGGED.value:.0%} of the indices beyond 3R flagged",
        what="OLS prediction of the share kept, through the test's power",
    )
    return Verdict(
        "A",
        f"Extrapolated to paper A's network and its {reported.SAMPLES_PER_INDEX:,} predictions "
        f"per index, the fitted law predicts that its Welch test flags at least "
        f"{FLAGGED.value:.0%} of the indices beyond 3R (whole-sequence localization by "
        "significance; a prediction)",
        decide(test, ctrl, rising=up),
        test,
        FLAGGED,
        f"one prediction's SD {sigma:.3f} (this study's networks), level {reported.WELCH_ALPHA:g}",
        unit=".3f",
        controls=ctrl,
    )


def paper_prediction(study, law) -> list[Verdict]:
    """Both predictions for paper A's network, from the base family's first-band slope and
    one prediction's standard deviation (the paper's l/R is the base family's)."""
    i = study.base
    first = float(study.reaches[i].mean[0])
    sigma = reach.prediction_sigma(study.runs[i])
    ctrl, up = controls(study), share_may_rise(study.curves)
    return [predicted_slope(law, first, ctrl, up), predicted_flags(law, first, sigma, ctrl, up)]


def cost_ratio(study) -> float:
    """Training seconds per model of the family with the most normalization layers on the
    norm-layer axis, over the base family's (same steps, same machine, one build)."""
    on = study.on("norm layers")
    top = max(range(len(on.families)), key=lambda i: on.families[i].norm_layers)
    base = study.reaches[study.base].train_seconds
    return on.reaches[top].train_seconds / base


def a1_decision(layers_row: Verdict, study) -> str:
    """What the norm-layer row decides for chapter A1's geometry, in one sentence."""
    on = study.on("norm layers")
    most = max(f.norm_layers for f in on.families)
    cost = (
        f"a network with {most} normalization layers costs {cost_ratio(study):.1f} times the "
        "base network's training time per model here"
    )
    if layers_row.verdict == REPRODUCED:
        return (
            "reach grows with the number of normalization layers, so chapter A1's network, with "
            "an eighth of the paper's, shows the one-hop remnant of the paper's mechanism; "
            f"{cost}, and chapters A1, A3 and A4 train all their networks at that geometry, so "
            "the cpu profile keeps A1's four (within its budget) and this chapter shows the "
            "mechanism at more layers; the paper profile runs the paper's 32"
        )
    if layers_row.verdict == REFUTED:
        return (
            "more normalization layers do not carry the signal farther at this budget, so "
            f"chapter A1's four show the reach a deeper stack would; {cost}: its geometry stays"
        )
    return (
        "this budget cannot tell whether more normalization layers carry the signal farther, "
        f"so chapter A1's geometry stays ({cost}), and the paper profile decides"
    )
