"""Claim tests: the one pre-declared test behind each verdict, measured against the claim's
smallest effect of interest (SESOI).

Every claim states, before any number is seen, the smallest effect that would matter
(:class:`Sesoi`, with its reason). Its test then answers two one-sided questions at level
``ALPHA`` about the effect, signed so that a positive value goes the claim's way:

- does the effect *clear* the SESOI (H0: effect <= SESOI; a minimum-effect test)?
- is it *below* the SESOI, or of the other sign (H0: effect >= SESOI; an inferiority test)?

The interval shown is two-sided at ``CLAIM_CONFIDENCE`` = 1 - 2 ALPHA, so "clears" is exactly
"its lower end is above the SESOI" and "below" is "its upper end is below it". Neither: the
design cannot tell at this budget. Non-significance alone is never evidence against a claim.

Kept apart from :mod:`.stats` (streaming moments, effect sizes), whose code keys the cached
evaluations: editing a claim test never re-runs an experiment.
"""

from __future__ import annotations

import itertools
import math
import sys
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats as sps
from scipy.optimize import brentq

ALPHA = 0.05  # level of each one-sided question of every claim's test
# The interval is two-sided at 1 - 2 ALPHA: the end on either side is the one-sided bound
# that corresponds to that side's test.
CLAIM_CONFIDENCE = 1 - 2 * ALPHA
NAN = float("nan")


@dataclass(frozen=True)
class Sesoi:
    """A claim's smallest effect of interest: declared with its reason, before the numbers."""

    value: float  # in the units of the claim's effect, on the claim's side
    unit: str  # what the effect is measured in ("of the ramp's slope", "accuracy points")
    reason: str  # why an effect this small would still matter, and a smaller one would not
    name: str = ""  # a short handle for the Methods page's table
    # (module, line) where it was declared, taken at construction: what a verdict's link opens
    origin: tuple = field(default=(), compare=False, repr=False)

    def __post_init__(self):
        if not self.origin:
            f = sys._getframe(1)
            while f.f_code.co_name in ("__init__", "__post_init__"):
                f = f.f_back
            object.__setattr__(self, "origin", (f.f_globals.get("__name__", ""), f.f_lineno))

    def code_ref(self) -> tuple[str, str]:
        """(module, anchor) of its declaration: the module constant's name, else its line."""
        module, line = self.origin or ("", 0)
        found = vars(sys.modules.get(module, sys)).items()
        names = [n for n, v in found if v is self]  # a module constant
        # one made from a constant with dataclasses.replace keeps its origin: that constant
        names += [n for n, v in found if isinstance(v, Sesoi) and v.origin == self.origin]
        return module, names[0] if names else f"L-{line}"

    def show(self, spec: str = ".3g") -> str:
        return f"{format(self.value, spec)} {self.unit}".strip()

    @property
    def flat_margin(self) -> float:
        """How much a quantity may still move over the last half of training and count as
        settled: half a SESOI (its way). More than that and it may still be rising."""
        return 0.5 * self.value


@dataclass(frozen=True)
class ClaimTest:
    """One claim's test: the estimate with its interval, both one-sided p-values against the
    SESOI, and what it was compared with."""

    effect: float  # the estimate, signed the claim's way (e.g. mean paired difference)
    low: float  # CLAIM_CONFIDENCE interval of the estimate (NaN when it cannot be computed)
    high: float
    p: float  # H0: effect <= sesoi (small: the effect clears the SESOI)
    p_refute: float  # H0: effect >= sesoi (small: below the SESOI or of the other sign)
    n: int  # independent units (seeds or models)
    test: str  # the test, in words
    null: str  # what the effect was compared with
    sesoi: float = 0.0
    power: float = NAN  # chance of a decisive answer when the truth is one SESOI away from it
    band: bool = False  # an equivalence test: "clears" is inside a band, "below" outside it

    def clears(self, alpha: float = ALPHA) -> bool:
        return bool(self.p < alpha)

    def below(self, alpha: float = ALPHA) -> bool:
        return bool(self.p_refute < alpha)

    @property
    def decisive_p(self) -> float:
        """The smaller of the two one-sided p-values (what a multiplicity adjustment adjusts)."""
        ps = [p for p in (self.p, self.p_refute) if p == p]
        return min(ps) if ps else NAN


