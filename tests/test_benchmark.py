"""The throughput benchmark: its FLOP count and its report."""

import json

import pytest

from normbook.paper_a.cached.cnn import CNNConfig
from normbook.paper_a.cached.training import TrainConfig
from normbook.runtime.devices import cpu_model
from normbook.tools import benchmark


def test_flops_per_step_counts_forward_and_both_backward_products():
    cnn, tc = (
        CNNConfig(depth=3, width=8, kernel=5, norm="instance"),
        TrainConfig(seq_len=40, steps=3, batch_size=4),
    )
    per_layer = [
        2 * c_in * c_out * k * 40 * 4
        for c_in, c_out, k in [(1, 8, 5), (8, 8, 5), (8, 8, 5), (8, 1, 1)]
    ]
    forward = sum(per_layer)
    # weight gradients for every conv, input gradients for all but the first (the data)
    expected = forward + forward + (forward - per_layer[0])
    assert benchmark.flops_per_step(cnn, tc, n_models=3) == 3 * expected


def test_report_names_the_share_of_the_peak_and_is_recorded(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path))
    benchmark.main(["--profile", "smoke", "--steps", "3", "--no-paper", "--record"])
    out = capsys.readouterr().out
    assert "% of the kernel peak" in out and "one model at a time" in out
    assert "page faults" in out
    kept = json.loads((tmp_path / "smoke" / "benchmark.json").read_text())  # the compute page's
    assert kept["cpu"] == cpu_model() and kept["measured"][:4].isdigit() and kept["paper"] == []
    assert kept["stacked_steps_s"] > 0 and 0 < kept["stacked_share"] and kept["peak_gflops"] > 0
    # the book's own VGG-16 step, against the same peak, which no workload may exceed
    vgg = kept["book_vgg"]
    assert vgg["geometry"].startswith("the book's VGG-16 at smoke") and 0 < vgg["share"] <= 1
    assert "the book's VGG-16 at smoke" in out


def test_every_speed_is_its_best_round(monkeypatch):
    """Peak, stacked and naive speeds use one estimator (best of the interleaved rounds), so a
    slow moment lowers no one of them alone."""
    peaks, speeds = iter([1e9, 3e9, 2e9]), iter([10.0, 1, 1, 30.0, 2, 2, 20.0, 3, 3])
    monkeypatch.setattr(benchmark, "kernel_peak", lambda: next(peaks))
    monkeypatch.setattr(benchmark, "steps_per_second", lambda cnn, tc, seeds: next(speeds))
    monkeypatch.setattr(benchmark, "flops_per_step", lambda cnn, tc, n: 10**8)
    monkeypatch.setattr(benchmark, "page_faults_per_step", lambda cnn, tc, seeds: 0.0)
    b = benchmark.measure(
        CNNConfig(16, 32, 5, "instance"),
        TrainConfig(seq_len=300, steps=1500, batch_size=32),
        [0, 1],
        rounds=3,
    )
    assert (b.peak_flops, b.stacked_steps_s, b.naive_steps_s) == (3e9, 30.0, 1.5)
    assert b.stacked_share == 1.0 and b.speedup == 20.0


def test_rounds_must_be_positive():
    with pytest.raises(ValueError, match="rounds"):
        benchmark.measure(
            CNNConfig(16, 32, 5, "instance"),
            TrainConfig(seq_len=300, steps=1500, batch_size=32),
            [0],
            rounds=0,
        )


def test_the_paper_geometries_are_reported_against_the_same_peak(monkeypatch):
    rate = benchmark.Rate("paper A: l=600", seconds_per_step=0.5, flops_per_step=2e10)
    monkeypatch.setattr(benchmark, "paper_rates", lambda: {"paper_a": rate})
    text = benchmark.paper_geometries(peak_flops=8e10)
    assert "0.50 s/step" in text and "40.0 GFLOP/s" in text and "(50% of the kernel peak)" in text
