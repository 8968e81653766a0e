"""The multi-hop bounds of paper A and their comparison with probe distances."""

import numpy as np
import pytest

from normbook.paper_a.measures import detector, multihop
from normbook.paper_a.measures.detector import DetectorConfig


def test_hop_bounds_follow_the_recursion():
    r = multihop.radius_per_depth(5, 4)  # floor(5/2) * d
    np.testing.assert_array_equal(r, [2, 4, 6, 8])
    np.testing.assert_array_equal(multihop.single_hop_reach(5, 4), [6, 12, 18, 24])
    d = np.arange(1, 5)
    np.testing.assert_array_equal(multihop.iterated_reach(5, 4), 2 * (d**2 + d + 1))  # r(d^2+d+1)
    assert multihop.iterated_reach(5, 4, factor=2.0)[0] == 2 * 2


@pytest.mark.parametrize(
    "distance,hops", [(-1, 0), (8, 0), (9, 1), (24, 1), (25, 2), (40, 2), (41, 3)]
)
def test_hops_needed(distance, hops):
    assert multihop.hops_needed(distance, radius=8, factor=3.0) == hops


def test_compare_caps_bounds_at_the_middle_and_flags_excess():
    maps = np.zeros((3, 2, 41), dtype=bool)
    dist = np.minimum(np.arange(41), 40 - np.arange(41))
    maps[0, 0] = dist <= 2  # within R(1) = 2
    maps[2, 1] = True  # everything at depth 3 for model 1
    distances = detector.distances(maps, DetectorConfig(window=1, threshold=0.5))
    assert distances[0, 0] == 2 and distances[0, 1] == -1 and distances[2, 1] == 20
    cmp = multihop.compare(distances, kernel=5, seq_len=41)
    assert cmp.iterated[2] == 20.0  # 2*13 = 26 capped at the middle
    assert cmp.beyond_single[2].tolist() == [False, True]  # 20 > 3R(3) = 18
    assert cmp.beyond_iterated[2].tolist() == [False, False]
    assert cmp.hops[0].tolist() == [0, 0]
    assert cmp.first_beyond_radius == [None, 3] and cmp.first_beyond_single == [None, 3]
    assert cmp.max_hops == [0, 2] and cmp.depths_beyond_iterated == [[], []]  # (20-6)/12 -> 2


def test_excess_beyond_is_the_best_depths_reach_past_the_bound():
    # R(d) = 1, 2, 3 for kernel 3; two models
    d = np.array([[2, 0], [2, 3], [7, 3]])
    np.testing.assert_array_equal(multihop.excess_beyond(d, 3), [4, 1])
    np.testing.assert_array_equal(multihop.excess_beyond(d, 3, factor=2.0), [1, 0])
