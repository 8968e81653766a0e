import numpy as np
import pytest
import torch

from normbook.paper_a.cached import stacking
from normbook.paper_a.cached.cnn import CNNConfig
from normbook.paper_a.cached.training import TrainConfig, train_stack

CNN = CNNConfig(depth=3, width=8, kernel=5, norm="instance")
TC = TrainConfig(seq_len=40, steps=15, batch_size=8)


def test_same_seed_same_weights_and_losses():
    a, la = train_stack(CNN, TC, [5])
    b, lb = train_stack(CNN, TC, [5])
    la, lb = la.losses, lb.losses
    for (k, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(x, y), k
    np.testing.assert_array_equal(la, lb)
    _, lc = train_stack(CNN, TC, [6])
    assert not np.array_equal(la, lc.losses)


def test_batched_training_follows_each_solo_trajectory():
    stacked, losses = train_stack(CNN, TC, [1, 2])
    for i, seed in enumerate([1, 2]):
        solo, solo_loss = train_stack(CNN, TC, [seed])
        np.testing.assert_allclose(
            losses.losses[:, i], solo_loss.losses[:, 0], rtol=1e-4, atol=1e-6
        )
        for name, t in solo.model_state(0).items():
            if name.startswith("convs.") and name.endswith(".bias"):
                # InstanceNorm subtracts these biases, so their true gradient is zero and Adam
                # turns float round-off into +-lr steps: they differ, harmlessly.
                continue
            torch.testing.assert_close(stacked.model_state(i)[name], t, rtol=1e-3, atol=1e-5)


def test_loss_history_records_every_step_and_decreases():
    _, record = train_stack(CNN, TrainConfig(seq_len=40, steps=60, batch_size=16, lr=3e-3), [0])
    losses = record.losses
    assert losses.shape == (60, 1)
    assert losses[-10:].mean() < losses[:10].mean()


def test_checkpoints_are_the_states_the_run_passed_through():
    """A state kept at step s is exactly the final state of the same run cut at s steps (for
    the constant schedule, whose lr does not depend on the total)."""
    tc = TrainConfig(seq_len=40, steps=16, batch_size=8, checkpoints=(0.25, 0.5))
    assert tc.checkpoint_steps == [4, 8]
    _, record = train_stack(CNN, tc, [3, 4])
    assert sorted(record.checkpoints) == [4, 8]
    short, _ = train_stack(CNN, TrainConfig(seq_len=40, steps=8, batch_size=8), [3, 4])
    for i in range(2):
        for name, t in short.model_state(i).items():
            torch.testing.assert_close(record.checkpoints[8][i][name], t, rtol=0, atol=0)
    assert record.seconds > 0


@pytest.mark.parametrize("schedule", ["onecycle", "cosine"])
def test_schedules_warm_up_and_end_low(schedule):
    net = torch.nn.Linear(1, 1)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    sched = stacking.lr_scheduler(opt, schedule, 100)
    lrs = []
    for _ in range(100):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs[0] < 0.5e-2 and max(lrs) == pytest.approx(1e-2, rel=0.05) and lrs[-1] < 1e-3


def test_bad_schedule_or_checkpoint_is_refused():
    with pytest.raises(ValueError, match="schedule"):
        TrainConfig(40, 8, 8, schedule="warmup")
    with pytest.raises(ValueError, match="fractions"):
        TrainConfig(40, 8, 8, checkpoints=(0.5, 1.0))


def test_rewound_steps_leave_no_trace():
    """Warm-up steps taken inside ``rewound`` (a CUDA graph's, before capture) change nothing:
    the training that follows is the one without them, number for number."""
    from normbook.paper_a.cached.cnn import StackedCNN
    from normbook.paper_a.cached.task import ramp

    def run(warm: bool):
        torch.manual_seed(0)
        net = StackedCNN(CNN, [7])
        opt = torch.optim.Adam(net.parameters(), lr=1e-2)
        x, y = torch.randn(8, 1, 40), ramp(40)
        if warm:
            with stacking.rewound(net, opt):
                for _ in range(3):
                    opt.zero_grad()
                    ((net(x) - y) ** 2).mean().backward()
                    opt.step()
        for _ in range(4):
            opt.zero_grad()
            ((net(x) - y) ** 2).mean().backward()
            opt.step()
        return net.state_dict()

    for (k, a), b in zip(run(False).items(), run(True).values()):
        assert torch.equal(a, b), k


def test_graphs_change_nothing_on_the_cpu():
    """``graphs`` asks for a CUDA graph; the CPU trains eagerly, with the same numbers."""
    from dataclasses import replace

    a, ra = train_stack(CNN, TC, [5])
    b, rb = train_stack(CNN, replace(TC, graphs=False), [5])
    assert ra.path == rb.path == "eager"
    np.testing.assert_array_equal(ra.losses, rb.losses)