def t_interval(values, confidence: float = CLAIM_CONFIDENCE) -> tuple[float, float]:
    """Student's t interval of the mean of ``values``; NaN for fewer than two values, the
    point itself when every value is equal (no spread: the mean is known exactly)."""
    d = np.asarray(values, dtype=float)
    if d.size < 2 or np.isnan(d).any():
        return NAN, NAN
    if np.allclose(d, d[0], rtol=1e-12, atol=1e-15):
        return float(d[0]), float(d[0])
    ci = sps.ttest_1samp(d, 0.0).confidence_interval(confidence)
    return float(ci.low), float(ci.high)


def t_power(n: int, sd: float, sesoi: float, alpha: float = ALPHA) -> float:
    """Power of :func:`mean_test` with ``n`` units of spread ``sd``: the chance that its
    interval ends on the right side of the SESOI when the true mean is one SESOI beyond it (at
    0 for "below", at twice the SESOI for "clears"; the two are equal by symmetry)."""
    if n < 2 or not sesoi > 0 or sd != sd:
        return NAN
    if sd == 0:
        return 1.0
    crit = sps.t.ppf(1 - alpha, n - 1)
    return float(sps.nct.sf(crit, n - 1, sesoi * math.sqrt(n) / sd))


def mean_test(values, sesoi: float, null: str, what: str = "t test") -> ClaimTest:
    """One-sample t tests of the mean of per-unit effects (signed the claim's way) against
    the SESOI: ``p`` for mean > SESOI, ``p_refute`` for mean < SESOI, with the t interval at
    CLAIM_CONFIDENCE. Unlike a sign-flip test with five units, one discordant unit does not
    decide the outcome. Without spread (every unit equal, as integer-valued effects can be)
    there is no t test: every unit on one side of the SESOI is then as unlikely as an exact
    sign test says, 2^-n, and a mean equal to the SESOI decides nothing. One unit gives no test
    (NaN)."""
    d = np.asarray(values, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"mean_test needs a 1-D array of per-unit effects, got {d.shape}")
    n, mean = int(d.size), float(d.mean()) if d.size else NAN
    lo, hi = t_interval(d)
    name = f"{what}, one-sided against the SESOI, {n} {'seeds' if n != 1 else 'seed'}"
    if n < 2 or lo != lo:
        return ClaimTest(mean, NAN, NAN, NAN, NAN, n, name, null, sesoi)
    if lo == hi:  # no spread: the exact sign test's bound
        p, p_ref = (0.5**n if mean > sesoi else 1.0), (0.5**n if mean < sesoi else 1.0)
        return ClaimTest(mean, lo, hi, p, p_ref, n, name + " (no spread: sign test)", null,
                         sesoi)  # fmt: skip
    else:
        p = float(sps.ttest_1samp(d, sesoi, alternative="greater").pvalue)
        p_ref = float(sps.ttest_1samp(d, sesoi, alternative="less").pvalue)
    power = t_power(n, float(d.std(ddof=1)), sesoi)
    return ClaimTest(mean, lo, hi, p, p_ref, n, name, null, sesoi, power)


EXACT_SPLITS = 200_000  # beyond this many splits, the permutation variance's normal approximation


def gehan_scores(a, a_never, b, b_never) -> np.ndarray:
    """Gehan's comparison of every unit of ``a`` with every unit of ``b``: +1 where a is
    surely larger, -1 surely smaller, 0 where tied or undecided. A unit marked "never" is
    censored at its value (its true value is at least that): it is surely larger only than an
    observed value below it, and two censored units are never decided."""
    A, B = np.asarray(a, float)[:, None], np.asarray(b, float)[None, :]
    ac, bc = np.asarray(a_never, bool)[:, None], np.asarray(b_never, bool)[None, :]
    s = np.sign(A - B)
    s = np.where(ac & ~bc, (B < A).astype(float), s)
    s = np.where(~ac & bc, -(A < B).astype(float), s)
    return np.where(ac & bc, 0.0, s)


