"""Chapter A1 at the paper's scale, read from a recorded run (``results/paper/a1.json``, written
by :mod:`normbook.tools.paperscale` on a GPU): the runs, the compute-to-effect curve and the checks
that chapter A1 builds from its cache, rebuilt from the record's per-index moments and graded
by the same rules (:func:`.a1_localization.claims.a1_ledger`), SESOIs and positive controls. A
build never runs the runner; without a record the chapter says what is missing and how to make
it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from scipy import stats as sps

from normbook.grading.claims import CLAIM_CONFIDENCE, t_interval
from normbook.pages.fmt import bracket, table
from normbook.paper_a.a1_localization.claims import a1_ledger
from normbook.paper_a.cached.cnn import CNNConfig
from normbook.paper_a.measures import bands
from normbook.paper_a.measures.detector import DetectorConfig, Moments, boundary_distance, summarize
from normbook.paper_a.measures.equivariance import Equivariance
from normbook.paper_a.runs import reach
from normbook.paper_a.runs.localization import Curve, SummarizedRun
from normbook.runtime.cache import REPO_ROOT
from normbook.runtime.records import Loaded, load

SCALE = "paper scale (recorded run)"  # how the ledger marks these rows
CLAIM_PREFIX = "At the paper's scale (recorded run): "
# The one command that makes the record, on a machine with a GPU (the runner needs only
# Python with torch, numpy and scipy: no environment, no network). The bare one writes to $OUT
# (the folder that comes back from the GPU machine), whence a1.json and a1.npz are copied into
# results/paper/; results/paper/COMMIT (make paper-commit) names the commit the tree is.
COMMAND = "make paper-run"
BARE_COMMAND = (
    "PYTHONUNBUFFERED=1 PYTHONPATH=src timeout 580 python3 -m normbook.tools.paperscale a1"
    ' --out "$OUT" --deadline 540 --device cuda --commit "$(cat results/paper/COMMIT)"'
)


@dataclass
class RecordedRun(SummarizedRun):
    """One run of the record, with what chapter A1's figures, tables and rules read."""

    cnn: CNNConfig
    seeds: list[int]
    out: Moments
    per_seed: list
    loss: np.ndarray | None = None  # block means of the loss, (points, M)
    depth_maps: np.ndarray | None = None
    probe_distances: np.ndarray | None = None
    padding: str = "zeros"
    probe: Moments | None = None  # the record keeps the probe maps, not their moments


@dataclass
class Recorded:
    """A1's record, rebuilt: the runs, curves and checks the chapter's rules take."""

    loaded: Loaded
    no_norm: RecordedRun | None
    with_norm: RecordedRun | None
    circular: RecordedRun | None
    curves: list[Curve] = field(default_factory=list)
    eq_no_norm: Equivariance | None = None
    cyclic: np.ndarray | None = None

    @property
    def data(self) -> dict:
        return self.loaded.data

    @property
    def gradable(self) -> bool:
        """Every run and check the rules need is in the record (the curves come last: a run
        stopped during them is graded without, :func:`ledger`)."""
        return None not in (self.no_norm, self.with_norm, self.circular, self.eq_no_norm)

    @property
    def runs(self) -> list[RecordedRun]:
        return [r for r in (self.no_norm, self.with_norm, self.circular) if r is not None]


def _cnn(cfg: dict) -> CNNConfig:
    return CNNConfig(**cfg)


def _run(loaded: Loaded, which: str, cfg: CNNConfig, det: DetectorConfig, seeds, loss_of: str,
         padding: str = "zeros") -> RecordedRun | None:  # fmt: skip
    a = loaded.group(which)
    if "out_mean" not in a:
        return None
    out = Moments(a["out_mean"], a["out_std"], a["out_count"])
    loss = loaded.group(loss_of).get("loss")
    return RecordedRun(cfg, list(seeds), out, summarize(out, cfg.receptive_radius, det), loss,
                       a.get("probe_maps"), a.get("probe_distances"), padding)  # fmt: skip


