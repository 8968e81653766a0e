"""The book's exercises as data: for each ``:::{exercise}`` of a chapter (its ``:label:``), the
parameters it changes, what it retrains, and what it costs; and the sentences its page shows
(MyST substitutions, :mod:`normbook.publish.costs`): ``{{ cost_<label> }}`` in the exercise,
``{{ outcome_<label> }}`` at the end of its solution, ``{{ command_<label> }}`` where the
command depends on the profile's values (labels with ``-`` written ``_``).

``make exercises`` (:mod:`normbook.tools.exercise_runs`) runs each exercise with its parameters into
its own build folder, ``_build/<profile>/exercises/<label>/``, sharing the experiment cache,
and records what the run cost and graded (``outcome.json``); the outcome sentence reads that
record and compares the claims with the default build's record of the chapter. Two exercises
ask for an edit of the library (``edit``): no command can run them, and their sentences say so.
Costs are never typed: they come from ``timings.json`` (:mod:`normbook.publish.timings`) and from
the exercises' own measured runs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from normbook.publish import project
from normbook.publish.timings import NOT_MEASURED, duration, load_timings, machine


@dataclass(frozen=True)
class Exercise:
    label: str
    chapter: str  # its chapter's stem
    # the parameters it sets: a value as on the command line, or a function of the profile's
    # resolved parameters (params) giving one ("twice the steps")
    overrides: dict[str, str | Callable] = field(default_factory=dict)
    trains: str = ""  # what it trains anew; "": nothing, every network comes from the cache
    reuses: str = ""  # where its networks come from, when another chapter trains them
    note: str = ""  # what else its cost depends on
    scale: float = 1.0  # its cost against the chapter's cold run, when it trains
    edit: str = ""  # the library edit it asks for: `make exercises` cannot run it
    edit_cold: tuple[str, ...] = ()  # chapters the edit retrains (their cold runs: its cost)
    edit_note: str = ""  # what the edit recomputes, in words
    live: str = ""  # the chapter's live view it is done in (in the browser: nothing to run)
    profile: str = "cpu"  # the profile its text names

    @property
    def key(self) -> str:
        return self.label.replace("-", "_")

    @property
    def runnable(self) -> bool:
        return not (self.edit or self.live)

    @property
    def path(self) -> Path:
        return project.BOOK / f"{self.chapter}.py"

    def values(self) -> dict[str, str]:
        """The ``-p`` values, functions of the profile's parameters evaluated."""
        params = None
        out = {}
        for name, v in self.overrides.items():
            if callable(v):
                params = params or project.spec_for(self.path).resolve(self.profile)
                v = v(params)
            out[name] = str(v)
        return out

    def command(self) -> str:
        pairs = " ".join(f"-p {k} {v}" for k, v in self.values().items())
        return f"make chapter CHAPTER=book/{self.chapter}.py PARAMS='{pairs}'"


PAPER_A = ("a1_localization", "a2_mechanism", "a3_which_norms", "a4_stress", "a5_reach",
           "calibration")  # fmt: skip
B1_SHARED = " (chapters B2-B4 reuse them only when run with the same value)"

