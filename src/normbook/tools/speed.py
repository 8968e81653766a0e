"""Where paper B's training time goes, and what each candidate speed-up buys, on one thread
(as the book trains) of this machine.

    python -m normbook.tools.speed [--profile cpu] [--rounds 3] [--out results/cpu/speed.json]

1. **Profile** (``torch.profiler``): one epoch of chapter B1's CIFAR-10 BN network, its
   training loop as :func:`normbook.paper_b.cached.training.train_one` runs it (the same
   model, optimizer, minibatches and evaluations), each phase labelled with
   ``record_function``: data (indexing a minibatch, channels-last), forward, backward,
   optimizer, evaluation (the epoch's validation passes); and one network's two analyses as the
   book runs them (:mod:`normbook.paper_b.cached.analysis`: sparsity, and the
   clusters with the k-means sweep).
2. **Ratios**, each against today's step in the same run (interleaved rounds, best of each):
   the memory order (NCHW instead of channels-last), the optimizer (the default Adam's loop
   over parameters instead of the fused kernel), the batch size (128, the paper
   profile's), ``torch.compile``, several seeds as one network (``torch.func.vmap`` over
   stacked weights, as paper A's stacked training does with grouped convolutions), and the
   evaluation's batch (1,000 instead of 250). Each is milliseconds per training image.

Writes every number with the CPU model, versions and commit (the *Build and compute* page reads
the committed record, labelled as recorded).
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from datetime import UTC, datetime
from pathlib import Path

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function

from normbook.paper_b.b4_stress.spec import B4
from normbook.paper_b.cached import analysis, training
from normbook.paper_b.runs import classify
from normbook.publish.project import write_atomic
from normbook.runtime import devices, seeding
from normbook.runtime.workers import single_thread
from normbook.tools.benchmark import kernel_peak

PHASES = ("setup", "data", "forward", "backward", "optimizer", "evaluation")


def _setup(profile: str):
    params = B4.resolve(profile)  # B1's training knobs and the analyses' (B2, B3)
    setup = classify.Setup.from_params(params)
    cfg = setup.configs["cifar10", True]
    splits = classify.load_data(setup)["cifar10"].of(cfg)
    return params, cfg, splits


def one_epoch(cfg, splits, seed: int = 100, wall: dict | None = None):
    """One epoch of :func:`.training.train_one`'s loop, each phase in a ``record_function``
    block whose wall seconds also add up in ``wall``; returns the trained model."""
    wall = {} if wall is None else wall

    def phase(name):
        return Timed(name, wall)

    with phase("setup"):  # once per network: images to tensors, the model, its optimizer
        x_tr, y_tr = splits.tensors("train")
        x_va, y_va = splits.tensors("val")
        model = cfg.build(seed).to(memory_format=torch.channels_last)
        model.train()
        opt = training.optimizer(cfg, model.parameters())  # the book's (fused)
    gen = seeding.generator(seed, "order")
    n, bs = len(x_tr), cfg.batch_size
    per_epoch = n // bs
    k = max(1, min(cfg.evals_per_epoch, per_epoch))  # as train_one spaces its evaluations
    evals = {int(round(per_epoch * (j + 1) / k)) for j in range(k)}
    order = torch.randperm(n, generator=gen)

    for step in range(1, per_epoch + 1):
        with phase("data"):
            idx = order[(step - 1) * bs : step * bs]
            xb, yb = x_tr[idx].contiguous(memory_format=torch.channels_last), y_tr[idx]
        with phase("forward"):
            loss = nn.functional.cross_entropy(model(xb), yb)
        with phase("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with phase("optimizer"):
            opt.step()
        if step in evals:
            with phase("evaluation"):
                training.evaluate(model, x_va, y_va)
    return model


class Timed(record_function):
    """A ``record_function`` block that also adds its wall seconds to ``wall[name]``."""

    def __init__(self, name: str, wall: dict):
        super().__init__(name)
        self._wall, self._t0 = wall, 0.0

    def __enter__(self):
        self._t0 = time.perf_counter()
        return super().__enter__()

    def __exit__(self, *exc):
        out = super().__exit__(*exc)
        self._wall[self.name] = self._wall.get(self.name, 0.0) + time.perf_counter() - self._t0
        return out


def phase_profile(cfg, splits) -> dict:
    """Seconds per phase of one epoch (``torch.profiler``'s CPU time of each labelled block,
    and its wall time under the profiler), the profiler's top operators by self time, and the
    epoch's wall seconds."""
    t0, phase_wall = time.perf_counter(), {}
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        model = one_epoch(cfg, splits, wall=phase_wall)
    wall = time.perf_counter() - t0
    events = prof.key_averages()
    phases = {e.key: e.cpu_time_total / 1e6 for e in events if e.key in PHASES}
    ops = sorted((e for e in events if e.key not in PHASES), key=lambda e: -e.self_cpu_time_total)
    top = [{"op": e.key, "self_s": round(e.self_cpu_time_total / 1e6, 3), "calls": e.count}
           for e in ops[:10]]  # fmt: skip
    return {"wall_s": round(wall, 2), "phases_s": {k: round(v, 3) for k, v in phases.items()},
            "phases_wall_s": {k: round(v, 3) for k, v in phase_wall.items()},
            "top_ops": top, "model": model}  # fmt: skip


