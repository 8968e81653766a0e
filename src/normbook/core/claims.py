"""Claim tests: the one pre-declared test behind each verdict, its effect, interval, p-value,
and the null it was compared with.

Kept apart from :mod:`.stats` (streaming moments, effect sizes, intervals), whose code keys the
cached evaluations: editing a claim test never re-runs an experiment.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from .stats import wilson

# Every claim of the ledgers is one pre-declared test whose unit is an independently trained
# network (a seed, or a model of a sweep); the estimate, its interval, the p-value, the test's
# name and the null it was compared with travel together in a ClaimTest.

ALPHA = 0.05  # level of every claim's test
# Every claim's test is one-sided at ALPHA, so its interval is two-sided at 1 - 2 ALPHA: the end
# on the claim's side is the one-sided bound that corresponds to the test.
CLAIM_CONFIDENCE = 1 - 2 * ALPHA


@dataclass(frozen=True)
class ClaimTest:
    """One claim's test: estimate with its interval, p-value, and what it was compared with."""

    effect: float  # the estimate (e.g. mean paired difference over seeds)
    low: float  # CLAIM_CONFIDENCE interval of the estimate (NaN when it cannot be computed)
    high: float
    p: float  # NaN for a comparison that is not a hypothesis test
    n: int  # number of independent units (seeds or models)
    test: str  # the test, in words
    null: str  # what the effect was compared with
    min_p: float = 0.0  # the smallest p-value this design can produce

    def significant(self, alpha: float = ALPHA) -> bool:
        return bool(self.p < alpha)

    def powered(self, alpha: float = ALPHA) -> bool:
        """Whether this design can reach ``alpha`` at all (else: inconclusive, never 'not')."""
        return bool(self.min_p < alpha)


def min_paired_seeds(alpha: float = ALPHA) -> int:
    """The fewest paired seeds whose exact one-sided sign-flip test can reach p < alpha."""
    return int(np.floor(np.log2(1 / alpha))) + 1


def t_interval(values, confidence: float = CLAIM_CONFIDENCE) -> tuple[float, float]:
    """Student's t interval of the mean of ``values``; NaN when it does not exist (one value, or
    every value equal: no spread to estimate)."""
    d = np.asarray(values, dtype=float)
    if d.size < 2 or np.allclose(d, d[0], rtol=1e-12, atol=1e-15):
        return float("nan"), float("nan")
    ci = sps.ttest_1samp(d, 0.0).confidence_interval(confidence)
    return float(ci.low), float(ci.high)


def paired_signflip(x, y, null: str, alternative: str = "greater") -> ClaimTest:
    """Exact paired sign-flip test of mean(x - y) over independent pairs (seeds).

    Under the null each pair's difference is symmetric about 0, so all 2^n sign patterns are
    equally likely; the smallest attainable one-sided p is 2^-n (a property of the design:
    seeds with a zero difference are outcomes, and a claim they defeat is "not reproduced").
    The interval is Student's t interval of the mean difference at CLAIM_CONFIDENCE
    (description; the test itself does not assume normality).
    """
    d = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"paired_signflip needs two equal-length 1-D arrays, got {d.shape}")
    if np.all(d == 0):
        p = 1.0
    elif d.size == 1:  # two equally likely signs (scipy needs two observations)
        p = {"greater": 0.5 if d[0] > 0 else 1.0, "less": 0.5 if d[0] < 0 else 1.0}.get(
            alternative, 1.0
        )
    else:
        p = sps.permutation_test(
            (d,), np.mean, permutation_type="samples", alternative=alternative, n_resamples=np.inf
        ).pvalue
    lo, hi = t_interval(d)
    sides = "one-sided" if alternative != "two-sided" else "two-sided"
    return ClaimTest(
        effect=float(d.mean()),
        low=lo,
        high=hi,
        p=float(p),
        n=int(d.size),
        test=f"paired sign-flip, {sides}, {d.size} seeds",
        null=null,
        min_p=float(2.0**-d.size) * (2 if alternative == "two-sided" else 1),
    )


def worst_of(*tests: ClaimTest) -> ClaimTest:
    """An intersection-union test: the claim must pass every test, so it rests on the test that
    binds (the largest p-value; on a tie, the smallest effect), whose effect and interval it
    shows; the null column names every null."""
    binding = max(tests, key=lambda t: (t.p, -t.effect))
    return ClaimTest(
        effect=binding.effect,
        low=binding.low,
        high=binding.high,
        p=binding.p,
        n=min(t.n for t in tests),
        test=binding.test,
        null=" and ".join(t.null for t in tests),
        min_p=max(t.min_p for t in tests),
    )


def spearman_trend(x, y, null: str = "no monotone association") -> ClaimTest:
    """One-sided Spearman test of a rising trend of ``y`` with ``x`` over independent models,
    with the Fisher-z interval of rho (Bonett-Wright standard error)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = x.size
    if n < 4 or np.all(y == y[0]):
        return ClaimTest(0.0, float("nan"), float("nan"), 1.0, n, "Spearman, one-sided", null,
                         min_p=1.0 if n < 4 else 0.0)  # fmt: skip
    res = sps.spearmanr(x, y, alternative="greater")
    rho = float(res.statistic)
    z, se = np.arctanh(np.clip(rho, -0.999999, 0.999999)), np.sqrt((1 + rho**2 / 2) / (n - 3))
    q = sps.norm.ppf(0.5 + CLAIM_CONFIDENCE / 2)
    return ClaimTest(
        effect=rho,
        low=float(np.tanh(z - q * se)),
        high=float(np.tanh(z + q * se)),
        p=float(res.pvalue),
        n=n,
        test=f"Spearman rank correlation, one-sided, {n} models",
        null=null,
        min_p=0.0,
    )


def binomial_above_chance(correct, n: int, null: str = "accuracy 1/2") -> ClaimTest:
    """Per model: one-sided exact binomial test of accuracy > 1/2 on fresh test pairs; the
    claim's p is the largest over models (every model must beat chance), the effect the
    smallest accuracy with its Wilson interval."""
    correct = np.atleast_1d(np.asarray(correct))
    ps = [sps.binomtest(int(k), int(n), 0.5, alternative="greater").pvalue for k in correct]
    worst = int(np.argmin(correct))
    lo, hi = wilson(correct[worst], n, CLAIM_CONFIDENCE)
    return ClaimTest(
        effect=float(correct[worst] / n),
        low=float(lo),
        high=float(hi),
        p=float(max(ps)),
        n=int(correct.size),
        test=f"exact binomial, one-sided, every one of {correct.size} models ({n:,} pairs each)",
        null=null,
        min_p=0.0,
    )
