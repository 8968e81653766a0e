import numpy as np
import torch

from normbook.paper_a.cnn import CNNConfig
from normbook.paper_a.training import TrainConfig, train_stack

CNN = CNNConfig(depth=3, width=8, kernel=5, norm="instance")
TC = TrainConfig(seq_len=40, steps=15, batch_size=8)


def test_same_seed_same_weights_and_losses():
    a, la = train_stack(CNN, TC, [5])
    b, lb = train_stack(CNN, TC, [5])
    for (k, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(x, y), k
    np.testing.assert_array_equal(la, lb)
    c, lc = train_stack(CNN, TC, [6])
    assert not np.array_equal(la, lc)


def test_batched_training_follows_each_solo_trajectory():
    stacked, losses = train_stack(CNN, TC, [1, 2])
    for i, seed in enumerate([1, 2]):
        solo, solo_loss = train_stack(CNN, TC, [seed])
        np.testing.assert_allclose(losses[:, i], solo_loss[:, 0], rtol=1e-4, atol=1e-6)
        for name, t in solo.model_state(0).items():
            if name.startswith("convs.") and name.endswith(".bias"):
                # InstanceNorm subtracts these biases, so their true gradient is zero and Adam
                # turns float round-off into +-lr steps: they differ, harmlessly.
                continue
            torch.testing.assert_close(stacked.model_state(i)[name], t, rtol=1e-3, atol=1e-5)


def test_loss_history_records_every_step_and_decreases():
    _, losses = train_stack(CNN, TrainConfig(seq_len=40, steps=60, batch_size=16, lr=3e-3), [0])
    assert losses.shape == (60, 1)
    assert losses[-10:].mean() < losses[:10].mean()
