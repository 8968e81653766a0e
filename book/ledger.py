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
# compared with, and its verdict. Nothing here is typed: this page reads the records that the
# chapters wrote when they were executed for this build (profile {glue:text}`ledger_profile`),
# so a chapter re-executed with other parameters (`make chapter …`) rebuilds this page from
# that run, and {ref}`ledger-provenance` says which parameters changed. The verdict
# vocabulary and the rules behind it are on the {ref}`methods` page ({ref}`methods-verdicts`):
# *reproduced* and *partly reproduced* need a test significant at level
# {glue:text}`ledger_alpha`; *not reproduced* needs a test that could have reached it and did
# not; *inconclusive* means the design could not reach it (too few seeds) or the positive
# control failed, or the effect was still growing when training stopped.

# %% tags=["parameters"]
profile = "cpu"  # smoke, cpu or paper; a knob left at None takes the profile's value

# %%
from normbook import claims_ledger
from normbook.chapters import SPECS
from normbook.core import claims, report

P, run = report.start(claims_ledger.LEDGER, globals())
recs = claims_ledger.records(P.profile)
n_claims = sum(len(r["claims"]) for r in recs)
report.glue_all("ledger", {"profile": P.profile, "alpha": claims.ALPHA, "n": n_claims})

# %% [markdown]
# (ledger-summary)=
# ## Verdicts at a glance
#
# {numref}`fig-ledger-summary` counts the {glue:text}`ledger_n` graded claims by verdict.

# %%
report.figure("fig-ledger-summary", claims_ledger.verdict_summary(recs))

# %%
absent = claims_ledger.missing(recs)
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
# `claims_ledger.verdict_summary`.
# ```

# %% [markdown]
# (ledger-table)=
# ## Every claim
#
# Effects are each claim's estimate with its {glue:text}`ledger_conf` interval (the unit is the
# claim's own; see the chapter it links to); "n/a" marks an interval that cannot be computed
# (fewer than two seeds, or no spread).

# %%
report.glue("ledger_conf", f"{claims.CLAIM_CONFIDENCE:.0%}")
report.md(claims_ledger.claims_table(recs))

# %% [markdown]
# (ledger-checks)=
# ## Checks
#
# Properties that hold by construction (exact equivariance, controls at chance). A failure is
# a bug in the code, not a verdict about a paper.

# %%
report.md(claims_ledger.table_or_none(claims_ledger.checks_summary(recs)))

# %% [markdown]
# (ledger-provenance)=
# ## Where these numbers come from
#
# The run of each chapter the ledger read: its profile, when it was executed, and every
# parameter that differs from that profile's defaults.

# %%
report.md(claims_ledger.table_or_none(claims_ledger.provenance(recs, SPECS)))
run.finish()