EXERCISES = [
    Exercise("a1-ex-layer", "a1_localization", {"norm": "layer"}, scale=0.5,
             trains="the chapter's LayerNorm networks (the no-norm ones come from the cache)"),
    Exercise("a1-ex-kernel", "a1_localization", {"kernel": "3"},
             trains="both of the chapter's networks at kernel 3"),
    Exercise("a1-ex-steps", "a1_localization", {"steps": lambda params: 2 * params.steps},
    scale=2.0,
             trains="both of the chapter's networks for twice the steps"),
    Exercise("a1-ex-detector", "a1_localization", {"detector": "definition"}),
    Exercise("a1-ex-nudge", "a1_localization", live="above ({ref}`a1-live`)"),
    Exercise("a2-ex-frozen", "a2_mechanism", live="above ({ref}`a2-live`)"),
    Exercise("a2-ex-control", "a2_mechanism", {"control_fracs": "0.5,1.0"}, scale=0.5,
             trains="the per-path InstanceNorm controls at half overlap"),
    Exercise("a2-ex-steps", "a2_mechanism", {"pack_steps": lambda params: 2 * params.pack_steps},
             scale=2.0, trains="every PackNorm network, for twice the steps"),
    Exercise("a2-ex-hop", "a2_mechanism", {"hop_factor": "5"}),
    Exercise("a3-ex-groups", "a3_which_norms", {"group_counts": "1,16,32"}),
    Exercise("a3-ex-batch", "a3_which_norms", {"bn_eval_batch_sizes": "2,32"}),
    Exercise("a3-ex-implement", "a3_which_norms", edit="a kind `\"fixed\"` in "
             "`normbook.paper_a.cached.norms.make_norm`", edit_cold=PAPER_A,
             edit_note="**it retrains all of paper A**: `paper_a.cached.norms` is part of the code "
             "hash of every paper-A step that trains or evaluates a normalized network "
             "(`paper_a.cached.cache_keys.TRAIN_CODE`), so after the edit the next "
             "`make book` retrains "
             "chapters A1-A5 and the budget calibration"),
    Exercise("a4-ex-group", "a4_stress", {"norm": "group", "groups": "4"},
             trains="GroupNorm networks with G = 4 and their circular-padding nulls"),
    Exercise("a4-ex-circular", "a4_stress", {"circular_steps": lambda p: 4 * p.circular_steps},
             trains="the circular-padding networks, for four times the steps"),
    Exercise("a5-ex-mix", "a5_reach", {"reach_mix": "0,1,3,7"}, scale=0.5,
             trains="a family with seven kernel-1 blocks per block"),
    Exercise("a5-ex-live", "a5_reach", live="above ({ref}`a5-live`)"),
    Exercise("a5-ex-len", "a5_reach",
             {"reach_lens": "75,150,300", "reach_len_steps": "5000,12000,24000"}, scale=2.0,
             trains="networks at two longer sequences, with up to 24,000 steps each"),
    Exercise("b1-ex-lr", "b1_setup_accuracy", {"cifar_lr_nobn": "0.001"},
             reuses="chapter B4's learning-rate factorial trains exactly these no-BN VGGs; "
             "before B4 has run, it trains them"),
    Exercise("b1-ex-data", "b1_setup_accuracy", {"cifar_train": lambda p: 2 * p.cifar_train},
             scale=2.0, trains="every CIFAR-10 VGG on twice the images" + B1_SHARED),
    Exercise("b2-ex-threshold", "b2_sparsity", {"zero_threshold": "0.01"}),
    Exercise("b2-ex-channel", "b2_sparsity", {"channel_spatial_mean": "False"}),
    Exercise("b3-ex-features", "b3_clusters", {"cluster_features": "channel_mean"}),
    Exercise("b3-ex-pca", "b3_clusters", {"pca_components": "0"},
             note="; but k-means then runs on every layer's raw features, minutes per network "
             "instead of seconds: expect far longer than the chapter's cached run"),
    Exercise("b4-ex-mnist", "b4_stress", {"factorial_datasets": "both"}, scale=0.5,
             trains="the MNIST CNNs at the second learning rate"),
    Exercise("b4-ex-match", "b4_stress", {"match_check_every": "5", "match_tolerance": "0.005"},
             scale=0.5, trains="the networks stopped at matched accuracies"),
    Exercise("b4-ex-implement", "b4_stress", edit="the Calinski-Harabasz index in "
             "`normbook.paper_b.cached.stress_analyses.silhouette_stats`",
             edit_note="it retrains no network: the edit changes the code hash of chapter B4's "
             "threshold and silhouette analyses, which the next `make book` recomputes, and "
             "re-executes paper B's chapters from the cache"),
    Exercise("calibration-ex-cosine", "calibration", {"cal_schedules":
             "constant,constant,onecycle,cosine", "cal_lrs": "0.003,0.01,0.01,0.01",
             "cal_batch_sizes": "32,32,32,32"}, scale=1 / 3,
             trains="the cosine candidate (the other three come from the cache)"),
]  # fmt: skip

