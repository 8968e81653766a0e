"""Verdict rules of chapter A5, the reach of the side channel. Every family must pass its
positive controls (it learned the task, and it shows the side channel in its own first hop
band) before any row grades it. The slope beyond one hop is what every row is about, so its
compute-to-effect curves decide whether a row can be refuted: while any family's may still
move by half its SESOI (either way: a trend can change with a fall as well as a rise), none
can."""

from __future__ import annotations

import numpy as np

from normbook.grading.claims import (
    ALPHA,
    Rise,
    late_gain,
    mapped_estimate,
    may_rise,
    mean_test,
    rank_trend,
)
from normbook.grading.verdicts import Control, Verdict
from normbook.pages.fmt import join, num
from normbook.paper_a import paper_values
from normbook.paper_a.grading.rules import learned, side_channel
from normbook.paper_a.grading.sesoi import (
    FLAGGED,
    SHARE,
    SHARE_GAIN,
    SLOPE,
    TREND,
)
from normbook.paper_a.measures import bands
from normbook.paper_a.runs import reach

REACH_ALPHA = ALPHA  # one-sided level of the significance reach (the claims' level)


def controls(study) -> tuple[Control, ...]:
    """Both positive controls of every family of ``study``."""
    return tuple(c for f, r in zip(study.families, study.runs)
                 for c in (learned(r, f.label), side_channel(r, f.label)))  # fmt: skip


def may_move(study, measure, sesoi) -> Rise | None:
    """Whether ``measure`` (per seed, of an evaluated run) may still move by half of ``sesoi``
    over the last half of any family's budget, up or down: the first family's late gain that
    may, else the one that came closest (None without curves: nothing tells)."""
    m = sesoi.flat_margin
    gains = [late_gain(c.values(measure), c.fractions) for c in study.curves]
    for g in gains:
        if not (g.high < m and g.low > -m):
            return Rise(True, g, m)
    if not gains:
        return None
    return Rise(False, max(gains, key=lambda g: max(abs(g.low), abs(g.high))), m)


def _beyond(study):
    lo, hi = reach.beyond_band(study.families)
    return lambda run: bands.band_slope(run, lo, hi)[0]


def beyond_may_move(study) -> Rise | None:
    """:func:`may_move` of the slope beyond one hop, against the SESOI of a slope."""
    return may_move(study, _beyond(study), SLOPE)


def _band_name(study) -> str:
    return f"3R to {study.reaches[0].beyond_to:.3g}R"


def _per_model(reaches, x) -> tuple[np.ndarray, np.ndarray]:
    xs = np.concatenate([np.full(len(r.kept), x(r)) for r in reaches])
    kept = np.concatenate([r.kept for r in reaches])
    ok = np.isfinite(kept)
    return xs[ok], kept[ok]


def _kept_detail(reaches, name) -> str:
    """Each family's shares kept and its training budget (the families' budgets differ where a
    longer sequence needs more steps to pass its controls: the row shows it)."""
    return "; ".join(f"{name(r)}: kept {join(r.kept, '.3f')} "
                     f"({r.family.setup.train.steps:,} steps)" for r in reaches)  # fmt: skip


def undiminished(study) -> Verdict:
    """Paper A: InstanceNorm localizes the whole sequence, undiminished. Test: per seed of the
    base family, the share of the first hop band's slope that the band beyond it keeps,
    against ``SHARE``."""
    i = study.base
    r, run = study.reaches[i], study.runs[i]
    test = mean_test(r.kept, SHARE.value, null="the first hop band's slope (same networks)")
    ctrl = (learned(run, r.family.label), side_channel(run, r.family.label))
    one = reach.Study([study.families[i]], [run], [study.curves[i]], [r])
    up = may_move(one, lambda x: reach.kept_at(x, study.families), SHARE)
    return Verdict.graded(
        "A",
        f"The band beyond one hop ({_band_name(study)}) keeps at least {SHARE.value:.0%} of "
        "the first band's slope",
        test,
        SHARE,
        rising=up,
        controls=ctrl,
        evidence=f"{r.family.label}: slope beyond one hop {join(r.beyond, '.4f')} vs first "
        f"{join(r.first, '.3f')}",
        unit=".3f",
        paper_says="The position signal carries past one hop undiminished",
        key="a5_undiminished",
        rule=undiminished,
        measure=bands.hop_bands,
    )


