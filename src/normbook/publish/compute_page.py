"""The appendix page *Build and compute*, generated from measured records whenever the site is
assembled (:func:`normbook.publish.site.assemble_site` writes it as ``book/build_and_compute.md``
into the site's source; no chapter executes it). Its numbers are read from files runs wrote,
never typed: ``_build/<profile>/timings.json`` (:mod:`.timings`: each page's last cold and last
cached execution, and the whole book's), ``_build/<profile>/benchmark.json`` (``make
benchmark``), the committed ``results/<profile>/*.json`` and the paper-scale records
``results/paper/*.json``. What is missing is said, with the command that measures it.
"""

from __future__ import annotations

import json

from normbook.book_pages import ledger as claims_ledger
from normbook.book_pages import reference
from normbook.book_pages.reference import machine_text
from normbook.grading.ledger import ledger_dir
from normbook.publish import compute_speed_a, project
from normbook.publish.timings import duration, load_builds, load_timings, machine
from normbook.runtime.records import RecordError, load

PAGE = "book/build_and_compute"  # its entry in _toc.yml; the site holds PAGE + ".md"
# As normbook.paper_a.recorded.BARE_COMMAND (tested): its record, written to $OUT, is copied
# into results/paper/.
BARE_COMMAND = (
    "PYTHONUNBUFFERED=1 PYTHONPATH=src timeout 580 python3 -m normbook.tools.paperscale a1"
    ' --out "$OUT" --deadline 540 --device cuda --commit "$(cat results/paper/COMMIT)"'
)
READER = "none: it reads the other pages' records"


def cell(text) -> str:
    """One table cell: pipes escaped, one line, at most 200 characters."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= 200 else text[:197] + "..."


def line(cells) -> str:
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def table(header: tuple, rows: list[tuple]) -> str:
    return "\n".join([line(header), "|" + "---|" * len(header), *map(line, rows)])


def seconds(s: float) -> str:
    return f"{s:,.1f} s" if s < 60 else f"{s:,.0f} s ({duration(s)})"


def day(run: dict) -> str:
    return str(run.get("measured", "?"))[:10]


def entries(n: int) -> str:
    return f"{n} cache {'entry' if n == 1 else 'entries'} computed"


def run_cell(run: dict | None, cold: bool) -> str:
    if not run:
        return "not measured here yet"
    computed = f", {entries(run.get('computed', 0))}" if cold else ""
    cpu = f", {run['cpu_s']:,.0f} CPU s" if "cpu_s" in run else ""
    return f"{seconds(run['seconds'])}{computed}{cpu} ({day(run)})"


def total(runs: list[dict], n: int) -> str:
    if not runs:
        return "-"
    return f"{seconds(sum(r['seconds'] for r in runs))} over {len(runs)} of {n} pages"


def pages_section(profile: str) -> tuple[str, list[str]]:
    """Each page's last cold and cached run, their sums, and what is missing."""
    timings, chs = load_timings(profile), project.chapters()
    rows, colds, cacheds, never, no_cold = [], [], [], [], []
    for ch in chs:
        runs = timings.get(ch.stem) or {}
        cold, cached, unknown = runs.get("cold"), runs.get("cached"), runs.get("unknown")
        name = f"{{doc}}`{ch.stem}`" if project.is_executed(ch, profile) else f"`{ch.stem}`"
        cold_text = run_cell(cold, True)
        if not runs:
            never.append(ch.stem)
        elif not cold and not (ledger_dir(profile) / f"{ch.stem}.json").exists():
            cold_text = READER  # writes no claims record: its runs count as cached (.timings)
        elif not cold:
            no_cold.append(ch.stem)
        colds += [cold] if cold else []
        cacheds += [cached] if cached else []
        cached_text = run_cell(cached, False)
        if unknown and not (cold and cached):
            cached_text += f"; a run of unrecorded kind: {run_cell(unknown, False)}"
        where = sorted({machine(r) for r in (cold, cached, unknown) if r}) or ["-"]
        rows.append((name, cold_text, cached_text, " and ".join(where)))
    rows.append(("**every page, summed**", total(colds, len(chs)), total(cacheds, len(chs)), ""))
    missing = [f"never executed here: {', '.join(never)} (`make book` executes them)"] * bool(never)
    if no_cold:
        missing.append(f"no cold run measured here: {', '.join(no_cold)} (every entry it needed "
                       f"was cached, computed earlier or by a chapter beside it; a build on an "
                       f"empty cache, `make clean-cache` then `make book`, measures one unless "
                       f"another chapter computes its entries first)")  # fmt: skip
    text = (
        "(compute-pages)=\n## Each page's execution\n\n"
        "A *cold* run computed cache entries (trained networks, evaluations, analyses); a "
        "*cached* run loaded every entry it needed. `make book` executes independent chapters "
        "side by side (three at a time on two cores or more), so each time was measured with "
        "another chapter beside it, and chapters share networks: one trains what the next "
        "loads. The sums are work, not the book's wall time, which follows. *CPU s*: the CPU "
        "seconds of the chapter's processes (its kernel and its workers), on every core: the "
        "work it cost, whatever ran beside it.\n\n"
    )
    return text + table(("page", "last cold run", "last cached run", "machine"), rows), missing


