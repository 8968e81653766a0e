"""Chapter A5: how far the side channel carries, against the number of normalization layers
and the sequence length.

- :func:`families`: the networks of the study, on two axes from chapter A1's geometry: more
  normalization layers at the same receptive field (kernel-1 blocks, ``CNNConfig.mix``), and
  longer sequences at the same depth.
- :class:`Reach`: one family's band slopes (:mod:`.bands`), their ratio, and two reaches.
- :func:`fit_law`: the share of the first band's slope kept one hop on (or the slope beyond
  one hop), a power law in the number of normalization layers and in l fitted on the linear
  scale with every model kept, and its prediction for paper A's network.
- :func:`flag_rate`: the fraction of indices the span test would flag at a given slope and
  number of predictions (the normal approximation of Welch's test).

Nothing here is cached itself: the networks and their evaluations are chapter A1's steps.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
from scipy import linalg
from scipy import stats as sps
from scipy.optimize import brentq, least_squares

from normbook.paper_a.measures import bands
from normbook.paper_a.runs import localization
from normbook.paper_a.runs.localization import Setup


@dataclass(frozen=True)
class Family:
    """One network family of the study: its setup (seeds, training), its network, and the
    axes it lies on (chapter A1's networks lie on both)."""

    setup: Setup
    cnn: localization.CNNConfig
    a1: bool  # the chapter's base geometry and budget (for chapter A1's profile: its networks)
    axes: tuple[str, ...] = ()

    @property
    def norm_layers(self) -> int:
        return self.cnn.norm_layers

    @property
    def seq_len(self) -> int:
        return self.setup.seq_len

    @property
    def label(self) -> str:
        plain = (f" + {self.cnn.depth * self.cnn.mix} plain k=1 blocks"
                 if self.cnn.mix and not self.cnn.mix_norm else "")  # fmt: skip
        return f"{self.norm_layers} norm layers{plain}, l = {self.seq_len}"


AXES = ("norm layers", "length")


def _family(setup: Setup, norm: str, seeds, n_eval: int, *, mix=0, seq_len=None,
            steps=None, mix_norm=True) -> Family:  # fmt: skip
    seq_len = seq_len or setup.seq_len
    base = mix == 0 and seq_len == setup.seq_len and steps in (None, setup.train.steps)
    s = setup
    if not base:
        train = replace(setup.train, seq_len=seq_len, steps=steps or setup.train.steps)
        s = replace(setup, seq_len=seq_len, seeds=tuple(seeds), train=train,
                    eval=replace(setup.eval, n_samples=n_eval))  # fmt: skip
    return Family(s, replace(s.chapter_cnn or s.cnn(norm), mix=mix, mix_norm=mix_norm), base)


def families(setup: Setup, params) -> list[Family]:
    """The study's families, each once: ``norm`` networks at the base geometry with each of
    ``params.reach_mix`` kernel-1 blocks after every block (axis "norm layers"), and at each of
    ``params.reach_lens`` with ``params.reach_len_steps`` steps (axis "length"). The family at the
    base geometry and budget uses the base seeds and evaluation (chapter A1's networks when the
    profile's knobs are A1's)."""
    common = dict(norm=params.norm, seeds=params.reach_seeds, n_eval=params.reach_eval)
    wanted = [("norm layers", dict(mix=m)) for m in params.reach_mix] + [
        ("length", dict(seq_len=n, steps=st))
        for n, st in zip(params.reach_lens, params.reach_len_steps)
    ]
    out: dict = {}
    for axis, kw in wanted:
        f = _family(setup, **common, **kw)
        key = (f.setup, f.cnn)
        out[key] = replace(out.get(key, f), axes=(*out.get(key, f).axes, axis))
    return list(out.values())


def matched_families(setup: Setup, params) -> list[Family]:
    """The layer axis's matched control: ``params.reach_matched_mix`` kernel-1 blocks after every
    block, normalized (the axis's family of that many blocks) and plain (conv -> ReLU): the
    same depth, widths and parameters, only the normalization layers differ. Empty when the
    parameter is 0."""
    m = params.reach_matched_mix
    if not m:
        return []
    common = dict(norm=params.norm, seeds=params.reach_seeds, n_eval=params.reach_eval, mix=m)
    return [replace(_family(setup, **common), axes=("matched",)),
            replace(_family(setup, **common, mix_norm=False), axes=("matched",))]  # fmt: skip


def networks(fams: list[Family]) -> list:
    """(setup, network) pairs for :func:`localization.pretrain`."""
    return [(f.setup, f.cnn) for f in fams]


def evaluate(fam: Family) -> localization.LocalizationRun:
    """The family's evaluated networks (the base family's with their depth probes, so that
    they share chapter A1's cache entry; the others outputs only)."""
    return localization.localize(fam.setup, fam.cnn, with_probes=fam.a1 and fam.cnn.mix == 0)


# ----------------------------------------------------------------------------- reach


def _z(alpha: float) -> float:
    return float(sps.norm.ppf(1 - alpha))


@dataclass
class Reach:
    """One family's reach. Band slopes are in units of the ramp's slope; distances in units of
    R (band h covers [R + 2R(h-1), R + 2Rh) from the nearer end)."""

    family: Family
    bands: bands.HopBands
    n_per_index: int  # predictions per index of the evaluation
    beyond: np.ndarray  # (M,) slope over [3R, beyond_to R): one band for every family
    beyond_se: np.ndarray  # (M,)
    beyond_to: float  # the band's far edge, in units of R (the same for the whole study)
    train_seconds: float  # per model: its share of its stack's training wall-clock

    @property
    def lower(self) -> np.ndarray:
        """(H,) each band's nearer edge, in units of R."""
        return self.bands.edges[:-1] / self.bands.radius

    @property
    def centres(self) -> np.ndarray:
        return (self.bands.edges[:-1] + self.bands.edges[1:]) / 2 / self.bands.radius

    @property
    def mean(self) -> np.ndarray:
        """(H,) band slope, mean over seeds."""
        return self.bands.slope.mean(axis=0)

    @property
    def se(self) -> np.ndarray:
        """(H,) standard error of the seed mean from the networks' own sampling errors (what
        more predictions per index shrink; the spread between seeds is not in it)."""
        return np.sqrt((self.bands.se**2).sum(axis=0)) / len(self.bands.se)

    @property
    def first(self) -> np.ndarray:
        """(M,) per seed, the first hop band's slope ([R, 3R))."""
        return self.bands.slope[:, 0]

    @property
    def kept(self) -> np.ndarray:
        """(M,) per seed, the share of the first band's slope that the band beyond it
        ([3R, beyond_to R), the same width for every family) keeps."""
        return self.beyond / self.first

    def effect_reach(self, sesoi: float) -> float:
        """The nearer edge (units of R) of the first band whose seed-mean slope is below
        ``sesoi``; the half-sequence's end when none is."""
        below = np.flatnonzero(self.mean < sesoi)
        return float(self.lower[below[0]]) if below.size else self.half

    def significance_reach(self, alpha: float, n_per_index: int | None = None) -> float:
        """Like :meth:`effect_reach` for the first band whose seed-mean slope is not above 0
        at one-sided level ``alpha`` (z test), with the standard errors scaled to
        ``n_per_index`` predictions per index (default: the evaluation's own)."""
        n = n_per_index or self.n_per_index
        se = self.se * np.sqrt(self.n_per_index / n)
        below = np.flatnonzero(self.mean <= _z(alpha) * se)
        return float(self.lower[below[0]]) if below.size else self.half

    @property
    def half(self) -> float:
        return float(self.bands.edges[-1] / self.bands.radius)


@dataclass
class Study:
    """The evaluated families: per family its run, its compute-to-effect curve and its
    reach, in one order."""

    families: list[Family]
    runs: list
    curves: list
    reaches: list[Reach]

    def on(self, axis: str) -> Study:
        """The families on ``axis``."""
        idx = [i for i, f in enumerate(self.families) if axis in f.axes]
        return Study(*([x[i] for i in idx] for x in (self.families, self.runs, self.curves,
                                                      self.reaches)))  # fmt: skip

    @property
    def base(self) -> int:
        """The index of the base family (chapter A1's geometry and budget)."""
        return next(i for i, f in enumerate(self.families) if f.a1)


def base_geometry(s: Study) -> tuple[int, int]:
    """(normalization layers, l) of the base family: the law's origin."""
    f = s.families[s.base]
    return f.norm_layers, f.seq_len


def beyond_band(fams: list[Family]) -> tuple[int, int]:
    """The band beyond one hop that every family has whole: [3R, min(5R, shortest half)),
    in indices (the families share R)."""
    radius = fams[0].cnn.receptive_radius
    half = min((f.seq_len - 1) // 2 for f in fams)
    return 3 * radius, min(5 * radius, half)


def study(fams: list[Family]) -> Study:
    """Evaluate every family (cached): outputs, kept states, band slopes, the common band
    beyond one hop, and each model's training time."""
    runs = [evaluate(f) for f in fams]
    curves = [localization.curve(f.setup, f.cnn) for f in fams]
    seconds = [
        float(np.mean(localization.training_seconds(f.cnn, f.setup.train, f.setup.seeds)))
        for f in fams
    ]
    return assemble(fams, runs, curves, seconds)


def assemble(fams: list[Family], runs, curves, seconds) -> Study:
    """The study from evaluated runs: each family's bands and its slope over the common band
    beyond one hop (:func:`beyond_band`)."""
    lo, hi = beyond_band(fams)
    reaches = []
    for f, r, secs in zip(fams, runs, seconds):
        beyond, se = bands.band_slope(r, lo, hi)
        reaches.append(Reach(f, bands.hop_bands(r), r.n_per_index, beyond, se, hi / r.radius,
                             secs))  # fmt: skip
    return Study(fams, runs, curves, reaches)


def kept_at(run, fams: list[Family]) -> np.ndarray:
    """Per seed, the share kept of one evaluated run (a curve's point) on the study's band."""
    lo, hi = beyond_band(fams)
    return bands.band_slope(run, lo, hi)[0] / bands.first_hop_slope(run)


# ----------------------------------------------------------------------------- the law


@dataclass
class Law:
    """E[y] = 2^(b0 + b1 log2(N / N0) + b2 log2(l / l0)), fitted on the linear scale over every
    model of the study (y: the share kept, or the slope beyond one hop, which may be 0 or
    negative in a model; N: normalization layers; N0, l0: the base family's). A power law: b1
    is the exponent of N, b2 that of l (the Methods page's symmetry argument predicts b1 near 1
    and b2 near -1 for the share). Fitted by weighted nonlinear least squares (quasi-likelihood)
    with each model's variance its own squared standard error plus (tau E[y])^2, tau a
    multiplicative spread between models set so that the Pearson statistic equals its degrees
    of freedom; sandwich covariance clustered by family (CR1: the models of one family share
    its geometry and budget, so they are not independent draws of the law), and t on families
    - terms degrees of freedom."""

    coef: np.ndarray  # (3,)
    cov: np.ndarray  # (3, 3)
    dof: int
    n0: int
    l0: int
    n_models: int
    tau: float = float("nan")  # multiplicative spread between models (coefficient of variation)
    # the pure-error F test: (p, lack-of-fit dof, pure-error dof); NaN p when not testable
    lack_of_fit: tuple[float, int, int] = (float("nan"), 0, 0)

    def design(self, norm_layers, seq_len) -> np.ndarray:
        n, s = np.atleast_1d(norm_layers).astype(float), np.atleast_1d(seq_len).astype(float)
        return np.column_stack([np.ones_like(n), np.log2(n / self.n0), np.log2(s / self.l0)])

    def predict(self, norm_layers, seq_len) -> tuple[float, float]:
        """The fitted log2 of E[y] at (N, l) and its standard error (of the fitted mean)."""
        x = self.design(norm_layers, seq_len)[0]
        return float(x @ self.coef), float(np.sqrt(x @ self.cov @ x))

    def share(self, norm_layers, seq_len, confidence: float) -> tuple[float, float, float]:
        """The fitted E[y] at (N, l) with its ``confidence`` interval."""
        est, se = self.predict(norm_layers, seq_len)
        q = float(sps.t.ppf(0.5 + confidence / 2, max(self.dof, 1)))
        with np.errstate(over="ignore"):  # a law extrapolated far enough: inf, not an error
            return tuple(float(np.exp2(v)) for v in (est, est - q * se, est + q * se))

    def interval(self, i: int, confidence: float) -> tuple[float, float]:
        q = float(sps.t.ppf(0.5 + confidence / 2, max(self.dof, 1)))
        se = float(np.sqrt(self.cov[i, i]))
        return float(self.coef[i] - q * se), float(self.coef[i] + q * se)

    @property
    def fitted(self) -> bool:
        return bool(np.isfinite(self.coef).all())

    def has_term(self, i: int) -> bool:
        """Whether the fit measured term i (its axis had more than one value; a term without
        data has covariance exactly 0, one without degrees of freedom NaN)."""
        return self.fitted and not self.cov[i, i] == 0


def share_kept(r: Reach) -> tuple[np.ndarray, np.ndarray]:
    """Per seed, the share kept and its standard error (the band's own; the first band's
    slope is known far better)."""
    return r.kept, r.beyond_se / np.abs(r.first)


def slope_beyond(r: Reach) -> tuple[np.ndarray, np.ndarray]:
    """Per seed, the slope beyond one hop and its standard error."""
    return r.beyond, r.beyond_se


def _exp2(x):
    """2^x, bounded: a family whose mean is at or below 0 drives its term toward minus
    infinity, and the fit must stay finite while its standard error grows without bound."""
    return np.exp2(np.clip(x, -200.0, 200.0))


def _weighted_fit(X, y, se, tau, start):
    """Weighted nonlinear least squares of y on 2^(X b) with variances se^2 + (tau mu)^2, the
    weights updated from the fitted means until they settle (iteratively reweighted)."""
    b = start
    for _ in range(50):
        mu = _exp2(X @ b)
        w = 1 / np.sqrt(se**2 + (tau * mu) ** 2)
        res = least_squares(lambda c, w=w: (y - _exp2(X @ c)) * w, b, method="lm")
        done = np.allclose(res.x, b, rtol=1e-10, atol=1e-12)
        b = res.x
        if done:
            break
    return b


def _tau(X, y, se, b, dof) -> float:
    """The multiplicative spread that makes the Pearson statistic equal ``dof`` (0 when the
    models' own standard errors already explain the scatter)."""
    mu = _exp2(X @ b)
    pearson = lambda t: float(np.sum((y - mu) ** 2 / (se**2 + (t * mu) ** 2))) - dof
    if pearson(0.0) <= 0:
        return 0.0
    hi = 1.0
    while pearson(hi) > 0 and hi < 1e6:
        hi *= 10
    return float(brentq(pearson, 0.0, hi)) if pearson(hi) < 0 else hi


def _lack_of_fit_sums(y, mu, weights, group) -> tuple[float, float, int]:
    """The weighted sums of squares of the pure-error F test: (lack of fit, the families'
    weighted means against the law; pure error, the models against their family's mean;
    the number of families)."""
    ids = np.unique(group)
    ss_pe = ss_lof = 0.0
    for g in ids:
        i = group == g
        mean = np.average(y[i], weights=weights[i])
        ss_pe += float(np.sum(weights[i] * (y[i] - mean) ** 2))
        ss_lof += float(np.sum(weights[i] * (mean - mu[i]) ** 2))
    return ss_lof, ss_pe, len(ids)


def fit_law(reaches: list[Reach], n0: int, l0: int, measure=share_kept) -> Law:
    """The law (:class:`Law`) of ``measure`` (per reach: values per seed and their standard
    errors; default the share kept) over every model with a finite value, zero and negative
    values included (no logarithm is taken of them). An axis with one value gets no term."""
    n, s, y, se = [], [], [], []
    for r in reaches:
        for v, e in zip(*measure(r)):
            if np.isfinite(v) and np.isfinite(e):
                n.append(r.family.norm_layers)
                s.append(r.family.seq_len)
                y.append(float(v))
                se.append(float(e))
    empty = Law(np.full(3, np.nan), np.full((3, 3), np.nan), 0, n0, l0, len(y))
    if not y:
        return empty
    X, y, se = Law(None, None, 0, n0, l0, 0).design(n, s), np.asarray(y), np.asarray(se)
    keep = [0] + [j for j in (1, 2) if np.ptp(X[:, j]) > 0]
    Xk, dof = X[:, keep], len(y) - len(keep)
    if dof <= 0 or not np.mean(y) > 0:
        return replace(empty, dof=max(dof, 0))
    b = np.zeros(len(keep))  # start: the overall mean, flat along both axes
    b[0] = np.log2(np.mean(y))
    tau = 0.0
    for _ in range(20):  # alternate the fit and the spread until both settle
        b = _weighted_fit(Xk, y, se, tau, b)
        new = _tau(Xk, y, se, b, dof)
        if abs(new - tau) <= 1e-8 * max(1.0, tau):
            tau = new
            break
        tau = new
    mu = _exp2(Xk @ b)
    v = se**2 + (tau * mu) ** 2
    J = (mu * np.log(2))[:, None] * Xk  # d mu / d b
    with warnings.catch_warnings():  # a term the data cannot pin down: its SE is huge, as it
        warnings.simplefilter("ignore", linalg.LinAlgWarning)  # should be (not an error)
        try:
            bread = linalg.inv(J.T @ (J / v[:, None]))
        except linalg.LinAlgError:  # every fitted mean underflowed: no law to speak of
            return replace(empty, dof=dof)
    e = (y - mu) / v
    group = np.array([f"{a}/{c}" for a, c in zip(n, s)])
    ids = np.unique(group)
    g, p_terms = len(ids), len(keep)
    scores = np.array([(J[group == i] * e[group == i, None]).sum(axis=0) for i in ids])
    meat = scores.T @ scores  # clustered by family: a family's models move together
    if g > p_terms:
        small = g / (g - 1) * (len(y) - 1) / (len(y) - p_terms)  # CR1
        cov_k = bread @ meat @ bread * small
    else:  # no degrees of freedom left between families: coefficients, but no interval
        cov_k = np.full((p_terms, p_terms), np.nan)
    coef, cov = np.zeros(3), np.zeros((3, 3))  # a term without data is fixed at 0, no error
    coef[keep] = b
    cov[np.ix_(keep, keep)] = cov_k
    ss_lof, ss_pe, g = _lack_of_fit_sums(y, mu, 1 / v, group)
    d_lof, d_pe = g - len(keep), len(y) - g
    p = float(sps.f.sf((ss_lof / d_lof) / (ss_pe / d_pe), d_lof, d_pe)) if (
        d_lof > 0 and d_pe > 0 and ss_pe > 0) else float("nan")  # fmt: skip
    dof_law = max(g - p_terms, 0)
    return Law(coef, cov, dof_law, n0, l0, len(y), tau, (p, max(d_lof, 0), max(d_pe, 0)))


def flag_rate(slope: np.ndarray, seq_len: int, sigma: float, n_per_index: int,
              alpha: float) -> np.ndarray:  # fmt: skip
    """The chance that the span test (Welch, two-sided at ``alpha``; outputs at i + 1 and
    i - 1 from two streams of n/2 predictions each) flags an index where the mean prediction
    has ``slope`` (units of the ramp's slope over l - 1 indices) and one prediction's standard
    deviation is ``sigma``; normal approximation."""
    z = np.asarray(slope) * np.sqrt(n_per_index) / ((seq_len - 1) * sigma)
    q = sps.norm.ppf(1 - alpha / 2)
    return sps.norm.sf(q - z) + sps.norm.cdf(-q - z)


def prediction_sigma(run) -> float:
    """One prediction's standard deviation at the interior indices, pooled over seeds and
    streams (what :func:`flag_rate` assumes for paper A's network)."""
    from normbook.paper_a.measures.detector import boundary_distance

    inner = boundary_distance(run.seq_len) >= run.radius
    return float(np.sqrt((run.out.std[..., inner] ** 2).mean()))