def _gehan_p(x, xc, y, yc) -> tuple[float, float]:
    """One-sided p-values (x larger, x smaller) of Gehan's statistic (the sum of
    :func:`gehan_scores` of x against y), exact over every split of the pooled units into
    groups of the two sizes (a permutation test), or from the permutation variance (Mantel)
    beyond ``EXACT_SPLITS`` splits."""
    v, c = np.concatenate([x, y]), np.concatenate([xc, yc])
    S = gehan_scores(v, c, v, c)
    n1, n = len(x), len(v)
    observed = float(S[:n1, n1:].sum())
    if math.comb(n, n1) > EXACT_SPLITS:
        h = S.sum(axis=1)  # each unit's score against all others
        var = n1 * (n - n1) / (n * (n - 1)) * float((h**2).sum())
        if var == 0:
            return 1.0, 1.0
        z = observed / math.sqrt(var)
        return float(sps.norm.sf(z)), float(sps.norm.cdf(z))
    row = S.sum(axis=1)
    # a split's statistic: the sum over its x-group of each unit's score against the y-group
    # = sum_i in X (row_i - sum_j in X S_ij), and the within-X sum of S is 0 (antisymmetric)
    stats = np.array([row[list(idx)].sum() for idx in itertools.combinations(range(n), n1)])
    tol = 1e-9
    return float(np.mean(stats >= observed - tol)), float(np.mean(stats <= observed + tol))


