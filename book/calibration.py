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
# (calibration)=
# # Calibrating the training budget
#
# The `cpu` profile trains paper A's networks for minutes instead of hours, so every minute has to
# count: the effect the book exists to show (a network localizing indices it cannot see) is only
# as plain as the training budget allows. This page chooses chapter {ref}`a1`'s learning-rate
# schedule, learning rate and batch size. It trains the positive control (InstanceNorm) with
# each candidate at chapter A1's geometry and sample budget, on seeds no chapter uses, and
# measures the interior slope of the mean prediction (1 for the ramp itself, 0 for no
# localization; {ref}`a1-fig1a`) at kept states through training against the wall-clock of
# training on this machine. The figure of merit is the slope reached per minute of training.
# The verdicts play no part in the choice.
#
# **Run time** of this page: {{ cost_calibration }}.

# %% tags=["parameters", "hide-input"]
profile = "cpu"  # smoke, cpu or paper; a knob left at None takes the profile's value
seq_len = None  # sequence length l [smoke 48 · cpu 75 · paper 600]
kernel = None  # convolution kernel size k [every profile: 5]
depth = None  # number of conv blocks d [smoke 4 · cpu 4 · paper 32]
width = None  # channels C per block [smoke 8 · cpu 32 · paper 32]
steps = None  # Adam steps per model [smoke 40 · cpu 5,000 · paper 20,000]
batch_size = None  # training batch size [every profile: 32]
null_init = None  # the no-norm null's init: he (Kaiming normal) or default (PyTorch's)
#   [every profile: he]
curve_fractions = None  # budget fractions evaluated for compute-to-effect curves
#   smoke [0.25, 0.5, 0.75]
#   cpu [0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875]
#   paper [0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875]
curve_eval = None  # predictions per index at each compute-to-effect curve point
#   [smoke 1,024 · cpu 8,192 · paper 102,400]
device = None  # where networks train and run: 'auto' is cuda when available
#   [smoke cpu · cpu cpu · paper auto]
seeds = None  # training seeds (one model each) [smoke [100] · cpu [100] · paper [100, 101]]
eval_batch_size = None  # evaluation batch size (matters for BatchNorm minibatch statistics)
#   [every profile: 32]
alpha = None  # Welch test level (paper: 0.1) [every profile: 0.1]
detector = None  # localization test: span (calibrated), neighbour (before) or definition (paper's)
#   [every profile: span]
distance_window = None  # half-width of the window used for the localization distance
#   [every profile: 4]
distance_threshold = None  # fraction of the window that must be localized [every profile: 0.5]
cal_schedules = None  # candidate i's lr schedule
#   smoke [constant, onecycle]
#   cpu [constant, constant, onecycle]
#   paper [constant, constant, onecycle, constant]
cal_lrs = None  # candidate i's (peak) learning rate
#   [smoke [0.003, 0.01] · cpu [0.003, 0.01, 0.01] · paper [0.003, 0.01, 0.01, 0.01]]
cal_batch_sizes = None  # candidate i's batch size (same samples: steps scale)
#   [smoke [16, 16] · cpu [32, 32, 32] · paper [32, 32, 32, 16]]

# %% tags=["remove-input"]
from normbook.pages import fmt, report
from normbook.paper_a.a1_localization.spec import A1
from normbook.paper_a.calibration_page import budget, figures, spec, tables
from normbook.paper_a.grading import late
from normbook.paper_a.measures import bands
from normbook.paper_a.runs import localization

params, run = report.start(spec.BUDGET, globals())
setup = localization.Setup.from_params(params)
samples = f"{params.steps * params.batch_size:,}"

# %%
cands = budget.candidates(params.cal_schedules, params.cal_lrs, params.cal_batch_sizes)
run.glue_all("cal", {"L": params.seq_len, "R": setup.radius, "d": params.depth, "n": len(cands),
                      "samples": samples, "seeds": fmt.join(params.seeds)})  # fmt: skip

# %% [markdown]
# (calibration-study)=
# ## The study
#
# {glue:text}`cal_n` candidates, each trained on {glue:text}`cal_samples` samples
# ($\ell$ = {glue:text}`cal_L`, $d$ = {glue:text}`cal_d`, $R$ = {glue:text}`cal_R`; seeds
# {glue:text}`cal_seeds`, stacked in one pass per candidate and cached): a smaller batch gets
# proportionally more steps. The schedules are `constant`, `onecycle` {cite:p}`smith2019super`
# (PyTorch's
# `OneCycleLR`: warm-up to the peak over 30 % of the steps, then annealing) and `cosine`
# (linear warm-up over 5 %, then cosine decay); see `paper_a.cached.stacking.lr_scheduler`. At the
# `cpu` profile the three batch-32 candidates run with one seed each, so that the whole book
# fits its 50-minute budget on two cores; the `paper` profile adds a batch-16 candidate and a
# second seed.

