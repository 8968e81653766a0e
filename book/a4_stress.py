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
# (a4)=
# # A4. Stress tests: is the side channel real, and where does it matter?
#
# Chapters {ref}`a1`–{ref}`a3` reproduce paper A's experiments. This chapter runs the ones its
# critics asked for. Each section is one experiment with its figure, its null and its verdict;
# the networks are chapter A1's (same configuration, so the same cached models) unless a
# section says otherwise.
#
# :::{admonition} Paper facts and our reconstruction
# :class: important
# **Paper facts.** The side channel: pooled normalization statistics carry information about
# the boundary to every index, so a normalized CNN localizes beyond its receptive field $R$;
# overlapping receptive fields share noise patches that the statistics relay (PackNorm, one hop
# reaches $3R$); InstanceNorm localizes the whole sequence; the paper expects the mechanism in
# real architectures such as the 1-D U-Net of diffusion planners {cite:p}`janner2022planning`.
#
# **Our reconstruction** (every item is a parameter): the constants fed in
# (`constant_values`); circular-padding networks trained for `circular_steps` steps; the
# population statistics estimated on `intervention_ref` fresh samples; "interior statistics"
# are computed at layer $j$ over the positions whose layer-$j$ input misses the padding
# ($[j\lfloor k/2\rfloor, \ell-1-j\lfloor k/2\rfloor]$); the receptive-field test of
# PackNorm uses kernel `rf_pack_kernel` at chapter A2's path length; the U-Net and the 2-D
# CNN are our own small designs (`paper_a.cached.unet` and `paper_a.cached.grid2d` state every
# choice). :::
#
# **Run time** of this chapter: {{ cost_a4_stress }}.
#
# **In plain words**, at this profile (each at its own level; the {ref}`ledger` gives the final
# verdict): trained without a boundary, the circular-padding networks' interior stays flat:
# {glue:text}`a4_circular_flat`. Population statistics in place of the samples' own leave no
# slope: {glue:text}`a4_population_flat`; another sample's statistics:
# {glue:text}`a4_shuffled_flat`; statistics of the interior alone remove at least 90 % of the
# slope: {glue:text}`a4_interior_statistics`. PackNorm without receptive-field overlap (kernel
# 1, a pool head) stays at chance below the paper's transition:
# {glue:text}`a4_packnorm_overlap_pool`. A side channel in a 1-D U-Net:
# {glue:text}`a4_unet_side_channel`; in a 2-D CNN: {glue:text}`a4_2d_side_channel`.