def rank_shift_test(x, y, sesoi: float, null: str, never: float | None = None) -> ClaimTest:
    """Whether ``x`` exceeds ``y`` by more than the SESOI, for ordinal values that may be
    censored (a layer index, where "never" has no layer: every value at or above ``never`` is
    censored there, its true value at least that): Gehan's generalized rank statistic of x
    against y + SESOI (the censoring point shifts with y), exact over every split of the
    units, one-sided both ways; unpaired, as a never-settling network has no layer to pair a
    difference with. Without censoring it is Mann-Whitney's U; with it, two "never" units,
    or a "never" and a value at or past its censoring point, are undecided, never ordered by
    the shift. The effect is the Hodges-Lehmann shift (the median of the pairwise
    differences x_i - y_j, "never" counted at its censoring point: a bound), with the interval
    from inverting the same test over shifts, so that "clears" is "its lower end is above the
    SESOI" wherever the SESOI is not itself a pairwise difference."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim != 1 or y.ndim != 1 or not x.size or not y.size:
        raise ValueError(f"rank_shift_test needs two 1-D samples, got {x.shape}, {y.shape}")
    xc, yc = ((x >= never, y >= never) if never is not None
              else (np.zeros(x.size, bool), np.zeros(y.size, bool)))  # fmt: skip
    diffs = np.unique(np.subtract.outer(x, y).ravel())

    def p(shift: float, alternative: str) -> float:
        greater, less = _gehan_p(x, xc, y + shift, yc)
        return greater if alternative == "greater" else less

    # the p-values change only where a shift equals a pairwise difference: test the midpoints
    mids = np.concatenate([[diffs[0] - 1], (diffs[:-1] + diffs[1:]) / 2, [diffs[-1] + 1]])
    ends = np.concatenate([[-np.inf], diffs, [np.inf]])
    alpha = (1 - CLAIM_CONFIDENCE) / 2
    up = [i for i, m in enumerate(mids) if p(m, "greater") > alpha]  # shifts not rejected
    down = [i for i, m in enumerate(mids) if p(m, "less") > alpha]
    low = float(ends[up[0]]) if up and up[0] > 0 else NAN
    high = float(ends[down[-1] + 1]) if down and down[-1] < len(mids) - 1 else NAN
    n1, n2 = x.size, y.size
    share = float(np.mean((gehan_scores(x, xc, y + sesoi, yc) + 1) / 2))  # undecided: a half
    kind = "Gehan (censored at 'never')" if never is not None else "Mann-Whitney U"
    name = (f"{kind} against the SESOI shift, exact, one-sided, {n1} and {n2} seeds "
            f"(P(x > y + SESOI) = {share:.2f})")  # fmt: skip
    return ClaimTest(float(np.median(np.subtract.outer(x, y))), low, high,
                     p(sesoi, "greater"), p(sesoi, "less"), min(n1, n2), name, null,
                     sesoi)  # fmt: skip


def mapped_estimate(est: float, se: float, dof: int, fn, sesoi: float, n: int, null: str,
                    what: str) -> ClaimTest:  # fmt: skip
    """A t-distributed estimate (``est`` with standard error ``se`` on ``dof`` degrees of
    freedom, e.g. a regression's prediction) seen through ``fn``, an increasing map to the
    claim's effect, against a SESOI on that effect: the SESOI is mapped back to the estimate's
    scale (the root of fn(x) = sesoi within 50 + 50 se of the estimate) and tested there; the
    interval is fn of the estimate's. NaN when the estimate has no error or fn never reaches
    the SESOI."""
    name = f"{what}, one-sided t against the SESOI, {dof} degrees of freedom"
    if not (np.isfinite(est) and np.isfinite(se) and se > 0 and dof > 0):
        return ClaimTest(NAN, NAN, NAN, NAN, NAN, n, name, null, sesoi)
    q = float(sps.t.ppf(0.5 + CLAIM_CONFIDENCE / 2, dof))
    lo, hi = est - 50 - 50 * se, est + 50 + 50 * se
    if not fn(lo) < sesoi < fn(hi):
        return ClaimTest(float(fn(est)), NAN, NAN, NAN, NAN, n, name, null, sesoi)
    # a near-degenerate fit (a huge se) makes the bracket wide and flat at both ends: Brent
    # needs more than its default 100 steps there
    threshold = brentq(lambda x: fn(x) - sesoi, lo, hi, maxiter=2000)
    t = (est - threshold) / se
    return ClaimTest(
        float(fn(est)), float(fn(est - q * se)), float(fn(est + q * se)),
        float(sps.t.sf(t, dof)), float(sps.t.cdf(t, dof)), n, name, null, sesoi,
    )  # fmt: skip


def paired(x, y, sesoi: float, null: str) -> ClaimTest:
    """:func:`mean_test` of the paired differences x - y (seed by seed)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired needs two equal-length 1-D arrays, got {x.shape}, {y.shape}")
    return mean_test(x - y, sesoi, null, what="paired t test")


def all_of(*tests: ClaimTest) -> ClaimTest:
    """A claim that needs every part (an intersection-union test): it clears when every part
    does (p = the largest), and is refuted when any part is below its SESOI (p_refute =
    Bonferroni over the parts, so that the chance of a false refutation stays ALPHA). It shows
    the part that binds: the one refuted if any, else the one with the largest p."""
    if not tests:
        raise ValueError("all_of needs at least one test")
    # a part without a test leaves the claim without one: it cannot clear on the other parts
    p = NAN if any(t.p != t.p for t in tests) else max(t.p for t in tests)
    refutes = [t.p_refute for t in tests if t.p_refute == t.p_refute]
    p_ref = min(1.0, len(tests) * min(refutes)) if refutes else NAN
    if p_ref < ALPHA:
        binding = min(tests, key=lambda t: t.p_refute if t.p_refute == t.p_refute else 2)
    else:
        binding = max(tests, key=lambda t: (t.p if t.p == t.p else 2, -t.effect))
    return replace(
        binding,
        p=p,
        p_refute=p_ref,
        n=min(t.n for t in tests),
        null=" and ".join(t.null for t in tests),
        power=min((t.power for t in tests), key=lambda v: 2 if v != v else v),
    )


def rank_trend(x, y, sesoi: float, null: str = "no monotone association") -> ClaimTest:
    """Spearman's rank correlation of ``y`` with ``x`` over independently trained models,
    against a SESOI on rho, by the Fisher-z transform (Bonett-Wright standard error), with its
    CLAIM_CONFIDENCE interval. Fewer than four models, or no variation, give no test."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = int(x.size)
    name = f"Spearman rank correlation, one-sided against the SESOI, {n} models"
    if n < 4 or np.all(y == y[0]) or np.all(x == x[0]):
        return ClaimTest(NAN, NAN, NAN, NAN, NAN, n, name, null, sesoi)
    rho = float(sps.spearmanr(x, y).statistic)
    z = np.arctanh(np.clip(rho, -0.999999, 0.999999))
    se = float(np.sqrt((1 + rho**2 / 2) / (n - 3)))
    q = sps.norm.ppf(0.5 + CLAIM_CONFIDENCE / 2)
    stat = (z - np.arctanh(sesoi)) / se
    power = float(sps.norm.sf(sps.norm.ppf(1 - ALPHA) - np.arctanh(sesoi) / se))
    return ClaimTest(
        rho, float(np.tanh(z - q * se)), float(np.tanh(z + q * se)),
        float(sps.norm.sf(stat)), float(sps.norm.cdf(stat)), n, name, null, sesoi, power,
    )  # fmt: skip


def accuracy_above(correct, n: int, sesoi: float, chance: float = 0.5,
                   null: str = "accuracy 1/2") -> ClaimTest:  # fmt: skip
    """Every model's accuracy beats chance by at least the SESOI: exact binomial tests of
    accuracy against chance + SESOI, per model; the claim rests on the least accurate model
    (its Clopper-Pearson interval), clears when every model does and is refuted when any
    model is below chance + SESOI (Bonferroni over models)."""
    correct = np.atleast_1d(np.asarray(correct))
    level = chance + sesoi
    tests = []
    for k in correct:
        res = sps.binomtest(int(k), int(n), level, alternative="greater")
        ci = res.proportion_ci(CLAIM_CONFIDENCE, method="exact")
        tests.append(ClaimTest(
            float(k / n) - chance, ci.low - chance, ci.high - chance, float(res.pvalue),
            float(sps.binomtest(int(k), int(n), level, alternative="less").pvalue), 1,
            f"exact binomial, one-sided against chance + SESOI, every one of {correct.size} "
            f"models ({n:,} pairs each)", null, sesoi,
        ))  # fmt: skip
    t = all_of(*tests)
    return replace(t, n=int(correct.size), null=null)


def accuracy_within(correct, n: int, half_width: float, chance: float = 0.5,
                    null: str = "chance, 1/2") -> ClaimTest:  # fmt: skip
    """Every model's accuracy lies within ``half_width`` of chance (two one-sided exact binomial
    tests per model): ``p`` for "inside" is the largest over models and both sides, ``p_refute``
    for "outside" (some model beyond either edge) is Bonferroni over models and sides. The
    effect is the largest distance from chance, with its Clopper-Pearson interval."""
    correct = np.atleast_1d(np.asarray(correct))
    lo, hi = chance - half_width, chance + half_width
    ins, outs, worst = [], [], None
    for k in correct:
        above_lo = sps.binomtest(int(k), int(n), lo, alternative="greater").pvalue
        below_hi = sps.binomtest(int(k), int(n), hi, alternative="less").pvalue
        ins.append(max(above_lo, below_hi))
        outs.append(min(1 - above_lo, 1 - below_hi))
        if worst is None or abs(k / n - chance) > abs(worst / n - chance):
            worst = k
    ci = sps.binomtest(int(worst), int(n)).proportion_ci(CLAIM_CONFIDENCE, method="exact")
    return ClaimTest(
        float(abs(worst / n - chance)), float(min(abs(ci.low - chance), abs(ci.high - chance))),
        float(max(abs(ci.low - chance), abs(ci.high - chance))), float(max(ins)),
        float(min(1.0, 2 * len(outs) * min(outs))), int(correct.size),
        f"exact binomial, two one-sided tests per model, every one of {correct.size} models "
        f"({n:,} pairs each)", null, half_width, band=True,
    )  # fmt: skip


def inside_band(values, lo: float, hi: float, null: str) -> ClaimTest:
    """A comparison with a value the paper reports (an equivalence test): our per-seed values'
    t interval against the paper's band [lo, hi]. ``p`` is the two one-sided tests' p for
    "inside the band" (TOST), ``p_refute`` the smaller one-sided p for "wholly on one side of
    it". The effect is our mean; the SESOI column shows the band."""
    v = np.asarray(values, dtype=float)
    n, mean = int(v.size), float(np.mean(v)) if v.size else NAN
    low, high = t_interval(v)
    name = f"comparison with the paper's band: t interval over {n} seeds"
    if low != low:
        return ClaimTest(mean, NAN, NAN, NAN, NAN, n, name, null, NAN, band=True)
    if low == high:
        inside = lo <= mean <= hi
        return ClaimTest(mean, low, high, 0.5**n if inside else 1.0, 1.0 if inside else 0.5**n,
                         n, name, null, NAN, band=True)  # fmt: skip
    above_lo = sps.ttest_1samp(v, lo, alternative="greater").pvalue
    below_hi = sps.ttest_1samp(v, hi, alternative="less").pvalue
    p_inside = float(max(above_lo, below_hi))
    p_outside = float(min(1 - above_lo, 1 - below_hi))
    return ClaimTest(mean, low, high, p_inside, p_outside, n, name, null, NAN, band=True)


