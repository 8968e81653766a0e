"""Chapter A5's parameters: chapter A1's configuration (:mod:`normbook.paper_a.params`; A1's
networks are the study's base family) with the reach study's two axes, and their
cross-checks."""

from __future__ import annotations

from normbook.paper_a.params import (
    LIVE_PARAMS,
    LOCALIZATION_PARAMS,
    PAPER_RECORD,
    RECORD_PATH,
    curve_inside_budget,
    enough_samples,
    from_a1,
    groups_divide,
    needs_interior,
    odd_kernel,
    stress_norm,
    with_live,
)
from normbook.paper_a.runs import plans
from normbook.runtime.params import Param, Spec

# Chapter A5 measures how far the side channel carries on two axes from chapter A1's geometry
# (A1's networks are its base family): more normalization layers at the same receptive field,
# and longer sequences at the same depth.


def _reach_lengths(params) -> str | None:
    if len(params.reach_lens) != len(params.reach_len_steps):
        return (
            "parameters 'reach_lens', 'reach_len_steps': one budget per length, got "
            f"{len(params.reach_lens)} and {len(params.reach_len_steps)}"
        )
    radius = (params.kernel // 2) * params.depth
    for n in (params.seq_len, *params.reach_lens):
        if (n - 1) // 2 < 4 * radius:  # the second hop band must fit: hop_bands
            return (
                f"parameters 'reach_lens'/'seq_len': l = {n} has no second hop band at R = "
                f"{radius} (needs l >= {8 * radius + 1})"
            )
    return None


def _reach_axes(params) -> str | None:
    if len(set(params.reach_mix)) < 2 and len(set(params.reach_lens)) < 2:
        return "parameters 'reach_mix'/'reach_lens': at least one axis needs two values"
    base_len = (params.seq_len, params.steps) in zip(params.reach_lens, params.reach_len_steps)
    if 0 not in params.reach_mix and not base_len:
        return (
            "parameters 'reach_mix'/'reach_lens': the study needs its base family (chapter A1's "
            f"network): put 0 in reach_mix, or l = {params.seq_len} with {params.steps} steps in "
            "reach_lens/reach_len_steps"
        )
    return None


REACH_PARAMS = [
    Param("reach_mix", list, "kernel-1 conv-norm-ReLU blocks after each block (one family each)",
          list_of=int, min=0, max=64, reconstruction=True),
    Param("reach_lens", list, "sequence lengths of the length axis (at the base depth)",
          list_of=int, min=8, max=100_000),
    Param("reach_len_steps", list, "Adam steps per model at each of reach_lens",
          list_of=int, min=1, max=10_000_000, reconstruction=True, shape=[3, 6, 9]),
    Param("reach_matched_mix", int, "matched control: kernel-1 blocks per block, normed and "
          "plain (0: none)", min=0, max=64, reconstruction=True),
    Param("reach_seeds", list, "seeds of the study's networks beyond the base family",
          list_of=int, min=0, max=1e9),
    Param("reach_eval", int, "predictions per index for the study's networks", min=4,
          max=10**9, shape=64),
]  # fmt: skip

_REACH = {
    # smoke: R = 4 so that l = 48 has a second hop band
    "smoke": dict(depth=2, reach_mix=[0, 1], reach_lens=[48, 96], reach_len_steps=[40, 40],
                  reach_matched_mix=1, reach_seeds=[0, 1], reach_eval=2048),
    # cpu: 4 and 8 norm layers at one length, l = 75 (the base family). The 16-layer family
    # (reach_mix 3: three 16-layer models, about 650 of the cold build's 8,400 CPU seconds on
    # 2 Zen 3 cores) is part of the `cpu` book's trade for its 60-minute ceiling (chapter *Build
    # and compute*); `reach_mix` 0,1,3 puts it back, and the `paper` profile's families are 32
    # and 64 layers deep. The length axis
    # is the `cpu` book's trade for its 60-minute ceiling (chapter *Build and compute*): on 2
    # Zen 3 cores its two lengths cost about 560 of the cold build's 8,100 CPU seconds (l = 100
    # at 7,000 steps and l = 125 at 9,000, three models each; a longer sequence needs more
    # steps before the side channel is learnt at all: on seeds 100-102, unused by the book,
    # l = 100 at 3,500 steps left one first-hop slope at 0.015) and graded nothing: the length
    # row and the law's two predictions read "not shown at this budget" in the reference of
    # 2026-12-07. At one length they are not testable here; the `paper` profile trains three
    # lengths, and `reach_lens` / `reach_len_steps` put them back (e.g. 75,100,125 with
    # 5000,7000,9000). Three seeds beyond the base family: a three-model stack's step costs
    # 0.56 of a five-model stack's. The matched control (plain kernel-1 blocks) at one block
    # per block, the cheapest family of the layer axis.
    "cpu": dict(reach_mix=[0, 1], reach_lens=[75], reach_len_steps=[5000],
                reach_matched_mix=1, reach_seeds=[0, 1, 2], reach_eval=25_600, curve_eval=6400),
    # paper: budgets grow with l as at cpu (a longer sequence needs more steps to learn)
    "paper": dict(reach_mix=[0, 1], reach_lens=[600, 900, 1200],
                  reach_len_steps=[20_000, 30_000, 40_000], reach_matched_mix=1,
                  reach_seeds=list(range(5)), reach_eval=800_000),
}  # fmt: skip

A5 = Spec(
    chapter="a5_reach",
    params=[*LOCALIZATION_PARAMS, *REACH_PARAMS, PAPER_RECORD, *LIVE_PARAMS],
    # paper: live_seeds 0, the study's families of up to 64 layers would not fit the page
    profiles=with_live(
        {p: from_a1(p, **_REACH[p], paper_record=RECORD_PATH) for p in ("smoke", "cpu", "paper")},
        live_seeds=0,
    ),  # fmt: skip
    checks=[
        odd_kernel,
        needs_interior,
        groups_divide,
        enough_samples,
        curve_inside_budget,
        stress_norm,
        _reach_lengths,
        _reach_axes,
    ],
    records=("paper_record",),
    plan=plans.a5,
)