def analyses_seconds(params, cfg, model, splits) -> dict:
    """One network's two analyses as the book computes them (its images and configs, one
    thread: :func:`.analysis.sparsity_stats`, :func:`.analysis.cluster_stats`)."""
    model = model.eval()
    out = {}
    from threadpoolctl import threadpool_limits  # as the book's analyses run: one BLAS thread

    limit = threadpool_limits(1)
    for name, acfg in (("sparsity", analysis.SparsityConfig.from_params(params)),
                       ("clusters", analysis.ClusterConfig.from_params(params))):  # fmt: skip
        t0 = time.perf_counter()
        x, y = analysis.select_images(splits, acfg.split, acfg.n_images, acfg.image_seed)
        if name == "sparsity":
            analysis.sparsity_stats(model, x, acfg)
        else:
            analysis.cluster_stats(model, x, y, acfg, seed=acfg.image_seed)
        out[name] = round(time.perf_counter() - t0, 2)
    limit.restore_original_limits()
    return out


# ----------------------------------------------------------------------------- ratios


def _step_fn(model, opt, batch: int, channels_last: bool):
    x = torch.randn(batch, 3, 32, 32)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 10, (batch,))

    def step():
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def _variant(cfg, name: str):
    """(step function, images per step) of one candidate; today's minibatch is the config's."""
    model, bs = cfg.build(0), cfg.batch_size
    if name == "nchw":
        return _step_fn(model, training.optimizer(cfg, model.parameters()), bs, False), bs
    model = model.to(memory_format=torch.channels_last)
    if name == "today":
        return _step_fn(model, training.optimizer(cfg, model.parameters()), bs, True), bs
    if name == "unfused optimizer":  # the default Adam, a loop over parameters
        return _step_fn(model, torch.optim.Adam(model.parameters(), lr=cfg.lr), bs, True), bs
    if name == "batch 128":
        return _step_fn(model, training.optimizer(cfg, model.parameters()), 128, True), 128
    if name == "torch.compile":
        compiled = torch.compile(model)
        return _step_fn(compiled, training.optimizer(cfg, model.parameters()), bs, True), bs
    if name == "5 seeds stacked (vmap)":
        return _stacked_step(cfg, 5), 5 * bs
    raise ValueError(name)


def _stacked_step(cfg, n: int):
    """``n`` seeds' networks as one: their weights stacked, ``torch.func.vmap`` over them, each
    on its own minibatch. BatchNorm's running statistics are not tracked under vmap (timing
    only)."""
    models = [cfg.build(s).to(memory_format=torch.channels_last) for s in range(n)]
    for m in models:
        torch.func.replace_all_batch_norm_modules_(m)
    params, buffers = torch.func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    opt = training.optimizer(cfg, params.values())
    x = torch.randn(n, cfg.batch_size, 3, 32, 32)
    y = torch.randint(0, 10, (n, cfg.batch_size))

    def loss_of(p, b, xb, yb):
        return nn.functional.cross_entropy(torch.func.functional_call(base, (p, b), (xb,)), yb)

    batched = torch.func.vmap(loss_of)

    def step():
        loss = batched(params, buffers, x, y).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def _ms_per_image(step, images: int, reps: int) -> float:
    step()  # warm-up (and compilation)
    step()
    t0 = time.perf_counter()
    for _ in range(reps):
        step()
    return 1e3 * (time.perf_counter() - t0) / (reps * images)