def _curve(loaded: Loaded, which: str, cfg: CNNConfig, det, seeds, total: int) -> Curve | None:
    steps = sorted({int(k.split(".")[2]) for k in loaded.arrays if k.startswith(f"curve.{which}.")})
    if total not in steps:
        return None
    runs = [_run(loaded, f"curve.{which}.{s}", cfg, det, seeds, which) for s in steps]
    return Curve(cnn=cfg, steps=np.array(steps), total=total, runs=runs)


def rebuild(loaded: Loaded) -> Recorded:
    """The runs, curves and checks of a loaded record (those it has: a stopped run lacks some)."""
    cfg = loaded.data["config"]
    if "cnn" not in cfg:  # stopped before its budget was chosen
        return Recorded(loaded, None, None, None)
    det, seeds = DetectorConfig(**cfg["detector"]), cfg["params"]["seeds"]
    none_cfg, normed_cfg = _cnn(cfg["cnn"]["none"]), _cnn(cfg["cnn"]["normed"])
    total = cfg["train"]["steps"]
    rec = Recorded(
        loaded,
        _run(loaded, "none", none_cfg, det, seeds, "none"),
        _run(loaded, "normed", normed_cfg, det, seeds, "normed"),
        _run(loaded, "circular", normed_cfg, det, seeds, "normed", padding="circular"),
    )
    curves = [_curve(loaded, w, c, det, seeds, total)
              for w, c in (("none", none_cfg), ("normed", normed_cfg))]  # fmt: skip
    rec.curves = curves if None not in curves else []
    checks = loaded.data.get("checks")
    if checks:
        c = checks["none"]
        rec.eq_no_norm = Equivariance(
            none_cfg.label, list(seeds), none_cfg.receptive_radius,
            np.asarray(c["reach"]), c["shift"], np.asarray(c["max_change"], dtype=float),
        )  # fmt: skip
        rec.cyclic = np.asarray(checks["circular"]["max_change"], dtype=float)
    return rec


def read(path) -> Recorded | None:
    """The record at ``path`` rebuilt, or None where there is none (a
    :class:`normbook.runtime.records.RecordError` where it cannot be used)."""
    path = _path(path)
    return rebuild(load(path)) if path.exists() else None


def paper_scale_key(key: str) -> str:
    """The key of chapter A1's claim ``key`` graded on the record (``a1_paper_side_channel``)."""
    return key.replace("a1_", "a1_paper_", 1)


def ledger(rec: Recorded) -> tuple[list, list]:
    """Chapter A1's claims and checks on the record, by :func:`.a1_localization.claims.a1_ledger`,
    each claim marked as paper scale (its key ``a1_paper_...``, apart from the chapter's own)."""
    curve = rec.curves[1] if rec.curves else _trained_only(rec)
    claims, checks = a1_ledger(rec.no_norm, rec.with_norm, rec.circular, rec.eq_no_norm, rec.cyclic,
                               curve)  # fmt: skip
    claims = [replace(v, claim=CLAIM_PREFIX + v.claim, key=paper_scale_key(v.key))
              for v in claims]  # fmt: skip
    checks = [replace(c, check=CLAIM_PREFIX + c.check) for c in checks]
    return claims, checks


def _trained_only(rec: Recorded) -> Curve:
    """The normalized networks' curve of a record stopped before its curves: the trained state
    alone, so no state is kept by half the budget and no claim can be refuted as settled."""
    run, total = rec.with_norm, rec.data["config"]["train"]["steps"]
    return Curve(cnn=run.cnn, steps=np.array([total]), total=total, runs=[run])


# ----------------------------------------------------------------------------- what a page shows


def _path(path) -> Path:
    p = Path(path)
    return p if p.is_absolute() else REPO_ROOT / p


def missing_md(path) -> str:
    """What a page says where there is no record: what is missing, and the command."""
    return (
        f":::{{admonition}} No recorded paper-scale run yet\n:class: warning\n\n"
        f"There is no record at `{path}`: chapter A1's experiment has not been run at the "
        f"paper's scale, so this section grades nothing. On a machine with a GPU, "
        f"`{COMMAND}` makes it (about nine minutes on one H200; a machine with only Python, "
        f"torch, numpy and scipy runs `{BARE_COMMAND}`, whose `$OUT/a1.json` and "
        f"`$OUT/a1.npz` are then copied into `results/paper/`). Commit the `.json` and `.npz`; "
        f"the next build reads them.\n:::"
    )


