"""The Methods page: its (parameter-free) spec, and the tables it shows, generated from the
chapters' specs and the verdict rules' docstrings so that the page cannot disagree with the
code that ran."""

from __future__ import annotations

import inspect
import re
from types import ModuleType

import numpy as np

from normbook.pages.fmt import table
from normbook.runtime.params import Param, Spec

METHODS = Spec(
    chapter="methods",
    params=[
        Param(
            "oc_models",
            int,
            "simulated models per step and noise correlation length (detector calibration)",
            min=10,
            max=100_000,
            shape=20,
        ),
        Param(
            "power_draws",
            int,
            "simulated designs per point of the power figure",
            min=10,
            max=100_000,
            shape=20,
        ),
    ],
    profiles={
        "smoke": {"oc_models": 20, "power_draws": 20},
        "cpu": {"oc_models": 200, "power_draws": 400},
        "paper": {"oc_models": 1000, "power_draws": 2000},
    },
    reads_ledger=True,  # the SESOI table shows the power of this build's claims
)


# The knobs that differ most between the profiles, per chapter.
KEY_KNOBS = {
    "a1_localization": ["seq_len", "depth", "steps", "lr", "seeds", "n_eval"],
    "a2_mechanism": ["pack_depth", "pack_steps", "pack_seeds", "n_test"],
    "a3_which_norms": ["seeds", "group_seeds", "group_counts", "bn_eval_batch_sizes"],
    "a4_stress": ["circular_steps", "intervention_eval", "unet_steps", "grid_steps"],
    "a5_reach": ["reach_mix", "reach_lens", "reach_len_steps", "reach_seeds"],
    "b1_setup_accuracy": ["seeds", "mnist_width", "vgg_width", "mnist_train", "cifar_train",
                          "mnist_epochs", "cifar_epochs"],
    "b3_clusters": ["cluster_images", "pca_components", "kmeans_n_init"],
}  # fmt: skip


def _value(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list):
        return ", ".join(_value(x) for x in v)
    return str(v)


def profile_table(specs: list[Spec], knobs: dict[str, list[str]]) -> str:
    """One row per (chapter, knob): its meaning and its value at each profile."""
    rows = []
    for spec in specs:
        for name in knobs.get(spec.chapter, []):
            p = spec.param(name)
            rows.append(
                {
                    "chapter": spec.chapter.split("_")[0].upper(),
                    "knob": f"`{name}`",
                    "meaning": p.doc,
                    **{
                        prof: _value(spec.profiles[prof][name])
                        for prof in ("smoke", "cpu", "paper")
                    },
                }
            )
    return table(rows)


def reconstruction_table(specs: list[Spec]) -> str:
    """Every knob marked as our reconstruction, the chapters that have it, and its `paper`
    profile value (the others are in each chapter's parameter table)."""
    seen: dict[str, dict] = {}
    for spec in specs:
        for p in spec.reconstructed():
            row = seen.setdefault(
                p.name,
                {
                    "knob": f"`{p.name}`",
                    "meaning": p.doc,
                    "chapters": [],
                    "paper value": _value(spec.profiles["paper"][p.name]),
                },
            )
            row["chapters"].append(spec.chapter.split("_")[0].upper())
    return table([{**r, "chapters": ", ".join(r["chapters"])} for r in seen.values()])


def _summary(doc: str) -> str:
    """A docstring as one line of prose (double-backtick code kept as code)."""
    text = " ".join(inspect.cleandoc(doc).split())
    return re.sub(r"``([^`]+)``", r"`\1`", text).replace("|", "\\|")


B4_RULES = ("factorial_ledger", "confound_ledger", "cluster_count_ledger", "threshold_ledger",
            "direction_ledger")  # fmt: skip


def rules_table(*modules: ModuleType, only: tuple[str, ...] = ()) -> str:
    """Every verdict rule of the given modules (or only the functions named ``only``): its
    name and its docstring."""
    rows = []
    for mod in modules:
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if only and name not in only:
                continue
            if (
                fn.__module__ != mod.__name__
                or name.startswith("_")
                or (name.endswith("_ledger") and name not in only)
            ):
                continue
            short = mod.__name__.removeprefix("normbook.")
            rows.append(
                {"rule": f"`{short}.{name}`", "what it decides": _summary(fn.__doc__ or "")}
            )
    return table(rows)


