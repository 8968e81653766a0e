import numpy as np
import pytest
from scipy import stats as sps

from normbook.paper_a.measures import detector


def _raw_streams():
    rng = np.random.default_rng(1)
    a = rng.normal(np.linspace(0, 1, 6), [0.5, 1, 2, 0.5, 1, 3], size=(40, 6))
    b = rng.normal(np.linspace(0, 1, 6), 1.0, size=(55, 6))
    moments = detector.Moments(
        mean=np.stack([a.mean(0), b.mean(0)]),
        std=np.stack([a.std(0, ddof=1), b.std(0, ddof=1)]),
        count=np.array([len(a), len(b)]),
    )
    return a, b, moments


def _welch(x, y):
    return sps.ttest_ind(x, y, equal_var=False).pvalue


def test_span_test_equals_scipy_welch_on_raw_arrays():
    a, b, moments = _raw_streams()
    p = moments.pvalues("span")
    for i in range(6):
        after, before = min(i + 1, 5), max(i - 1, 0)
        assert p[i] == pytest.approx(_welch(a[:, after], b[:, before]))


def test_neighbour_test_equals_scipy_welch_on_raw_arrays():
    a, b, moments = _raw_streams()
    p = moments.pvalues("neighbour")
    for i in range(6):
        sides = [_welch(a[:, i], b[:, j]) for j in (i - 1, i + 1) if 0 <= j < 6]
        assert p[i] == pytest.approx(max(sides))  # at the ends, the one neighbour decides


def test_definition_test_is_the_largest_welch_pvalue_against_every_other_index():
    a, b, moments = _raw_streams()
    p = moments.pvalues("definition")
    for i in range(6):
        assert p[i] == pytest.approx(max(_welch(a[:, i], b[:, j]) for j in range(6) if j != i))


def test_unknown_test_is_refused():
    with pytest.raises(ValueError, match="unknown localization test"):
        _raw_streams()[2].pvalues("nearest")


def test_nan_pvalue_is_not_localized():
    """No variation to test (constant predictions) is no evidence of a difference."""
    p = np.array([np.nan, 0.01, 0.5, np.nan])
    np.testing.assert_array_equal(detector.localized_mask(p, 0.1), [False, True, False, False])
    const = detector.Moments(np.zeros((2, 5)), np.zeros((2, 5)), np.array([10, 10]))
    for test in detector.TESTS:
        assert not detector.localized_mask(const.pvalues(test), 0.1).any()


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


def test_interior_fraction_leaves_out_indices_whose_test_sees_the_boundary():
    """A no-norm network localizes exactly the indices within R of an end; the span test at
    index R compares outputs R - 1 and R + 1, so index R must not count as interior."""
    seq_len, radius = 30, 4
    dist = detector.boundary_distance(seq_len).astype(float)
    mean = np.where(dist < radius, dist, radius)  # flat interior, informative band
    moments = detector.Moments(
        mean=np.stack([mean, mean]), std=np.full((2, seq_len), 1e-3), count=np.array([100, 100])
    )
    (loc,) = detector.summarize(
        detector.Moments(moments.mean[:, None], moments.std[:, None], moments.count),
        radius,
        detector.DetectorConfig(alpha=0.1, test="span"),
    )
    assert loc.localized[radius] and not loc.localized[radius + 1]
    assert loc.frac_interior == 0.0