# %% tags=["parameters", "hide-input"]
profile = "cpu"  # smoke, cpu or paper; a knob left at None takes the profile's value
seq_len = None  # sequence length l [smoke 48 · cpu 75 · paper 600]
kernel = None  # convolution kernel size k [every profile: 5]
depth = None  # number of conv blocks d [smoke 4 · cpu 4 · paper 32]
width = None  # channels C per block [smoke 8 · cpu 32 · paper 32]
norm = None  # normalization compared against 'none' [every profile: instance]
groups = None
#   GroupNorm groups G (norm='group') [every profile: 1]
batch_eval = None  # BatchNorm statistics at evaluation [every profile: minibatch]
steps = None  # Adam steps per model [smoke 40 · cpu 5,000 · paper 20,000]
batch_size = None  # training batch size [every profile: 32]
lr = None  # Adam learning rate (the peak, under a schedule) [smoke 0.001 · cpu 0.01 · paper 0.001]
schedule = None  # learning-rate schedule: constant, onecycle or cosine (warm-up)
#   [every profile: constant]
null_init = None  # the no-norm null's init: he (Kaiming normal) or default (PyTorch's)
#   [every profile: he]
curve_fractions = None  # budget fractions evaluated for compute-to-effect curves
#   [every profile: [0.125, 0.25, 0.5]]
curve_eval = None  # predictions per index at each compute-to-effect curve point
#   [smoke 1,024 · cpu 12,800 · paper 800,000]
device = None  # where networks train and run: 'auto' is cuda when available
#   [smoke cpu · cpu cpu · paper auto]
workers = None  # processes that train stacks side by side (0: one per core; results don't change)
#   [smoke 2 · cpu 0 · paper 1]
seeds = None  # training seeds (one model each) [smoke [0, 1] · cpu 0-4 · paper 0-4]
n_eval = None  # predictions per index for the Welch tests
#   [smoke 2,048 · cpu 51,200 · paper 3,200,000]
eval_batch_size = None  # evaluation batch size (matters for BatchNorm minibatch statistics)
#   [every profile: 32]
alpha = None  # Welch test level (paper: 0.1) [every profile: 0.1]
detector = None  # localization test: span (calibrated), neighbour (before) or definition (paper's)
#   [every profile: span]
distance_window = None  # half-width of the window used for the localization distance
#   [every profile: 4]
distance_threshold = None  # fraction of the window that must be localized [every profile: 0.5]
probe_batches = None  # batches of fresh noise to fit each depth's linear probe
#   [smoke 4 · cpu 64 · paper 256]
hop_factor = None  # single-hop reach in units of R(d) (paper: 3, i.e. R + 2R) [every profile: 3]
pack_kernel = None  # PackNorm net: kernel size [smoke 3 · cpu 3 · paper 5]
pack_depth = None  # PackNorm net: conv blocks [smoke 2 · cpu 8 · paper 32]
pack_width = None  # PackNorm net: channels [smoke 4 · cpu 16 · paper 32]
pack_len = None
#   path length l' (0 = 2R+1, our choice) [every profile: 0]
pack_head = None  # head on path A: mean over positions (pool) or centre index [every profile: pool]
overlap_fracs = None  # overlaps swept, as fractions of l' (rounded to integers)
#   smoke [0, 0.5, 1]
#   cpu [0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1]
#   paper [0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1]
control_fracs = None  # overlaps at which per-path InstanceNorm (no channel) is trained
#   [smoke [1] · cpu [1] · paper [0.5, 1]]
pack_steps = None  # PackNorm: Adam steps per model [smoke 30 · cpu 1,500 · paper 10,000]
pack_batch_size = None  # PackNorm: training batch size [smoke 16 · cpu 32 · paper 32]
pack_lr = None  # PackNorm: Adam learning rate [every profile: 0.001]
pack_seeds = None  # PackNorm: seeds (one model per seed and overlap)
#   [smoke [0] · cpu 0-4 · paper 0-3]
n_test = None  # PackNorm: fresh test pairs per model [smoke 512 · cpu 8,192 · paper 100,000]
transition_level = None  # accuracy that defines the transition overlap [every profile: 0.75]
constant_values = None  # constant inputs fed to the trained networks
#   [smoke [0, 1] · cpu [0, -1, 1, 2] · paper [0, -1, 1, 2]]
circular_steps = None  # Adam steps of the networks trained with circular padding
#   [smoke 40 · cpu 1,250 · paper 20,000]
intervention_eval = None  # predictions per index under each intervention
#   [smoke 1,024 · cpu 6,400 · paper 100,000]
intervention_ref = None  # fresh samples that estimate the population statistics
#   [smoke 64 · cpu 4,096 · paper 65,536]
rf_pack_kernel = None
#   PackNorm kernel of the receptive-field test (1: R = 0) [every profile: 1]
rf_pack_heads = None  # heads of the receptive-field test (pool, centre)
#   [smoke [pool] · cpu [pool] · paper [pool, centre]]
unet_len = None  # U-Net: sequence length (a multiple of 2**unet_levels)
#   [smoke 64 · cpu 64 · paper 256]
unet_levels = None  # U-Net: down-sampling levels [smoke 2 · cpu 2 · paper 3]
unet_width = None  # U-Net: channels at the top level (doubling per level)
#   [smoke 4 · cpu 8 · paper 32]
unet_groups = None  # U-Net: GroupNorm groups per level [smoke 4 · cpu 8 · paper 8]
unet_steps = None  # U-Net: Adam steps (one-cycle schedule) [smoke 30 · cpu 1,500 · paper 20,000]
unet_eval = None  # U-Net: predictions per index [smoke 1,024 · cpu 16,384 · paper 400,000]
grid_size = None  # 2-D CNN: image height and width [smoke 12 · cpu 16 · paper 32]
grid_depth = None  # 2-D CNN: conv blocks [smoke 2 · cpu 3 · paper 4]
grid_channels = None  # 2-D CNN: channels [smoke 4 · cpu 16 · paper 32]
grid_steps = None  # 2-D CNN: Adam steps (one-cycle schedule) [smoke 30 · cpu 1,500 · paper 20,000]
grid_eval = None  # 2-D CNN: predictions per index [smoke 512 · cpu 4,096 · paper 100,000]
arch_seeds = None  # U-Net and 2-D CNN seeds [smoke [0, 1] · cpu 0-4 · paper 0-4]
unet_growth = None  # U-Net: channel multiplier per level (Janner: 2) [every profile: 2]
unet_blocks = None  # U-Net: conv blocks per level and in the bottleneck [every profile: 1]
unet_kernel = None  # U-Net: convolution kernel (odd) [every profile: 3]
unet_activation = None  # U-Net: activation (Janner: mish) [every profile: mish]
unet_down = None  # U-Net: down-sampling, strided conv (Janner) or avgpool [every profile: avgpool]
unet_up = None  # U-Net: up-sampling, transposed conv (Janner) or nearest [every profile: nearest]
grid_kernel = None  # 2-D CNN: convolution kernel (odd) [every profile: 3]
arch_batch_size = None  # U-Net and 2-D CNN: training batch size [every profile: 16]
arch_lr = None  # U-Net and 2-D CNN: peak Adam learning rate [every profile: 0.01]
arch_schedule = None  # U-Net and 2-D CNN: learning-rate schedule [every profile: onecycle]
arch_eval_batch = None  # U-Net and 2-D CNN: samples per evaluation stream batch [every profile: 32]

