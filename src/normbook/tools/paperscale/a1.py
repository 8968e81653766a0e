"""Chapter A1's experiment as a paper-scale run: the no-norm and InstanceNorm stacks trained at
the paper's geometry, evaluated with depth probes beside the circular-padding null, the
compute-to-effect curve at the kept states, and the chapter's two checks (Prop. C.1 and the
null's cyclic equivariance). It calls the same functions as chapter A1 with the same
configuration, so on the CPU its per-seed effects are the chapter's (tested); on a GPU the
device-native path runs (:mod:`normbook.paper_a.cached.evaluation`).

Each phase ends by writing the record. Phases: timing, plan (the path and the ladder's choice,
before any result), train (one per network), evaluate (one per run), checks, summary, curves:
what the book grades comes first, so a run stopped at its deadline during the curves is graded
(without them no claim can be refuted as having stopped rising).

For tests only, ``NORMBOOK_PAPERSCALE_STOP_AFTER=PHASE`` (or ``PHASE:SIGTERM``) makes the run
send itself SIGKILL (or that signal) right after its record of ``PHASE`` is written: a kill or a
deadline at a known point, with no race.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from contextlib import nullcontext
from dataclasses import asdict, replace
from functools import partial

import numpy as np

from normbook.grading import stats
from normbook.paper_a.a1_localization.spec import A1
from normbook.paper_a.cached import cnn, evaluation, norms, probes, stacking, task, training
from normbook.paper_a.measures import bands, detector, equivariance
from normbook.paper_a.runs import localization
from normbook.runtime import seeding
from normbook.runtime.devices import cpu_model
from normbook.runtime.records import Record, device_info, module_hashes, versions
from normbook.runtime.workers import single_thread
from normbook.tools.paperscale import ladder, rates
from normbook.tools.paperscale.rates import EAGER, FAST

EXPERIMENT = "a1"
SPEC = A1
# The modules whose code computes the record's numbers (as the cache's keys: computation
# only); a record whose modules differ from the checkout's was "recorded with earlier code".
COMPUTES = (task, norms, cnn, stacking, training, seeding, probes, stats, evaluation,
            equivariance)  # fmt: skip
RUNS = ("none", "normed", "circular")  # the no-norm network, the chapter's, and its null
STOP_AFTER = "NORMBOOK_PAPERSCALE_STOP_AFTER"  # for tests: PHASE or PHASE:SIGNAL (see above)


PROBE_FIT_COST = 2.0  # a probe-fitting sample costs about two evaluated ones (float64 sums)


def cost(q: dict, params, rates: dict, path: str = FAST) -> dict[str, float]:
    """Seconds per part of this experiment at the budget ``q`` (a ladder rung's parameters),
    from measured ``rates`` (:func:`.rates.measure`) of the ``path`` the run uses (a stack of
    fewer seeds is costed as a full one): two stacks trained; three runs evaluated with probes
    fitted; two curves."""
    train = rates["train"]
    step_s = (train[f"none, {path}"]["ms_per_step"]
              + train[f"{params.norm}, {path}"]["ms_per_step"]) / 1e3  # fmt: skip
    us = rates["sample_us"]
    probes_us, outputs_us = us[f"{path}, probes"], us[f"{path}, outputs"]
    fits = len(RUNS) * q["probe_batches"] * 32 * probes_us * PROBE_FIT_COST
    return {
        "train": q["steps"] * step_s,
        "evaluate": (len(RUNS) * q["n_eval"] * probes_us + fits) / 1e6,
        "curves": 2 * (len(params.curve_fractions) + 1) * q["curve_eval"] * outputs_us / 1e6,
    }


class Deadline(Exception):
    """The run's deadline passed (checked between phases and between curve points), or a
    signal stopped it."""


class Run:
    """One paper-scale run of chapter A1: its record, its clock and its phases in order."""

    def __init__(self, params, device: str, out, deadline_s: float, command: str, commit: str,
                 small: bool):  # fmt: skip
        self.P0, self.device, self.small = params, device, small
        self.t0 = time.monotonic()
        self.deadline = self.t0 + deadline_s
        self.record = Record(out, EXPERIMENT, command)
        self.record.data["provenance"] = {
            "commit": commit,
            "date": time.strftime("%Y-%m-%d"),
            "device": device_info(device),
            "cpu": cpu_model(),
            "versions": versions(),
            "precision": rates.precision_flags(device),
            "rng": seeding.RNG_SCHEME,
            "code": module_hashes(),  # the source as the run starts (later edits do not count)
            "computed_by": [*(_name(m) for m in COMPUTES), _name(sys.modules[__name__])],
        }
        self.record.data["config"] = {"profile": params.profile, "profile_params": dict(params)}
        self.nets, self.trained, self.path = {}, {}, FAST

    # ------------------------------------------------------------------ the phases

    def run(self) -> None:
        """Every phase in order, each ended by a write of the record; on the CPU on one thread,
        as a chapter's kernel and workers compute (the same numbers: tested). The timing sets
        its own flags; every phase after the plan runs with the flags of the path it chose."""
        with single_thread() if self.device == "cpu" else nullcontext():
            self._phase("timing", self.timing)
            self._phase("plan", self.plan)  # the path and the budget are fixed here
            with rates.precision(fast=self.path == FAST):
                self._phases()

    def _phases(self) -> None:
        for norm in ("none", "normed"):
            self._phase(f"train {norm}", lambda n=norm: self.train(n))
        for which in RUNS:
            self._phase(f"evaluate {which}", lambda w=which: self.evaluate(w))
        self._phase("checks", self.checks)  # before the curves: what the book grades first
        self._phase("summary", self.summary)
        self._phase("curves", self.curves)
        self.record.data["status"] = "complete"
        self.record.write()

    def timing(self) -> None:
        setup = localization.Setup.from_params(self.P0)
        setup = replace(setup, eval=replace(setup.eval, device=self.device),
                        train=replace(setup.train, device=self.device))  # fmt: skip
        self.record.data["rates"] = rates.measure(setup, len(self.P0.seeds), self.device,
                                                  self.small)  # fmt: skip

    def plan(self) -> None:
        """The path (fast, unless it disagrees with eager fp32: :func:`.rates.agreement`) and the
        ladder's budget, costed at the rates of that path."""
        measured = self.record.data["rates"]
        a = measured["agreement"]
        self.path = FAST if a["ok"] else EAGER
        gap = f"{a['first_step']:.1e} (relative; tolerance {a['tolerance']:g})"
        why = (f"the fast path's first-step loss is within {gap} of eager fp32's" if a["ok"] else
               f"the fast path's first-step loss differs from eager fp32's by {gap}: it computes "
               f"something else, so the run uses full fp32 (no TF32, no graphs) and its budget "
               f"is costed at eager fp32's measured rates")  # fmt: skip
        self.record.data["provenance"]["precision"] = {
            **rates.precision_flags(self.device, self.path == FAST), "path": self.path,
            "path_why": why,
        }  # fmt: skip
        left = self.deadline - time.monotonic()
        choice = ladder.choose(self.P0, measured, left, partial(cost, path=self.path))
        self.params = SPEC.resolve(self.P0.profile, **{**_overrides(self.P0), **choice.params})
        self.setup = localization.Setup.from_params(self.params)
        self.setup = replace(
            self.setup,
            train=replace(self.setup.train, device=self.device, graphs=self.path == FAST),
            eval=replace(self.setup.eval, device=self.device),
        )
        self.record.data["ladder"] = {**choice.as_dict(), "path": self.path,
                                      "reason": f"{choice.reason} (at the {self.path} path's "
                                                f"rates)"}  # fmt: skip
        self.record.data["config"].update(
            params=dict(self.params),
            train=asdict(self.setup.train),
            eval=asdict(self.setup.eval),
            detector=asdict(self.setup.detector),
            cnn={"none": asdict(self.cnn("none")), "normed": asdict(self.cnn("normed"))},
        )

    def cnn(self, which: str):
        return self.setup.cnn("none") if which == "none" else self.setup.chapter_cnn

    def train(self, which: str) -> None:
        net, rec = training.train_stack(self.cnn(which), self.setup.train, list(self.params.seeds))
        self.nets[which], self.trained[which] = net, rec
        self.record.add_arrays(which, _loss_curve(rec.losses))
        self.record.data.setdefault("training", {})[which] = {
            "seconds": rec.seconds, "path": rec.path, "kept_steps": sorted(rec.checkpoints),
            "final_loss": rec.losses[-max(1, len(rec.losses) // 100):].mean(axis=0),
        }  # fmt: skip

    def evaluate(self, which: str) -> None:
        base = "normed" if which == "circular" else which
        net = self.nets[base]
        cfg = self.cnn(base)
        padding = "circular" if which == "circular" else "zeros"
        ev = replace(self.setup.eval, batch_eval=cfg.batch_eval, padding=padding)
        cnn.set_padding(net, padding)
        try:
            arrays = evaluation.evaluation_arrays(net, self.setup.seq_len, ev, True)
        finally:
            cnn.set_padding(net, "zeros")
        probe = detector.Moments.from_arrays(arrays, "probe")
        maps = detector.depth_maps(probe, self.setup.detector)
        self.record.add_arrays(which, {
            **{k: arrays[k] for k in ("out_mean", "out_std", "out_count")},
            "probe_maps": maps,
            "probe_distances": detector.distances(maps, self.setup.detector),
        })  # fmt: skip

    def curves(self) -> None:
        ev = replace(self.setup.eval, n_samples=self.setup.curve_samples, probe_batches=0)
        for which in ("none", "normed"):
            cfg, rec = self.cnn(which), self.trained[which]
            for step in sorted(rec.checkpoints):
                self._check_deadline("curves")  # the longest phase: stop inside it, not after
                states = rec.checkpoints[step]
                net = cnn.StackedCNN.from_model_states(cfg, list(self.params.seeds), states)
                self._curve_point(which, step, net.to(self.device), ev)
            self._curve_point(which, self.setup.train.steps, self.nets[which], ev)

    def _curve_point(self, which: str, step: int, net, ev) -> None:
        arrays = evaluation.evaluation_arrays(net, self.setup.seq_len, ev, False)
        keep = {k: arrays[k] for k in ("out_mean", "out_std", "out_count")}
        self.record.add_arrays(f"curve.{which}.{step}", keep)

    def checks(self) -> None:
        none, normed, L = self.nets["none"], self.nets["normed"], self.setup.seq_len
        radius = self.setup.radius
        shift = max(1, radius // 2)  # as equivariance.check
        cnn.set_padding(normed, "circular")
        try:
            cyclic = equivariance.cyclic_change(normed, L, shift=radius)
        finally:
            cnn.set_padding(normed, "zeros")
        self.record.data["checks"] = {
            "none": {"reach": equivariance.gradient_reach(none, L), "shift": shift,
                     "max_change": equivariance.shift_check(none, L, shift)},
            "circular": {"cyclic_shift": radius, "max_change": cyclic},
        }  # fmt: skip

    def summary(self) -> None:
        """Per-seed effects of every run (the book recomputes them from the moments)."""
        out = {}
        for which in RUNS:
            mom = detector.Moments.from_arrays(self.record.arrays, f"{which}.out")
            radius = self.cnn("none").receptive_radius
            per = detector.summarize(mom, radius, self.setup.detector)
            run = _Effects(mom, radius)
            out[which] = {
                "interior_slope": [s.effect_interior.slope for s in per],
                "r2_all": [s.effect_all.r2 for s in per],
                "first_hop_slope": bands.first_hop_slope(run),
                "beyond_hop_slope": bands.beyond_hop_slope(run),
                "frac_interior": [s.frac_interior for s in per],
                "distance": [s.distance for s in per],
            }
        self.record.data["effects"] = out

    # ------------------------------------------------------------------ bookkeeping

    def _check_deadline(self, name: str) -> None:
        if time.monotonic() > self.deadline:
            raise Deadline(name)

    def _phase(self, name: str, fn) -> None:
        self._check_deadline(name)
        t = time.monotonic()
        print(f"[paperscale] {name} ...", flush=True)
        fn()
        code = self.record.data["provenance"]["code"]
        code.update({k: v for k, v in module_hashes().items() if k not in code})  # newly loaded
        self.record.phase(name, time.monotonic() - t)
        print(f"[paperscale] {name}: {time.monotonic() - t:.1f} s "
              f"(at {time.monotonic() - self.t0:.0f} s of {self.deadline - self.t0:.0f})",
              flush=True)  # fmt: skip
        _stop_after(name)


def _stop_after(phase: str) -> None:
    """For tests: the signal :data:`STOP_AFTER` names (SIGKILL by default) sent to this process
    right after ``phase``'s record is written (``raise_signal``: delivered, and a Python
    handler run, before it returns)."""
    name, _, sig = os.environ.get(STOP_AFTER, "").partition(":")
    if name == phase:
        signal.raise_signal(signal.Signals[sig or "SIGKILL"])


class _Effects:
    """What :mod:`.bands` reads of a run: its moments and receptive radius."""

    def __init__(self, out, radius: int):
        self.out, self.radius = out, radius


def _loss_curve(losses: np.ndarray, points: int = 1000) -> dict:
    """The loss history as means over at most ``points`` equal blocks of steps (the record
    stays small; the figure draws a running mean anyway)."""
    steps = losses.shape[0]
    block = max(1, steps // points)
    n = steps // block * block
    means = losses[:n].reshape(-1, block, losses.shape[1]).mean(axis=1)
    return {"loss": means.astype(np.float32), "loss_steps": (np.arange(len(means)) + 1) * block}


def _overrides(params) -> dict:
    """The knobs of ``params`` that differ from its profile's values."""
    base = SPEC.resolve(params.profile)
    return {k: v for k, v in params.items() if k != "profile" and base[k] != v}


def _name(module) -> str:
    return module.__name__.removeprefix("normbook.")
