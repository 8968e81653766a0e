"""The localization tests' operating characteristic, measured on simulated prediction streams.

A detector grades claims only after its false-positive rate and power are known. Each
simulated model has two independent streams of per-index mean predictions (as
:func:`normbook.paper_a.cached.evaluation.evaluate` produces): a ramp rising by ``step`` standard
errors per index, plus Gaussian noise smoothed along the sequence over ``corr_len`` indices
(neighbouring outputs of a CNN share inputs, so their noise is correlated). ``step = 0`` is
the null of identically distributed outputs.

    oc = calibration.operating_characteristic(alpha=0.1)
    calibration.false_positive_rate(oc, "span")   # at most alpha at every correlation length
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from normbook.paper_a.measures import detector
from normbook.paper_a.measures.detector import TESTS, Moments, localized_mask
from normbook.runtime import cache, seeding

STEPS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0)  # per index, in SE
CORR_LENS = (1, 5, 17)  # noise correlation lengths along the sequence (indices)
SIM_LEN = 64  # indices per simulated model


def smooth_noise(rng: np.random.Generator, shape: tuple[int, ...], corr_len: int) -> np.ndarray:
    """Unit-variance Gaussian noise along the last axis, a moving average over ``corr_len``."""
    *lead, length = shape
    white = rng.standard_normal((*lead, length + corr_len - 1))
    kernel = np.ones(corr_len) / np.sqrt(corr_len)
    return np.apply_along_axis(lambda w: np.convolve(w, kernel, mode="valid"), -1, white)


def simulated_moments(
    step: float, corr_len: int, n_models: int, seq_len: int, rng: np.random.Generator
) -> Moments:
    """Two independent streams (2, n_models, seq_len) of per-index means of n = 1000 samples
    each: ``step`` standard errors per index plus correlated noise of one standard error."""
    n = 1000
    ramp = step * np.arange(seq_len)
    mean = ramp + smooth_noise(rng, (2, n_models, seq_len), corr_len)
    std = np.full(mean.shape, np.sqrt(n))  # so that one standard error of a mean is 1
    return Moments(mean=mean, std=std, count=np.array([n, n]))


def operating_characteristic(
    alpha: float = 0.1,
    tests: tuple[str, ...] = TESTS,
    steps: tuple[float, ...] = STEPS,
    corr_lens: tuple[int, ...] = CORR_LENS,
    n_models: int = 200,
    seq_len: int = SIM_LEN,
    seed: int = 0,
) -> pd.DataFrame:
    """Fraction of indices called localized, per test, correlation length and step.

    Every step reuses the same noise (common random numbers), so differences between steps
    are not sampling noise between simulations. Columns: test, corr_len, step, rate.
    """
    rows = []
    for corr_len in corr_lens:
        rng = np.random.default_rng(seeding.stream_seed(seed, "check", salt=corr_len))
        noise = simulated_moments(0.0, corr_len, n_models, seq_len, rng)
        for step in steps:
            moments = Moments(noise.mean + step * np.arange(seq_len), noise.std, noise.count)
            for test in tests:
                rate = localized_mask(moments.pvalues(test), alpha).mean()
                rows.append(dict(test=test, corr_len=corr_len, step=step, rate=float(rate)))
    return pd.DataFrame(rows)


def measured(alpha: float, n_models: int, seed: int = 0) -> pd.DataFrame:
    """:func:`operating_characteristic` of every test, cached like any other experiment."""

    def compute():
        oc = operating_characteristic(alpha=alpha, n_models=n_models, seed=seed)
        return cache.Entry({
            "test": oc.test.map(TESTS.index).to_numpy(), "corr_len": oc.corr_len.to_numpy(),
            "step": oc.step.to_numpy(), "rate": oc.rate.to_numpy(),
        })  # fmt: skip

    config = {"alpha": alpha, "n_models": n_models, "seed": seed, "tests": TESTS,
              "steps": STEPS, "corr_lens": CORR_LENS}  # fmt: skip
    entry = STEP.cached(config, compute)
    oc = pd.DataFrame({k: entry[k] for k in ("test", "corr_len", "step", "rate")})
    return oc.assign(test=[TESTS[i] for i in oc.test])


def false_positive_rate(oc: pd.DataFrame, test: str) -> float:
    """The largest rate at step 0 over correlation lengths."""
    sel = oc[(oc.test == test) & (oc.step == 0)]
    return float(sel.rate.max())


def largest_dip(oc: pd.DataFrame, test: str) -> float:
    """How far the detection rate ever falls as the step grows (0 for a monotone test):
    the largest drop below the running maximum, over correlation lengths."""
    worst = 0.0
    for _, g in oc[oc.test == test].groupby("corr_len"):
        rate = g.sort_values("step").rate.to_numpy()
        worst = max(worst, float((np.maximum.accumulate(rate) - rate).max()))
    return worst


# ----------------------------------------------------------------------------- graded statistics

SHARES = (0.0, 0.5, 0.9)  # share of a mean's noise variance that is sequence-wide


def null_statistics(
    alpha: float, seq_len: int, radius: int, window: int, threshold: float, test: str = "span",
    shares: tuple[float, ...] = SHARES, corr_lens: tuple[int, ...] = CORR_LENS,
    n_models: int = 200, seed: int = 0,
) -> pd.DataFrame:  # fmt: skip
    """The null distribution of what the claims' descriptions use: the interior fraction and
    the localization distance beyond R, on simulated streams of a network that localizes only
    where it sees the padding (a ramp within R of each end, flat beyond), with noise that is
    correlated along the sequence (``corr_len``) and has a sequence-wide component shared by
    every index of a stream (a ``share`` of each mean's noise variance, as pooled statistics
    give: each sample's output moves up or down as a whole). The per-index tests stay
    calibrated (their variance includes the shared part), but their errors now come together,
    so the fraction of indices flagged spreads far more than its mean, alpha, suggests.
    Columns: share, corr_len, model, frac_interior, distance_beyond (distance - R; negative
    when it stops inside R)."""
    rows = []
    dist = detector.boundary_distance(seq_len)
    profile = np.where(
        dist < radius, 50.0 * (radius - dist) * np.sign(np.arange(seq_len) - seq_len / 2), 0.0
    )
    det = detector.DetectorConfig(alpha=alpha, test=test, window=window, threshold=threshold)
    for corr_len in corr_lens:
        for share in shares:
            rng = np.random.default_rng(seeding.stream_seed(seed, "check", salt=corr_len * 1000
                                                            + int(share * 100)))  # fmt: skip
            noise = simulated_moments(0.0, corr_len, n_models, seq_len, rng)
            common = rng.standard_normal((2, n_models, 1))
            mixed = np.sqrt(1 - share) * noise.mean + np.sqrt(share) * common
            mom = Moments(mixed + profile, noise.std, noise.count)
            for m, s in enumerate(detector.summarize(mom, radius, det)):
                rows.append(dict(share=share, corr_len=corr_len, model=m,
                                 frac_interior=s.frac_interior,
                                 distance_beyond=s.distance - radius))  # fmt: skip
    return pd.DataFrame(rows)


def null_quantiles(nulls: pd.DataFrame, q: float = 0.95) -> pd.DataFrame:
    """Per (share, corr_len): the ``q`` quantile of the interior fraction and of the distance
    beyond R under the null."""
    return nulls.groupby(["share", "corr_len"])[["frac_interior", "distance_beyond"]].quantile(q)


def measured_nulls(alpha: float, seq_len: int, radius: int, window: int, threshold: float,
                   n_models: int, seed: int = 0) -> pd.DataFrame:  # fmt: skip
    """:func:`null_statistics`, cached."""

    def compute():
        df = null_statistics(alpha, seq_len, radius, window, threshold, n_models=n_models,
                             seed=seed)  # fmt: skip
        return cache.Entry({k: df[k].to_numpy() for k in df.columns})

    config = {"alpha": alpha, "seq_len": seq_len, "radius": radius, "window": window,
              "threshold": threshold, "n_models": n_models, "seed": seed, "shares": SHARES,
              "corr_lens": CORR_LENS}  # fmt: skip
    entry = NULLS.cached(config, compute)
    return pd.DataFrame({k: entry[k] for k in ("share", "corr_len", "model", "frac_interior",
                                                "distance_beyond")})  # fmt: skip


STEP = cache.step("a_calibration", sys.modules[__name__], detector, seeding)
NULLS = cache.step("a_null_statistics", sys.modules[__name__], detector, seeding)
