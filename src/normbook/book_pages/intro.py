"""The intro's "Findings at a glance": each paper's central claims, with the verdict this build's
chapters recorded (read from the ledger, never typed), the scale they were graded at, how many
claims are undecided and what would decide them."""

from __future__ import annotations

import json
from dataclasses import dataclass

from normbook.book_pages.ledger import (
    ORIGINS,
    group,
    group_name,
    needs,
    opposite_sign,
    origin,
    reference_part,
    section_title,
)
from normbook.book_pages.ledger import against_reference as compare_with_reference
from normbook.grading import ledger
from normbook.grading.verdicts import (
    NOT_SHOWN,
    REFUTED,
    code_links,
    effect_interval,
    number_or_dash,
)
from normbook.pages.fmt import table
from normbook.paper_a import paper_values as paper_values_a
from normbook.paper_a.recorded import BARE_COMMAND, COMMAND, paper_scale_key
from normbook.paper_b import paper_values as paper_values_b
from normbook.runtime.cache import build_root
from normbook.runtime.params import Spec

INTRO = Spec(
    chapter="intro",
    params=[],
    profiles={"smoke": {}, "cpu": {}, "paper": {}},
    reads_ledger=True,
)


@dataclass(frozen=True)
class Question:
    """A central claim of a paper, as a reader's question, and the ledger row that answers it:
    the chapter that grades it and the claim's key (never its wording, which a chapter run
    with other parameters changes)."""

    paper: str
    text: str
    chapter: str
    key: str


CENTRAL = (
    Question("A", "Can normalization let a CNN localize beyond its receptive field?",
             "a1_localization", "a1_side_channel"),
    Question("A", "Is the whole sequence localized (the paper's Fig. 1a)?", "a1_localization",
             "a1_whole_sequence"),
    Question("A", "Does localization grow with the number of GroupNorm groups?",
             "a3_which_norms", "a3_group_trend"),
    Question("A", "Does BatchNorm with minibatch statistics localize too?", "a3_which_norms",
             "a3_batchnorm_localizes"),
    Question("A", "Does the side channel run through the normalization statistics?",
             "a4_stress", "a4_interior_statistics"),
    Question("A", "Does PackNorm's overlap transition measure the receptive field?",
             "a4_stress", "a4_packnorm_overlap_pool"),
    Question("A", "Is there a side channel in a U-Net?", "a4_stress", "a4_unet_side_channel"),
    Question("A", "Is there a side channel in a 2-D CNN?", "a4_stress", "a4_2d_side_channel"),
    Question("A", "Do more normalization layers carry position farther (one hop each)?",
             "a5_reach", "a5_norm_layers"),
    Question("A", "Does position carry past one hop undiminished?", "a5_reach",
             "a5_undiminished"),
    Question("B", "Does BatchNorm raise test accuracy on CIFAR-10?", "b1_setup_accuracy",
             "b1_bn_accuracy_cifar10"),
    Question("B", "Does BatchNorm make MNIST representations less sparse?", "b2_sparsity",
             "b2_less_sparse_mnist"),
    Question("B", "Does BatchNorm make CIFAR-10 representations more sparse?", "b2_sparsity",
             "b2_more_sparse_cifar10"),
    Question("B", "Are MNIST class clusters purer with BatchNorm (lower DBI)?", "b3_clusters",
             "b3_purer_classes_mnist"),
    Question("B", "Are CIFAR-10 class clusters purer with BatchNorm (lower DBI)?", "b3_clusters",
             "b3_purer_classes_cifar10"),
)  # fmt: skip

# B4's 2 x 2 splits paper B's CIFAR-10 contrast into BatchNorm's and the learning rate's parts:
# (metric key in B4's record, label, unit, the keys of the "BN itself" and learning-rate rows)
SPLIT = (
    ("sparsity", "layer sparsity", ".3f", "b4_bn_itself_sparsity_cifar10",
     "b4_lr_confound_sparsity"),
    ("class_dbi", "class-based DBI (lower is purer)", ".2f", "b4_bn_itself_class_dbi_cifar10",
     "b4_lr_confound_class_dbi"),
)  # fmt: skip


def _find(recs: list[dict], key: str) -> tuple[dict, dict] | None:
    """(record, claim) of this build's own run whose claim has ``key``."""
    for r in recs:
        for c in r["claims"]:
            if c["key"] == key and c.get("scale", ledger.PROFILE_SCALE) == ledger.PROFILE_SCALE:
                return r, c
    return None