# %% tags=["remove-input"]
from normbook.pages import fmt, report
from normbook.paper_a.a4_stress import claims, figures, spec, text, views
from normbook.paper_a.grading import sesoi
from normbook.paper_a.measures import equivariance
from normbook.paper_a.params import a1_reuse_note
from normbook.paper_a.runs import arch_runs, localization, packnorm, stress

params, run = report.start(spec.A4, globals())
setup = localization.Setup.from_params(params)
run.glue("a4_reuse", a1_reuse_note(params))
run.glue("a4_R", setup.radius)

# %% [markdown]
# The networks of this chapter: {glue:text}`a4_reuse`. Their receptive radius is
# $R$ = {glue:text}`a4_R`.

# %%
localization.pretrain(stress.networks(setup, params), params.workers)
no_norm = localization.localize(setup, setup.cnn("none"))
with_norm = localization.localize(setup, setup.chapter_cnn)
circular = localization.circular_null(setup, setup.chapter_cnn)
print("A1's networks loaded from the cache:",
      fmt.from_cache({r.name: r.train_cache_hits for r in (no_norm, with_norm)}))  # fmt: skip

# %% [markdown]
# (a4-constant)=
# ## A constant input: where does position come from?
#
# Feed each trained network sequences that do not vary: the all-zero input and other
# constants. Every index beyond $R$ from an end then sees the same values, and every pooled
# statistic is one number shared by all indices, so translation symmetry forces one output
# value on the whole interior, whatever the normalization: only the ends can differ.
# {numref}`fig-a4-constant` shows it.

# %%
const = [stress.constant_input(r, params.constant_values) for r in (no_norm, with_norm)]
report.figure("fig-a4-constant", figures.constant_input(const, [no_norm, with_norm]))
checks = claims.constant_checks(const)
report.show_checks("a4_constant", checks)
run.record("a4-constant", checks=checks)

# %% [markdown]
# ```{glue:figure} fig-a4-constant
# :name: fig-a4-constant
# :alt: Output per index for constant inputs beside the mean prediction on noise, per network.
#
# Outputs for constant inputs (thin lines) and the mean prediction on noise (thick), first
# seed, without and with normalization; grey: within $R$ of an end. Drawn by
# `paper_a.a4_stress.figures.constant_input`.
# ```
#
# With no variation in the input, nothing positional reaches the interior: the position the
# normalized network reports on noise is built from the *noise* (its local patches and their
# statistics), not carried in from the boundary by the statistics alone.