# ----------------------------------------------------------------------------- verdicts


def all_sesois() -> list[tuple[str, object]]:
    """Every declared smallest effect of interest, with its paper."""
    from normbook.paper_a.grading import sesoi as sa
    from normbook.paper_b.grading import sesoi as sb

    return [("A", s) for s in sa.SESOIS] + [("B", s) for s in sb.SESOIS]


def sesoi_table(records: list[dict]) -> str:
    """Every SESOI: its paper, value and unit, its reason, how many claims of this build use it
    and the power of their designs against it (the chance of a decisive verdict when the truth
    is one SESOI away from it, at the spread each claim measured; min, median, max)."""
    rows = []
    for paper, s in all_sesois():
        used = [c for r in records for c in r["claims"]
                if c.get("sesoi_name") == s.name and c["paper"][0] == paper]  # fmt: skip
        power = [c["power"] for c in used if c.get("power") is not None]
        rows.append({
            "paper": paper,
            "SESOI": f"{s.name}: {s.show()}",
            "why this size": s.reason,
            "claims": len(used),
            "power (min · median · max)": (
                f"{min(power):.2f} · {sorted(power)[len(power) // 2]:.2f} · {max(power):.2f}"
                if power else "– (no graded claim has a power)"
            ),
        })  # fmt: skip
    return table(rows)


def worked_examples(sesoi: float = 0.05) -> str:
    """One example per verdict, each graded by the rule the chapters use
    (:func:`normbook.grading.verdicts.decide`): the per-seed effects, what else the rule looked
    at, the interval and the grade."""
    import numpy as np

    from normbook.grading.claims import mean_test
    from normbook.grading.verdicts import Control, decide, decide_parts

    ok = Control("family", "learned", True, "")
    failed = Control("family", "learned", False, "")
    premise = Control.of_claim("family", "the claim it rests on", "refuted", "premise")
    cases = [
        ("reproduced", [0.14, 0.16, 0.18, 0.17, 0.18], (ok,), False),
        ("refuted", [0.004, 0.010, -0.002, 0.006, 0.008], (ok,), False),
        ("not shown: interval contains the SESOI", [0.02, 0.09, 0.01, 0.11, 0.04], (ok,), False),
        ("not shown: below the SESOI, still rising", [0.004, 0.010, -0.002, 0.006, 0.008], (ok,),
         True),
        ("not shown: the family did not learn", [0.14, 0.16, 0.18, 0.17, 0.18], (failed,), False),
        ("moot: the claim it rests on was refuted", [0.14, 0.16, 0.18, 0.17, 0.18],
         (premise,), False),
        ("one seed that barely learned", [0.14, 0.16, 0.02, 0.17, 0.18], (ok,), False),
    ]  # fmt: skip
    rows = []
    for name, d, controls, rising in cases:
        t = mean_test(np.array(d), sesoi, "example")
        g = decide(t, controls, rising=rising)
        rows.append({
            "example": name, "per-seed effects": ", ".join(f"{v:+.3f}" for v in d),
            "SESOI": f"{sesoi:g}", "control": "passed" if controls[0].passed else (
                "premise refuted" if controls[0].premise_refuted else "failed"),
            "still rising": "yes" if rising else "no",
            "interval": f"[{t.low:+.3f}, {t.high:+.3f}]", "grade": f"**{g.verdict}** ({g.why})",
        })  # fmt: skip
    a = decide(mean_test(np.array(cases[0][1]), sesoi, "a"), (ok,), rising=False)
    b = decide(mean_test(np.array(cases[1][1]), sesoi, "b"), (ok,), rising=False)
    g = decide_parts([("part 1", a), ("part 2", b)])
    rows.append({
        "example": "two parts (one reproduced, one refuted)",
        "per-seed effects": "the first and second rows", "SESOI": f"{sesoi:g}",
        "control": "passed", "still rising": "no", "interval": "per part",
        "grade": f"**{g.verdict}** ({g.why})",
    })  # fmt: skip
    untestable = decide(mean_test(np.ones(3), 0, "x"), testable=False, rising=None)
    rows.append({
        "example": "the papers' absolute numbers at `cpu`", "per-seed effects": "any",
        "SESOI": "the paper's band", "control": "", "still rising": "",
        "interval": "", "grade": f"**{untestable.verdict}**",
    })  # fmt: skip
    return table(rows)


