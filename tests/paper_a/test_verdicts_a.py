"""Paper A verdict rules: each grade can come out."""

from normbook.paper_a import verdicts


def test_verdict_rules():
    assert verdicts.transition_matches(0.55, 0.5, 0.62, 0.1) == verdicts.REPRODUCED
    assert verdicts.transition_matches(0.42, 0.5, 0.62, 0.1) == verdicts.PARTLY
    assert verdicts.transition_matches(0.2, 0.5, 0.62, 0.1) == verdicts.NOT
    assert verdicts.transition_matches(float("nan"), 0.5, 0.62, 0.1) == verdicts.NOT
    assert verdicts.grows_with_groups(0.8, 0.01, [True, True], [True, True]) == verdicts.REPRODUCED
    assert verdicts.grows_with_groups(0.8, 0.01, [True, True], [True, False]) == verdicts.PARTLY
    assert verdicts.grows_with_groups(0.3, 0.3, [True, False], [False, False]) == verdicts.PARTLY
    assert verdicts.grows_with_groups(-0.3, 0.3, [True, True], [True, True]) == verdicts.NOT
    assert verdicts.unless_control_fails(verdicts.NOT, control_ok=False) == verdicts.INCONCLUSIVE
    assert verdicts.unless_control_fails(verdicts.NOT, control_ok=True) == verdicts.NOT
    assert (
        verdicts.unless_control_fails(verdicts.REPRODUCED, control_ok=False) == verdicts.REPRODUCED
    )
    assert verdicts.beyond_null(0.3, 0.05, [0.1, 0.02], [1e-4, -2e-4])
    assert not verdicts.beyond_null(0.3, 1e-4, [0.1, 0.02], [1e-4, -2e-4])  # tiny slope
    assert not verdicts.beyond_null(0.08, 0.05, [0.1, 0.02], [1e-4, -2e-4])  # null-level fraction
    assert verdicts.chance_at_zero_overlap([0.4, 0.9]) == verdicts.REPRODUCED
    assert verdicts.chance_at_zero_overlap([0.4, 0.001]) == verdicts.PARTLY
    assert verdicts.overlap_enables(0.9, 1e-4, [0.95, 0.85]) == verdicts.PARTLY
    assert verdicts.overlap_enables(0.1, 0.5, [0.95, 0.95]) == verdicts.NOT


def test_every_a1_and_a2_rule_can_come_out_each_way():
    R, P_, N = verdicts.REPRODUCED, verdicts.PARTLY, verdicts.NOT
    assert verdicts.no_norm_confined([3, 5], radius=8, max_abs_shift_diff=0.0) == R
    assert verdicts.no_norm_confined([3, 9], radius=8, max_abs_shift_diff=0.0) == P_
    assert verdicts.no_norm_confined([3, 5], radius=8, max_abs_shift_diff=1e-6) == N
    assert verdicts.norm_reaches([70, 73], radius=16, half=74, window=4) == R
    assert verdicts.norm_reaches([20, 5], radius=16, half=74, window=4) == P_
    assert verdicts.norm_reaches([16, 5], radius=16, half=74, window=4) == N
    assert verdicts.spreads_faster([[1, 5], [3, 4]], [2, 4]) == R
    assert verdicts.spreads_faster([[1, 5], [2, 4]], [2, 4]) == P_
    assert verdicts.spreads_faster([[2, 4], [-1, 4]], [2, 4]) == N
    assert verdicts.chance_at_zero_overlap([0.001, 0.01]) == N
    assert verdicts.stays_at_chance([0.5, 0.2]) == R and verdicts.stays_at_chance([1e-9]) == N
    assert verdicts.overlap_enables(0.9, 1e-4, [0.95, 0.91]) == R
    assert verdicts.beyond_single_hop([True, True]) == R
    assert verdicts.beyond_single_hop([True, False]) == P_
    assert verdicts.beyond_single_hop([False, False]) == N
