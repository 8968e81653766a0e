"""The paper-shape run cuts counts only, and the GPU check's comparison catches a verdict that
moved."""

from normbook import gpu_check, paper_shape
from normbook.core import project

GEOMETRY = ("seq_len", "depth", "width", "kernel", "batch_size", "seeds", "mnist_width",
            "vgg_width", "pack_depth", "pack_width", "unet_len", "grid_size")  # fmt: skip


def test_every_chapter_resolves_at_paper_shape_with_the_papers_geometry():
    for ch in project.chapters():
        spec = project.spec_for(ch)
        overrides = paper_shape.shape_overrides(ch)
        assert set(overrides) <= set(spec.names)
        shaped, paper = spec.resolve("paper", **overrides), spec.resolve("paper")
        for name in GEOMETRY:
            if name in paper:
                assert shaped[name] == paper[name], (ch.stem, name)
        if "steps" in paper:
            assert shaped.steps < paper.steps  # and the counts are cut


def test_the_gpu_check_reports_a_verdict_that_differs_and_ranks_numbers():
    cpu = {"claims": [{"claim": "c", "verdict": "reproduced"}], "numbers": {"a": 1.0, "b": 10.0}}
    same = {"claims": [{"claim": "c", "verdict": "reproduced"}], "numbers": {"a": 1.0, "b": 11.0}}
    moved = {"claims": [{"claim": "c", "verdict": "not shown"}], "numbers": {"a": 1.0}}
    verdicts, numbers = gpu_check.compare(cpu, same)
    assert verdicts == [] and numbers[0] == (0.1, "b: cpu 10, gpu 11.0")
    verdicts, numbers = gpu_check.compare(cpu, moved)
    assert len(verdicts) == 1 and numbers[0][0] == float("inf")  # a number gone is the worst