def within(values, margin: float, null: str) -> ClaimTest:
    """An equivalence test: the mean of per-unit values lies within ``margin`` (a SESOI) of 0,
    by two one-sided t tests (:func:`inside_band` on [-margin, margin]); "not significantly
    different from 0" is never read as "0". ``p`` is "inside", ``p_refute`` "wholly outside"."""
    t = inside_band(values, -margin, margin, null)
    return replace(t, test=f"equivalence within ± the SESOI: two one-sided t tests over "
                   f"{t.n} seeds", sesoi=margin)  # fmt: skip


MULTIPLICITY = "bh"  # the control that decides a verdict: Benjamini-Hochberg (see adjusted)


def adjusted(ps, method: str = MULTIPLICITY) -> np.ndarray:
    """Adjusted p-values over one family; NaN where a row has no test. ``"bh"`` (what decides
    a verdict): Benjamini-Hochberg (scipy.stats.false_discovery_control), a false-discovery
    reading: among the decisive verdicts, the expected share of wrong ones is at most ALPHA
    (for independent or positively dependent tests; the rows that share networks are
    positively dependent). ``"holm"``: Holm's step-down (the k-th smallest p times the number
    not smaller than it, kept increasing), family-wise, valid under any dependence; the ledger
    reports how many verdicts it would leave."""
    ps = np.asarray(ps, dtype=float)
    out = np.full(ps.shape, NAN)
    ok = np.flatnonzero(~np.isnan(ps))
    if not ok.size:
        return out
    if method == "bh":
        out[ok] = sps.false_discovery_control(ps[ok], method="bh")
    elif method == "holm":
        order = ok[np.argsort(ps[ok], kind="stable")]
        scaled = (ok.size - np.arange(ok.size)) * ps[order]
        out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    else:
        raise ValueError(f"method must be 'bh' or 'holm', got {method!r}")
    return out


