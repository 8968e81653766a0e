from dataclasses import replace

import numpy as np
import pytest
import torch

from normbook.grading.claims import Rise
from normbook.paper_a.a4_stress import claims, figures
from normbook.paper_a.cached import arch_common, grid2d, unet
from normbook.paper_a.cached.task import sample_inputs
from normbook.paper_a.measures import detector
from normbook.paper_a.runs import arch_runs, localization
from normbook.runtime.seeding import generators

_COMMON = dict(seeds=(0, 1), steps=4, batch_size=16, lr=1e-2, schedule="onecycle",
               checkpoints=(0.5,), n_eval=128, eval_batch=32, device="cpu",
               detector=detector.DetectorConfig())  # fmt: skip
TINY_UNET = unet.UNetConfig(
    seq_len=64,
    levels=2,
    width=4,
    growth=2,
    blocks=1,
    kernel=3,
    norm="group",
    groups=2,
    activation="mish",
    down="avgpool",
    up="nearest",
    **_COMMON,
)
TINY_GRID = grid2d.Grid2dConfig(
    height=10, width=8, depth=2, channels=4, kernel=3, norm="instance", groups=1, **_COMMON
)
UNET_VARIANTS = [
    dict(down="conv", up="transpose"),
    dict(down="avgpool", up="nearest", activation="relu", blocks=2),
    dict(levels=3, seq_len=64),
]


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny networks: one thread is faster than two on a shared machine."""
    torch.set_num_threads(1)


@pytest.mark.parametrize("kw", UNET_VARIANTS)
def test_stacked_unet_equals_models_built_alone(kw):
    cfg = replace(TINY_UNET, **kw)
    stacked = unet.StackedUNet(cfg, [3, 7])
    x = sample_inputs(4, 2, cfg.seq_len, generators([3, 7], "eval"))
    out = stacked(x)
    for i, seed in enumerate([3, 7]):
        alone = unet.StackedUNet(cfg, [seed])
        for name, t in alone.model_state(0).items():
            assert torch.equal(t, stacked.model_state(i)[name]), name
        torch.testing.assert_close(alone(x[:, i : i + 1]), out[:, i : i + 1], rtol=1e-5, atol=1e-5)


def test_stacked_grid_equals_models_built_alone():
    stacked = grid2d.StackedCNN2d(TINY_GRID, [3, 7])
    x = grid2d.sample_images(4, 2, 10, 8, generators([3, 7], "eval"))
    out = stacked(x)
    for i, seed in enumerate([3, 7]):
        alone = grid2d.StackedCNN2d(TINY_GRID, [seed])
        torch.testing.assert_close(alone(x[:, i : i + 1]), out[:, i : i + 1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kw", UNET_VARIANTS)
def test_unet_radius_is_exact(kw):
    """No input gradient beyond R, for outputs of every residue; exactly R for some output
    (Mish: a ReLU net of width 4 may have dead units and lose the gradient)."""
    cfg = replace(TINY_UNET, norm="none", **{**kw, "activation": "mish"})
    radius, block = cfg.receptive_radius, 2**cfg.levels
    seq_len = block * (2 * radius // block + 4)
    centre = (seq_len // 2 // block) * block
    net = unet.StackedUNet(replace(cfg, seq_len=seq_len), [0, 1])
    reach = arch_runs.gradient_reach(net, seq_len, range(centre, centre + block))
    assert reach.max(axis=1).tolist() == [radius, radius]


def test_unet_radius_matches_a_count_by_hand():
    """levels 1, k = 3, avgpool, nearest. Encoder conv: [p-1, p+1]; pool q: [2q-1, 2q+2];
    bottleneck conv: [2q-3, 2q+4]; nearest up, p even: [p-3, p+4], p odd: [p-4, p+3];
    decoder conv over p-1..p+1: p even [p-5, p+4], p odd [p-4, p+5]. So R = 5."""
    assert unet.unet_radius(1, 3, 1, "avgpool", "nearest") == 5


def test_group_norm_unet_reaches_the_whole_sequence():
    net = unet.StackedUNet(TINY_UNET, [0])
    assert arch_runs.gradient_reach(net, 64, [32])[0, 0] == 32


def test_grid_radius_is_exact():
    cfg = replace(TINY_GRID, norm="none", height=16, width=16)
    net = grid2d.StackedCNN2d(cfg, [0])
    x = grid2d.sample_images(4, 1, 16, 16, generators([0], "check")).requires_grad_(True)
    net(x)[:, 0, :, 8, 8].sum().backward()
    rows, cols = np.nonzero((x.grad[:, 0] != 0).any(dim=0).numpy())
    r = cfg.receptive_radius
    assert (rows.min(), rows.max(), cols.min(), cols.max()) == (8 - r, 8 + r, 8 - r, 8 + r)


def test_shapes():
    net = unet.StackedUNet(TINY_UNET, [0, 1, 2])
    assert net(torch.zeros(5, 3, 64)).shape == (5, 3, 64)
    grid = grid2d.StackedCNN2d(TINY_GRID, [0, 1, 2])
    assert grid(torch.zeros(5, 3, 10, 8)).shape == (5, 3, 2, 10, 8)
    target = grid2d.grid_target(10, 8)
    assert target.shape == (2, 10, 8)
    assert target[0, :, 3].tolist() == pytest.approx(np.linspace(0, 1, 10).tolist())
    assert target[1, 4].tolist() == pytest.approx(np.linspace(0, 1, 8).tolist())


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(seq_len=66), "divisible by 2\\*\\*levels = 4"),
        (dict(norm="instance"), "norm must be one of"),
        (dict(groups=3), "groups \\(3\\) must divide the width"),
        (dict(kernel=4), "kernel must be odd"),
        (dict(down="max"), "down must be one of"),
        (dict(up="linear"), "up must be one of"),
        (dict(activation="gelu"), "activation must be one of"),
        (dict(levels=0), "levels must be a positive integer"),
        (dict(seeds=()), "at least one seed"),
        (dict(seeds=(1, 1)), "distinct"),
        (dict(schedule="step"), "schedule must be one of"),
        (dict(n_eval=40), "both streams"),
        (dict(lr=0.0), "lr must be positive"),
    ],
)
def test_unet_config_validation(kw, match):
    with pytest.raises(ValueError, match=match):
        replace(TINY_UNET, **kw)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(norm="batch"), "norm must be one of"),
        (dict(norm="group", groups=3), "must divide channels"),
        (dict(kernel=2), "kernel must be odd"),
        (dict(height=1), "2 x 2 pixels"),
        (dict(depth=0), "depth must be a positive integer"),
    ],
)
def test_grid_config_validation(kw, match):
    with pytest.raises(ValueError, match=match):
        replace(TINY_GRID, **kw)


def test_padding_validation():
    with pytest.raises(ValueError, match="padding must be one of"):
        unet.StackedUNet(TINY_UNET, [0], padding="reflect")


@pytest.mark.parametrize("kw", UNET_VARIANTS)
def test_circular_unet_is_equivariant_to_cyclic_shifts(kw):
    cfg = replace(TINY_UNET, **kw)
    net = unet.StackedUNet(cfg, [0, 1], padding="circular").eval()
    x = sample_inputs(3, 2, cfg.seq_len, generators([0, 1], "check"))
    shift = 2**cfg.levels
    with torch.no_grad():
        y, y_roll = net(x), net(torch.roll(x, shift, dims=-1))
    torch.testing.assert_close(y_roll, torch.roll(y, shift, dims=-1), rtol=0, atol=1e-5)
    # with zero padding the same weights are not equivariant
    arch_common.set_padding(net, "zeros")
    with torch.no_grad():
        y, y_roll = net(x), net(torch.roll(x, shift, dims=-1))
    assert (y_roll - torch.roll(y, shift, dims=-1)).abs().max() > 1e-3


def test_circular_grid_is_equivariant_to_cyclic_shifts():
    net = grid2d.StackedCNN2d(TINY_GRID, [0, 1], padding="circular").eval()
    x = grid2d.sample_images(3, 2, 10, 8, generators([0, 1], "check"))
    with torch.no_grad():
        y, y_roll = net(x), net(torch.roll(x, (3, 5), dims=(-2, -1)))
    torch.testing.assert_close(y_roll, torch.roll(y, (3, 5), dims=(-2, -1)), rtol=0, atol=1e-5)


def test_periodic_summary_with_period_one_is_the_detector_summary():
    rng = np.random.default_rng(0)
    mom = detector.Moments(
        rng.normal(size=(2, 3, 40)), rng.uniform(1, 2, size=(2, 3, 40)), np.array([50, 50])
    )
    det = detector.DetectorConfig()
    for a, b in zip(arch_runs.summarize_periodic(mom, 5, det, 1), detector.summarize(mom, 5, det)):
        assert np.array_equal(a.localized, b.localized)
        assert (a.frac_interior, a.distance, a.effect_interior) == (
            b.frac_interior,
            b.distance,
            b.effect_interior,
        )


def test_periodic_summary_ignores_a_pattern_of_the_period():
    """A mean that repeats with period 4 is localized everywhere by the plain span test but
    nowhere in the interior by the residue-class test."""
    pattern = np.tile([0.0, 1.0, 2.0, 3.0], 16)
    mean = np.broadcast_to(pattern, (2, 1, 64)).copy()
    mom = detector.Moments(mean, np.full((2, 1, 64), 0.1), np.array([1000, 1000]))
    det = detector.DetectorConfig()
    assert detector.summarize(mom, 8, det)[0].frac_interior == 1.0
    assert arch_runs.summarize_periodic(mom, 8, det, 4)[0].frac_interior == 0.0


def test_training_is_deterministic_and_cached():
    net_a, rec_a = arch_common.train_stack(TINY_UNET, [0, 1])
    net_b, rec_b = arch_common.train_stack(TINY_UNET, [0, 1])
    assert np.array_equal(rec_a.losses, rec_b.losses)
    for k, v in net_a.state_dict().items():
        assert torch.equal(v, net_b.state_dict()[k]), k
    grid_a = arch_common.train_stack(TINY_GRID, [0])[1]
    grid_b = arch_common.train_stack(TINY_GRID, [0])[1]
    assert np.array_equal(grid_a.losses, grid_b.losses)
    _, loss, hits = arch_common.trained(TINY_UNET)
    assert hits == [False, False]
    _, again, hits = arch_common.trained(TINY_UNET)
    assert hits == [True, True]
    assert np.array_equal(loss, again)
    np.testing.assert_allclose(loss, rec_a.losses, rtol=1e-6)


def test_runs_quack_like_localization_runs():
    unets = arch_runs.runs(TINY_UNET)
    assert [r.name for r in unets.all] == ["group (G=2)", "none", "group (G=2), circular padding"]
    for run in unets.all:
        assert run.radius == TINY_UNET.receptive_radius
        assert len(run.per_seed) == len(run.slope_interior) == len(run.frac_interior) == 2
        assert run.mean.shape == (2, 64)
        assert run.loss.shape == (TINY_UNET.steps, 2)
    grid = arch_runs.runs(TINY_GRID)
    for run in grid.all:
        assert run.maps.shape == (2, 2, 10, 8)
        assert run.rows.mean.shape == (2, 10) and run.cols.mean.shape == (2, 8)
        assert len(run.per_seed) == 2
        assert run.per_seed[0].localized.shape == (18,)
    assert grid.norm.cache_hit is False and arch_runs.grid_run(TINY_GRID).cache_hit is True
    figures.unet_predictions(unets.all)
    figures.grid_predictions(grid.all)


def test_chapter_a4s_configs_come_from_its_parameters_alone():
    """Every field of the U-Net and the 2-D CNN is a chapter parameter (no hidden defaults)."""
    from normbook.paper_a.a4_stress.spec import A4

    params = A4.resolve("cpu", unet_activation="relu", arch_lr=3e-3, grid_kernel=5)
    u, g = arch_runs.unet_config(params), arch_runs.grid_config(params)
    assert (u.activation, u.lr, g.kernel, g.lr) == ("relu", 3e-3, 5, 3e-3)
    with pytest.raises(TypeError):
        unet.UNetConfig(seq_len=64)  # no field has a default


def test_the_late_state_is_kept_and_evaluated_like_the_trained_networks():
    """Each seed's weights at half the budget are cached with the trained ones, loaded by
    ``at_step`` and evaluated with as many samples; the row reads them as a two-point curve,
    so its rising is computed (a Rise), and without a kept state there is no curve."""
    _, record = arch_common.train_stack(TINY_UNET, [0, 1])
    assert list(record.checkpoints) == [2] and localization.late_step(TINY_UNET.train) == 2
    net, _, hits = arch_common.trained(TINY_UNET, at_step=2)
    assert hits == [False, False]
    for i in range(2):
        for k, v in record.checkpoints[2][i].items():
            torch.testing.assert_close(net.model_state(i)[k], v, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="no state kept"):
        arch_common.trained(TINY_UNET, at_step=3)
    for runs in (arch_runs.runs(TINY_UNET), arch_runs.runs(TINY_GRID)):
        c = runs.curve
        assert c.fractions.tolist() == [0.5, 1.0] and c.runs[-1] is runs.norm
        count = [getattr(r, "rows", r).n_per_index for r in c.runs]  # a 2-D run per axis
        assert count[0] == count[1] > 0 and c.slope.shape == (2, 2)
        assert not np.array_equal(c.runs[0].mean, runs.norm.mean)  # another state
        row = claims.architecture_localizes(runs, "a tiny network")
        assert isinstance(row.grade.rising, Rise) and row.grade.refutable
    late = replace(TINY_GRID, steps=3, checkpoints=(0.75,))  # kept after half the budget
    assert arch_runs.runs(late).curve is None


def test_chapter_a4_keeps_one_state_the_last_curve_fraction_by_half_the_budget():
    from normbook.paper_a.a4_stress.spec import A4

    params = A4.resolve("smoke", curve_fractions=[0.125, 0.25, 0.5, 0.75])
    u, g = arch_runs.unet_config(params), arch_runs.grid_config(params)
    assert u.checkpoints == g.checkpoints == (0.5,)
    assert u.train.checkpoint_steps == [round(0.5 * u.steps)]
    none = A4.resolve("smoke", curve_fractions=[0.75])
    assert arch_runs.unet_config(none).checkpoints == ()
