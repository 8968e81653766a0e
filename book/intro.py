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
# (intro)=
# # Normalization layers inside CNNs: two papers, executed
#
# Two papers on normalization layers in CNNs ({ref}`intro-papers`), re-run and graded claim by
# claim by tests that could come out either way; every number comes from the code shown.
#
# (intro-findings)=
# ## Findings at a glance

# %% tags=["parameters", "remove-input"]
profile = "cpu"  # smoke, cpu or paper; a knob left at None takes the profile's value

# %% tags=["remove-input"]
from normbook.book_pages import intro, ledger
from normbook.pages import report

params, run = report.start(intro.INTRO, globals())
recs = ledger.records(params.profile)
run.glue("intro_profile", params.profile)
report.md(intro.scale_line(recs, params.profile))

# %% tags=["remove-input"]
report.md(intro.findings_table(recs, params.profile, "A"))

# %% tags=["remove-input"]
report.md(intro.split_table(recs))
report.md(intro.findings_table(recs, params.profile, "B"))

# %% tags=["remove-input"]
report.md(intro.undecided(recs))
report.md(intro.recorded_note(recs))

# %% tags=["remove-input"]
report.md(intro.against_reference(recs, params.profile))

# %% [markdown]
# Every verdict above holds *at this profile*: a refutation at this scale says the effect is
# smaller than the smallest effect that would matter in networks trained this way, not that
# the papers' networks lack it. "Effect" is each claim's estimate with its 90 % interval over
# independently trained networks, beside its smallest effect of interest (SESOI); the
# {ref}`ledger` has every claim, its test and its null, and the {ref}`methods` page the rules.
# Counted by where each claim comes from (the paper's own claims, re-tests of them in settings
# the paper did not run, the critics' claims and this book's own):

# %% tags=["remove-input"]
report.md(intro.counts_by_origin(recs))

# %% tags=["remove-input"]
report.figure("fig-intro-verdicts", ledger.verdict_summary(recs))

# %% [markdown]
# ```{glue:figure} fig-intro-verdicts
# :name: fig-intro-verdicts
# :alt: Horizontal bars counting each paper's claims by verdict and origin.
#
# Every claim of this build by final verdict, per paper and origin. Drawn by
# `book_pages.ledger.verdict_summary`.
# ```
#
# (intro-papers)=
# ## The two papers
#
# **Paper A.** Pfrommer, Ma, Huang, Sojoudi, *Spooky Action at a Distance: Normalization Layers
# Enable Side-Channel Spatial Communication* {cite:p}`pfrommer2025spooky`. Claim: spatially pooled
# normalization (InstanceNorm, GroupNorm, BatchNorm with minibatch statistics) lets a CNN locate
# positions far outside its receptive field, by passing messages through the normalization
# statistics.
#
# **Paper B.** Potgieter, Mouton, Davel, *Impact of Batch Normalization on Convolutional Network
# Representations* {cite:p}`potgieter2025batchnorm`. Claim: BatchNorm does not consistently change
# representational sparsity, and BatchNorm networks form purer class clusters (lower
# Davies–Bouldin index).
#
# (intro-read)=
# ## How to read it
# Each chapter opens with an admonition separating **paper facts** from **our reconstruction**
# (what the papers leave unsaid and we had to choose; every such choice is a parameter), shows
# the parameters it ran with, reproduces the paper's figures, and ends with two tables computed
# from the executed numbers: the paper's **claims**, each graded *reproduced*, *partly
# reproduced*, *refuted*, *not shown at this budget*, *moot* (its premise was refuted) or *not
# testable at this profile* by one test
# over independently trained networks against the smallest effect that would matter, with its
# effect size, interval, p-values and the null it was compared with (a network family that never
# learned grades nothing); and the **checks**,
# properties that hold by construction, where a failure means a bug rather than a verdict. The
# {ref}`a4` and {ref}`b4` run the stress tests the papers' critics asked for (a constant input,
# networks without a boundary, replaced normalization statistics, a U-Net and a 2-D CNN; BatchNorm
# against the learning rate it is confounded with, the cluster count, the sparsity threshold,
# held-out images). {ref}`a5` asks how far paper A's side channel carries as the number of
# normalization layers and the sequence length grow, fits a law to it and states what it predicts
# for the paper's network. The {ref}`ledger` gathers every chapter's claims and verdicts in one table, read from the chapters
# executed for this build. The
# {ref}`methods` page explains the reconstruction, the localization test (and how its
# false-positive rate and power were measured) and the verdict rules in one place. Figures of this book are numbered "Figure n"; "Fig. n" always means the paper's
# own figure n. Every figure's caption names the library function that drew it.
# A run record at the end of each chapter gives the profile, library version, data provenance
# and wall time. Where our numbers disagree with a paper, the chapter says so.
#
# (intro-profiles)=
# ## Profiles
#
# | profile | purpose | budget |
# |---|---|---|
# | `smoke` | continuous integration: every code path runs, numbers are meaningless | seconds per chapter |
# | `cpu` | the default build: every experiment at reduced scale, with enough seeds that a claim can reach significance; effects that need the papers' training budget may not appear, and the verdicts say so | minutes per chapter on 2 cores |
# | `paper` | the papers' own scale (their sequence length and full datasets; their four seeds plus one, so that the tests can reach significance) | a GPU, hours |
#
# Individual parameters override the profile. Paper A's `cpu` training budget (learning rate,
# schedule, batch size) was chosen on the {ref}`calibration` page, at seeds no chapter uses, by how
# fast it makes the effect appear; every paper-A chapter shows its networks' effect at fractions of
# the budget, so a reader sees whether an effect was still growing when training stopped.
# `make plan PROFILE=paper` prints each chapter's planned FLOPs and an estimated GPU time without
# running anything.
#
# (intro-rerun)=
# ## Re-running a chapter
#
# From a fresh clone, `make book` creates the environment, executes every chapter at the `cpu`
# profile and builds this HTML book; `make test` runs the unit tests, executes every chapter at
# `smoke` and builds the book with warnings as errors.
#
# To re-execute one chapter with other parameters and rebuild its page:
#
# ```bash
# make chapter CHAPTER=book/a1_localization.py PARAMS='-p seq_len 200 -p norm group -p groups 4'
# make chapter CHAPTER=book/a1_localization.py PROFILE=paper      # the paper's scale (GPU advised)
# ```
#
# The executed notebook is kept in `_build/<profile>/executed/book/` and can be opened in
# Jupyter. You can also open the chapter source itself (`book/*.py`, a jupytext notebook) in
# Jupyter or JupyterLab with jupytext installed, edit the cell tagged `parameters`, and run it.
# A parameter that cannot work (unknown name, wrong type, impossible size) stops the run with a
# one-line error before any computation.
#
# Trained models and evaluations are cached in `.cache/normbook` (or `$NORMBOOK_CACHE`), keyed by
# their full configuration and a hash of the library code that produced them: re-running with the
# same parameters never retrains. `make clean-cache` empties the cache. Datasets are read from
# `$NORMBOOK_DATA`.

# %% tags=["hide-input"]
run.finish()