def _recorded(recs: list[dict], key: str) -> dict | None:
    """The recorded paper-scale grade of the claim ``key`` (its paper-scale key)."""
    for r in recs:
        for c in r["claims"]:
            if c["key"] == paper_scale_key(key) and c.get("scale") != ledger.PROFILE_SCALE:
                return c
    return None


def rerun_words(rec: dict | None) -> str:
    """``chapter run with other parameters: seq_len 200, norm group`` ("" for a default run)."""
    given = (rec or {}).get("overrides") or {}
    return ("chapter run with other parameters: " + ", ".join(f"{k} {v}" for k, v in given.items())
            if given else "")  # fmt: skip


def answers(recs: list[dict]) -> list[tuple[Question, tuple[dict, dict] | None]]:
    """Each central question with its (record, claim), None where this build has no grade: its
    chapter has no record, or ran with other parameters and did not grade it. A chapter run
    with the profile's parameters that lacks the key stops the page (a claim renamed)."""
    out = [(q, _find(recs, q.key)) for q in CENTRAL]
    for q, found in out:
        rec = _record(recs, q.chapter)
        if found is None and rec is not None and not rerun_words(rec):
            raise ValueError(f"{q.chapter} graded no claim with key {q.key!r}: update "
                             "book_pages.intro.CENTRAL")  # fmt: skip
    return out


def refutations_beyond(recs: list[dict]) -> list[tuple[dict, dict]]:
    """Every refuted claim of a paper (its own claims, re-tests and critics') that no central
    question shows: a refutation is never left off the intro."""
    shown = {id(found[1]) for _, found in answers(recs) if found}
    return [(r, c) for r in recs for c in r["claims"]
            if c["verdict"] == REFUTED and id(c) not in shown and origin(c, r["chapter"]) != "ours"
            and c.get("scale", ledger.PROFILE_SCALE) == ledger.PROFILE_SCALE]  # fmt: skip


def effect_text(c: dict) -> str:
    """``0.0077 [0.0021, 0.013] vs ≥ 0.050 of the ramp's slope`` (a dash where there is none)."""
    u = c["unit"]
    if number_or_dash(c["effect"], u) == "–":
        return "– (no estimate at this budget)"
    return f"{effect_interval(c)}; SESOI {c['sesoi_text']}"


def verdict_text(c: dict, profile: str) -> str:
    """The verdict "at this profile", what would decide a claim not shown, and a flag on an
    effect of the opposite sign of the paper's."""
    short = "not shown" if c["verdict"] == NOT_SHOWN else c["verdict"]
    text = f"**{short}**" + (f" at `{profile}`" if c["verdict"] == REFUTED else "")
    if opposite_sign(c):
        text += " ⚠ opposite sign"
    need = needs(c)
    return text + (f" (needs {need.split(':')[0]})" if need else "")


def _row(q: str, r: dict, c: dict, profile: str, recorded: bool) -> dict:
    rerun = rerun_words(r)
    row = {
        "question": q,
        "paper's claim": c.get("paper_says") or "(ours)",
        f"verdict at `{profile}`": verdict_text(c, profile) + (f" ({rerun})" if rerun else ""),
        "effect vs SESOI": effect_text(c),
        "chapter": f"{{ref}}`{section_title(c['section'])} <{c['section']}>`"
        + code_links(c.get("code", [])),
    }
    if recorded:
        rc = _recorded([r], c["key"])
        row["at the paper's scale (recorded)"] = (
            f"**{rc['verdict']}**; {effect_text(rc)}" if rc else "–"
        )
    return row