BY_LABEL = {ex.label: ex for ex in EXERCISES}


def exercise_dir(ex: Exercise) -> Path:
    """The exercise's own build folder (its executed notebook, stamp, ledger record)."""
    return project.build_dir(ex.profile) / "exercises" / ex.label


def read_outcome(ex: Exercise) -> dict | None:
    try:
        return json.loads((exercise_dir(ex) / "outcome.json").read_text())
    except (OSError, ValueError):
        return None


# ----------------------------------------------------------------------------- the sentences

_SCALE = {0.5: "half of ", 2.0: "twice ", 4.0: "four times "}


def _scale_words(scale: float) -> str:
    if math.isclose(scale, 1 / 3):
        return "a third of "
    return _SCALE.get(scale, "" if scale == 1 else f"{scale:g} times ")


def _run(timings: dict, chapter: str, kind: str) -> dict | None:
    return (timings.get(chapter) or {}).get(kind)


def planned_cost(ex: Exercise, timings: dict) -> str:
    """What the exercise will cost, from the chapter's measured cold and cached runs."""
    if ex.edit:
        return _edit_cost(ex, timings)
    if ex.live:
        return (f"none: it is done in the live view {ex.live}, which runs the chapter's trained "
                "networks in your browser (no kernel, nothing retrained)")  # fmt: skip
    return _planned(ex, timings) + ex.note


def _planned(ex: Exercise, timings: dict) -> str:
    p = f"`{ex.profile}`"
    if not ex.trains:
        cached = _run(timings, ex.chapter, "cached")
        head = "it retrains nothing (every network comes from the cache" + (
            f": {ex.reuses})" if ex.reuses else ")"
        )
        if cached is None:
            return f"{head}; the chapter's run from the cache at {p} is {NOT_MEASURED}"
        return (f"{head}: about {duration(cached['seconds'])} at {p}, the chapter's run from "
                f"the cache on {machine(cached)} (a changed analysis can take longer)")  # fmt: skip
    cold = _run(timings, ex.chapter, "cold")
    head = f"it retrains {ex.trains}"
    if cold is None:
        return f"{head}; its cost, the chapter's cold run at {p}, is {NOT_MEASURED}"
    # a cold run that also loaded entries may have reused networks other chapters trained first
    # (a full build shares them): its time is then a lower bound
    shared = cold.get("loaded", 0)
    more = "more than " if shared else ""
    reused = f", in a build where it also loaded {shared} cache entries" if shared else ""
    return (f"{head}: {more}an estimated {duration(cold['seconds'] * ex.scale)} at {p} "
            f"({_scale_words(ex.scale)}the chapter's measured cold run, "
            f"{duration(cold['seconds'])}{reused}, "
            f"on {machine(cold)})")  # fmt: skip


def _edit_cost(ex: Exercise, timings: dict) -> str:
    p = f"`{ex.profile}`"
    if ex.edit_cold:
        runs = {ch: _run(timings, ch, "cold") for ch in ex.edit_cold}
        measured = [r for r in runs.values() if r]
        missing = [ch for ch, r in runs.items() if r is None]
        total = f"its cost is {NOT_MEASURED}"
        if measured:
            total = (f"about {duration(sum(r['seconds'] for r in measured))} of chapter time "
                     f"at {p} (the sum of their cold runs on {machine(measured[0])}; `make "
                     f"book` runs three chapters side by side)")  # fmt: skip
        gaps = f"; not measured yet: {', '.join(missing)}" if measured and missing else ""
        return f"{ex.edit_note}: {total}{gaps}"
    cold, cached = (_run(timings, ex.chapter, k) for k in ("cold", "cached"))
    if cold is None or cached is None:
        return f"{ex.edit_note}; the chapter's runs at {p} are {NOT_MEASURED}"
    return (f"{ex.edit_note}: more than the chapter's run from the cache "
            f"({duration(cached['seconds'])}) and far less than its cold run "
            f"({duration(cold['seconds'])}) at {p}, on {machine(cold)}")  # fmt: skip