# %% [markdown]
# (a4-circular)=
# ## Trained without a boundary
#
# Chapter A1's null evaluates trained networks with circular padding. Here the networks are
# also *trained* with circular padding ({glue:text}`a4_circ_steps` steps), so no boundary
# exists at any time; any index they "localize" is a false positive of the whole pipeline.
# That they are exactly cyclic-equivariant holds by construction (a circularly padded network
# with position-independent weights), so it is a check. Their expected interior slope is then
# 0, but a measured slope is only an estimate: "flat" is a claim, an equivalence test that the
# mean slope over seeds lies within ± the slope SESOI, so that a slope too noisy to tell from 0
# reads "not shown", never "flat".

# %%
circ = stress.trained_circular(setup, params.norm, params.circular_steps)
cyc = equivariance.cyclic_change(circ.net, params.seq_len, shift=setup.radius)
run.glue("a4_circ_steps", f"{params.circular_steps:,}")
run.glue("a4_circ_frac", fmt.join(circ.frac_interior, ".2f"))
run.glue("a4_alpha", params.alpha)
checks = claims.circular_trained_checks(circ, cyc)
report.show_checks("a4_circular", checks)
rows = [claims.circular_flat(circ)]
report.show_verdicts("a4_circular", rows)
run.record("a4-circular", checks=checks, claims=rows)

# %% [markdown]
# Trained without a boundary, the networks' interior fractions are
# {glue:text}`a4_circ_frac`: the detector flags each index with probability
# {glue:text}`a4_alpha`, and a network's flags come in runs, so single networks scatter widely
# around it ({ref}`methods-null-statistics`).

# %% [markdown]
# (a4-interventions)=
# ## Replacing the statistics
#
# If the statistics are the channel, replacing them must remove the effect. At evaluation we
# replace each sample's statistics, at every normalization layer or at one layer, by (a) the
# population's (mean and variance over many samples and positions, as BatchNorm uses at
# evaluation), (b) another sample's (the next in the batch), or (c) the interior's only, and
# measure the interior slope on the same fresh inputs ({glue:text}`a4_int_n` predictions per
# index). Two of the three hold by symmetry when applied at every layer: population statistics
# are constants, and another sample's statistics are independent of this sample's input, so
# either leaves every normalization a translation-equivariant map of the sample's own input
# and its expected interior slope 0. Each is graded as an equivalence claim (the mean slope
# within ± the slope SESOI), as above. The open question is (c): do the
# statistics of the interior alone, which still depend on this sample, remove the slope? The
# mechanism predicts they remove nearly all of it; the claim asks for at least
# {glue:text}`a4_removed_sesoi` of it. Whether the share removed was still rising is judged
# on the same interventions at the states kept during training, with as many predictions.

# %%
sweep = stress.interventions(
    setup, setup.chapter_cnn, params.intervention_eval, params.intervention_ref
)
report.figure("fig-a4-interventions", figures.interventions(sweep, no_norm))
run.glue("a4_int_n", f"{params.intervention_eval:,}")
run.glue("a4_removed_sesoi", f"{sesoi.REMOVED.value:.0%}")
kept = stress.intervention_curve(
    setup, setup.chapter_cnn, params.intervention_eval, params.intervention_ref
)
rows = [*claims.symmetric_interventions(sweep), claims.interior_statistics(sweep, with_norm, kept)]
report.show_verdicts("a4_interventions", rows)
run.record("a4-interventions", claims=rows)

# %% [markdown]
# ```{glue:figure} fig-a4-interventions
# :name: fig-a4-interventions
# :alt: Interior slope per seed under each replacement of the statistics, per layer.
#
# Interior slope when the normalization statistics are replaced at every layer or at one
# layer; bands: the unchanged networks and the no-norm networks (mean ± sd over seeds).
# Drawn by `paper_a.a4_stress.figures.interventions`.
# ```
#
# {numref}`fig-a4-interventions` shows which layers carry the position: a replacement at one
# layer that leaves the slope unchanged means that layer's statistics are not needed.

