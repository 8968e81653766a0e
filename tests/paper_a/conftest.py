from dataclasses import replace

import pytest

from normbook.paper_a.a1_localization.spec import A1
from normbook.paper_a.runs import localization


@pytest.fixture
def tiny_setup():
    """A factory of small, validated localization setups (chapter A1's knobs)."""

    def make(seeds=(0,), n_eval=64, **overrides):
        knobs = dict(
            seq_len=24,
            kernel=3,
            depth=2,
            width=4,
            steps=3,
            batch_size=8,
            eval_batch_size=16,
            probe_batches=2,
        )
        # a chapter needs two seeds; a library test may use any (set after validation)
        params = A1.resolve("smoke", seeds=[0, 1], n_eval=n_eval, **{**knobs, **overrides})
        return replace(localization.Setup.from_params(params), seeds=tuple(seeds))

    return make


def synthetic_run(profile, seeds: int = 5, L: int = 75, R: int = 8, jitter: float = 0.002,
                  name: str = "net", seed: int = 0):  # fmt: skip
    """A run whose pooled mean prediction is ``profile(i)`` (per index) plus a little
    per-seed jitter, summarized by the real detector: what the verdict rules read."""
    from types import SimpleNamespace

    import numpy as np

    from normbook.paper_a.measures import detector
    from normbook.paper_a.measures.detector import DetectorConfig, Moments

    rng = np.random.default_rng(seed)
    mean = np.stack([profile(np.arange(L)) + jitter * rng.standard_normal(L) for _ in range(seeds)])
    mom = Moments(np.stack([mean, mean]), np.full((2, seeds, L), 0.05), np.array([20_000, 20_000]))
    per_seed = detector.summarize(mom, R, DetectorConfig(alpha=0.1))
    return SimpleNamespace(
        out=mom, seq_len=L, radius=R, name=name, per_seed=per_seed, padding="zeros",
        slope_interior=[s.effect_interior.slope for s in per_seed],
        frac_interior=[s.frac_interior for s in per_seed],
        distances=[s.distance for s in per_seed],
        cnn=SimpleNamespace(kernel=5, depth=R // 2, label=name),
    )  # fmt: skip


def profiles(L: int = 75, R: int = 8) -> dict:
    """Mean-prediction profiles: the ramp everywhere; the ramp within R of each end only (a
    network without a side channel); the ramp within one hop (3R) only; flat (never learned)."""
    import numpy as np

    def ramp(i):
        return i / (L - 1)

    def within(reach):
        def f(i):
            return np.where(np.minimum(i, L - 1 - i) < reach, ramp(i), 0.5)

        return f

    return {"ramp": ramp, "boundary": within(R), "one_hop": within(3 * R),
            "flat": lambda i: np.full(np.shape(i), 0.5)}  # fmt: skip


@pytest.fixture
def fake_run():
    return synthetic_run


@pytest.fixture
def profile():
    return profiles()


@pytest.fixture(autouse=True)
def _no_pretrain_declared(monkeypatch):
    """Each test starts as a kernel that has not declared its runs (pretrain's guard off)."""
    monkeypatch.setattr(localization, "_declared", False)
