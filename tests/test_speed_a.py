"""Paper A's training profile: its candidates compute what today's step computes, and the tool
writes a complete record."""

import json

import pytest
import torch

from normbook.paper_a.cached.cnn import StackedCNN
from normbook.tools import speed_a


@pytest.mark.parametrize("variant", speed_a.VARIANTS[1:3])
def test_each_candidate_forward_computes_todays_outputs(variant):
    """A ratio compares one computation done two ways: the head as a matmul and the first
    layer by unfold agree with the stack's own forward to float rounding, per model."""
    fam = speed_a.family("smoke")
    net = StackedCNN(fam.cnn, [0, 1, 2])
    x = torch.randn(4, 3, fam.setup.seq_len, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        today, other = net(x), speed_a._forward(net, x, variant)
    assert other.shape == today.shape
    assert torch.allclose(other, today, rtol=1e-5, atol=1e-6)
    with pytest.raises(AssertionError):  # and the check can fail: another model's weights
        torch.testing.assert_close(speed_a._forward(net, x.flip(1), variant), today)


def test_the_record_has_every_phase_the_evaluation_and_each_ratio(tmp_path, capsys):
    out = tmp_path / "speed_a.json"
    assert (
        speed_a.main(["--profile", "smoke", "--steps", "3", "--rounds", "1", "--out", str(out)])
        == 0
    )
    rec = json.loads(out.read_text())
    assert set(rec["phases_wall_s"]) == {"data", "forward", "backward", "optimizer"}
    assert rec["steps"] == 3 and rec["top_ops"] and rec["evaluation"]["top_ops"]
    assert list(rec["ratios"]) == list(speed_a.VARIANTS)
    assert rec["ratios"]["today"]["speed_vs_today"] == 1.0
    assert "cpu" in rec["machine"] and rec["commit"]
    assert "kernel-1 block" in rec["network"]
    assert f"[speed_a] {out}" in capsys.readouterr().out


def test_a_profile_the_tool_does_not_measure_is_refused_before_any_compute():
    with pytest.raises(SystemExit):
        speed_a.main(["--profile", "paper"])
