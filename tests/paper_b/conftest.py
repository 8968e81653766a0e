import numpy as np
import pytest

from normbook.paper_b.runs import classify
from normbook.paper_b.runs.classify import ClassifierConfig, Models, Splits


def _synthetic_full(n_train=400, n_test=120, seed=0, dataset="mnist") -> Splits:
    """uint8 images shaped like ``dataset``'s (MNIST 28x28, CIFAR-10 3x32x32): noise plus a
    bright patch whose position is the class."""
    rng = np.random.default_rng(seed)
    shape = (28, 28) if dataset == "mnist" else (3, 32, 32)

    def make(n):
        y = rng.integers(0, 10, n).astype(np.uint8)
        x = rng.integers(0, 60, (n, *shape)).astype(np.uint8)
        for i, c in enumerate(y):
            r, q = divmod(int(c), 5)
            x[i, ..., 2 + 14 * r : 12 + 14 * r, 5 * q : 8 + 5 * q] = 250
        return x, y

    x_tr, y_tr = make(n_train)
    x_te, y_te = make(n_test)
    return Splits(dataset, x_tr, y_tr, x_tr[:0], y_tr[:0], x_te, y_te, "synthetic-" + str(seed))


def _patch_images(n=60, seed=0):
    """Normalized MNIST-shaped images with a class-dependent bright patch, and labels."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(10), n // 10)
    x = rng.normal(0, 0.3, (n, 1, 32, 32)).astype(np.float32)
    for i, c in enumerate(y):
        r, q = divmod(int(c), 5)
        x[i, 0, 2 + 14 * r : 12 + 14 * r, 5 * q : 8 + 5 * q] += 2.0
    return x, y


def _tiny_cfg(**kw) -> ClassifierConfig:
    base = dict(
        dataset="mnist",
        batchnorm=True,
        width=2,
        optimizer="adam",
        lr=0.01,
        batch_size=16,
        max_epochs=2,
        patience=3,
        evals_per_epoch=2,
        n_train=256,
        n_val=64,
        n_test=100,
        momentum=0.0,
        split_seed=0,
        init="kaiming",
        device="cpu",
        checkpoints=(),
    )
    return ClassifierConfig(**{**base, **kw})


@pytest.fixture
def synthetic_full():
    """A factory of full synthetic MNIST-shaped datasets (a learnable 10-class task)."""
    return _synthetic_full


@pytest.fixture(scope="session")
def patch_images():
    """A factory of normalized 32 x 32 images whose class is a bright patch's position (``n``
    images, ``seed``), with their labels."""
    return _patch_images


@pytest.fixture(scope="session")
def tiny_cfg():
    """A factory of tiny, fast classifier configs (overrides as keyword arguments)."""
    return _tiny_cfg


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory) -> Models:
    """Two seeds of all four (dataset, BN) variants, tiny and trained on synthetic data with
    the chapters' optimizers, in a cache of their own."""
    full = {ds: _synthetic_full(dataset=ds, seed=i) for i, ds in enumerate(classify.DATASETS)}
    cfgs = {
        v: _tiny_cfg(
            dataset=v.dataset,
            batchnorm=v.batchnorm,
            max_epochs=1,
            n_train=160,
            n_val=40,
            n_test=60,
            width=2 if v.dataset == "mnist" else 1 / 32,
        )
        for v in classify.VARIANTS
    }
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NORMBOOK_CACHE", str(tmp_path_factory.mktemp("tiny-models")))
        done = classify.train_all([(c, s) for c in cfgs.values() for s in (0, 1)], full)
    return Models({v: [t for t in done if t.cfg == c] for v, c in cfgs.items()}, full)
