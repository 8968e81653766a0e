"""Chapter A5's law held against a recorded run: the measured share kept, slope beyond one hop
and flagged fraction of a run whose mean prediction is known, against laws that predict them
and laws that do not."""

from types import SimpleNamespace

import numpy as np

from normbook.paper_a import recorded
from normbook.paper_a.runs import reach


def _law(log2_value: float) -> reach.Law:
    """A fitted law whose prediction at the base geometry is ``log2_value`` (tight)."""
    return reach.Law(coef=np.array([log2_value, 0.0, 0.0]), cov=np.eye(3) * 1e-4, dof=10,
                     n0=4, l0=75, n_models=13)  # fmt: skip


def _recorded(run):
    run.cnn.norm_layers = 4
    run.n_per_index = int(run.out.count.sum())
    return SimpleNamespace(with_norm=run, data={"config": {"detector": {"alpha": 0.1}}})


def test_the_law_is_held_against_what_the_record_measured(fake_run, profile):
    ramp = _recorded(fake_run(profile["ramp"]))  # the ramp everywhere: all of it is kept
    study = SimpleNamespace(reaches=[SimpleNamespace(beyond_to=4.625)], runs=[ramp.with_norm],
                            base=0)  # fmt: skip
    m = recorded.measured_beyond(ramp, 4.625)
    np.testing.assert_allclose(m["share"], 1.0, atol=0.05)
    np.testing.assert_allclose(m["beyond"], 1.0, atol=0.05)
    assert (m["flagged"] > 0.9).all()
    rows = recorded.versus_law(ramp, study, _law(0.0), _law(0.0))  # predicts 1 and 1
    assert [r["the measured mean lies"] for r in rows[:2]] == ["inside", "inside"]
    rows = recorded.versus_law(ramp, study, _law(-3.0), _law(-3.0))  # predicts 1/8
    assert [r["the measured mean lies"] for r in rows[:2]] == ["above", "above"]
    flat = _recorded(fake_run(profile["one_hop"]))  # nothing beyond 3R
    m = recorded.measured_beyond(flat, 4.625)
    np.testing.assert_allclose(m["beyond"], 0.0, atol=0.05)
    rows = recorded.versus_law(flat, study, _law(0.0), _law(0.0))
    assert rows[1]["the measured mean lies"] == "below"
    nofit = reach.Law(coef=np.full(3, np.nan), cov=np.full((3, 3), np.nan), dof=0, n0=4, l0=75,
                      n_models=0)  # fmt: skip
    assert (
        "could not be fitted"
        in recorded.versus_law(ramp, study, nofit, nofit)[0]["the measured mean lies"]
    )
