import numpy as np
import pytest
from scipy import stats as sps

from normbook import stats


def test_running_moments_equal_numpy_over_uneven_chunks():
    rng = np.random.default_rng(0)
    data = rng.normal(3.0, 2.0, size=(1001, 5, 7))
    mom = stats.RunningMoments((5, 7))
    for lo, hi in [(0, 1), (1, 250), (250, 251), (251, 1001)]:
        mom.update(data[lo:hi])
    assert mom.count == 1001
    np.testing.assert_allclose(mom.mean, data.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(mom.var, data.var(axis=0, ddof=1), rtol=1e-10)


def test_neighbour_pvalues_equal_scipy_welch_on_raw_arrays():
    rng = np.random.default_rng(1)
    a = rng.normal(np.linspace(0, 1, 6), [0.5, 1, 2, 0.5, 1, 3], size=(40, 6))
    b = rng.normal(np.linspace(0, 1, 6), 1.0, size=(55, 6))
    p_left, p_right = stats.neighbour_pvalues(a.mean(0), a.std(0, ddof=1), len(a),
                                              b.mean(0), b.std(0, ddof=1), len(b))
    for i in range(6):
        if i > 0:
            assert p_left[i] == pytest.approx(sps.ttest_ind(a[:, i], b[:, i - 1], equal_var=False).pvalue)
        if i < 5:
            assert p_right[i] == pytest.approx(sps.ttest_ind(a[:, i], b[:, i + 1], equal_var=False).pvalue)
    assert np.isnan(p_left[0]) and np.isnan(p_right[5])


def test_localized_needs_every_neighbour():
    p_left = np.array([np.nan, 0.01, 0.5, 0.01])
    p_right = np.array([0.01, 0.01, 0.01, np.nan])
    np.testing.assert_array_equal(stats.localized_mask(p_left, p_right, 0.1), [True, True, False, True])


def test_interior_is_where_the_receptive_field_misses_the_padding():
    m = stats.interior_mask(10, 3)
    np.testing.assert_array_equal(np.flatnonzero(m), [3, 4, 5, 6])


def test_localization_distance_ignores_false_positives_away_from_the_boundary():
    seq_len = 101
    dist = stats.boundary_distance(seq_len)
    mask = dist <= 10                 # a solid band of 11 indices at each end
    mask[50] = True                   # one false positive in the middle
    assert stats.localization_distance(mask, window=2, threshold=0.5) == 10
    mask[40:61] = True                # a run of false positives, not connected to the band
    assert stats.localization_distance(mask, window=2, threshold=0.5) == 10
    assert stats.localization_distance(np.ones(seq_len, bool), window=2) == 50
    assert stats.localization_distance(np.zeros(seq_len, bool), window=2) == -1


def test_effect_size_of_perfect_and_flat_predictions():
    target = np.linspace(0, 1, 50)
    perfect = stats.effect_size(target, target)
    assert perfect.slope == pytest.approx(1) and perfect.r2 == pytest.approx(1) and perfect.mae == 0
    flat = stats.effect_size(np.full(50, 0.5), target)
    assert flat.slope == pytest.approx(0) and flat.mae == pytest.approx(np.abs(target - 0.5).mean())
