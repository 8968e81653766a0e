import numpy as np
import pytest

from normbook.core import stats


def test_running_moments_equal_numpy_over_uneven_chunks():
    rng = np.random.default_rng(0)
    data = rng.normal(3.0, 2.0, size=(1001, 5, 7))
    mom = stats.RunningMoments((5, 7))
    for lo, hi in [(0, 1), (1, 250), (250, 251), (251, 1001)]:
        mom.update(data[lo:hi])
    assert mom.count == 1001
    np.testing.assert_allclose(mom.mean, data.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(mom.var, data.var(axis=0, ddof=1), rtol=1e-10)


def test_effect_size_of_perfect_and_flat_predictions():
    target = np.linspace(0, 1, 50)
    perfect = stats.effect_size(target, target)
    assert perfect.slope == pytest.approx(1) and perfect.r2 == pytest.approx(1) and perfect.mae == 0
    flat = stats.effect_size(np.full(50, 0.5), target)
    assert flat.slope == pytest.approx(0) and flat.mae == pytest.approx(np.abs(target - 0.5).mean())