# %% [markdown]
# (a4-packnorm)=
# ## Does PackNorm test receptive-field overlap?
#
# Chapter {ref}`a2` reads the rise of PackNorm's accuracy with the overlap $o$ as receptive
# fields sharing a noise patch. With kernel {glue:text}`a4_rf_k` ($R$ = 0) no receptive fields
# overlap at all; if accuracy still rises with $o$, the transition says nothing about $R$. Same
# path length, overlaps, seeds and training as chapter A2 ({numref}`fig-a4-packnorm`). The
# paper's reading predicts accuracy at chance at every partial overlap; the claim asks that
# every model stay within {glue:text}`a4_chance_sesoi` of chance at the largest partial overlap
# (exact binomial tests), once the kernel-1 networks have shown that they learned (accuracy at
# full overlap, where path B *is* path A). The `cpu` profile trains the pool head only: the
# centre head's models did not all learn the task at that budget, and it was the book's trade
# for its 60-minute ceiling ({ref}`compute-trade`); `rf_pack_heads` puts it back, and the
# `paper` profile trains both.

# %%
pack_setup = packnorm.PackSetup.from_params(params)
a2 = packnorm.overlap_sweep(pack_setup)
heads = stress.receptive_field_sweeps(pack_setup, params.rf_pack_kernel, params.rf_pack_heads)
run.glue("a4_rf_k", params.rf_pack_kernel)
report.figure("fig-a4-packnorm", figures.receptive_field_test(heads, a2, params.rf_pack_kernel))
rows = claims.receptive_field_rows(heads)
run.glue("a4_chance_sesoi", f"{sesoi.CHANCE.value:g}")
run.glue("a4_rf_full", fmt.join([a.pooled_acc[-1] for a in heads.values()], ".3f"))
run.glue("a4_rf_reading", text.rf_reading(rows))
run.glue("a4_rf_checks", text.rf_checks(rows))
report.show_verdicts("a4_packnorm", rows)
run.record("a4-packnorm", claims=rows)

# %% [markdown]
# ```{glue:figure} fig-a4-packnorm
# :name: fig-a4-packnorm
# :alt: PackNorm accuracy against the overlap for chapter A2's network and kernel-1 networks.
#
# PackNorm accuracy against the overlap, pooled over seeds: chapter A2's network and the same
# sweep with kernel {glue:text}`a4_rf_k`. Drawn by `paper_a.a4_stress.figures.receptive_field_test`.
# ```
#
# Each network's seeds behind the pooled points, with the pooled interval
# (`paper_a.a4_stress.views.packnorm_kernels`):

# %%
report.show_view(views.packnorm_kernels(heads, a2, params.rf_pack_kernel))

# %% [markdown]
#
# At full overlap the kernel-{glue:text}`a4_rf_k` networks reach accuracy
# {glue:text}`a4_rf_full` (one value per head): {glue:text}`a4_rf_reading`.
#
# **What holds a head's row.** A head is graded only after its models learned the task at full
# overlap: {glue:text}`a4_rf_checks`. A row whose own test is on neither side would stay *not
# shown* even with a passing check; what would decide it is a budget at which every model
# learned, and enough models for an interval clear of the band's edge.

# %% [markdown]
# (a4-unet)=
# ## A 1-D U-Net
#
# Paper A expects the side channel in real architectures such as the 1-D U-Net of diffusion
# planners {cite:p}`janner2022planning`. Ours is a small one in that style (the U-Net of
# {cite:t}`ronneberger2015unet` in one dimension: down- and up-sampling, skip connections,
# GroupNorm; every choice is a parameter, `unet_*` and `arch_*`, and `paper_a.cached.unet`
# says why), trained on the same task, with the same two nulls. A network that down-samples
# repeats itself under shifts of $2^{\text{levels}}$, so the detector compares indices
# $2^{\text{levels}}$ apart.

# %%
unet_cfg = arch_runs.unet_config(params)
unets = arch_runs.runs(unet_cfg)
report.figure("fig-a4-unet", figures.unet_predictions(unets.all))
run.glue("a4_unet_R", unets.norm.radius)
rows = [claims.architecture_localizes(unets, "a 1-D U-Net", "a4_unet_side_channel")]
report.show_verdicts("a4_unet", rows)
run.record("a4-unet", claims=rows)

# %% [markdown]
# ```{glue:figure} fig-a4-unet
# :name: fig-a4-unet
# :alt: Mean U-Net prediction per index with GroupNorm, without norms, and with circular padding.
#
# Mean prediction of the U-Net ($R$ = {glue:text}`a4_unet_R`, measured exactly) with GroupNorm,
# without normalization, and with circular padding; dashed: $R$ from each end. Drawn by
# `paper_a.a4_stress.figures.unet_predictions`.
# ```