def eval_ms_per_image(cfg, batch: int, reps: int = 3) -> float:
    model = cfg.build(0).to(memory_format=torch.channels_last).eval()
    x, y = torch.randn(2000, 3, 32, 32), torch.randint(0, 10, (2000,))
    training.evaluate(model, x[:batch], y[:batch], batch)
    t0 = time.perf_counter()
    for _ in range(reps):
        training.evaluate(model, x, y, batch)
    return 1e3 * (time.perf_counter() - t0) / (reps * len(x))


VARIANTS = (
    "today",
    "nchw",
    "unfused optimizer",
    "batch 128",
    "torch.compile",
    "5 seeds stacked (vmap)",
)


def ratios(cfg, rounds: int, images: int = 2048) -> dict:
    """Milliseconds per training image of each candidate, best of ``rounds`` interleaved
    rounds, and its speed against today's (above 1: faster)."""
    built = {v: _variant(cfg, v) for v in VARIANTS}
    best = {v: float("inf") for v in VARIANTS}
    ev = {250: float("inf"), 1000: float("inf")}
    for _ in range(rounds):
        for v, (step, per) in built.items():
            best[v] = min(best[v], _ms_per_image(step, per, max(2, images // per)))
        for b in ev:
            ev[b] = min(ev[b], eval_ms_per_image(cfg, b))
    out = {v: {"ms_per_image": round(ms, 4), "speed_vs_today": round(best["today"] / ms, 3)}
           for v, ms in best.items()}  # fmt: skip
    out["evaluation batch 1000"] = {"ms_per_image": round(ev[1000], 4),
                                    "speed_vs_today": round(ev[250] / ev[1000], 3),
                                    "today": "evaluation batch 250",
                                    "today_ms_per_image": round(ev[250], 4)}  # fmt: skip
    return out


def image_flops(cfg) -> float:
    """FLOPs of one training image (forward and backward) through the book's network."""
    from normbook.runtime import flops

    return flops.train_step_flops(cfg.build(0), torch.randn(1, 3, 32, 32))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="cpu", choices=("smoke", "cpu"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    out = a.out or Path("results") / a.profile / "speed.json"
    params, cfg, splits = _setup(a.profile)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    commit = devices.git_commit()  # read before the run: the code it ran
    with single_thread():
        prof = phase_profile(cfg, splits)
        model = prof.pop("model")
        an = analyses_seconds(params, cfg, model, splits)
        r = ratios(cfg, a.rounds)
        peak = kernel_peak()
    fl = image_flops(cfg) * cfg.batch_size
    today_gflops = fl / cfg.batch_size / (r["today"]["ms_per_image"] / 1e3) / 1e9
    record = dict(
        format=1, profile=a.profile, started=started, commit=commit,
        machine=devices.provenance(),
        network=f"chapter B1's CIFAR-10 VGG-16 with BN: width {cfg.width:g}, batch "
                f"{cfg.batch_size}, Adam lr {cfg.lr:g}, {cfg.n_train:,} training and "
                f"{cfg.n_val:,} validation images, {cfg.evals_per_epoch} evaluations per epoch",
        epoch=prof, analyses_s=an, ratios=r,
        peak_gflops=round(peak / 1e9, 2), step_gflop=round(fl / 1e9, 4),
        today_gflops=round(today_gflops, 2),
        today_share_of_peak=round(today_gflops * 1e9 / peak, 4),
    )  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, json.dumps(record, indent=1) + "\n")
    print(json.dumps({k: v for k, v in record.items() if k != "machine"}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