def status_md(rec: Recorded | None, path) -> str:
    """The record's provenance as an admonition (device, versions, precision, the ladder's
    choice, rates, and whether it was made with earlier code), or :func:`missing_md`."""
    if rec is None:
        return missing_md(path)
    d, prov = rec.data, rec.data["provenance"]
    dev = prov["device"]
    where = dev["name"] + (
        f" (compute capability {dev['capability']}, driver {dev['driver']}, CUDA {dev['cuda']},"
        f" cuDNN {dev['cudnn']})" if dev["type"] == "cuda" else " (CPU)"
    )  # fmt: skip
    lines = [
        f"- run `{d['command']}` on {prov['date']}, commit `{prov['commit']}`, status "
        f"**{d['status']}** (phases done: {', '.join(p['name'] for p in d['phases'])})",
        f"- device: {where}; torch {prov['versions']['torch']}, Python "
        f"{prov['versions']['python']}",
        "- precision: " + ", ".join(f"{k} {v}" for k, v in prov["precision"].items()),
    ]
    if "ladder" in d:
        q = d["ladder"]["params"]
        lines.append(
            f"- budget (the ladder's rung {d['ladder']['index'] + 1} of "
            f"{len(d['ladder']['ladder'])}, chosen before any result): {len(q['seeds'])} seeds, "
            f"{q['steps']:,} steps, {q['n_eval']:,} predictions per index, "
            f"{q['curve_eval']:,} per curve point; {d['ladder']['reason']}"
        )
    if "rates" in d:
        lines.append("- rates: " + rates_text(d["rates"]))
    stale = rec.loaded.stale_modules()
    if stale:
        lines.append(
            "- **recorded with earlier code**: the source of "
            + ", ".join(f"`{m}`" for m in stale)
            + " differs from this checkout's; its numbers are those of that code"
        )
    kind = "warning" if stale or not rec.loaded.complete else "note"
    return f":::{{admonition}} The recorded run\n:class: {kind}\n\n" + "\n".join(lines) + "\n:::"


def rates_text(r: dict) -> str:
    """Training rates of the run's two paths, as one line."""
    parts = [
        f"{k}: {v['ms_per_step']:.3g} ms per step, {v['tflops']:.3g} TFLOP/s "
        f"({v['share_of_fp32_peak']:.0%} of the measured fp32 matmul peak)"
        for k, v in r["train"].items()
    ]
    reached = "reached" if r["speedup_ok"] else "not reached"
    return "; ".join(parts) + (f"; the fast path is {r['speedup']:.2f} times eager fp32 (target "
                               f"{r['speedup_target']:g} times: {reached})")  # fmt: skip


def draw(rec: Recorded | None, fn):
    """``fn(runs)`` of the record's three runs, or a note saying why nothing is drawn."""
    if rec is None or rec.no_norm is None or rec.with_norm is None or rec.circular is None:
        return "*Not drawn: no recorded run has evaluated these networks (see above).*"
    return fn(rec.runs)


def plain_words(rec: Recorded | None, claims: list) -> str:
    """One sentence on what the record decides."""
    if rec is None:
        return "no record yet, so the paper's own network is not graded in this build"
    if not claims:
        return (f"the record stopped before it could be graded (status: "
                f"{rec.data['status']})")  # fmt: skip
    names = ("the side channel", "the whole sequence", "the inward spread")
    return "; ".join(f"{n}: {v.verdict}" for n, v in zip(names, claims))


def ungraded(rec: Recorded | None) -> tuple[list, list]:
    """The record's claims and checks, or none when it cannot be graded."""
    return ledger(rec) if rec is not None and rec.gradable else ([], [])


# ----------------------------------------------------------------------------- chapter A5's law