def _trend(study, x, name, claim: str, null: str, lost: bool = False, paper_says: str = "",
           key: str = "") -> Verdict:  # fmt: skip
    """Spearman over every model of ``x`` (per family) against the share kept (or, ``lost``,
    the share lost), against ``TREND``; every family's controls, the two-sided moving rule."""
    n, kept = _per_model(study.reaches, x)
    test = rank_trend(n, 1 - kept if lost else kept, TREND.value, null=null)
    # a profile that trains one value of the axis has no trend to test
    one = (f"this profile trains one value of the axis ({name(study.reaches[0])}); the "
           "`paper` profile varies it") if len(set(n)) < 2 else ""  # fmt: skip
    row = Verdict.graded("A", claim, test, TREND, rising=beyond_may_move(study),
                         controls=controls(study), evidence=_kept_detail(study.reaches, name),
                         unit=".2f", paper_says=paper_says, untestable=one, key=key,
                         rule=_trend, measure=bands.hop_bands)  # fmt: skip
    return row


def grows_with_norm_layers(study) -> Verdict:
    """Paper A's multi-hop reading: each normalization layer relays one hop, so at a fixed
    receptive field more normalization layers carry the signal farther."""
    return _trend(
        study, lambda r: r.family.norm_layers, lambda r: f"{r.family.norm_layers} norm layers",
        "At a fixed receptive field, the share of the first band's slope kept beyond one hop "
        f"rises with the number of normalization layers (Spearman's ρ over every model at least "
        f"{TREND.value:g})",
        f"rank correlation of the share kept with the number of norm layers, ρ = {TREND.value:g}",
        paper_says="Each normalization layer relays position one hop further, so more "
        "normalization layers carry it farther (the multi-hop reading)", key="a5_norm_layers",
    )  # fmt: skip


def normalization_not_depth(pair) -> Verdict:
    """The layer axis's matched control (:func:`reach.matched_families`): the same kernel-1
    blocks with and without normalization, so that the number of normalization layers is
    separated from depth and capacity. Per seed (the same seeds draw the same inputs), the
    share kept with the blocks normalized minus without, a paired t test against
    ``SHARE_GAIN``; controls: both families learned, the normalized one shows the side
    channel; the difference at the kept states decides whether it may still rise."""
    (with_norm, plain), (run_n, run_p) = pair.reaches, pair.runs
    test = mean_test(with_norm.kept - plain.kept, SHARE_GAIN.value,
                     null="the same kernel-1 blocks without normalization, same seeds",
                     what="paired t test")  # fmt: skip
    ctrl = (learned(run_n, with_norm.family.label), side_channel(run_n, with_norm.family.label),
            learned(run_p, plain.family.label))  # fmt: skip
    kept = [c.values(lambda x: reach.kept_at(x, pair.families)) for c in pair.curves]
    up = may_rise(kept[0] - kept[1], pair.curves[0].fractions, SHARE_GAIN.flat_margin)
    blocks = with_norm.family.cnn.depth * with_norm.family.cnn.mix
    return Verdict.graded(
        "A (ours)",
        f"(ours) At equal depth and capacity ({blocks} kernel-1 blocks), normalizing those blocks "
        f"raises the share of the first band's slope kept beyond one hop by at least "
        f"{SHARE_GAIN.value:g}",
        test, SHARE_GAIN, rising=up, controls=ctrl,
        evidence=f"{with_norm.family.label}: kept {join(with_norm.kept, '.3f')}; "
        f"{plain.family.label}: kept {join(plain.kept, '.3f')} "
        f"({with_norm.family.setup.train.steps:,} steps each)",
        unit=".3f",
        paper_says="not in the paper (the matched control of the multi-hop reading: more "
        "normalization layers, not more depth, carry it farther)",
        key="a5_normalization_not_depth", rule=normalization_not_depth, measure=bands.hop_bands,
    )  # fmt: skip


def falls_with_length(study) -> Verdict:
    """The critics' reading: every statistic averages over l positions, so each hop keeps less
    of the signal for longer sequences (the share lost rises with l)."""
    return _trend(
        study, lambda r: r.family.seq_len, lambda r: f"l = {r.family.seq_len}",
        "At a fixed receptive field and depth, the share of the first band's slope lost beyond "
        f"one hop rises with the sequence length (Spearman's ρ over every model at least "
        f"{TREND.value:g})",
        f"rank correlation of the share lost with l, ρ = {TREND.value:g}", lost=True,
        paper_says="not in the paper (a reviewer's reading: every statistic averages over l "
        "positions)", key="a5_falls_with_length",
    )  # fmt: skip


# ----------------------------------------------------------------------------- the prediction


def beyond_law(study) -> reach.Law:
    """The law of the slope beyond one hop (what the predictions extrapolate), every model
    kept (:func:`reach.fit_law`)."""
    return reach.fit_law(study.reaches, *reach.base_geometry(study), reach.slope_beyond)