# %% [markdown]
# (a4-2d)=
# ## Two dimensions
#
# A 2-D CNN on noise images regresses the row and the column coordinate. Does InstanceNorm let
# it localize rows and columns beyond $R$, as in 1-D? Each axis is tested on the channel's
# average over the other axis.

# %%
grid_cfg = arch_runs.grid_config(params)
grids = arch_runs.runs(grid_cfg)
report.figure("fig-a4-2d", figures.grid_predictions(grids.all))
run.glue("a4_grid_R", grids.norm.radius)
run.glue("a4_grid_steps", f"{grid_cfg.steps:,}")
run.glue("a4_arch_half", fmt.join(grid_cfg.checkpoints, ".3g") or "none")
rows = [claims.architecture_localizes(grids, "a 2-D CNN", "a4_2d_side_channel")]
report.show_verdicts("a4_2d", rows)
run.record("a4-2d", claims=rows)

# %% [markdown]
# ```{glue:figure} fig-a4-2d
# :name: fig-a4-2d
# :alt: Row and column profiles of the 2-D CNN's mean predictions per seed, with both nulls.
#
# The 2-D CNN ($R$ = {glue:text}`a4_grid_R`): the profiles every axis test grades, the
# row-coordinate output averaged over columns (left) and the column-coordinate output averaged
# over rows (right), one line per seed, beside both nulls; dashed, $R$ from each end. Drawn by
# `paper_a.a4_stress.figures.grid_predictions`.
# ```
#
# These networks trained for {glue:text}`a4_grid_steps` steps. A flat interior alone cannot
# tell "the channel does not exist in 2-D" from "it has not been learned yet", so both
# architectures keep their weights at {glue:text}`a4_arch_half` of the budget and are evaluated
# there as at the end: a claim is refuted only if the interior slope also gained less than half
# its SESOI over the last half of the budget. Each is graded only if its networks learned the
# task (their positive control); the `paper` profile trains longer, and `grid_steps` is a
# parameter.

# %% [markdown]
# How far the channel carries, and how fast it fades with the distance from the end, the
# number of normalization layers and the sequence length, is chapter {ref}`a5`'s question.

# %% [markdown]
# (a4-exercises)=
# ## Exercises
#
# Each exercise re-executes this chapter with other parameters (one command from the
# repository root); predict first, then run.
# Each exercise states what it costs and what it retrains; `make exercises
# EXERCISES=<label>` runs it into a build folder of its own, and its solution then shows
# the outcome.
#
# :::{exercise} GroupNorm under intervention
# :label: a4-ex-group
# Run the interventions on GroupNorm networks instead of InstanceNorm:
# `make chapter CHAPTER=book/a4_stress.py PARAMS='-p norm group -p groups 4'`. Predict whether
# population statistics still remove the localization.
#
# **Cost at `cpu`:** {{ cost_a4_ex_group }}.
# :::
#
# :::{solution} a4-ex-group
# :class: dropdown
# Yes, if the statistics are the channel: population statistics are constants, so they turn
# every GroupNorm into a fixed affine map and the network becomes translation-equivariant in
# the interior, whatever $G$ is. The slope before intervention may be smaller (fewer
# statistics per layer, chapter {ref}`a3`), so the drop is smaller in absolute terms.
#
# **Outcome at `cpu`:** {{ outcome_a4_ex_group }}
# :::
#
# :::{exercise} A longer circular training
# :label: a4-ex-circular
# Networks trained with circular padding never see a boundary. Predict their interior
# fraction after four times the training,
# `make chapter CHAPTER=book/a4_stress.py PARAMS='-p circular_steps 5000'`.
#
# **Cost at `cpu`:** {{ cost_a4_ex_circular }}.
# :::
#
# :::{solution} a4-ex-circular
# :class: dropdown
# No change beyond noise: a circularly padded network with position-independent weights is
# exactly cyclic-equivariant (the chapter checks it), so its mean prediction is the same at
# every index however long it trains. Whatever it scores is the pipeline's false-positive
# rate.
#
# **Outcome at `cpu`:** {{ outcome_a4_ex_circular }}
# :::

# %%
run.finish()