def trained_words(record: dict) -> str:
    """What a recorded run computed: the networks it trained and the other cache entries."""
    new = record.get("new_entries") or {}
    trained = sum(n for kind, n in new.items() if kind.endswith("_train"))
    counts = record.get("cache") or {}
    loaded, computed = counts.get("loaded", 0), counts.get("computed", 0)
    if trained:
        kinds = ", ".join(f"`{k}` {n}" for k, n in sorted(new.items()) if n)
        return f"it trained networks anew, {trained} trained entries; new cache entries: {kinds}"
    what = f"computing {computed} of evaluations and analyses" if computed else "computing none"
    return f"it retrained nothing, loading {loaded} cache entries and {what}"


def _number(v, unit: str) -> str:
    if not isinstance(v, (int, float)) or not math.isfinite(v):
        return "n/a"
    try:
        return format(v, unit or ".3g")
    except ValueError:
        return format(v, ".3g")


def _effect(c: dict) -> str:
    unit = c.get("unit") or ".3g"
    return f"{_number(c.get('effect'), unit)} [{_number(c.get('low'), unit)}, " \
           f"{_number(c.get('high'), unit)}]"  # fmt: skip


def _short(claim: str, n: int = 90) -> str:
    """The text cut at a word near ``n`` characters, Markdown's marks escaped ("k*", "t_0")."""
    claim = " ".join(claim.split())
    claim = claim if len(claim) <= n else claim[:n].rsplit(" ", 1)[0] + " …"
    return "".join("\\" + ch if ch in "\\`*_[]<>$|" else ch for ch in claim)


def _counterparts(claims: list[dict], default: list[dict]) -> list[tuple[dict, dict | None]]:
    """Each claim with its default build's counterpart: the claim of the same section and text,
    else the next unmatched one of its section (a claim's text can name a parameter: "beyond
    one hop (5R(d))" stands where the default graded "(3R(d))"), else None."""
    free = list(default)
    pairs: list[list] = []
    for c in claims:
        d = next((d for d in free if (d["section"], d["claim"]) == (c["section"], c["claim"])),
                 None)  # fmt: skip
        if d is not None:
            free.remove(d)
        pairs.append([c, d])
    for pair in pairs:
        if pair[1] is None:
            pair[1] = next((d for d in free if d["section"] == pair[0]["section"]), None)
            if pair[1] is not None:
                free.remove(pair[1])
    return [(c, d) for c, d in pairs]


def _name(c: dict, d: dict) -> str:
    """A claim's name, with its default counterpart's when their texts differ."""
    if c["claim"] == d["claim"]:
        return f"*{_short(c['claim'])}*"
    return f"*{_short(c['claim'])}* (in place of the default's *{_short(d['claim'])}*)"


def claims_diff(claims: list[dict], default: list[dict] | None, profile: str) -> str:
    """The claims whose verdict changed against the default build's record, with their effects
    and intervals before and after; a few of the largest effect changes otherwise."""
    if not claims:
        return "The run graded no claim."
    if default is None:
        counts = {}
        for c in claims:
            counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
        grades = ", ".join(f"{n} {v}" for v, n in counts.items())
        return (f"Its claims: {grades} (no default `{profile}` build's record to compare "
                f"with).")  # fmt: skip
    pairs = _counterparts(claims, default)
    changed, moved, own = [], [], []
    for c, d in pairs:
        if d is None:
            own.append(f"*{_short(c['claim'])}*: {c['verdict']}, effect {_effect(c)}")
        elif c["verdict"] != d["verdict"]:
            changed.append(f"{_name(c, d)}: {d['verdict']} → {c['verdict']}, "
                           f"effect {_effect(d)} → {_effect(c)}")  # fmt: skip
        elif _effect(c) != _effect(d) or c["claim"] != d["claim"]:
            e0, e1 = d.get("effect"), c.get("effect")
            numbers = all(isinstance(e, (int, float)) for e in (e0, e1))
            size = abs(e1 - e0) / (abs(e0) + 1e-12) if numbers else 0.0
            moved.append((size, f"{_name(c, d)} stays {c['verdict']}, effect "
                                f"{_effect(d)} → {_effect(c)}"))  # fmt: skip
    moved.sort(key=lambda m: -m[0])
    n = len(pairs) - len(own)
    same = n - len(changed) - len(moved)
    text = f"Against the default `{profile}` build, " + (
        f"{len(changed)} of {n} claims changed verdict: " + "; ".join(changed)
        if changed
        else f"no claim changed verdict ({n} compared)"
    )
    if moved:
        text += f". Largest effect changes{' among the others' if changed else ''}: "
        text += "; ".join(m for _, m in moved[:3])
    if same:
        text += f"; {same} kept {'its' if same == 1 else 'their'} effect unchanged"
    if own:
        text += ". Graded at the exercise's parameters only (no default counterpart): "
        text += "; ".join(own)
    return text + "."