def power_step():
    """The power simulation's cached step, declared on the first call (its code, with scipy,
    is imported here, not with the page's tables; a bundle's import calls it too)."""
    from normbook.grading import claims, power
    from normbook.runtime import cache, seeding

    return cache.step("m_power", claims, power, seeding)


def simulated_power(draws: int, ns=(4, 5, 6), seed: int = 0):
    """:func:`normbook.grading.power.simulate_power`, cached (a DataFrame: n, ratio,
    simulated, analytic)."""
    import numpy as np
    import pandas as pd

    from normbook.grading import power
    from normbook.runtime import cache

    ratios = np.linspace(0.0, 3.0, 7)
    step = power_step()
    config = {"draws": draws, "ns": list(ns), "ratios": ratios.tolist(), "seed": seed}

    def compute():
        df = power.simulate_power(ns, ratios, draws, seed)
        return cache.Entry({k: df[k].to_numpy() for k in df.columns})

    entry = step.cached(config, compute)
    return pd.DataFrame({k: entry[k] for k in ("n", "ratio", "simulated", "analytic")})


def claim_ratios(records: list[dict]) -> list[float]:
    """Per claim of this build tested by a t test over seeds: its SESOI over the seeds'
    standard deviation (from its interval), where both are finite."""
    from scipy import stats as sps

    from normbook.grading.claims import CLAIM_CONFIDENCE

    out = []
    for r in records:
        for c in r["claims"]:
            n, lo, hi, s = c.get("n"), c.get("low"), c.get("high"), c.get("sesoi")
            if "t test" not in c.get("test", "") or None in (n, lo, hi, s) or n < 2 or hi <= lo:
                continue
            half = (hi - lo) / 2
            sd = half / sps.t.ppf(0.5 + CLAIM_CONFIDENCE / 2, n - 1) * n**0.5
            if s > 0 and sd > 0:
                out.append(s / sd)
    return out


def power_figure(power, ratios: list[float], seeds: int):
    """Power of the seed-level t test against the SESOI (simulated: dots; analytic: lines),
    for each number of seeds, against SESOI / seed sd; the rug marks this build's claims (at
    their own ``seeds``)."""
    from normbook.pages.figures import canvas, shared_legend

    fig, axes = canvas(height=3.4)
    ax = axes[0, 0]
    for n, g in power.groupby("n"):
        (line,) = ax.plot(g.ratio, g.analytic, lw=1.6, label=f"{n} seeds")
        ax.plot(g.ratio, g.simulated, "o", ms=3.5, color=line.get_color())
    for r in ratios:
        ax.axvline(min(r, power.ratio.max()), ymax=0.06, color="k", lw=0.8)
    ax.axhline(0.8, color="0.6", ls=":", lw=1)
    ax.set_xlabel("SESOI / standard deviation of the per-seed effect")
    ax.set_ylabel("P(decisive verdict)")
    ax.set_ylim(0, 1.02)
    shared_legend(fig, title=f"book: {seeds} seeds")
    return fig


