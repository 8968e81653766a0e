"""Power of the claims' tests: how many seeds a not-shown claim would need to be decided
(:func:`units_needed`, the ledger's "what would decide it") and the simulated power of the
mean test against its analytic value (:func:`simulate_power`, the Methods page's check)."""

from __future__ import annotations

import math
import re

import numpy as np
from scipy import stats as sps

from normbook.grading.claims import ALPHA, CLAIM_CONFIDENCE, mean_test, t_power

TARGET_POWER = 0.8  # "seeds needed": the chance of a decisive answer a design should have
MAX_UNITS = 10_000  # beyond this, "seeds needed" reads "more than"


def units_needed(effect: float, low: float, high: float, n: int, sesoi: float, test: str,
                 alpha: float = ALPHA) -> int | None:  # fmt: skip
    """Seeds (units) a claim's test would need to decide it with chance ``TARGET_POWER`` if
    the truth were the observed effect with the observed spread: for a t test, the spread is
    read back from the interval (half-width = t quantile x sd / sqrt(n)) and the power is
    :func:`t_power` at the distance between effect and SESOI; for the rank test
    (:func:`rank_shift_test`), Noether's formula at the observed chance that a unit of one
    group exceeds one of the other by the SESOI (seeds per group). None where the test is
    neither, or the record lacks an interval; ``MAX_UNITS + 1`` where no number of seeds up to
    MAX_UNITS would do (an effect at the SESOI)."""
    if not (n >= 2 and np.isfinite([effect, low, high, sesoi]).all()):
        return None
    share = re.search(r"P\(x > y \+ SESOI\) = ([0-9.]+)", test)
    if ("Mann-Whitney" in test or "Gehan" in test) and share:
        # Noether's formula for the rank test: seeds per group at the observed P(x > y + SESOI)
        away = abs(float(share.group(1)) - 0.5)
        if away == 0:
            return MAX_UNITS + 1
        z = sps.norm.ppf(1 - alpha) + sps.norm.ppf(TARGET_POWER)
        return min(MAX_UNITS + 1, max(2, math.ceil(z**2 / (12 * 0.25 * away**2) / 2)))
    if "t test" not in test or "equivalence" in test:  # TOST power is another calculation
        return None
    half = (high - low) / 2
    sd = half * math.sqrt(n) / float(sps.t.ppf(0.5 + CLAIM_CONFIDENCE / 2, n - 1))
    delta = abs(effect - sesoi)
    if not delta > 0:
        return MAX_UNITS + 1
    if sd == 0:  # no spread: mean_test's sign-test bound 2^-n must fall below the level
        return max(n, math.floor(math.log2(1 / alpha)) + 1)
    lo, hi = 2, MAX_UNITS
    if t_power(hi, sd, delta, alpha) < TARGET_POWER:
        return MAX_UNITS + 1
    while lo < hi:  # power rises with n: bisect for the smallest n that reaches the target
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if t_power(mid, sd, delta, alpha) < TARGET_POWER else (lo, mid)
    return lo


def simulate_power(ns, ratios, draws: int, seed: int = 0):
    """The chance that :func:`mean_test` with ``n`` seeds clears its SESOI when the true mean
    is twice the SESOI (one SESOI beyond it; by symmetry also the chance of "below" at a true
    mean of 0), against SESOI / sd: simulated with the test itself on Gaussian seeds, beside
    :func:`t_power`. A DataFrame with n, ratio, simulated, analytic."""
    import pandas as pd

    from normbook.runtime import seeding

    rng = np.random.default_rng(seeding.stream_seed(seed, "check", salt=17))
    rows = []
    for n in ns:
        for r in ratios:
            hits = sum(mean_test(rng.normal(2 * r, 1.0, n), float(r), "sim").p < ALPHA
                       for _ in range(draws))  # fmt: skip
            analytic = t_power(int(n), 1.0, float(r)) if r > 0 else ALPHA
            rows.append(dict(n=int(n), ratio=float(r), simulated=hits / draws, analytic=analytic))
    return pd.DataFrame(rows)
