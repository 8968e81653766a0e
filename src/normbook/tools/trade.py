"""The `cpu` book's trade for its 60-minute ceiling, measured: what each cut saved and which
rows it touched, from the cold builds before and after it.

    python -m normbook.tools.trade --before-rev 21f676d --before-cache OLD_CACHE
        --before-timings OLD_BUILD/timings.json [--profile cpu] [--out results/cpu/trade.json]

The builds measure what a cut saved: the seconds that the cache entries of each cut's
computations recorded (an analysis's own seconds; a stacked training's wall-clock, shared
among its models, with another chapter running beside it), summed over the entries of the
cache before and after, and each build's wall-clock and CPU seconds. The rows each cut touches
come from the reference ledger before (``git show REV:results/<profile>/ledger.json``) and the
committed one. Run it after `make reference`; the *Build and compute* page reads the record.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from normbook.publish import chapters, project
from normbook.publish.project import write_atomic
from normbook.runtime import cache, devices


@dataclass(frozen=True)
class Cut:
    """One cut: the parameter values before and now, the cache entries of what it changed
    (``kinds`` filtered by ``before`` and ``after`` on an entry's config), the rows it
    touches."""

    name: str
    chapter: str
    params: dict  # parameter: its value at the profile before the cut
    kinds: tuple[str, ...]
    before: Callable[[dict], bool]  # an entry of the computation the cut changed, before
    after: Callable[[dict], bool]  # ... and what replaced it (nothing: lambda c: False)
    rows: tuple[str, ...]
    why: str
    answers: str = ""  # what the cut costs in answers, in words
    trade: bool = True  # False: a speed-up that changes no number
    extra: dict = field(default_factory=dict)


def _analysis(c: dict) -> dict:
    a = c.get("analysis", {})
    return a.get("clusters", a) if "clusters" in a else a


SPARSITY_ROWS = ("b2_less_sparse_mnist", "b2_more_sparse_cifar10",
                 "b4_less_sparse_every_threshold_mnist", "b4_more_sparse_every_threshold_cifar10",
                 "b4_heldout_less_sparse_mnist", "b4_heldout_more_sparse_cifar10",
                 "b4_matched_more_sparse_cifar10", "b4_bn_itself_sparsity_cifar10",
                 "b4_lr_confound_sparsity")  # fmt: skip
CLUSTER_ROWS = ("b3_purer_classes_mnist", "b3_purer_classes_cifar10", "b3_k_star_earlier",
                "b3_lower_dbi_k_star_cifar10", "b3_higher_dbi_k_star_mnist",
                "b3_purer_at_fixed_k", "b4_bn_itself_class_dbi_cifar10",
                "b4_bn_itself_dbi_k_star_cifar10", "b4_lr_confound_class_dbi",
                "b4_lr_confound_dbi_k_star", "b4_purer_class_sil_mnist",
                "b4_purer_kmeans_sil_mnist", "b4_purer_class_sil_cifar10",
                "b4_purer_kmeans_sil_cifar10", "b4_heldout_purer_classes_mnist",
                "b4_heldout_purer_classes_cifar10", "b4_matched_purer_classes_cifar10")  # fmt: skip

CUTS = [
    Cut("A5's length axis", "a5_reach",
        {"reach_lens": [75, 100, 125], "reach_len_steps": [5000, 7000, 9000]},
        ("a_train", "a_eval"),
        before=lambda c: c.get("train", {}).get("seq_len") in (100, 125),
        after=lambda c: False,
        rows=("a5_falls_with_length", "a5_law_slope", "a5_law_flags"),
        why="two lengths beyond the base family's (three networks each, 7,000 and 9,000 steps)",
        answers="none graded before: the length row and the law's two predictions read "
        "'not shown at this budget'; at one length they are not testable at `cpu`"),
    Cut("A4's centre head", "a4_stress", {"rf_pack_heads": ["pool", "centre"]},
        ("a_pack_train", "a_pack_eval"),
        before=lambda c: c.get("net", {}).get("head") == "centre",
        after=lambda c: False,
        rows=("a4_packnorm_overlap_centre",),
        why="45 PackNorm networks of kernel 1 with the centre head, and their test",
        answers="none graded before: its models did not all learn the task at full overlap, "
        "and its own test sat on neither side of the band's edge"),
    Cut("A3's BatchNorm at evaluation batch 32", "a3_which_norms",
        {"bn_eval_batch_sizes": [8, 32, 128]}, ("a_batchstats",),
        before=lambda c: c.get("batch_size") == 32 and c.get("mode") == "minibatch",
        after=lambda c: False,
        rows=("a3_batch_size_fades",),
        why="BatchNorm's networks evaluated with minibatch statistics at batch 32",
        answers="none graded before: the row was moot (its premise refuted)"),
    Cut("paper B's kept states on 250 images", "b4_stress", {"curve_images": 500},
        ("b_clusters", "b_sparsity", "b_silhouette"),
        before=lambda c: _analysis(c).get("n_images") == 500,
        after=lambda c: _analysis(c).get("n_images") == 250,
        rows=("b3_k_star_earlier", "b4_bn_itself_settle_cifar10", "b4_lr_confound_settle"),
        why="sparsity and k-means sweeps at the two kept states of every network",
        answers="none graded before: the rows that read the kept states were not shown"),
    Cut("PackNorm's test pairs in slices", "a2_mechanism", {}, ("a_pack_eval",),
        before=lambda c: c.get("net", {}).get("head") == "pool",
        after=lambda c: c.get("net", {}).get("head") == "pool",
        rows=(), trade=False,
        why="each draw of 1,024 test pairs passed in slices of 1,536 rows (pairs x models): "
        "the same bits",
        answers="none: the same counts"),
    Cut("paper B's sparsity on 2,000 images", "b4_stress", {"sparsity_images": 5000},
        ("b_sparsity", "b_threshold"),
        before=lambda c: _analysis(c).get("n_images") == 5000,
        after=lambda c: _analysis(c).get("n_images") == 2000,
        rows=SPARSITY_ROWS,
        why="sparsity and threshold sweeps of every network (training and held-out images)",
        answers="see the rows: a network's sparsity is a mean over images, and the rows test "
        "its spread between seeds"),
    Cut("paper B's clusters on 1,000 images", "b4_stress", {"cluster_images": 2000},
        ("b_clusters", "b_silhouette"),
        before=lambda c: _analysis(c).get("n_images") == 2000,
        after=lambda c: _analysis(c).get("n_images") == 1000,
        rows=CLUSTER_ROWS,
        why="class DBI and k-means sweeps (k = 2-20) of every network, and the silhouettes",
        answers="see the rows"),
    Cut("A5's 16-layer family", "a5_reach", {"reach_mix": [0, 1, 3]}, ("a_train", "a_eval"),
        before=lambda c: c.get("cnn", {}).get("mix") == 3, after=lambda c: False,
        rows=("a5_norm_layers",),
        why="three models with 16 normalization layers (three kernel-1 blocks per block) and "
        "their evaluations",
        answers="the layer axis keeps two levels, 4 and 8 normalization layers: its rank "
        "correlation rests on fewer models and two ranks"),
]  # fmt: skip


def entry_seconds(path: Path) -> float:
    """What one cache entry recorded of its computation's seconds: an analysis's or a stacked
    training's ``seconds`` array (summed), a paper B network's ``train_seconds``, else the
    step's ``compute_seconds``."""
    meta = json.loads((path / "meta.json").read_text())
    arrays = path / "arrays.npz"
    if arrays.exists():
        with np.load(arrays, allow_pickle=False) as z:
            if "seconds" in z.files:
                return float(np.sum(z["seconds"]))
    return float(meta.get("train_seconds") or meta.get("compute_seconds", 0.0))


def cost(root: Path, kinds, pick) -> dict:
    """Entries of ``kinds`` under cache ``root`` whose config ``pick`` selects: how many, and
    their seconds."""
    n, secs = 0, 0.0
    for kind in kinds:
        for d in sorted((root / kind).glob("*/")):
            meta = json.loads((d / "meta.json").read_text())
            if pick(meta.get("config", {})):
                n, secs = n + 1, secs + entry_seconds(d)
    return {"entries": n, "seconds": round(secs, 1)}


def ledger_rows(text: str) -> dict:
    return {r["key"]: r for r in json.loads(text)["claims"]}


def row_view(r: dict | None) -> dict | None:
    if r is None:
        return None
    keep = ("verdict", "effect", "low", "high", "sesoi", "n", "near_line")
    return {k: r.get(k) for k in keep}


def cold_build(timings: Path) -> dict:
    b = json.loads(timings.read_text()).get("builds", {}).get("cold", {})
    return {k: b[k] for k in ("seconds", "cpu_s", "computed", "cpu", "measured") if k in b}


def check_profile(profile: str) -> None:
    """Every cut's parameters must have left their before-values at ``profile`` (a stale
    record is refused)."""
    for cut in CUTS:
        spec = chapters.SPECS[cut.chapter]
        now = spec.resolve(profile)
        for p, old in cut.params.items():
            if now[p] == old:
                raise SystemExit(f"error: {cut.chapter}'s {p} is still {old} at {profile}")


def measure(
    profile: str, rev: str, before_cache: Path, before_timings: Path, after_note: str = ""
) -> dict:
    check_profile(profile)
    show = ["git", "show", f"{rev}:results/{profile}/ledger.json"]
    old = subprocess.run(show, cwd=project.ROOT, capture_output=True, text=True, check=True).stdout
    before_rows = ledger_rows(old)
    after_rows = ledger_rows((project.ROOT / "results" / profile / "ledger.json").read_text())
    now_cache = cache.cache_root()
    cuts = []
    for cut in CUTS:
        spec = chapters.SPECS[cut.chapter]
        cuts.append({
            "name": cut.name, "chapter": cut.chapter, "trade": cut.trade, "why": cut.why,
            "answers": cut.answers,
            "params": {p: {"before": v, "now": spec.resolve(profile)[p],
                           "paper": spec.resolve("paper")[p]} for p, v in cut.params.items()},
            "before": cost(before_cache, cut.kinds, cut.before),
            "after": cost(now_cache, cut.kinds, cut.after),
            "rows": {k: {"before": row_view(before_rows.get(k)),
                         "after": row_view(after_rows.get(k))}
                     for k in cut.rows},
        })  # fmt: skip
    return dict(
        format=1, profile=profile, ceiling_min=60,
        commit=devices.git_commit(), measured=datetime.now(UTC).isoformat(timespec="seconds"),
        machine=devices.provenance(), reference_before=rev,
        builds={"before": cold_build(before_timings),
                "after": {**cold_build(project.build_dir(profile) / "timings.json"),
                          **({"note": after_note} if after_note else {})}},
        cuts=cuts,
    )  # fmt: skip


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--before-rev", required=True, help="a commit with the reference before")
    ap.add_argument("--before-cache", type=Path, required=True)
    ap.add_argument("--before-timings", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument(
        "--after-note",
        default="",
        help="how the build after differs from the "
        "committed profile, where it does (shown beside its time)",
    )
    a = ap.parse_args(argv)
    for p in (a.before_cache, a.before_timings):
        if not p.exists():
            raise SystemExit(f"error: {p} does not exist")
    record = measure(a.profile, a.before_rev, a.before_cache, a.before_timings, a.after_note)
    out = a.out or project.ROOT / "results" / a.profile / "trade.json"
    write_atomic(out, json.dumps(record, indent=1) + "\n")
    for c in record["cuts"]:
        b, n = c["before"], c["after"]
        print(f"[trade] {c['name']}: {b['seconds']:,.0f} s in {b['entries']} entries before, "
              f"{n['seconds']:,.0f} s in {n['entries']} now")  # fmt: skip
    print(f"[trade] wrote {out}")


if __name__ == "__main__":
    main()
