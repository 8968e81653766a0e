"""The dry run: planned FLOPs per chapter, computed before (and instead of) any training."""

import pytest

from normbook.paper_a.runs import plans
from normbook.paper_b.b4_stress import factorial
from normbook.publish import build, project
from normbook.publish.chapters import SPECS
from normbook.runtime import flops


def test_a1_plan_counts_training_and_evaluation_of_both_networks():
    params = SPECS["a1_localization"].resolve("smoke")
    items = SPECS["a1_localization"].planned(params)
    train, fwd = plans.localization_flops(params.seq_len, params.depth, params.width, params.kernel)
    assert train > 2 * fwd > 0  # a training step is a forward and a backward pass
    models = 2 * len(params.seeds)
    assert items[0].flops == models * params.steps * params.batch_size * train
    assert items[1].flops > models * (2 * params.n_eval + 4 * params.curve_eval) * fwd  # + probes


def test_paper_profile_plans_more_than_cpu():
    for name in (
        "a1_localization",
        "a3_which_norms",
        "a4_stress",
        "a5_reach",
        "b1_setup_accuracy",
        "b4_stress",
    ):
        cpu, paper = (sum(i.flops for i in SPECS[name].planned(SPECS[name].resolve(p)))
                      for p in ("cpu", "paper"))  # fmt: skip
        assert paper > 10 * cpu > 0, name


def test_dry_run_prints_every_chapter_and_computes_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(build, "execute", lambda *a, **k: pytest.fail("executed a chapter"))
    assert build.main(["book", "--profile", "paper", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert flops.DEVICE in out and "total:" in out
    for ch in project.chapters():
        assert f"{ch.stem}:" in out
    assert not (tmp_path / "cache").exists()


def test_b4_plans_the_swapped_cells_and_the_accuracy_matched_reruns():
    params = SPECS["b4_stress"].resolve("cpu")
    items = SPECS["b4_stress"].planned(params)
    swapped = [i for i in items if "swapped" in i.what]
    assert len(swapped) == 2 and all("cifar10" in i.what for i in swapped)
    matched = [i for i in items if "accuracy-matched" in i.what]
    assert len(matched) == len(
        factorial.factorial_datasets(params.matched_datasets)
    )  # one per dataset
    both = SPECS["b4_stress"].resolve("cpu", matched_datasets="both")
    assert len(SPECS["b4_stress"].planned(both)) == 4


def test_a2_and_a4_plan_the_evaluations_at_the_late_kept_state():
    params = SPECS["a2_mechanism"].resolve("cpu")
    items = SPECS["a2_mechanism"].planned(params)
    (kept,) = [i for i in items if "kept by half the budget" in i.what]
    n_pack, n_all = len(params.overlap_fracs), len(params.overlap_fracs) + len(params.control_fracs)
    assert kept.flops == pytest.approx(items[1].flops * n_pack / n_all)  # PackNorm only
    late = SPECS["a2_mechanism"].resolve("cpu", curve_fractions=[0.75])  # nothing kept by half
    assert not any("kept" in i.what for i in SPECS["a2_mechanism"].planned(late))
    P4 = SPECS["a4_stress"].resolve("cpu")
    arch = [i for i in SPECS["a4_stress"].planned(P4) if i.what.startswith(("U-Net", "2-D"))]
    assert all(f"evaluate {4 * len(P4.arch_seeds)} x" in i.what for i in arch) and len(arch) == 2
