"""Chapter A5: kernel-1 blocks, the study's families, the reach measures, the fitted law and
the verdict rules, each able to come out either way."""

import math
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from normbook.grading.claims import mapped_estimate, mean_test
from normbook.grading.verdicts import NOT_SHOWN, NOT_TESTABLE, REFUTED, REPRODUCED
from normbook.paper_a.a5_reach import claims
from normbook.paper_a.a5_reach.spec import A5
from normbook.paper_a.cached.cnn import CNNConfig, StackedCNN
from normbook.paper_a.grading.sesoi import SHARE_GAIN
from normbook.paper_a.runs import localization, reach
from normbook.runtime.params import ParameterError

from .conftest import synthetic_run

L, R = 75, 8


def test_kernel_1_blocks_add_norm_layers_but_no_reach():
    cfg = CNNConfig(depth=2, width=4, kernel=5, norm="none", mix=2)
    assert (cfg.n_layers, cfg.receptive_radius, cfg.kernels) == (6, 4, [5, 1, 1, 5, 1, 1])
    assert replace(cfg, norm="instance").norm_layers == 6 and cfg.norm_layers == 0
    net = StackedCNN(cfg, [0]).eval()
    x = torch.randn(1, 1, 30)
    y = x.clone()
    y[..., 20 + cfg.receptive_radius + 1 :] += 1.0  # beyond R of index 20
    with torch.no_grad():
        a, b = net(x), net(y)
    assert torch.equal(a[..., 20], b[..., 20])
    assert not torch.equal(a[..., 26], b[..., 26])  # within R of the change
    assert len(StackedCNN(replace(cfg, mix=0), [0]).norms) == 2  # mix 0: chapter A1's net


def test_probes_and_interventions_refuse_kernel_1_blocks(tiny_setup):
    s = tiny_setup()
    with pytest.raises(ValueError, match="mix = 0"):
        localization.localize(s, replace(s.cnn("instance"), mix=1), with_probes=True)


def test_families_share_the_base_networks_and_list_each_once():
    params = A5.resolve("cpu", reach_lens=[75, 150], reach_len_steps=[5000, 12_000])
    fams = reach.families(localization.Setup.from_params(params), params)
    base = [f for f in fams if f.a1]
    assert len(base) == 1 and base[0].axes == ("norm layers", "length")
    assert base[0].setup == localization.Setup.from_params(
        params
    )  # A1's seeds, budget and evaluation
    assert (
        base[0].cnn == localization.Setup.from_params(params).chapter_cnn
    )  # the very networks of A1
    assert len(fams) == len(set(params.reach_mix)) + len(set(params.reach_lens)) - 1
    assert {f.norm_layers for f in fams} == {params.depth * (1 + m) for m in params.reach_mix}
    assert all(f.cnn.receptive_radius == base[0].cnn.receptive_radius for f in fams)
    long = next(f for f in fams if f.seq_len == max(params.reach_lens))
    assert long.setup.train.steps == params.reach_len_steps[params.reach_lens.index(long.seq_len)]
    assert long.setup.seeds == tuple(params.reach_seeds)


def test_spec_refuses_lengths_without_a_second_band_unpaired_budgets_and_no_base():
    with pytest.raises(ParameterError, match="second hop band"):
        A5.resolve("cpu", reach_lens=[40, 75], reach_len_steps=[10, 10])
    with pytest.raises(ParameterError, match="one budget per length"):
        A5.resolve("cpu", reach_len_steps=[10, 20])
    with pytest.raises(ParameterError, match="base family"):
        A5.resolve("cpu", reach_mix=[1, 3], reach_lens=[150], reach_len_steps=[10])


