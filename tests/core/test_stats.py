import numpy as np
import pytest

from normbook.grading import stats


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


def test_device_moments_equal_the_numpy_ones():
    """The device-native accumulator (here on the CPU's torch) against numpy's, on the same
    float32 batches of uneven sizes: equal to 1e-12, relative."""
    import torch

    rng = np.random.default_rng(1)
    data = rng.normal(0.4, 0.1, size=(3000, 5, 60)).astype(np.float32)
    host, dev = stats.RunningMoments((5, 60)), stats.DeviceMoments((5, 60), "cpu")
    for lo, hi in [(0, 32), (32, 1056), (1056, 1057), (1057, 3000)]:
        host.update(data[lo:hi])
        dev.update(torch.from_numpy(data[lo:hi]))
    back = dev.to_host()
    assert back.count == host.count == 3000
    np.testing.assert_allclose(back.mean, host.mean, rtol=1e-12, atol=0)
    np.testing.assert_allclose(back.m2, host.m2, rtol=1e-12, atol=0)
    np.testing.assert_allclose(back.std, host.std, rtol=1e-12, atol=0)