def measured_beyond(rec: Recorded, beyond_to: float) -> dict[str, np.ndarray]:
    """Per seed of the record's normalized networks, what chapter A5's law predicts: the slope
    over [3R, ``beyond_to`` R) (the study's band, in units of R, clipped at the middle), the
    share of the first band's slope ([R, 3R)) it keeps, and the fraction of the indices beyond
    3R that the localization test flags (at the record's predictions per index)."""
    run = rec.with_norm
    R, half = run.radius, (run.seq_len - 1) // 2
    hi = min(round(beyond_to * R), half)
    slope, _ = bands.band_slope(run, np.array([R, 3 * R]), np.array([3 * R, hi]))  # (M, 2)
    first, beyond = slope[:, 0], slope[:, 1]
    far = boundary_distance(run.seq_len) >= 3 * R
    flagged = np.array([s.localized[far].mean() for s in run.per_seed])
    return {"beyond": beyond, "share": beyond / first, "flagged": flagged}


def versus_law(rec: Recorded, study, share_law, beyond_law) -> list[dict]:
    """Chapter A5's law held against the record: each predicted quantity at the record's
    network (normalization layers, l) with the interval of the fitted mean, beside what the
    record measured (seed mean with its t interval), and whether the mean lies inside."""
    m = measured_beyond(rec, study.reaches[0].beyond_to)
    n_layers, seq_len, n = (
        rec.with_norm.cnn.norm_layers,
        rec.with_norm.seq_len,
        rec.with_norm.n_per_index,
    )
    sigma = reach.prediction_sigma(study.runs[study.base])
    alpha = rec.data["config"]["detector"]["alpha"]
    est, se = beyond_law.predict(n_layers, seq_len)
    q = float(sps.t.ppf(0.5 + CLAIM_CONFIDENCE / 2, max(beyond_law.dof, 1)))
    logs = (est, est - q * se, est + q * se)
    flags = lambda x: float(reach.flag_rate(2.0**x, seq_len, sigma, n, alpha))
    rows = [
        ("share of the first band's slope kept beyond one hop",
         share_law.share(n_layers, seq_len, CLAIM_CONFIDENCE), m["share"], ".3g"),
        ("slope beyond one hop", tuple(2.0**x for x in logs), m["beyond"], ".3g"),
        (f"fraction of the indices beyond 3R flagged at {n:,} predictions per index",
         tuple(flags(x) for x in logs), m["flagged"], ".1%"),
    ]  # fmt: skip
    return [_versus(*row) for row in rows]


def _versus(what: str, predicted, measured, spec: str) -> dict:
    est, lo, hi = predicted
    mean = float(np.mean(measured))
    m_lo, m_hi = t_interval(measured)
    if not np.isfinite([est, lo, hi]).all():
        where = "no prediction: the law could not be fitted"
    else:
        where = "inside" if lo <= mean <= hi else ("above" if mean > hi else "below")
    return {
        "quantity": what,
        f"law's prediction [{CLAIM_CONFIDENCE:.0%} CI]": bracket(est, lo, hi, spec),
        f"measured, seed mean [{CLAIM_CONFIDENCE:.0%} CI]": bracket(mean, m_lo, m_hi, spec),
        "the measured mean lies": where,
    }


def versus_md(rec: Recorded | None, study, share_law, beyond_law, path) -> str:
    """The law against the record as a table and a sentence, or what is missing."""
    if rec is None or rec.with_norm is None:
        return missing_md(path) if rec is None else (
            f"*The recorded run stopped before its networks were evaluated (status: "
            f"{rec.data['status']}).*")  # fmt: skip
    rows = versus_law(rec, study, share_law, beyond_law)
    n, L = rec.with_norm.cnn.norm_layers, rec.with_norm.seq_len
    said = "; ".join(f"{r['quantity']}: {r['the measured mean lies']}" for r in rows)
    return (
        f"{table(rows)}\n\nAgainst the recorded network ({n} normalization layers, l = {L}), "
        f"the measured seed mean lies, relative to the interval of the law's prediction: "
        f"{said}."
    )