def _profile(kept: float):
    """Slope 1 (the ramp's) within 3R of each end, ``kept`` beyond, 0.5 in the middle."""

    def rise(d):
        return np.where(d < 3 * R, d, 3 * R + kept * (d - 3 * R)) / (L - 1)

    def f(i):
        below = rise((L - 1) // 2) - rise(np.minimum(i, L - 1 - i))
        return np.where(i < L / 2, 0.5 - below, 0.5 + below)

    return f


def _family(norm_layers: int, seq_len: int = L, axes=("norm layers",), a1=False):
    return SimpleNamespace(norm_layers=norm_layers, seq_len=seq_len, axes=axes, a1=a1,
                           cnn=SimpleNamespace(receptive_radius=R),
                           setup=SimpleNamespace(train=SimpleNamespace(steps=100 * seq_len)),
                           label=f"{norm_layers} norm layers, l = {seq_len}")  # fmt: skip


def _flat_curve(run):
    return SimpleNamespace(fractions=np.array([0.25, 0.5, 1.0]),
                           values=lambda m: np.array([np.asarray(m(run), float)] * 3))  # fmt: skip


def _rising_curve(run):
    """A curve whose tested quantities were 0 at half the budget: every one may still move."""
    return SimpleNamespace(fractions=np.array([0.25, 0.5, 1.0]),
                           values=lambda m: np.array([0 * np.asarray(m(run), float)] * 2
                                                     + [np.asarray(m(run), float)]))  # fmt: skip


def _study(kept_by_family: dict, jitter=0.0005, learned=True, axis="norm layers", curve=None):
    """Families keyed by N (axis "norm layers") or by l (axis "length"), each with a mean
    prediction of slope 1 within 3R and ``kept`` beyond."""
    fams, runs = [], []
    for i, (x, kept) in enumerate(kept_by_family.items()):
        prof = _profile(kept) if learned else (lambda v: np.full(np.shape(v), 0.5))
        run = synthetic_run(prof, seeds=4, jitter=jitter, seed=i)
        run.n_per_index = 40_000
        n, length = (x, L) if axis == "norm layers" else (4, x)
        fams.append(_family(n, length, axes=("norm layers", "length") if i == 0 else (axis,),
                            a1=i == 0))  # fmt: skip
        runs.append(run)
    curves = [(curve or _flat_curve)(r) for r in runs]
    return reach.assemble(fams, runs, curves, [1.0] * len(fams))


def test_reaches_read_the_bands():
    s = _study({4: 0.01, 8: 1.0})
    short, full = s.reaches
    assert short.effect_reach(0.05) == 3.0  # the band from 3R is below 0.05
    assert short.beyond_to == (L - 1) // 2 / R  # the common band ends at the half-sequence
    assert full.effect_reach(0.05) == full.half  # no band below: the half-sequence
    assert short.significance_reach(0.05) == full.half  # 0.01 is far above its SE
    assert short.significance_reach(0.05, 10) == 3.0  # with 10 predictions it is not
    assert np.allclose(short.kept, 0.01, atol=0.02) and np.allclose(full.kept, 1.0, atol=0.05)


def test_norm_layer_rule_goes_every_way():
    grows = _study({4: 0.01, 8: 0.05, 16: 0.2})
    assert claims.grows_with_norm_layers(grows).verdict == REPRODUCED
    falls = _study({4: 0.2, 8: 0.05, 16: 0.01})
    assert claims.grows_with_norm_layers(falls).verdict == REFUTED  # flat curves, wrong sign
    moving = _study({4: 0.2, 8: 0.05, 16: 0.01}, curve=_rising_curve)
    v = claims.grows_with_norm_layers(moving)
    assert v.verdict == NOT_SHOWN and "rising" in v.grade.why  # still moving: never refuted
    assert v.grade.moving and not v.grade.no_kept_states  # the grade says so, not only its text
    assert not claims.grows_with_norm_layers(falls).grade.moving
    never = _study({4: 0.2, 8: 0.05, 16: 0.01}, learned=False)
    v = claims.grows_with_norm_layers(never)
    assert v.verdict == NOT_SHOWN and "positive control" in v.grade.why


def test_one_length_is_no_length_axis():
    one = _study({75: 0.2}, axis="length")
    row = claims.falls_with_length(one)
    assert row.verdict == NOT_TESTABLE and "one value of the axis (l = 75)" in row.grade.why


def test_length_rule_goes_every_way():
    falls = _study({75: 0.2, 150: 0.05, 300: 0.01}, axis="length")
    assert claims.falls_with_length(falls).verdict == REPRODUCED
    grows = _study({75: 0.01, 150: 0.05, 300: 0.2}, axis="length")
    assert claims.falls_with_length(grows).verdict == REFUTED
    never = _study({75: 0.2, 150: 0.05}, axis="length", learned=False)
    assert claims.falls_with_length(never).verdict == NOT_SHOWN
    row = claims.falls_with_length(falls)
    assert "l = 150: kept " in row.evidence and "(15,000 steps)" in row.evidence


def test_each_row_links_the_function_that_runs_its_test():
    """The trend rows link to ``_trend`` (it runs the rank test; private, and its source page
    anchors it), the predictions to ``_prediction``, never to the public caller."""
    from normbook.publish import sphinx_code

    s = _study({4: 0.01, 8: 0.05, 16: 0.2})
    rows = [
        claims.grows_with_norm_layers(s),
        claims.falls_with_length(s),
        *claims.paper_prediction(s, _fake_law(np.log2(0.5), 0.1)),
        claims.undiminished(s),
    ]
    module = "normbook.paper_a.a5_reach.claims"
    assert [v.code[0] for v in rows] == [("rule", module, name) for name in (
        "_trend", "_trend", "_prediction", "_prediction", "undiminished")]  # fmt: skip
    for v in rows:
        for _, mod, name in v.code:
            sphinx_code.locate(f"{mod}.{name}")


def _fake_law(est: float, se: float, terms=(True, True), fit_p=0.5):
    cov = np.diag([se**2, se**2 if terms[0] else 0.0, se**2 if terms[1] else 0.0])
    law = reach.Law(np.array([est, 0.0, 0.0]), cov, 20, 4, L, 23, 0.3, (fit_p, 1, 19))
    law.predict = lambda n, length: (est, se)  # the prediction at the paper's network
    return law


def test_prediction_rows_go_every_way():
    s = _study({4: 1.0, 8: 1.0})
    high, low = _fake_law(np.log2(0.5), 0.1), _fake_law(np.log2(0.001), 0.1)
    assert [r.verdict for r in claims.paper_prediction(s, high)] == [REPRODUCED, REPRODUCED]
    assert [r.verdict for r in claims.paper_prediction(s, low)] == [REFUTED, REFUTED]
    wide = _fake_law(np.log2(0.05), 3.0)
    assert {r.verdict for r in claims.paper_prediction(s, wide)} == {NOT_SHOWN}
    one_axis = _fake_law(np.log2(0.5), 0.1, terms=(True, False))
    rows = claims.paper_prediction(s, one_axis)
    assert {r.verdict for r in rows} == {NOT_TESTABLE} and "sequence length" in rows[0].grade.why
    misfit = claims.paper_prediction(s, _fake_law(np.log2(0.5), 0.1, fit_p=0.01))[0]
    assert misfit.verdict == NOT_SHOWN and "the law (fits its families" in misfit.grade.why
    saturated = claims.paper_prediction(s, _fake_law(np.log2(0.5), 0.1, fit_p=float("nan")))[0]
    assert saturated.verdict == NOT_SHOWN and "not testable" in saturated.controls[-1].evidence


def test_undiminished_rule_goes_both_ways():
    assert claims.undiminished(_study({4: 1.0, 8: 1.0})).verdict == REPRODUCED
    assert claims.undiminished(_study({4: 0.01, 8: 0.01})).verdict == REFUTED


def _with_se(r):
    return r.kept, r.se


def _law_data(rng, points, b1=1.0, b2=-1.0, spread=0.1, se=0.001, seeds=6):
    reaches = []
    for n, length in points:
        share = 0.02 * (n / 4) ** b1 * (length / 75) ** b2
        kept = share * 2 ** rng.normal(0, spread, seeds) + rng.normal(0, se, seeds)
        reaches.append(SimpleNamespace(family=_family(n, length), kept=kept,
                                       se=np.full(seeds, se)))  # fmt: skip
    return reaches


POINTS = [(4, 75), (8, 75), (16, 75), (4, 150), (4, 300)]


def test_the_law_recovers_a_power_law_and_its_prediction():
    law = reach.fit_law(_law_data(np.random.default_rng(0), POINTS), 4, 75, _with_se)
    for i, truth in ((1, 1.0), (2, -1.0)):
        lo, hi = law.interval(i, 0.99)
        assert lo < truth < hi
    est, lo, hi = law.share(32, 600, 0.99)
    assert lo < 0.02 < hi  # (32/4) * (600/75)^-1 = 1
    # t on families - terms: five geometries pin three terms with 2 degrees of freedom
    assert law.n_models == 30 and law.dof == 2
    more = reach.fit_law(_law_data(np.random.default_rng(0), POINTS + [(32, 75), (8, 150)]), 4,
                         75, _with_se)  # fmt: skip
    assert more.dof == 4
    for i, truth in ((1, 1.0), (2, -1.0)):
        lo, hi = more.interval(i, 0.99)
        assert lo < truth < hi and hi - lo < 0.5
    assert 0.03 < law.tau < 0.2  # the multiplicative spread: 2^N(0, 0.1) is about 7 %
    p, d_lof, d_pe = law.lack_of_fit
    assert (d_lof, d_pe) == (2, 25) and p > 0.01


def test_the_law_keeps_models_at_or_below_zero_and_is_not_biased_by_them():
    # small shares measured with an error as large as themselves: many models <= 0
    rng = np.random.default_rng(1)
    pts = [(4, 75), (8, 75), (4, 150), (4, 300)]
    fits = [reach.fit_law(_law_data(rng, pts, spread=0.05, se=0.02, seeds=8), 4, 75, _with_se)
            for _ in range(40)]  # fmt: skip
    assert all(f.n_models == 32 for f in fits)  # nothing dropped
    b2 = np.array([f.coef[2] for f in fits])
    assert abs(np.median(b2) - (-1.0)) < 0.25  # the log fit of the positive ones drifts to 0
    covered = np.mean([f.interval(2, 0.9)[0] < -1.0 < f.interval(2, 0.9)[1] for f in fits])
    assert covered >= 0.75


def test_lack_of_fit_rejects_a_law_its_families_do_not_follow():
    rng = np.random.default_rng(2)
    reaches = _law_data(rng, POINTS, spread=0.02, se=0.0002)
    reaches[2].kept = reaches[2].kept * 8  # 16 norm layers far above the law
    law = reach.fit_law(reaches, 4, 75, _with_se)
    assert law.lack_of_fit[0] < 0.01
    assert not claims._law_control(law).passed and claims._law_control(_fake_law(0, 0.1)).passed


def test_law_without_variation_on_an_axis_fixes_its_term_at_zero():
    reaches = [SimpleNamespace(family=_family(n), kept=np.array([0.01 * n, 0.011 * n]),
                               se=np.full(2, 0.001)) for n in (4, 8)]  # fmt: skip
    law = reach.fit_law(reaches, 4, 75, _with_se)
    assert law.coef[2] == 0 and law.cov[2, 2] == 0 and law.fitted
    assert law.has_term(1) and not law.has_term(2)
    assert math.isnan(law.lack_of_fit[0])  # two families, two terms: saturated
    assert law.dof == 0 and math.isnan(law.interval(1, 0.9)[0])  # and no interval
    assert reach.fit_law(reaches[:1], 4, 75, _with_se).dof == 0  # one family: no interval
    nothing = [SimpleNamespace(family=_family(4), kept=np.array([-0.1, 0.0]),
                               se=np.full(2, 0.01))]  # fmt: skip
    empty = reach.fit_law(nothing, 4, 75, _with_se)
    assert not empty.fitted and empty.n_models == 2  # kept, but a mean <= 0 has no power law


def test_mapped_estimate_is_the_t_test_through_a_monotone_map():
    d = np.array([0.3, 0.5, 0.4, 0.6, 0.45])
    t = mean_test(d, 0.2, "x")
    m = mapped_estimate(d.mean(), d.std(ddof=1) / np.sqrt(5), 4, lambda x: x, 0.2, 5, "x", "y")
    assert np.isclose(m.p, t.p) and np.isclose(m.low, t.low) and np.isclose(m.high, t.high)
    twice = mapped_estimate(d.mean(), d.std(ddof=1) / np.sqrt(5), 4, lambda x: 2 * x, 0.4, 5,
                            "x", "y")  # fmt: skip
    assert np.isclose(twice.p, t.p) and np.isclose(twice.effect, 2 * d.mean())
    assert np.isnan(mapped_estimate(0.4, 0.0, 4, lambda x: x, 0.2, 5, "x", "y").p)
    # a near-degenerate law (a term the data cannot pin down) gives a huge SE: still a test
    wide = mapped_estimate(-1e8, 1e8, 5, lambda x: np.exp2(np.clip(x, -60, 60)), 0.05, 8, "x", "y")
    assert 0 < wide.p < 1 and not wide.clears() and not wide.below()
    log = mapped_estimate(np.log2(0.1), 0.2, 10, np.exp2, 0.05, 11, "x", "y")  # nonlinear
    direct = mapped_estimate(np.log2(0.1), 0.2, 10, lambda x: x, np.log2(0.05), 11, "x", "y")
    assert np.isclose(log.p, direct.p) and np.isclose(log.high, np.exp2(direct.high))
    huge = mapped_estimate(0.0, 40.0, 10, lambda x: np.exp2(np.clip(x, -60, 60)), 0.05, 11,
                           "x", "y")  # fmt: skip
    assert 0 < huge.p < 1  # an error too large for 2**x stays finite


def test_flag_rate_is_alpha_without_a_slope_and_rises_with_it():
    assert np.isclose(reach.flag_rate(0.0, 600, 0.1, 3_200_000, 0.1), 0.1)
    rates = reach.flag_rate(np.array([0.001, 0.01, 0.1, 1.0]), 600, 0.1, 3_200_000, 0.1)
    assert np.all(np.diff(rates) > 0) and rates[-1] > 0.99


def test_the_matched_control_separates_normalization_from_depth():
    def pair(normed_kept, plain_kept, curve=None):
        s = _study({8: normed_kept, 4: plain_kept}, curve=curve)
        for f in s.families:  # the same 4 kernel-1 blocks, with and without normalization
            f.cnn.depth, f.cnn.mix = 2, 2
        return s

    gains = claims.normalization_not_depth(pair(0.3, 0.05))
    assert gains.verdict == REPRODUCED and gains.paper == "A (ours)"
    assert gains.claim.startswith("(ours) At equal depth and capacity (4 kernel-1 blocks)")
    assert gains.test.effect == pytest.approx(0.25, abs=0.03) and gains.sesoi is SHARE_GAIN
    assert claims.normalization_not_depth(pair(0.05, 0.05)).verdict == REFUTED  # flat: refutable
    late = pair(0.05, 0.05)  # the normalized family was still gaining: not refuted yet
    late.curves[0] = _rising_curve(late.runs[0])
    moving = claims.normalization_not_depth(late)
    assert moving.verdict == NOT_SHOWN and moving.grade.rising
