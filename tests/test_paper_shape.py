"""The paper-shape run cuts counts only."""

import pytest

from normbook.publish import project
from normbook.tools import shape_run

GEOMETRY = ("seq_len", "depth", "width", "kernel", "batch_size", "seeds", "mnist_width",
            "vgg_width", "pack_depth", "pack_width", "unet_len", "grid_size",
            "pca_components", "cluster_features")  # fmt: skip  # k-means on full-width features


def test_every_chapter_resolves_at_paper_shape_with_the_papers_geometry():
    for ch in project.chapters():
        spec = project.spec_for(ch)
        overrides = shape_run.shape_overrides(ch)
        assert set(overrides) <= set(spec.names)
        shaped, paper = spec.resolve("paper", **overrides), spec.resolve("paper")
        for name in GEOMETRY:
            if name in paper:
                assert shaped[name] == paper[name], (ch.stem, name)
        if "steps" in paper:
            assert shaped.steps < paper.steps  # and the counts are cut


# make test's share of `make paper-shape`: one chapter of each paper executed at the papers'
# geometry (A1: l = 600, d = 32, two seeds stacked; B1: the width-64 MNIST CNN and full-width
# VGG-16 at batch 128, one seed, one batch: the networks' shapes, not the grading, are what this
# run checks), with the counts cut further than the shape run's. Five seeds and two batches took
# 78 + 83 CPU s (AMD EPYC Zen 3, 2026-12-08); `make paper-shape` runs the five.
TEST_CUTS = {
    "a1_localization": dict(seeds=[0, 1], n_eval=64, curve_eval=64, curve_fractions=[0.5]),
    "b1_setup_accuracy": dict(seeds=[0], mnist_train=128, cifar_train=128, n_val=64,
                              n_test=64, curve_images=64, evals_per_epoch=1,
                              curve_fractions=[0.5]),
}  # fmt: skip


@pytest.mark.heavy
def test_one_chapter_of_each_paper_executes_at_paper_shape(tmp_path):
    import os

    env = {**os.environ, "NORMBOOK_BUILD_DIR": str(tmp_path), "NORMBOOK_CACHE": str(tmp_path / "c")}
    for stem, cut in TEST_CUTS.items():
        ch = project.ROOT / "book" / f"{stem}.py"
        run = shape_run.run_chapter(ch, env, cut)
        assert run.returncode == 0 and run.error is None, (
            f"{stem} at paper shape exited with {run.returncode}; its last lines:\n{run.error}"
        )
        nb = tmp_path / "paper" / "executed" / "book" / f"{stem}.ipynb"
        assert nb.exists(), f"{stem} exited 0 but wrote no executed notebook {nb}"


def test_a_chapter_that_fails_silently_is_a_failed_run(monkeypatch):
    """A child that exits non-zero is a failure with its exit status, even with no output (the
    heavy test above and the shape run's own exit status read it)."""
    from normbook.publish.chapter_jobs import ChildRun

    ch = project.ROOT / "book" / "a1_localization.py"
    monkeypatch.setattr(shape_run, "run_child", lambda *a, **k: ChildRun(-9, None, [], 0.1))
    run = shape_run.run_chapter(ch, {})
    assert run.returncode == -9 and run.error == "(no output)"
    monkeypatch.setattr(shape_run, "run_child", lambda *a, **k: ChildRun(0, 1.0, ["ok"], 0.1))
    run = shape_run.run_chapter(ch, {})
    assert run.returncode == 0 and run.error is None


def test_the_shape_run_reports_whether_the_paper_null_learned():
    """A null that only reaches the best constant prediction did not learn; one below it by
    R² >= 0.05 did; the report says which, and the run fails on the book's null."""
    learned = shape_run.NullCheck("none, he init", 300, 1.2, 0.07, 0.0835)
    stuck = shape_run.NullCheck("none, default init", 300, 0.0900, 0.0834, 0.0835)
    assert learned.learned and not stuck.learned
    text = shape_run.report([], {}, [learned, stuck])
    assert "| none, he init | 1.2000 | 0.0700 | 0.162 | yes |" in text
    assert "| none, default init | 0.0900 | 0.0834 | 0.001 | **no** |" in text