def _law_control(law: reach.Law) -> Control:
    """The law must fit the families it was fitted on: the pure-error F test of lack of fit
    (the families' means against the law, beside the scatter within families) must be
    testable (more families than terms) and not reject at ALPHA. A law that misses its own
    families grades no extrapolation."""
    p, d_lof, d_pe = law.lack_of_fit
    return Control(
        "the law",
        f"fits its families: lack-of-fit F test testable and p ≥ {ALPHA:g}",
        bool(p == p and p >= ALPHA),
        f"F test on {d_lof} and {d_pe} degrees of freedom, p = {p:.3g}" if p == p else
        f"not testable: {d_lof} degrees of freedom for lack of fit ({law.n_models} models)",
    )  # fmt: skip


def _testable(study, law: reach.Law) -> tuple[bool, str]:
    """The prediction is testable when both axes were measured and the base family is not
    paper A's network itself (then chapter A1 grades it directly)."""
    n0, l0 = reach.base_geometry(study)
    if not law.fitted:  # too few models, or no positive mean: there is no interval
        return True, ""
    if (n0, l0) == (paper_values.NORM_LAYERS, paper_values.SEQ_LEN):
        return False, "the base family is paper A's network: chapter A1 grades it directly"
    for i, name in ((1, "normalization layers"), (2, "sequence length")):
        if not law.has_term(i):
            return False, f"the study varies no {name}, so the law cannot extrapolate along it"
    return True, ""


def _clip_exp2(x):
    return np.exp2(np.clip(x, -60.0, 60.0))  # bounded: the root search needs finite values


def paper_flag_rate(sigma: float, alpha: float):
    """log2 slope beyond one hop -> the fraction of indices beyond 3R the span test flags at
    the paper's geometry and number of predictions (:func:`reach.flag_rate`)."""
    return lambda x: float(reach.flag_rate(_clip_exp2(x), paper_values.SEQ_LEN, sigma,
                                           paper_values.SAMPLES_PER_INDEX, alpha))  # fmt: skip


def _prediction(study, law, fn, sesoi, null, what, claim, evidence, unit, key) -> Verdict:
    says = "The whole sequence is localized (Fig. 1a, paper A's network)"
    est, se = law.predict(paper_values.NORM_LAYERS, paper_values.SEQ_LEN)
    test = mapped_estimate(est, se, law.dof, fn, sesoi.value, law.n_models, null=null, what=what)
    ok, why = _testable(study, law)
    row = Verdict.graded("A", claim, test, sesoi, rising=beyond_may_move(study),
                         controls=(*controls(study), _law_control(law)), evidence=evidence,
                         unit=unit, paper_says=says, untestable="" if ok else why,
                         key=key, rule=_prediction, measure=bands.hop_bands)  # fmt: skip
    return row


def paper_prediction(study, law: reach.Law) -> list[Verdict]:
    """Both predictions for paper A's network from ``law`` (of the slope beyond one hop): by
    effect size, and by significance (the flagged fraction at the paper's number of predictions
    and level, with one prediction's standard deviation as in the base family)."""
    est, se = law.predict(paper_values.NORM_LAYERS, paper_values.SEQ_LEN)
    sigma = reach.prediction_sigma(study.runs[study.base])
    where = (
        f"paper A's network ({paper_values.NORM_LAYERS} norm layers, l = {paper_values.SEQ_LEN})"
    )
    slope = _prediction(
        study, law, _clip_exp2, SLOPE, f"a slope of {SLOPE.value:g} beyond 3R",
        "the law's prediction of the log2 mean slope beyond one hop (quasi-likelihood, "
        "sandwich SE)",
        f"Extrapolated to {where}, the fitted law predicts a slope beyond one hop of at least "
        f"{SLOPE.value:g} of the ramp's slope (whole-sequence localization by effect size; a "
        "prediction)",
        f"predicted log2 slope {num(est, '.2f')} ± {num(se, '.2f')} (SE of the fitted mean"
        + ("" if se == se else ": none, the fit has no degrees of freedom left for it") + ")",
        ".3g", "a5_law_slope",
    )  # fmt: skip
    flags = _prediction(
        study, law, paper_flag_rate(sigma, paper_values.WELCH_ALPHA), FLAGGED,
        f"{FLAGGED.value:.0%} of the indices beyond 3R flagged",
        "the law's prediction of the log2 mean slope beyond one hop (quasi-likelihood, "
        "sandwich SE), through the span test's power",
        f"Extrapolated to {where} and its {paper_values.SAMPLES_PER_INDEX:,} predictions per "
        f"index, the fitted law predicts that the test flags at least {FLAGGED.value:.0%} of "
        "the indices beyond 3R (whole-sequence localization by significance; a prediction)",
        f"one prediction's SD {sigma:.3f} (the base family's), level {paper_values.WELCH_ALPHA:g}",
        ".3f", "a5_law_flags",
    )  # fmt: skip
    return [slope, flags]