def book_section(profile: str) -> tuple[str, list[str]]:
    builds = load_builds(profile)
    text = (
        "(compute-book)=\n## The whole book\n\n"
        "The wall time of the last `make book` that executed every page, from the start of its "
        "first chapter to the end of its last (the HTML is rendered after).\n\n"
    )
    rows = []
    for kind, what in (("cold", "cold"), ("cached", "from the cache")):
        if b := builds.get(kind):
            label = what + (f", {entries(b.get('computed', 0))}" if kind == "cold" else "")
            label += f", {b['cpu_s']:,.0f} CPU s in its chapters" if "cpu_s" in b else ""
            rows.append((label, seconds(b["seconds"]), b.get("chapters", "?"), b.get("jobs", "?"),
                         machine(b), day(b)))  # fmt: skip
    header = ("build", "wall time", "pages", "chapters at a time", "machine", "date")
    text += table(header, rows) if rows else "No whole-book execution is recorded here yet."
    missing = [] if "cold" in builds else ["the whole book's cold execution: `make book` on an "
                                           "empty cache records it"]  # fmt: skip
    return text, missing


def load_benchmark(profile: str) -> dict | None:
    try:
        data = json.loads((project.build_dir(profile) / "benchmark.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "peak_gflops" in data else None


def benchmark_section(profile: str) -> tuple[str, list[str]]:
    text = "(compute-benchmark)=\n## Training throughput\n\n"
    b = load_benchmark(profile)
    if b is None:
        return text + "Not measured here yet.", [
            "the training throughput: `make benchmark` measures it"
        ]
    text += (f"`make benchmark` on {machine(b)}, {day(b)}, one thread (as training runs), each "
             f"speed the best of {b.get('rounds', '?')} interleaved rounds; "
             f"{cell(b.get('setup', ''))}.\n\n")  # fmt: skip
    # older records measured one matmul only, a peak a workload can exceed
    peak = b.get("peak", "fp32 matmul (n = 1024) only")
    rows = [(f"fp32 kernel peak ({peak})", f"{b['peak_gflops']:.1f} GFLOP/s"),
            ("stacked training (every seed in one network)",
             f"{b['stacked_steps_s']:.1f} steps/s, {b['stacked_share']:.0%} of the peak"),
            ("the same models one at a time",
             f"{b['naive_steps_s']:.1f} steps/s (stacked is {b['speedup']:.2f}x)"),
            ("page faults per stacked step", f"{b['faults_per_step']:.1f}")]  # fmt: skip
    if v := b.get("book_vgg"):
        rows.append((f"one training step of {v['geometry']}",
                     f"{v['seconds_per_step'] * 1e3:.1f} ms, {v['gflops']:.1f} GFLOP/s, "
                     f"{v['share']:.0%} of the peak"))  # fmt: skip
    rows += [(f"one training step at the paper's scale: {r['geometry']}",
              f"{r['seconds_per_step']:.2f} s, {r['gflops']:.1f} GFLOP/s, "
              f"{r['share']:.0%} of the peak") for r in b.get("paper") or []]  # fmt: skip
    return text + table(("measure", "value"), rows), []


def load_result(profile: str, name: str) -> dict | None:
    """A committed measurement record, ``results/<profile>/<name>.json``; None if absent."""
    try:
        data = json.loads((project.ROOT / "results" / profile / f"{name}.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# what the book does with each faster candidate, and why (a slower one: not taken, page says so)
WHY_NOT = {
    "today": "the book's loop: channels-last images and weights, a fused optimizer, one "
    "thread per network",
    "nchw": "channels-last stays",
    "unfused optimizer": "the fused optimizer stays",
    "batch 128": "not taken at `cpu`: with four times fewer Adam steps per epoch at the "
    "paper's learning rates, early stopping ends the networks sooner but less accurate "
    "(measured below)",
    "torch.compile": "not taken: it compiles every network shape in every worker process, "
    "needs a C++ compiler on the reader's machine, and changes the kernels' last bits",
    "5 seeds stacked (vmap)": "not taken: BatchNorm's running statistics do not update under "
    "vmap, and paper B's seeds stop at different epochs",
    "evaluation batch 1000": "not taken: the evaluation is a small share of an epoch",
}


def kept_text(name: str, speed: float) -> str:
    """What the book does with a candidate measured at ``speed`` x today's loop."""
    if name == "today":
        return WHY_NOT[name]
    if speed < 1:
        stays = name in ("nchw", "unfused optimizer")  # today's loop already has the faster way
        return "no: slower than today's loop" + (f" ({WHY_NOT[name]})" if stays else "")
    return WHY_NOT.get(name, "not taken")


def speed_section(profile: str) -> tuple[str, list[str]]:
    """Where one paper B network's and one paper A stack's time goes, the candidate speed-ups,
    and the epochs each network needs (the records of :mod:`normbook.tools.speed`, ``speed_a``
    and :mod:`normbook.tools.epochs_needed`)."""
    text = "(compute-speed)=\n## Where a network's time goes\n\n"
    sp = load_result(profile, "speed")
    gaps = []
    if sp is None:
        text += "Not recorded for this profile. "
        gaps.append(f"the training profile: `python -m normbook.tools.speed --profile {profile}`")
    else:
        mach = machine_text(sp["machine"])
        text += (f"Recorded by `python -m normbook.tools.speed` on {mach}, {sp['started'][:10]}, "
                 f"one thread, commit `{sp['commit'][:10]}`: {sp['network']}. One epoch "
                 f"profiled with `torch.profiler`, each phase's wall time under the profiler "
                 f"({sp['epoch']['wall_s']:.1f} s in all):\n\n")  # fmt: skip
        wall = sp["epoch"]["phases_wall_s"]
        total = sum(wall.values())
        rows = [(k, f"{v:.2f} s", f"{v / total:.0%}") for k, v in wall.items()]
        rows += [(f"analysis: {k} (one network, as the book runs it)", f"{v:.2f} s", "")
                 for k, v in sp["analyses_s"].items()]  # fmt: skip
        text += table(("phase", "seconds", "share of the epoch"), rows) + "\n\n"
        text += (f"The step runs at {sp['today_gflops']:.1f} GFLOP/s, "
                 f"{sp['today_share_of_peak']:.0%} of this thread's kernel peak "
                 f"({sp['peak_gflops']:.1f} GFLOP/s). Each candidate, milliseconds per "
                 "training image, against today's loop in the same run (best of interleaved "
                 "rounds):\n\n")  # fmt: skip
        rows = [(name, f"{r['ms_per_image']:.3f}", f"{r['speed_vs_today']:.2f}x",
                 kept_text(name, r["speed_vs_today"]))
                for name, r in sp["ratios"].items()]  # fmt: skip
        text += table(("candidate", "ms per image", "speed vs today", "kept?"), rows) + "\n\n"
    records = [r for r in (load_result(profile, f.stem) for f in sorted(
        (project.ROOT / "results" / profile).glob("epochs_needed*.json"))) if r]  # fmt: skip
    if not records:
        gaps.append("the epochs each network needs: `python -m normbook.tools.epochs_needed`")
    for ep in records:
        text += epochs_table(ep) + "\n\n"
    a_text, a_gaps = compute_speed_a.section(profile, load_result, table, machine_text)
    return text + a_text.rstrip() + "\n", gaps + a_gaps


def bundle_section(profile: str) -> tuple[str, list[str]]:
    """Where this build's networks came from when a bundle was imported (``make book
    BUNDLE=``, :mod:`.bundle`: its summary ``_build/<profile>/bundle.json``)."""
    text = "(compute-bundle)=\n## Networks from a bundle\n\n"
    try:
        b = json.loads((project.build_dir(profile) / "bundle.json").read_text())
    except (OSError, ValueError):
        return text + (
            "This build imported no bundle: it computed or loaded its own cache entries. "
            f"`make bundle PROFILE={profile}` packs them for another computer, and `make book "
            "BUNDLE=<file or URL>` imports such a bundle before building.\n"
        ), []
    machines = "; ".join(f"{m} ({n} entries)" for m, n in b["computed_on"].items())
    left = "; ".join(f"{n} of {what}" for what, n in b["left_out"].items()) or "none"
    text += (
        f"Before this build, `make book BUNDLE=` imported `{b['file']}` (SHA-256 "
        f"`{b['sha256'][:16]}…`, packed at commit `{b['commit'][:10]}`, {b['imported_at'][:10]}): "
        f"{b['imported']} of its {b['entries']} entries imported, {b['kept']} already here, "
        f"left out (this build computes them): {left}. Its entries were computed on: "
        f"{machines}.\n"
    )  # fmt: skip
    return text, []


def _value(v) -> str:
    if isinstance(v, list):
        return ", ".join(map(str, v))
    return f"{v:,}" if isinstance(v, int) else str(v)


def _row_cell(r: dict | None) -> str:
    """A ledger row's verdict, effect and interval (or "no row": not graded at this profile)."""
    if r is None:
        return "no row at this profile"
    lo, hi, eff = r.get("low"), r.get("high"), r.get("effect")
    iv = f" [{lo:.3g}, {hi:.3g}]" if lo is not None and hi is not None else ""
    return f"{r['verdict']}: {eff:.3g}{iv}" if eff is not None else r["verdict"]


def over_ceiling(after: dict, ceiling_min: float, cores: int = 2) -> str:
    """Over the ceiling or not, from the build's own numbers, and what fitting would take."""
    secs, cpu_s = after["seconds"], after.get("cpu_s")
    if secs <= 60 * ceiling_min or not cpu_s:
        return ""
    floor, need = cpu_s / cores, cpu_s * (1 - 60 * ceiling_min / secs)  # need: at its use
    return (
        f"**It is still over the ceiling**, by {(secs - 60 * ceiling_min) / 60:.1f} min. Its "
        f"chapters' {cpu_s:,.0f} CPU seconds need {floor / 60:.1f} min on {cores} cores even "
        f"fully used ({cpu_s / secs / cores:.0%} used here), so fitting it means about "
        f"{need:,.0f} CPU seconds less than this build spent. The book keeps its remaining "
        "families instead: each grades a claim or draws a figure, and answers come before "
        "minutes.\n\n"
    )


def trade_section(profile: str) -> tuple[str, list[str]]:
    """The profile's trade for its ceiling (the committed record of :mod:`normbook.tools.trade`):
    each cut, what its computations cost before and now, and the rows it touched."""
    tr = load_result(profile, "trade")
    text = "(compute-trade)=\n## The trade for the ceiling\n\n"
    if tr is None:
        return text + "No trade is recorded for this profile.\n", []
    b, a = tr["builds"]["before"], tr["builds"]["after"]

    def cpu(x: dict) -> str:
        return f", {x['cpu_s']:,.0f} CPU s in its chapters" if "cpu_s" in x else ""

    text += (
        f"The cold `{profile}` book has a ceiling of {tr['ceiling_min']} minutes on 2 cores. "
        f"With every paper B network trained until its stopping rule ends it, and the speed-ups "
        f"above kept, it took {seconds(b['seconds'])} in its chapters ({b.get('cpu', '?')}, "
        f"{day(b)}{cpu(b)}). These cuts bring it to {seconds(a['seconds'])} ({a.get('cpu', '?')}, "
        f"{day(a)}{cpu(a)}{'; ' + a['note'] if a.get('note') else ''}). Each is a parameter "
        "of its chapter: the `paper` profile keeps "
        "every one, and a reader puts one back at `cpu` by setting the parameter to its value "
        "before. The seconds are those the cut computations' cache entries recorded (an "
        "analysis's own; a stacked training's wall-clock, shared among its models), in the "
        f"cache of the build before and of this one; recorded by `python -m "
        f"normbook.tools.trade` on {machine_text(tr['machine'])}, {tr['measured'][:10]}, "
        f"commit `{tr['commit'][:10]}`, against the reference of `{tr['reference_before']}`."
        "\n\n"
    )  # fmt: skip
    text += over_ceiling(a, tr["ceiling_min"])
    rows = []
    for c in tr["cuts"]:
        params = (
            "; ".join(
                f"`{p}` {_value(v['before'])} → {_value(v['now'])} (`paper`: {_value(v['paper'])})"
                for p, v in c["params"].items()
            )
            or "-"
        )
        spent = (f"{c['before']['seconds']:,.0f} s in {c['before']['entries']} → "
                 f"{c['after']['seconds']:,.0f} s in {c['after']['entries']}")  # fmt: skip
        rows.append((f"{c['name']} ({c['chapter']}): {c['why']}", params, spent, c["answers"]))
    header = ("cut", "parameter: before → now", "recorded seconds in entries: before → now",
              "what it cost in answers")  # fmt: skip
    text += table(header, rows) + "\n\n"
    by_row: dict[str, tuple[list[str], dict]] = {}  # a row several cuts touch is listed once
    for c in tr["cuts"]:
        for k, v in c["rows"].items():
            by_row.setdefault(k, ([], v))[0].append(c["name"])
    touched = [(k, "; ".join(names), _row_cell(v["before"]), _row_cell(v["after"]))
               for k, (names, v) in by_row.items()]  # fmt: skip
    if touched:
        moved = sum((v["before"] or {}).get("verdict") != (v["after"] or {}).get("verdict")
                    for _, v in by_row.values())  # fmt: skip
        text += (f"The rows the cuts touch, in the reference before and now ({moved} of "
                 f"{len(touched)} with another verdict; every paper B network was retrained "
                 "alike, so a row's move mixes the cut with its retraining's last bits, and "
                 "the ones flagged near their line could move either way):\n\n")  # fmt: skip
        text += table(("row", "cut", "before", "now"), touched) + "\n"
    return text, []


def epochs_table(ep: dict) -> str:
    """One ``epochs_needed`` record: per network, when early stopping (or the cap) ended it."""
    batch = ep.get("batch_size")
    bs = f" and minibatches of {batch}" if batch else ""
    text = (f"**Epochs to finish{f', minibatches of {batch}' if batch else ''}.** "
            f"Recorded by `python -m normbook.tools.epochs_needed` on "
            f"{machine_text(ep['machine'])}, {ep['started'][:10]}: networks of chapter B4's "
            f"2 x 2 (B1's are its cells at the paper's rates) on seeds "
            f"{', '.join(map(str, ep['seeds']))}, which the book does not use, with the cap "
            f"raised to {ep['cap']} epochs{bs}:\n\n")  # fmt: skip
    rows = []
    for n in sorted(ep["networks"], key=lambda n: (n["dataset"], not n["batchnorm"], -n["lr"],
                                                     n["seed"])):  # fmt: skip
        rows.append((n["dataset"], "BN" if n["batchnorm"] else "no BN", f"{n['lr']:g}",
                     str(n["seed"]), f"{n['stopped_epoch']:g}", f"{n['best_epoch']:g}",
                     n["ended_by"], f"{n['test_acc']:.1%}" if "test_acc" in n else "",
                     f"{n['seconds']:.0f} s"))  # fmt: skip
    return text + table(("dataset", "variant", "lr", "seed", "stopped (epoch)", "kept (epoch)",
                         "ended by", "test accuracy", "training"), rows)  # fmt: skip


def paper_section() -> tuple[str, list[str]]:
    text = "(compute-paper)=\n## Paper-scale runs\n\n"
    files = sorted((project.ROOT / "results" / "paper").glob("*.json"))
    if not files:
        text += ("None is recorded yet. On a machine with a GPU, `make paper-run` runs chapter "
                 "A1's experiment at the paper's scale and writes its record to "
                 "`results/paper/` (with only Python, torch, numpy and scipy there: "
                 f"`{BARE_COMMAND}`, then copy `$OUT/a1.json` and `$OUT/a1.npz` into "
                 "`results/paper/`).")  # fmt: skip
        return text, ["a paper-scale run: `make paper-run` on a GPU records it"]
    rows = []
    for f in files:
        try:
            data = load(f).data
        except RecordError as exc:
            rows.append((f"`{f.name}`", f"unreadable: {exc}", "", "", "", ""))
            continue
        took = seconds(sum(p.get("seconds", 0) for p in data["phases"]))
        rung = (data.get("ladder") or {}).get("rung", {}).get("name", "not chosen yet")
        rows.append((f"`{f.name}`", data["status"], data["provenance"]["device"]["name"],
                     data["started"], f"{len(data['phases'])}, {took}", rung))  # fmt: skip
    return text + table(("record", "status", "device", "started", "phases", "budget"), rows), []


def reference_section(profile: str) -> tuple[str, list[str]]:
    """This build's ledger against the committed reference: both machines, the claims that
    agree, and per chapter whether it ran the reference's code and parameters."""
    text = "(compute-reference)=\n## Against the reference ledger\n\n"
    ref = reference.load(profile)
    if ref is None:
        return text + reference.sentence(None, profile), [
            f"a reference ledger for `{profile}`: `{reference.COMMAND}` writes it"]  # fmt: skip
    cmp = reference.compare(claims_ledger.records(profile), ref)
    text += reference.sentence(cmp, profile) + "\n\n"
    by_chapter = {}
    for c in ref["claims"]:
        by_chapter.setdefault(c["chapter"], []).append(c)
    differ = {d.ident for d in cmp.of("verdict")}
    rows = []
    for name, claims in by_chapter.items():
        mine = [c for c in claims if reference.claim_id(c) not in differ]
        state = cmp.chapters.get(name, "same code and parameters")
        compared = "-" if state in (reference.OTHER_PARAMS, reference.NOT_RUN) else (
            f"{len(mine)} of {len(claims)}")  # fmt: skip
        theirs = ref["chapters"][name]
        rows.append((f"{{doc}}`{name}`", state, compared, theirs["code"],
                     theirs.get("written", "?")))  # fmt: skip
    text += table(("chapter", "this build against the reference", "same verdict",
                   "reference's code hash", "reference made"), rows)  # fmt: skip
    return text + "\n\n" + portability(profile, ref), []


def load_fingerprint(profile: str) -> dict | None:
    try:
        return json.loads((project.build_dir(profile) / "fingerprint.json").read_text())
    except (OSError, ValueError):
        return None


def portability(profile: str, ref: dict) -> str:
    """Whether pinning the kernels to AVX2 makes this machine compute the reference machine's
    numbers: the two small networks' weight hashes of ``make fingerprint`` here against those
    the reference keeps (:mod:`normbook.tools.fingerprint`)."""
    theirs, mine = ref["provenance"].get("fingerprint"), load_fingerprint(profile)
    text = "**Portable numbers?** "
    if not theirs:
        return text + "The reference keeps no fingerprint; `make reference` measures one."
    hashes = lambda f, k: f"{f[k]['a']} / {f[k]['b']}"  # noqa: E731
    text += (f"The reference machine's two small networks (`make fingerprint`) hash to "
             f"{hashes(theirs, 'as_is')} as it chooses its kernels and {hashes(theirs, 'pinned')} "
             "pinned to AVX2.")  # fmt: skip
    if not mine:
        return text + " This machine's are not measured yet: `make fingerprint` measures them."
    if mine.get("pinned") is None or theirs.get("pinned") is None:
        return text + (
            f" This machine ({machine_text(mine['machine'])}) hashes to "
            f"{hashes(mine, 'as_is')} as it chooses, and cannot run the reference's "
            f"pinned kernels ({mine.get('no_avx2') or 'not measured'}): the bundle of "
            "the reference's networks gives its verdicts here (`make book BUNDLE=...`)."
        )
    same = lambda k: (mine[k]["a"], mine[k]["b"]) == (theirs[k]["a"], theirs[k]["b"])  # noqa: E731
    cost = [mine["pinned"]["s_per_step"][k] / mine["as_is"]["s_per_step"][k] for k in "ab"]
    return text + (
        f" This machine ({machine_text(mine['machine'])}): {hashes(mine, 'as_is')} as it "
        f"chooses ({'the same' if same('as_is') else 'other'} numbers), "
        f"{hashes(mine, 'pinned')} pinned ({'the same' if same('pinned') else 'other'} numbers; "
        f"pinned steps take {cost[0]:.2f}x and {cost[1]:.2f}x the time). "
        + ("Pinned kernels make these two machines compute the same networks: `make book` "
           "(pinned by default; `make pins` shows the pins) should reproduce the reference's "
           "networks bit for bit." if same("pinned") and not same("as_is") else
           "" if same("pinned") else
           "Pinning does not make these machines agree; no switch can promise the same ledger.")
    )  # fmt: skip


def page(profile: str) -> str:
    """The page's MyST markdown for the site of ``profile``."""
    parts = [pages_section(profile), book_section(profile), reference_section(profile),
             benchmark_section(profile), speed_section(profile), trade_section(profile),
             bundle_section(profile), paper_section()]  # fmt: skip
    missing = [m for _, gaps in parts for m in gaps]
    head = (
        "(build-and-compute)=\n# Build and compute\n\n"
        "What building this book costs, measured on the machines that built it. Every number "
        "here is read, when the site is rendered, from a record a run wrote, never typed: "
        f"`_build/{profile}/timings.json` (each page's last cold and last cached execution, and "
        f"the whole book's), `_build/{profile}/benchmark.json` (`make benchmark`), the reference "
        f"ledger `results/{profile}/ledger.json` (`make reference`), the recorded training "
        f"profiles and epochs `results/{profile}/speed.json`, `speed_a.json` and "
        f"`results/{profile}/epochs_needed.json`, the trade for the ceiling "
        f"`results/{profile}/trade.json`, and the paper-scale records in "
        f"`results/paper/`. Profile: `{profile}`."
    )
    gaps = "\n".join(f"- {m}." for m in missing) or "Nothing: every record this page reads exists."
    tail = f"(compute-missing)=\n## Not measured here yet\n\n{gaps}"
    return "\n\n".join([head, *(text for text, _ in parts), tail]) + "\n"
