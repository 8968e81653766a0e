"""The localization tests' operating characteristic on simulated streams: the primary test
keeps its false-positive rate at alpha and never loses power as the effect grows; the
neighbour test it replaced fails the second property (so these tests can fail)."""

import numpy as np
import pytest

from normbook.paper_a.measures import detector_calibration as calibration

ALPHA = 0.1
MC_TOLERANCE = 0.02  # Monte Carlo error of a rate over 200 x 64 correlated indices


@pytest.fixture(scope="module")
def oc():
    return calibration.operating_characteristic(
        alpha=ALPHA, tests=("span", "neighbour"), corr_lens=(1, 5, 17), n_models=200
    )


def test_span_test_false_positive_rate_is_alpha_within_simulation_error(oc):
    for corr_len, g in oc[(oc.test == "span") & (oc.step == 0)].groupby("corr_len"):
        assert g.rate.item() <= ALPHA + MC_TOLERANCE, corr_len
        assert g.rate.item() >= ALPHA - MC_TOLERANCE, corr_len  # and not wastefully below


def test_span_test_detection_never_falls_as_the_effect_grows(oc):
    assert calibration.largest_dip(oc, "span") <= 0.005
    strong = oc[(oc.test == "span") & (oc.step == max(calibration.STEPS))]
    assert (strong.rate > 0.95).all()


def test_neighbour_test_fails_monotonicity(oc):
    """The old detector: at correlated noise a small real effect is detected *less* often
    than no effect at all (the trough a reviewer found)."""
    assert calibration.largest_dip(oc, "neighbour") > 0.03
    g = oc[(oc.test == "neighbour") & (oc.corr_len == 17)].set_index("step").rate
    assert g[1.5] < g[0.0] / 2


def test_definition_test_is_valid(oc):
    ref = calibration.operating_characteristic(
        alpha=ALPHA, tests=("definition",), steps=(0.0,), n_models=50
    )
    assert calibration.false_positive_rate(ref, "definition") <= ALPHA


def test_simulated_noise_has_unit_variance_and_the_requested_correlation():
    rng = np.random.default_rng(0)
    z = calibration.smooth_noise(rng, (2000, 64), corr_len=5)
    assert z.var() == pytest.approx(1.0, abs=0.05)
    lag = [np.corrcoef(z[:, 10], z[:, 10 + k])[0, 1] for k in (1, 4, 5)]
    assert lag[0] == pytest.approx(0.8, abs=0.05) and lag[2] == pytest.approx(0.0, abs=0.06)


def test_operating_characteristic_is_seeded():
    a = calibration.operating_characteristic(tests=("span",), corr_lens=(5,), n_models=10)
    b = calibration.operating_characteristic(tests=("span",), corr_lens=(5,), n_models=10)
    assert a.equals(b)


def test_measured_is_cached_and_equals_the_simulation(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path))
    first = calibration.measured(alpha=ALPHA, n_models=10)
    again = calibration.measured(alpha=ALPHA, n_models=10)
    direct = calibration.operating_characteristic(alpha=ALPHA, n_models=10)
    assert first.equals(again) and (first.rate.to_numpy() == direct.rate.to_numpy()).all()
    assert list(first.test.unique()) == list(direct.test.unique())
    assert len(list((tmp_path / "a_calibration").iterdir())) == 1


def test_sequence_wide_noise_keeps_the_per_index_rate_but_fattens_the_fractions_tail():
    nulls = calibration.null_statistics(0.1, 75, 8, 4, 0.5, corr_lens=(1,), shares=(0.0, 0.9),
                                        n_models=150)  # fmt: skip
    by = nulls.groupby("share").frac_interior
    assert abs(by.mean()[0.0] - 0.1) < 0.02 and abs(by.mean()[0.9] - 0.1) < 0.04
    q = calibration.null_quantiles(nulls)
    assert q.loc[(0.9, 1), "frac_interior"] > 2 * q.loc[(0.0, 1), "frac_interior"]
    assert (nulls.distance_beyond <= 75 // 2 - 8).all()
