"""Output-only evaluation with per-sample *and* per-batch statistics; BatchNorm at evaluation
(minibatch vs population statistics, evaluation batch size; paper A, Appendix D / Figs. 5-6).

With minibatch statistics the samples of one evaluation batch share their normalization
statistics, so their predictions are not independent. The per-sample Welch test of the
localization detector assumes they are; :func:`.evaluation.evaluate_batches` therefore also
streams the moments of per-batch mean predictions (batches *are* independent), for a test that
stays valid, and reports the design effect: how much larger the variance of a batch mean is
than independent samples would give (1 = no within-batch dependence).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from normbook.paper_a.cached import cache_keys as steps
from normbook.paper_a.cached.cnn import CNNConfig, StackedCNN, set_padding
from normbook.paper_a.cached.evaluation import evaluate_batches
from normbook.paper_a.measures import detector
from normbook.paper_a.measures.detector import Localization, Moments
from normbook.paper_a.runs import localization
from normbook.runtime import cache


@dataclass
class BatchStatsRun(localization.SummarizedRun):
    """One normalization's networks evaluated at one batch size, with both tests."""

    cnn: CNNConfig
    seeds: list[int]
    batch_size: int  # evaluation batch size
    mode: str  # "minibatch" or "population" statistics
    loss: np.ndarray  # (steps, M)
    out: Moments  # single predictions
    bmean: Moments  # batch-mean predictions
    per_seed: list[Localization]  # per-sample test (the paper's)
    batch_mean: list[Localization]  # test on batch means (valid under within-batch dependence)
    design_effect: np.ndarray  # (M,)
    train_cache_hits: list[bool]
    padding: str = "zeros"  # at evaluation
    net: StackedCNN | None = field(default=None, repr=False)


def localize(
    setup: localization.Setup,
    cnn: CNNConfig,
    batch_size: int,
    mode: str,
    padding: str = "zeros",
    at_step: int | None = None,
) -> BatchStatsRun:
    """Train (or load, shared with every other chapter) and evaluate with batch means (cached);
    ``padding`` = "circular" gives the run's null (:func:`localization.circular_null`);
    ``at_step`` evaluates the states kept at that training step (:func:`curve`)."""
    net, losses, hits = localization.trained(cnn, setup.train, list(setup.seeds), at_step)
    net.to(setup.eval.device)
    set_padding(net, padding)
    tc = setup.train

    def compute():
        return cache.Entry(
            evaluate_batches(net, tc.seq_len, setup.eval.n_samples, batch_size, mode)
        )

    config = {
        "cnn": asdict(localization.training_identity(cnn)),
        "train": asdict(tc),
        "seeds": [int(s) for s in setup.seeds],
        "n_samples": int(setup.eval.n_samples),
        "batch_size": int(batch_size),
        "mode": mode,
        "padding": padding,
    }
    if at_step is not None:  # only then, so the trained models' entries keep their keys
        config["at_step"] = at_step
    entry = steps.BATCHSTATS.cached(config, compute)
    out, bmean = Moments.from_arrays(entry, "out"), Moments.from_arrays(entry, "bmean")
    radius = cnn.receptive_radius
    return BatchStatsRun(
        cnn=cnn,
        seeds=list(setup.seeds),
        batch_size=batch_size,
        mode=mode,
        loss=losses,
        out=out,
        bmean=bmean,
        per_seed=detector.summarize(out, radius, setup.detector),
        batch_mean=detector.summarize(bmean, radius, setup.detector),
        design_effect=design_effect(out, bmean, batch_size),
        train_cache_hits=hits,
        padding=padding,
        net=net,
    )


def curve(
    setup: localization.Setup, cnn: CNNConfig, batch_size: int, mode: str = "minibatch"
) -> localization.Curve:
    """The late states (:func:`localization.kept_curve`) of :func:`localize` runs at
    ``batch_size``, for the claims graded on the batch-mean test."""
    return localization.kept_curve(
        setup, cnn, lambda s, at: localize(s, cnn, batch_size, mode, at_step=at), late=True
    )


def design_effect(out: Moments, bmean: Moments, batch_size: int) -> np.ndarray:
    """Per model: median over indices of batch_size * var(batch mean) / var(single prediction).

    1 when the predictions in a batch are independent; larger when they move together
    (shared minibatch statistics), in which case the per-sample test overstates significance.
    """
    var_single = (out.std**2).mean(axis=0)
    var_bmean = (bmean.std**2).mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = batch_size * var_bmean / var_single
    return np.nanmedian(ratio, axis=-1)


def boundary_fractions(run, test: str = "per_seed") -> list[float]:
    """Per model of a run: :func:`boundary_fraction` of its localized indices, by the
    per-sample test (``per_seed``) or, for a :class:`BatchStatsRun`, the ``batch_mean`` test."""
    return [boundary_fraction(s.localized, run.radius) for s in getattr(run, test)]


def boundary_fraction(localized: np.ndarray, radius: int) -> float:
    """Fraction of the indices within R of an end (where padding is visible) that are localized."""
    band = detector.boundary_distance(localized.shape[-1]) < radius
    return float(np.asarray(localized)[..., band].mean())
