# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# (ledger)=
# # Claims ledger
#
# Every claim of both papers, and every stress test of them, in one table, with the section
# it comes from, its effect size with the interval, the test and its p-value, the null it was
# compared with, the smallest effect that would matter, and its verdict. Nothing here is
# typed: this page reads the records that the chapters wrote when they were executed for this
# build (profile {glue:text}`ledger_profile`), so a chapter re-executed with other parameters
# (`make chapter …`) rebuilds this page from that run, and {ref}`ledger-provenance` says which
# parameters changed. The verdict vocabulary and the rules behind it are on the {ref}`methods`
# page ({ref}`methods-verdicts`): *reproduced* needs the effect's interval to clear the
# smallest effect of interest (SESOI) on the claim's side; *refuted* needs it wholly below the
# SESOI (or of the other sign), in a network family that passed its positive control, on a
# quantity that had stopped rising; *not shown at this budget* is everything else (too little
# power, a failed control, a curve still rising); *moot* marks a claim whose premise, another
# claim, was refuted, so its question does not arise; *not testable at this profile* marks what
# only the papers' scale can test.

# %% tags=["parameters", "hide-input"]
profile = "cpu"  # smoke, cpu or paper; a knob left at None takes the profile's value

# %% tags=["remove-input"]
from normbook.book_pages import ledger
from normbook.grading import claims
from normbook.pages import report
from normbook.publish.chapters import SPECS

params, run = report.start(ledger.LEDGER, globals())
recs = ledger.records(params.profile)
n_claims = sum(len(r["claims"]) for r in recs)
run.glue_all(
    "ledger",
    {
        "profile": params.profile,
        "alpha": claims.ALPHA,
        "n": n_claims,
        "holm": "{} of {}".format(*ledger.holm_would_leave(recs)),
    },
)

# %% [markdown]
# (ledger-summary)=
# ## Verdicts at a glance
#
# {numref}`fig-ledger-summary` counts the {glue:text}`ledger_n` graded claims by final verdict.
# A chapter grades each claim at level {glue:text}`ledger_alpha` for that claim alone; across
# the many claims of one paper some decisive answers would come by chance, so the final verdict
# is decided by the deciding p-value after a Benjamini–Hochberg adjustment over all the tested
# claims of the same paper: a decisive grade whose adjusted p is not below
# {glue:text}`ledger_alpha` becomes *not shown at this budget*, and its row says so. This is a
# false-discovery reading: among a paper's decisive verdicts, the expected share of wrong ones
# is at most {glue:text}`ledger_alpha`. It holds for independent or positively dependent tests;
# several rows reuse the same networks (chapter A1's in A1, A3 and A4; chapter B1's in B1–B4),
# which makes their tests positively dependent. Holm's family-wise adjustment, which bounds the
# chance of any wrong decisive verdict in a paper, would leave {glue:text}`ledger_holm` of the
# final decisive verdicts. Recorded paper-scale rows are a family of their own, and so are the
# rows that hold by symmetry if the code is right (a flat interior), whose near-certain
# p-values would otherwise loosen the adjustment of the paper's claims. The table counts
# the final verdicts and, where the adjustment changed a count, the grades at each claim's own
# level.

# %%
report.figure("fig-ledger-summary", ledger.verdict_summary(recs))

# %%
report.md(ledger.counts_table(recs))

# %% [markdown]
# A claim *not shown at this budget* says what would decide it (the table's last column):
# **power** (the seeds its test would need, with a chance of 80 %, if the truth were the
# observed effect and spread; the Methods page's power calculation), **a measurement** (no kept
# states tell whether the tested quantity was still moving), **a longer budget** (the epoch cap
# cut some of its networks, and the quantity may still be moving the claim's way; the row says
# how many) or **a control** (a family failed its positive control). *Moot* claims are counted
# apart: no budget decides them while their premise stays refuted. Per paper:

# %%
report.md(ledger.needs_table(recs))

# %%
absent = ledger.missing(recs)
report.md(
    "Chapters with no record at this profile (not executed yet, or failed): "
    + ", ".join(f"`{c}`" for c in absent)
    if absent
    else "Every chapter that grades claims has a record at this profile."
)

# %% [markdown]
# ```{glue:figure} fig-ledger-summary
# :name: fig-ledger-summary
# :alt: Horizontal bars counting each paper's claims by verdict.
#
# Claims per verdict and paper, from the chapters executed for this build. Drawn by
# `book_pages.ledger.verdict_summary`.
# ```

# %% [markdown]
# (ledger-reference)=
# ## Against the reference ledger
#
# The same code with the same seeds gives other numbers on another processor: the convolution
# library picks other kernels (AVX2 on one CPU, AVX-512 on another), the last bit of a sum
# differs, and thousands of training steps turn it into another network. So every build
# compares its ledger with a reference committed with the book (`results/<profile>/ledger.json`,
# written by `make reference` from a full build), claim by claim. Each row also says how far its
# verdict sits from the line that would change it, in standard errors (the table's "from its
# line"; the {ref}`methods` page, {ref}`methods-stability`): a row **near its line** can come
# out otherwise on another processor, and a row that differs from the reference should be one.

# %%
cmp = ledger.against_reference(recs, params.profile)
report.md(ledger.reference_part(cmp, params.profile))

# %% [markdown]
# (ledger-table)=
# ## Every claim
#
# Effects are each claim's estimate with its {glue:text}`ledger_conf` interval, in the unit of
# its SESOI (see the chapter it links to); a dash marks an interval that cannot be computed
# (fewer than two seeds). Open a claim's fold for its test: "p" asks whether the effect clears
# the SESOI (for a band comparison: lies inside the paper's band), "p(below)" whether it falls
# short of it (lies outside the band); "adjusted" is the deciding one after the per-paper
# adjustment, which decides the verdict shown. "From its line" is how far the verdict sits from
# the line that would change it; "vs reference", whether the reference ledger agrees. The search
# box finds "BatchNorm" and "BN" alike.

# %%
run.glue("ledger_conf", f"{claims.CLAIM_CONFIDENCE:.0%}")
report.md(ledger.claims_table(recs, cmp))

# %% [markdown]
# (ledger-controls)=
# ## Positive controls
#
# Before a network family's claims are graded it must show that it learned (for paper A's
# networks, a mean prediction that explains a good part of the ramp's variance, as learning
# it where the padding is visible does; accuracy well above chance for PackNorm's and paper
# B's; the thresholds are on the {ref}`methods` page and in each row below)
# and, for claims about a share of paper A's side-channel slope, the side channel itself in
# its first hop. A failed control makes every claim resting on that family *not shown*. A
# claim that rests on another claim (its premise) lists it here too: a refuted premise makes
# the claim *moot*.

# %%
report.md(ledger.table_or_none(ledger.controls_rows(recs)))

# %% [markdown]
# (ledger-checks)=
# ## Checks
#
# Properties that hold by construction (exact equivariance, controls at chance). A failure is
# a bug in the code, not a verdict about a paper.

# %%
report.md(ledger.table_or_none(ledger.checks_summary(recs)))

# %% [markdown]
# (ledger-provenance)=
# ## Where these numbers come from
#
# The run of each chapter the ledger read: its profile, when it was executed, and every
# parameter that differs from that profile's defaults.

# %%
report.md(ledger.table_or_none(ledger.provenance(recs, SPECS)))
run.finish()