def late_gain(values, fractions, what: str = "effect") -> ClaimTest:
    """How much each unit's tested quantity (``values``: kept states x units, signed the claim's
    way, the last row the end of the budget) gained over the last half of the budget: from the
    last kept state at or before half of it to the end, with its t interval; the p-values are
    NaN (an interval, compared with a margin by :func:`may_rise`)."""
    values, fractions = np.asarray(values, dtype=float), np.asarray(fractions, dtype=float)
    half = [i for i, f in enumerate(fractions[:-1]) if f <= 0.5]
    if not half or values.shape[0] != fractions.size:
        return ClaimTest(NAN, NAN, NAN, NAN, NAN, 0, "no state kept by half the budget", "")
    gain = values[-1] - values[half[-1]]
    return ClaimTest(
        float(gain.mean()), *t_interval(gain), NAN, NAN, int(gain.size),
        f"{what} gained from {fractions[half[-1]]:.0%} of the budget to all of it", "flat",
    )  # fmt: skip


@dataclass(frozen=True)
class Rise:
    """Whether a tested quantity may still be moving the claim's way at the end of the budget
    (true as a bool when it may), with the evidence: its late gain (:func:`late_gain`) and the
    margin the gain's upper end was held against."""

    may: bool
    gain: ClaimTest
    margin: float
    # of the networks compared, how many the budget's cap ended (None: not counted, as for a
    # budget of fixed steps with no stopping rule)
    capped: int | None = None
    networks: int | None = None

    def __bool__(self) -> bool:
        return self.may

    def record(self) -> dict:
        """The numbers a ledger row needs to re-derive the decision."""
        g = self.gain
        return {"gain": g.effect, "low": g.low, "high": g.high, "n": g.n, "what": g.test,
                "margin": self.margin, "may_rise": self.may, "capped": self.capped,
                "networks": self.networks}  # fmt: skip


def finished(rise: Rise | None, capped, margin: float) -> Rise | None:
    """The stopping rule's reading of a late gain (``rise``, from :func:`may_rise`, or None
    without kept states). ``capped``: per network compared, whether the epoch cap ended its
    training rather than its own stopping rule. A network its stopping rule ended is as trained
    as the book's rules make it, so a quantity of finished networks cannot move further: it is
    *not* rising, whatever its late gain (kept for the record). Where the cap cut any network,
    the late gain decides, as :func:`may_rise` says."""
    capped = [bool(c) for c in capped]
    n_capped = sum(capped)
    if n_capped == 0 and capped:
        gain = (
            rise.gain
            if rise is not None
            else ClaimTest(
                NAN, NAN, NAN, NAN, NAN, 0, "every network ended by its stopping rule", ""
            )
        )
        return Rise(False, gain, margin, 0, len(capped))
    if rise is None:
        return None
    return replace(rise, capped=n_capped, networks=len(capped))


def may_rise(values, fractions, margin: float) -> Rise:
    """Whether the tested quantity may still be rising at the end of the budget: the upper end
    of its late gain's interval (:func:`late_gain`) reaches ``margin``, or there is no interval
    (too few units, or no state kept by half the budget)."""
    g = late_gain(values, fractions)
    return Rise(not g.high < margin, g, margin)