# %%
results = budget.study(setup, cands)
report.figure("fig-cal-curves", figures.effect_per_minute(results))
report.md(tables.budget(results))

# %% [markdown]
# ```{glue:figure} fig-cal-curves
# :name: fig-cal-curves
# :alt: Interior slope against minutes of training per model, one line per candidate.
#
# The positive control's interior slope against training minutes per model on this machine
# (each candidate charged the mean measured time of its batch size),
# mean over seeds (thin lines: single seeds), for every candidate. Drawn by
# `paper_a.calibration_page.figures.effect_per_minute`.
# ```

# %%
top = budget.best(results)
a1 = A1.resolve(params.profile)
chosen = budget.Candidate(a1.schedule, a1.lr, a1.batch_size)
run.glue_all("cal", {"best": top.name, "best_rate": f"{top.slope_per_minute:.3f}",
                      "best_slope": f"{top.final_slope:.3f}",
                      "a1_choice": chosen.label,
                      "agrees": "is" if chosen == top.candidate else "is **not**"})  # fmt: skip
batch, spread = budget.timing_spread(results)
run.glue_all("cal", {"batch": batch, "spread": spread})
gain = late.late_gain(top.curve)
run.glue_all("cal", {"onset": budget.ONSET, "best_gain": fmt.interval(gain),
                      "best_rising": "may still be rising"
                      if late.rising(top.curve, bands.interior_slope)
                      else "has flattened"})  # fmt: skip

# %% [markdown]
# At this profile the best candidate is *{glue:text}`cal_best`*: interior slope
# {glue:text}`cal_best_slope` at the end of the budget, {glue:text}`cal_best_rate` per minute of
# training. Chapter A1's profile uses *{glue:text}`cal_a1_choice`*, which
# {glue:text}`cal_agrees` this page's best at this profile.
#
# The minutes are measured, on a shared machine: candidates at batch size
# {glue:text}`cal_batch` do identical arithmetic, yet their measured training times differ by up
# to {glue:text}`cal_spread`. So each candidate is charged the mean time of its batch size
# (`paper_a.calibration_page.budget.charge_by_batch_size`): within one batch size the final slope,
# which does not depend on timing, decides the ranking, and the machine's noise enters only between
# batch sizes.
#
# The table gives, per candidate, when its plateau ended (the first kept state whose mean slope
# reached {glue:text}`cal_onset`) and how much the slope still gained over the last half of the
# budget: the best candidate gained {glue:text}`cal_best_gain`, so its curve
# {glue:text}`cal_best_rising` (the rule of {ref}`a1-curve`). A longer budget is a parameter
# away (`steps`), at the cost the minutes columns state.
#
# **Left out.** Initialization was not varied (PyTorch's default, per model from its seed).

# %% [markdown]
# (calibration-exercises)=
# ## Exercises
#
# Each exercise re-executes this chapter with other parameters and states what it costs and
# what it retrains; predict first, then run. `make exercises EXERCISES=<label>` runs one into
# a build folder of its own, and its solution then shows the outcome.
#
# :::{exercise} Another candidate
# :label: calibration-ex-cosine
# Add a cosine schedule to the study as a fourth candidate:
#
# ```bash
# make chapter CHAPTER=book/calibration.py \
#   PARAMS="-p cal_schedules constant,constant,onecycle,cosine \
#           -p cal_lrs 0.003,0.01,0.01,0.01 -p cal_batch_sizes 32,32,32,32"
# ```
#
# Predict where it falls among the candidates.
#
# **Cost at `cpu`:** {{ cost_calibration_ex_cosine }}.
# :::
#
# :::{solution} calibration-ex-cosine
# :class: dropdown
# A cosine schedule with warm-up spends the early steps at a low rate and anneals at the end,
# like the one-cycle schedule, so expect its slope-per-minute curve close to one-cycle's.
# The study chooses by slope per minute of training on seeds no chapter uses, so adding a
# candidate can change the choice only if it beats the current one on that figure of merit.
#
# **Outcome at `cpu`:** {{ outcome_calibration_ex_cosine }}
# :::

# %%
run.finish()
