"""The localization experiment: a setup from a chapter's parameters, then train (cached per
seed, :mod:`.training`), evaluate with streaming statistics and probe every depth (cached,
:mod:`.evaluation`), and summarize with the detector. This module orchestrates; the cached
steps' keys cover the modules that compute (:mod:`.steps`), not this one.

    setup = localization.Setup.from_params(params)
    none = localization.localize(setup, setup.cnn("none"))
    normed = localization.localize(setup, setup.chapter_cnn)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import numpy as np

from normbook.paper_a.cached import cache_keys as steps
from normbook.paper_a.cached.cnn import CNNConfig, StackedCNN, set_padding
from normbook.paper_a.cached.evaluation import EvalConfig, evaluation_arrays
from normbook.paper_a.cached.training import TrainConfig, model_entries, model_states, train_stack
from normbook.paper_a.measures import detector, multihop
from normbook.paper_a.measures.detector import DetectorConfig, Localization, Moments
from normbook.runtime import cache
from normbook.runtime.devices import resolve_device
from normbook.runtime.workers import run_jobs


@dataclass(frozen=True)
class Setup:
    """Everything a localization run needs except the network's normalization."""

    seq_len: int
    kernel: int
    depth: int
    width: int
    seeds: tuple[int, ...]
    train: TrainConfig
    eval: EvalConfig
    detector: DetectorConfig
    chapter_cnn: CNNConfig | None = None  # the normalization the chapter compares with none
    null_init: str = "default"  # the no-norm null's initialisation (the normalized: PyTorch's)
    curve_samples: int = 0  # predictions per index at each point of a compute-to-effect curve

    @property
    def radius(self) -> int:
        """R = floor(k/2) * d."""
        return (self.kernel // 2) * self.depth

    @property
    def half(self) -> int:
        """The largest boundary distance there is: the middle of the sequence."""
        return (self.seq_len - 1) // 2

    @property
    def radius_per_depth(self) -> np.ndarray:
        """R(d) = floor(k/2) * d for d = 1..depth."""
        return multihop.radius_per_depth(self.kernel, self.depth)

    def cnn(self, norm: str, groups: int = 1, batch_eval: str = "minibatch") -> CNNConfig:
        """The network config. GroupNorm with one group per channel *is* InstanceNorm (the
        same module, :func:`.norms.make_norm`), so it gets InstanceNorm's config and shares
        its cached networks."""
        if norm == "group" and groups == self.width:
            norm, groups = "instance", 1
        return CNNConfig(
            depth=self.depth,
            width=self.width,
            kernel=self.kernel,
            norm=norm,
            groups=groups,
            batch_eval=batch_eval,
            init=self.null_init if norm == "none" else "default",
        )

    @classmethod
    def from_params(cls, params) -> Setup:
        """The setup of a chapter's resolved parameters (the A1 knobs)."""
        norm = params.get("norm")
        setup = cls(
            seq_len=params.seq_len,
            kernel=params.kernel,
            depth=params.depth,
            width=params.width,
            seeds=tuple(params.seeds),
            train=TrainConfig(
                seq_len=params.seq_len,
                steps=params.steps,
                batch_size=params.batch_size,
                lr=params.get(
                    "lr", TrainConfig.lr
                ),  # the budget calibration sets these per candidate
                schedule=params.get("schedule", TrainConfig.schedule),
                checkpoints=tuple(params.curve_fractions),
                device=resolve_device(params.device),
            ),
            eval=EvalConfig(
                n_samples=params.get(
                    "n_eval", params.curve_eval
                ),  # the calibration evaluates curves only
                batch_size=params.eval_batch_size,
                batch_eval=params.get("batch_eval", EvalConfig.batch_eval),
                probe_batches=params.get("probe_batches", 0),  # the calibration fits no probes
                device=resolve_device(params.device),
            ),
            detector=DetectorConfig(
                alpha=params.alpha,
                test=params.detector,
                window=params.distance_window,
                threshold=params.distance_threshold,
            ),
            curve_samples=params.curve_eval,
            null_init=params.get("null_init", "default"),
        )
        if norm is None:
            return setup
        return replace(setup, chapter_cnn=setup.cnn(norm, params.groups, params.batch_eval))


def training_identity(cnn: CNNConfig) -> CNNConfig:
    """The config that determines the trained weights (so equal models share a cache entry).

    GroupNorm with G = C *is* InstanceNorm, and BatchNorm's evaluation mode does not
    change training: both are normalized away so chapters reuse each other's models.
    """
    if cnn.norm == "group" and cnn.groups == cnn.width:
        cnn = replace(cnn, norm="instance")
    if cnn.norm != "group":
        cnn = replace(cnn, groups=1)
    return replace(cnn, batch_eval="minibatch")


class UndeclaredNetworkError(RuntimeError):
    """A network trained in the chapter's kernel after :func:`pretrain` declared its runs."""


_declared = False  # True once this process's pretrain() has trained every declared network


def _train_key(ident: CNNConfig, tc: TrainConfig, seed: int) -> dict:
    return {"cnn": asdict(ident), "train": asdict(tc), "seed": int(seed)}


def trained(
    cnn: CNNConfig, tc: TrainConfig, seeds, at_step: int | None = None
) -> tuple[StackedCNN, np.ndarray, list[bool]]:
    """The trained stack for these seeds; seeds already cached are loaded, the rest are
    trained together in one stacked pass. ``at_step`` (one of ``tc.checkpoint_steps``) loads
    the states kept at that step instead of the final ones.
    Returns (net, loss history (steps, M), hit per seed)."""
    ident = training_identity(cnn)
    keys = [_train_key(ident, tc, s) for s in seeds]
    if at_step is not None and at_step not in tc.checkpoint_steps:
        raise ValueError(f"no state kept at step {at_step}; kept: {tc.checkpoint_steps}")

    def train_missing(idx: list[int]):
        if _declared:  # a run the chapter's list forgot would train serially, in the kernel
            raise UndeclaredNetworkError(
                f"{cnn.label} (seeds {[seeds[i] for i in idx]}, {tc.steps} steps) is not among "
                f"the networks this chapter passed to localization.pretrain(); add it to the "
                f"list the chapter declares (e.g. which_norms.networks) so it trains in the "
                f"workers"
            )
        net, record = train_stack(ident, tc, [seeds[i] for i in idx])
        yield from model_entries(net, record, idx)

    entries = steps.TRAIN.cached_each(keys, train_missing)
    net = StackedCNN.from_model_states(
        replace(ident, batch_eval=cnn.batch_eval), list(seeds), model_states(entries, at_step)
    )
    return net, np.stack([e["loss"] for e in entries], axis=1), [e.hit for e in entries]


def late_step(tc) -> int | None:
    """The last step a training config (``steps``, ``checkpoint_steps``) keeps at or before half
    its budget, where a late gain starts; None when it keeps none there."""
    half = [s for s in tc.checkpoint_steps if s <= tc.steps / 2]
    return half[-1] if half else None


def chapter_networks(setup: Setup) -> list[tuple[Setup, CNNConfig]]:
    """The no-norm and the chapter's networks, for :func:`pretrain`."""
    return [(setup, setup.cnn("none")), (setup, setup.chapter_cnn)]


def _train_job(_shared, cnn: CNNConfig, tc: TrainConfig, seeds: tuple[int, ...]) -> list[str]:
    """(In a worker.) Train one stack; the cache entries it wrote."""
    ident = training_identity(cnn)
    _, _, hits = trained(ident, tc, list(seeds))
    paths = [steps.TRAIN.path(_train_key(ident, tc, s)) for s in seeds]
    return [str(p) for p, hit in zip(paths, hits) if not hit]


def _stack_cost(cnn: CNNConfig, tc: TrainConfig, seeds: tuple[int, ...]) -> float:
    """A stack's training time up to a constant: per layer, its kernel's multiply-adds plus
    about two kernel-1 convolutions' worth of norm and ReLU passes (a proxy that orders the
    stacks; chapter A5's families train in 1.5, 3.1 and 4.3 times the base's time per model,
    measured, and this gives 1.4, 2.3 and 4.8)."""
    return len(seeds) * tc.steps * tc.batch_size * tc.seq_len * sum(k + 2 for k in cnn.kernels)


def pretrain(runs: list[tuple[Setup, CNNConfig]], workers: int = 1) -> int:
    """Train every network that ``runs`` (each a setup, whose seeds and training it uses, and a
    network) need and the cache lacks, one stack per network config, ``workers`` stacks side by
    side in their own processes (each on one thread, so the numbers are the same for any
    ``workers``). The runs then load them; they count as trained here. Afterwards a network
    that is not cached is an error (:class:`UndeclaredNetworkError`), not a silent serial
    training in the kernel. Returns how many networks were trained."""
    global _declared
    _declared = False
    jobs, claimed = [], set()
    for setup, cnn in runs:
        ident, tc = training_identity(cnn), setup.train
        todo = []
        for s in setup.seeds:
            key = _train_key(ident, tc, s)
            blob = repr(key)
            if blob not in claimed and not steps.TRAIN.is_cached(key):
                claimed.add(blob)
                todo.append(int(s))
        if todo:
            jobs.append((ident, tc, tuple(todo)))
    if not jobs:
        _declared = True
        return 0
    jobs.sort(key=lambda j: -_stack_cost(*j))  # longest first, so no long stack starts last
    n = sum(len(j[2]) for j in jobs)
    desc = f"train {n} network{'s' * (n > 1)} in {len(jobs)} stack{'s' * (len(jobs) > 1)}"
    for _, paths in run_jobs(_train_job, jobs, None, workers, desc=desc):
        cache.mark_fresh(paths)
    _declared = True
    return n


def training_seconds(cnn: CNNConfig, tc: TrainConfig, seeds) -> np.ndarray:
    """Each seed's share of the wall-clock of the stacked pass that trained it (cached)."""
    keys = [_train_key(training_identity(cnn), tc, s) for s in seeds]
    return np.array([steps.TRAIN.load(k)["seconds"][0] for k in keys])


class SummarizedRun:
    """What every evaluated run offers (it has ``cnn``, ``seeds``, ``out`` and ``per_seed``)."""

    cnn: CNNConfig
    out: Moments
    per_seed: list[Localization]
    padding: str = "zeros"

    @property
    def seq_len(self) -> int:
        return self.out.mean.shape[-1]

    @property
    def n_per_index(self) -> int:
        """Predictions per index, both streams together."""
        return int(self.out.count.sum())

    @property
    def name(self) -> str:
        return self.cnn.label + (", circular padding" if self.padding == "circular" else "")

    @property
    def radius(self) -> int:
        return self.cnn.receptive_radius

    @property
    def radius_per_depth(self) -> np.ndarray:
        return multihop.radius_per_depth(self.cnn.kernel, self.cnn.depth)

    @property
    def distances(self) -> list[int]:
        return [s.distance for s in self.per_seed]

    @property
    def frac_interior(self) -> list[float]:
        return [s.frac_interior for s in self.per_seed]

    @property
    def slope_interior(self) -> list[float]:
        return [s.effect_interior.slope for s in self.per_seed]

    @property
    def r2_interior(self) -> list[float]:
        return [s.effect_interior.r2 for s in self.per_seed]


@dataclass
class LocalizationRun(SummarizedRun):
    """One normalization's networks (one per seed), evaluated and summarized."""

    cnn: CNNConfig
    seeds: list[int]
    net: StackedCNN = field(repr=False)
    loss: np.ndarray  # (steps, M)
    out: Moments  # predictions, (2, M, L)
    per_seed: list[Localization]
    train_cache_hits: list[bool]
    cache_hit: bool  # evaluation loaded from the cache
    probe: Moments | None = None  # depth probes, (2, depth, M, L)
    depth_maps: np.ndarray | None = None  # localized per depth, (depth, M, L)
    probe_distances: np.ndarray | None = None  # (depth, M)
    padding: str = "zeros"  # at evaluation


def localize(
    setup: Setup,
    cnn: CNNConfig,
    with_probes: bool = True,
    padding: str = "zeros",
    at_step: int | None = None,
) -> LocalizationRun:
    """Train (or load) the seeds' networks, evaluate them (cached), and summarize.

    BatchNorm is evaluated with the statistics ``cnn.batch_eval`` names; ``padding`` =
    "circular" evaluates the same trained weights without a boundary (:func:`circular_null`);
    ``at_step`` evaluates the states kept at that training step (:func:`curve`)."""
    if with_probes and cnn.mix:  # the probes' radius per depth assumes one kernel throughout
        raise ValueError("depth probes need networks without kernel-1 blocks (mix = 0)")
    net, losses, hits = trained(cnn, setup.train, list(setup.seeds), at_step)
    net.to(setup.eval.device)
    set_padding(net, padding)
    # without probes, the probe budget changes nothing, so it does not split the cache
    probe_batches = setup.eval.probe_batches if with_probes else 0
    ev = replace(
        setup.eval, batch_eval=cnn.batch_eval, padding=padding, probe_batches=probe_batches
    )

    def compute():
        return cache.Entry(evaluation_arrays(net, setup.seq_len, ev, with_probes))

    config = {
        "cnn": asdict(training_identity(cnn)),
        "batch_eval": cnn.batch_eval,
        "train": asdict(setup.train),
        "eval": asdict(ev),
        "seeds": list(setup.seeds),
        "probes": with_probes,
        "at_step": at_step,
    }
    entry = steps.EVAL.cached(config, compute)
    out = Moments.from_arrays(entry, "out")
    result = LocalizationRun(
        cnn=cnn,
        seeds=list(setup.seeds),
        net=net,
        loss=losses,
        out=out,
        per_seed=detector.summarize(out, cnn.receptive_radius, setup.detector),
        train_cache_hits=hits,
        cache_hit=entry.hit,
        padding=padding,
    )
    if with_probes:
        result.probe = Moments.from_arrays(entry, "probe")
        result.depth_maps = detector.depth_maps(result.probe, setup.detector)
        result.probe_distances = detector.distances(result.depth_maps, setup.detector)
    return result


def circular_null(setup: Setup, cnn: CNNConfig, with_probes: bool = True) -> LocalizationRun:
    """The same trained networks evaluated with circular padding: no boundary, so no index can
    be localized, but the outputs keep the network's own noise. Every claim that a network
    localizes is tested against this null and against the no-norm network."""
    return localize(setup, cnn, with_probes, padding="circular")


@dataclass
class Curve:
    """Effects through training: one evaluated run per kept step, the last the trained model."""

    cnn: CNNConfig
    steps: np.ndarray  # (K,)
    total: int  # the training budget in steps
    runs: list[LocalizationRun] = field(repr=False)

    @property
    def fractions(self) -> np.ndarray:
        return self.steps / self.total

    @property
    def name(self) -> str:
        return self.cnn.label

    def values(self, measure) -> np.ndarray:
        """(K, M): ``measure(run)`` (one value per seed) at every kept step."""
        return np.array([np.asarray(measure(r), dtype=float) for r in self.runs])

    @property
    def slope(self) -> np.ndarray:
        """(K, M) interior slope of the mean prediction."""
        return self.values(lambda r: r.slope_interior)

    @property
    def frac(self) -> np.ndarray:
        """(K, M) fraction of the tested interior localized."""
        return self.values(lambda r: r.frac_interior)


def kept_curve(setup: Setup, cnn: CNNConfig, evaluate, late: bool = False) -> Curve:
    """``evaluate(setup, at_step)`` at every kept state and (``at_step`` None) the trained
    model, alike: ``setup.curve_samples`` predictions per index. ``late``: only the last state
    kept at or before half the budget and the trained model, all that a late gain
    (:func:`normbook.grading.claims.late_gain`) reads, for curves no figure draws."""
    setup = replace(setup, eval=replace(setup.eval, n_samples=setup.curve_samples))
    kept = [*setup.train.checkpoint_steps, setup.train.steps]
    if late:
        half = late_step(setup.train)
        kept = ([] if half is None else [half]) + kept[-1:]
    runs = [evaluate(setup, s) for s in kept[:-1]] + [evaluate(setup, None)]
    return Curve(cnn=cnn, steps=np.array(kept), total=setup.train.steps, runs=runs)


def curve(setup: Setup, cnn: CNNConfig, with_probes: bool = False) -> Curve:
    """The compute-to-effect curve of one normalization (:func:`kept_curve`): outputs only, or
    with the depth probes (``setup.eval.probe_batches`` each) for the claims about reach in
    depth, at the late states only (no figure draws the probes through training)."""
    return kept_curve(setup, cnn, lambda s, at: localize(s, cnn, with_probes, at_step=at),
                      late=with_probes)  # fmt: skip
