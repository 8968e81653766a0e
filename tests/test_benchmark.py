"""The throughput benchmark: its FLOP count and its report."""

from normbook import benchmark
from normbook.paper_a.cnn import CNNConfig
from normbook.paper_a.training import TrainConfig


def test_flops_per_step_counts_forward_and_both_backward_products():
    cnn, tc = CNNConfig(depth=3, width=8, kernel=5), TrainConfig(seq_len=40, batch_size=4)
    per_layer = [
        2 * c_in * c_out * k * 40 * 4
        for c_in, c_out, k in [(1, 8, 5), (8, 8, 5), (8, 8, 5), (8, 1, 1)]
    ]
    forward = sum(per_layer)
    # weight gradients for every conv, input gradients for all but the first (the data)
    expected = forward + forward + (forward - per_layer[0])
    assert benchmark.flops_per_step(cnn, tc, n_models=3) == 3 * expected


def test_report_names_the_share_of_the_peak(capsys):
    benchmark.main(["--profile", "smoke", "--steps", "3"])
    out = capsys.readouterr().out
    assert "% of the matmul peak" in out and "one model at a time" in out