def _default_claims(ex: Exercise, record: dict) -> list[dict] | None:
    """The default build's claims of the chapter now (``_build/<profile>/ledger``), else those
    recorded when the exercise ran."""
    path = project.build_dir(ex.profile) / "ledger" / f"{ex.chapter}.json"
    try:
        return json.loads(path.read_text()).get("claims", [])
    except (OSError, ValueError):
        return record.get("default")


def outcome(ex: Exercise, record: dict | None, timings: dict) -> str:
    """The solution's last sentence: what running the exercise did on this machine."""
    again = f"`make exercises EXERCISES={ex.label}`"
    if ex.live:
        return ("the live view computes it in your browser, on this build's networks; the build "
                "checked its numbers against PyTorch's.")  # fmt: skip
    if ex.edit:
        return (f"`make exercises` cannot run this exercise: it needs an edit of the library "
                f"({ex.edit}), which is yours to write; after it, `make chapter "
                f"CHAPTER=book/{ex.chapter}.py` shows the outcome, and the cost above "
                f"applies.")  # fmt: skip
    if record is None or record.get("status") not in ("done", "up to date"):
        kind = "cold" if ex.trains else "cached"
        run = _run(timings, ex.chapter, kind)
        took = (
            f"the chapter's {'cold run' if ex.trains else 'run from the cache'} took "
            f"{duration(run['seconds'])}"
            if run
            else "its cost is in the exercise"
        )
        why = "Not run on this machine yet"
        if record is not None and record.get("status") == "stopped":
            why = (
                "Not run: it started training, and the run was stopped by "
                "`make exercises CHEAP=1`, which runs only exercises that train nothing"
            )
        elif record is not None:
            why = f"Its last run failed ({_short(record.get('error') or '?', 120)})"
        return f"{why}: {again} runs it ({took})."
    when = f"{record.get('measured', '?')[:10]}, {machine(record)}"
    took = duration(record["seconds"]) if record.get("seconds") else "an unrecorded time"
    head = (f"Run on this machine in {took} ({when}): "
            f"{trained_words(record)}.")  # fmt: skip
    diff = claims_diff(record.get("claims") or [], _default_claims(ex, record), ex.profile)
    return f"{head} {diff}"


def cost(ex: Exercise, record: dict | None, timings: dict) -> str:
    """The exercise's cost sentence: the planned one, and the measured one once it ran."""
    text = planned_cost(ex, timings)
    if record and record.get("status") in ("done", "up to date") and record.get("seconds"):
        text += (f"; measured for this exercise: {duration(record['seconds'])} "
                 f"({trained_words(record)})")  # fmt: skip
    return text


def substitutions() -> dict[str, str]:
    """``cost_``, ``outcome_`` and ``command_`` substitutions for every exercise."""
    timings: dict[str, dict] = {}
    subs = {}
    for ex in EXERCISES:
        if ex.profile not in timings:
            timings[ex.profile] = load_timings(ex.profile)
        record = read_outcome(ex)
        subs[f"cost_{ex.key}"] = cost(ex, record, timings[ex.profile])
        subs[f"outcome_{ex.key}"] = outcome(ex, record, timings[ex.profile])
        if ex.runnable:
            subs[f"command_{ex.key}"] = f"`{ex.command()}`"
    return subs