def findings_table(recs: list[dict], profile: str, paper: str) -> str:
    """One row per central claim of ``paper`` and per refutation no question shows; a column
    of recorded paper-scale grades when a record exists."""
    recorded = any(c.get("scale", ledger.PROFILE_SCALE) != ledger.PROFILE_SCALE
                   for r in recs for c in r["claims"])  # fmt: skip
    rows = [_row(q.text, *found, profile, recorded) for q, found in answers(recs)
            if q.paper == paper and found]  # fmt: skip
    rows += [_row("(a further refutation)", r, c, profile, recorded)
             for r, c in refutations_beyond(recs) if c["paper"][0] == paper]  # fmt: skip
    absent = [q for q, found in answers(recs) if q.paper == paper and not found]
    rerun = [f"{q.text} (**not graded in this build**: {rerun_words(_record(recs, q.chapter))})"
             for q in absent if _record(recs, q.chapter)]  # fmt: skip
    unrun = [q.text for q in absent if not _record(recs, q.chapter)]
    # graded, but by a chapter re-run with its own parameters: not this profile's claim
    other = [f"{q.text} ({rerun_words(found[0]).removeprefix('chapter run with ')})"
             for q, found in answers(recs) if q.paper == paper and found
             and rerun_words(found[0])]  # fmt: skip
    note = "".join([
        "\n\n" + "; ".join(rerun) + "." if rerun else "",
        "\n\nGraded by a chapter run with other parameters, so not the `" + profile + "` "
        "profile's run (the reference compares none of them): " + "; ".join(other) + "."
        if other else "",
        "\n\nNo record in this build for: " + "; ".join(unrun) if unrun else ""])  # fmt: skip
    if not rows:
        return "*(no chapter of this paper has a record yet)*" + note
    # full width: the table may use the page's margin column at 1280 px
    return f":::{{container}} full-width findings-table\n\n{table(rows)}\n:::" + note


def recorded_note(recs: list[dict]) -> str:
    """Where the paper-scale grades stand: beside the table's, or how to make them."""
    if any(c.get("scale", ledger.PROFILE_SCALE) != ledger.PROFILE_SCALE
           for r in recs for c in r["claims"]):  # fmt: skip
        return "The last column grades paper A's recorded run at the paper's own scale."
    return (f"No paper-scale run is recorded yet: on a machine with a GPU, `{COMMAND}` makes "
            f"one (a bare machine with Python, torch, numpy and scipy: `{BARE_COMMAND}`), and "
            f"its grades then sit beside these ({{ref}}`a1-paper-scale`).")  # fmt: skip


def _record(recs: list[dict], chapter: str) -> dict | None:
    return next((r for r in recs if r["chapter"] == chapter), None)


def scale_line(recs: list[dict], profile: str) -> str:
    """This build's scale against the papers', from the chapters' records."""
    parts = []
    a1 = _record(recs, "a1_localization")
    if a1:
        p = a1["params"]
        parts.append(f"paper A's 1-D CNN at length {p['seq_len']}, {p['depth']} normalization "
                     f"layers, {len(p['seeds'])} seeds (paper: {paper_values_a.SEQ_LEN}, "
                     f"{paper_values_a.NORM_LAYERS}, {paper_values_a.N_SEEDS})")  # fmt: skip
    b1 = _record(recs, "b1_setup_accuracy")
    if b1:
        acc = b1["numbers"].get("b1_mean_acc_cifar10_bn")
        paper = paper_values_b.percent(paper_values_b.TABLE1_ACCURACY["cifar10", True])
        got = f"{acc:.0%}" if acc is not None else "–"
        parts.append(f"paper B's CIFAR-10 VGG-16 (width {b1['params']['vgg_width']:g}) at {got} "
                     f"test accuracy with BatchNorm (paper: {paper})")  # fmt: skip
        unverified = sorted({line.split(" ")[0] for line in b1.get("provenance", [])
                             if "UNVERIFIED" in line})  # fmt: skip
        if unverified:
            how = " (rebuilt from JPEG)" if any("JPEG" in line for line in b1["provenance"]) else ""
            parts.append(f"an unverified copy of {' and '.join(unverified)}{how}")
    if kernels := kernels_part(recs):
        parts.append(kernels)
    if b := bundle_summary(profile):
        where = "; ".join(f"{m} ({n} entries)" for m, n in b["computed_on"].items())
        parts.append(f"{b['imported'] + b['kept']} of its cache entries (trained networks and "
                     f"analyses) from the bundle `{b['file']}` of commit `{b['commit'][:10]}`, "
                     f"computed on {where}")  # fmt: skip
    if not parts:
        return f"**Scale.** Profile `{profile}`; no chapter has a record yet."
    return f"**Scale** (`{profile}`): " + "; ".join(parts) + "."


def kernels_part(recs: list[dict]) -> str:
    """The kernels this build's chapters ran: pinned to the reference machine's instruction
    set (the Makefile's default, ``make pins``) or as the CPU chose them."""
    machines = [r["machine"] for r in recs if r.get("machine")]
    if not machines:
        return ""
    flags = machines[0].get("flags") or {}
    if flags:
        pins = ", ".join(f"`{k}={v}`" for k, v in sorted(flags.items()))
        return (f"kernels pinned to the reference machine's instruction set ({pins}; "
                "`make book ISA=native` lets the CPU choose)")  # fmt: skip
    return (f"kernels as the CPU chose them ({machines[0].get('isa', '?')}; no pins: "
            "`ISA=native`, or a CPU without AVX2)")  # fmt: skip


