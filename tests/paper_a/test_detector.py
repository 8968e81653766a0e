import numpy as np
import pytest
from scipy import stats as sps

from normbook.paper_a import detector


def test_neighbour_pvalues_equal_scipy_welch_on_raw_arrays():
    rng = np.random.default_rng(1)
    a = rng.normal(np.linspace(0, 1, 6), [0.5, 1, 2, 0.5, 1, 3], size=(40, 6))
    b = rng.normal(np.linspace(0, 1, 6), 1.0, size=(55, 6))
    p_left, p_right = detector.neighbour_pvalues(
        a.mean(0), a.std(0, ddof=1), len(a), b.mean(0), b.std(0, ddof=1), len(b)
    )
    for i in range(6):
        if i > 0:
            assert p_left[i] == pytest.approx(
                sps.ttest_ind(a[:, i], b[:, i - 1], equal_var=False).pvalue
            )
        if i < 5:
            assert p_right[i] == pytest.approx(
                sps.ttest_ind(a[:, i], b[:, i + 1], equal_var=False).pvalue
            )
    assert np.isnan(p_left[0]) and np.isnan(p_right[5])


def test_localized_needs_every_neighbour():
    p_left = np.array([np.nan, 0.01, 0.5, 0.01])
    p_right = np.array([0.01, 0.01, 0.01, np.nan])
    np.testing.assert_array_equal(
        detector.localized_mask(p_left, p_right, 0.1), [True, True, False, True]
    )


def test_interior_is_where_the_receptive_field_misses_the_padding():
    m = detector.interior_mask(10, 3)
    np.testing.assert_array_equal(np.flatnonzero(m), [3, 4, 5, 6])


def test_localization_distance_ignores_false_positives_away_from_the_boundary():
    seq_len = 101
    dist = detector.boundary_distance(seq_len)
    mask = dist <= 10  # a solid band of 11 indices at each end
    mask[50] = True  # one false positive in the middle
    assert detector.localization_distance(mask, window=2, threshold=0.5) == 10
    mask[40:61] = True  # a run of false positives, not connected to the band
    assert detector.localization_distance(mask, window=2, threshold=0.5) == 10
    assert detector.localization_distance(np.ones(seq_len, bool), window=2) == 50
    assert detector.localization_distance(np.zeros(seq_len, bool), window=2) == -1
