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