def bundle_summary(profile: str) -> dict | None:
    """What `make book BUNDLE=` imported before this build (:mod:`normbook.publish.bundle`)."""
    try:
        return json.loads((build_root() / profile / "bundle.json").read_text())
    except (OSError, ValueError):
        return None


def undecided(recs: list[dict]) -> str:
    """One sentence: how many claims are undecided, and what would decide them."""
    claims = [c for r in recs for c in r["claims"]]
    shown = [c for c in claims if c["verdict"] == NOT_SHOWN]
    if not shown:
        return "No claim is undecided at this profile."
    kinds = {}
    for c in shown:
        k = needs(c).split(":")[0]
        kinds[k] = kinds.get(k, 0) + 1
    what = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    flipped = [c for c in shown if opposite_sign(c)]
    why = sorted({needs(c).split(":")[0] for c in flipped})
    flip = (f" {len(flipped)} of them have an interval wholly on the other side of zero from "
            f"the paper's claim (flagged ⚠ below and in the ledger); what keeps them from "
            f"*refuted*: {' or '.join(why)}." if flipped else "")  # fmt: skip
    return (f"**Undecided.** {len(shown)} of {len(claims)} claims ({len(shown) / len(claims):.0%})"
            f" are *not shown at this budget*. What would decide them: {what} (the "
            f"{{ref}}`ledger <ledger-table>` names it for each).{flip}")  # fmt: skip


def split_table(recs: list[dict]) -> str:
    """B4's split of paper B's CIFAR-10 contrast into BatchNorm's and the learning rate's parts,
    with the grades of BN's own effect and of the learning rate's."""
    b4 = _record(recs, "b4_stress")
    if b4 is None:
        return ""
    rows = []
    for key, label, unit, bn_key, lr_key in SPLIT:
        n = b4["numbers"]
        if f"b4_split_{key}_paper" not in n:
            continue
        bn, lr = _find([b4], bn_key), _find([b4], lr_key)
        paper, bn_part, lr_part = (n[f"b4_split_{key}_{k}"] for k in ("paper", "bn", "lr"))
        f = lambda v, unit=unit: format(v, unit).replace("-", "−")
        op = "+" if lr_part >= 0 else "−"
        rows.append({
            "metric": label,
            "paper's contrast = BatchNorm's part + the learning rate's part":
                f"{f(paper)} = {f(bn_part)} (BatchNorm) {op} {f(abs(lr_part))} (learning rate)",
            "BatchNorm itself (each rate)": f"**{bn[1]['verdict']}**" if bn else "–",
            "the learning rate alone": f"**{lr[1]['verdict']}**" if lr else "–",
        })  # fmt: skip
    if not rows:
        return ""
    return (
        "**CIFAR-10: BatchNorm or its ten-times-higher learning rate?** Paper B trains its "
        "BatchNorm networks at ten times the no-BN learning rate. The 2 × 2 of "
        "{ref}`b4-lr` splits its contrast (means over seeds):\n\n" + table(rows)
    )


def counts_by_origin(recs: list[dict]) -> str:
    """Final verdicts per paper, split into the papers' own claims, re-tests of them, the
    critics' claims and this book's own claims; a count of opposite-sign effects beside."""
    from normbook.grading.verdicts import GRADES

    rows = []
    for g in sorted({group(c) for r in recs for c in r["claims"]}):
        for o, name in ORIGINS.items():
            cs = [c for r in recs for c in r["claims"] if group(c) == g
                  and origin(c, r["chapter"]) == o]  # fmt: skip
            if cs:
                rows.append({"paper": group_name(g).split(" (")[0], "claims": name,
                             **{v: str(sum(c["verdict"] == v for c in cs)) for v in GRADES},
                             "opposite sign": str(sum(opposite_sign(c) for c in cs))})  # fmt: skip
    return table(rows)


def against_reference(recs: list[dict], profile: str) -> str:
    """Whether this build reproduced the reference ledger: how many claims give its verdict,
    and each that does not, with both verdicts and effects (:mod:`.reference`)."""
    return reference_part(compare_with_reference(recs, profile), profile)