def null_figure(nulls, circular: dict[str, list[float]]):
    """The null distributions of the interior fraction (left) and the localization distance
    beyond R (right), per sequence-wide share of the noise (colour) and correlation length
    (line style), as empirical CDFs; ticks, this build's networks that cannot localize beyond R."""
    import numpy as np

    from normbook.pages.figures import canvas, shared_legend

    fig, grid = canvas(ncols=2, height=3.4)
    axes = grid[0]
    styles = dict(zip(sorted(nulls.corr_len.unique()), ("-", "--", ":")))
    colors = dict(zip(sorted(nulls.share.unique()), ("#0072B2", "#E69F00", "#CC79A7")))
    for ax, col, label in (
        (axes[0], "frac_interior", "interior fraction localized"),
        (axes[1], "distance_beyond", "localization distance − R"),
    ):
        for (share, corr), g in nulls.groupby(["share", "corr_len"]):
            v = np.sort(g[col].to_numpy())
            ax.step(
                v,
                np.arange(1, v.size + 1) / v.size,
                where="post",
                color=colors[share],
                ls=styles[corr],
                lw=1.3,
                label=f"share {share:g}, corr. {corr}" if col == "frac_interior" else None,
            )
        for name, vals in circular.items():
            if col in name:
                for v in vals:
                    ax.axvline(v, ymax=0.08, color="k", lw=1)
        ax.axhline(0.95, color="0.6", ls=":", lw=1)
        ax.set_xlabel(label)
    axes[0].set_ylabel("fraction of null networks ≤ x")
    shared_legend(fig)
    return fig


def null_quantile_table(quantiles) -> str:
    """The 95 % quantiles of :func:`normbook.paper_a.measures.detector_calibration.null_quantiles`,
    one row per (share, correlation length)."""
    rows = [{"sequence-wide share of the noise": f"{share:g}", "correlation length": corr,
             "interior fraction (95 %)": f"{q.frac_interior:.2f}",
             "distance − R (95 %)": f"{q.distance_beyond:.0f}"}
            for (share, corr), q in quantiles.iterrows()]  # fmt: skip
    return table(rows)


def stability_study(profile: str) -> str:
    """The measurement behind the near-its-line flag: each committed build of one commit on
    another instruction set against the same commit's build on the reference machine
    (:func:`normbook.book_pages.reference.isa_studies`), with how far the deciding p-values
    moved and, for every claim whose verdict differs, its distance from its line in each
    build."""
    from normbook.book_pages import reference
    from normbook.grading.stability import NEAR_LINE

    studies = reference.isa_studies(profile)
    if not studies:
        return (f"No build on another instruction set is committed at `{profile}` yet: build one "
                "commit as usual and with `ONEDNN_MAX_CPU_ISA=AVX make book`, and write each "
                f"with `python -m normbook.tools.reference --profile {profile} --out "
                f"results/{profile}/isa/<commit>/reference.json` (and `avx.json`).")  # fmt: skip
    parts = []
    for name, other, ref in studies:
        cmp = reference.compare(reference.as_records(other), ref)
        moved = np.array(reference.shifts(ref, other))
        med, p90 = (np.quantile(moved, q) for q in (0.5, 0.9))
        flips = cmp.of("verdict")
        flagged = sum(bool(d.flagged) for d in flips)
        parts.append(
            f"**`{name}`**: {reference.machine_text(other['provenance']['machine'])}, "
            f"{other['provenance']['date']}, commit {other['provenance']['commit'][:10]}, against "
            f"the same commit on {reference.machine_text(ref['provenance']['machine'])}. "
            f"{cmp.agree} of {cmp.compared} final verdicts agree "
            f"({cmp.identical} with the same effect). Over the {len(moved)} claims both tested, "
            f"the deciding p moved by a median of {med:.2f} standard errors (90th percentile "
            f"{p90:.2f}, largest {moved.max():.2f}). {len(flips)} verdicts differ; "
            f"{flagged} of them sat within {NEAR_LINE:g} SE of their line in one build or the "
            "other." + ("\n\n" + table([{
                "claim": f"{reference.short_claim(d.claim)} ({{ref}}`{d.section}`)",
                "this commit, reference machine": f"{reference.short_verdict(d.ref['verdict'])}, "
                             f"{_distance(d.ref)} from its line",
                f"`{name}`": f"{reference.short_verdict(d.this['verdict'])}, "
                             f"{_distance(d.this)} from its line",
                "flagged near its line": "yes" if d.flagged else "**no**",
            } for d in flips]) if flips else ""))  # fmt: skip
    return "\n\n".join(parts)


def _distance(row: dict) -> str:
    from normbook.grading.stability import distance_text

    d = row.get("stability")
    if d is None:
        return "no line" if str(row.get("line", "")).startswith("none") else (
            "no distance (a failed control)")  # fmt: skip
    return distance_text(d, ".2f")
