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
# (a1)=
# # A1. Localization beyond the receptive field
#
# Paper A {cite:p}`pfrommer2025spooky` trains a 1-D CNN to map pure
# Gaussian noise to a linear ramp: the only way to predict index $i$'s target is to know
# *where* $i$ is. A purely convolutional network sees only $R = \lfloor k/2\rfloor\cdot d$
# inputs to each side, so far from the zero-padded ends every output sees statistically identical
# inputs and cannot know its position. The paper reports that adding InstanceNorm lets the network
# localize **every** index of a sequence of length {glue:text}`a1_paper_len` with $R$ =
# {glue:text}`a1_paper_R`, and argues that the normalization statistics act as a side channel.
#
# This chapter checks the receptive-field argument numerically ({ref}`a1-task`), trains both
# networks ({ref}`a1-training`), tests localization with a calibrated Welch test and reports
# how *large* the effect is, the first objection of the paper's
# {ref}`public review <methods-sources>`
# ({ref}`a1-fig1a`), and probes every depth ({ref}`a1-fig1b`).
#
# :::{admonition} Paper facts and our reconstruction
# :class: important
# **Paper facts.** Input i.i.d. $\mathcal N(0,1)$, fresh every batch; zero padding;
# target $y_i = i/(\ell-1)$ with MSE loss; stride-1 CNN of conv → norm → ReLU blocks and a
# 1×1 head; $\ell$ = {glue:text}`a1_paper_len`, $R$ = {glue:text}`a1_paper_R`; an index is
# *localized* when its mean prediction differs from every other index's, tested with Welch's
# t-test {cite:p}`welch1947generalization` at $p <$ {glue:text}`a1_paper_alpha`; Fig. 1a
# compares no normalization with InstanceNorm; Fig. 1b probes localization per depth.
#
# **Our reconstruction** (see {ref}`methods-reconstruction-a`; every item is a parameter of this
# chapter): the kernel $k$, and a depth that keeps $\ell/R$ near the paper's
# {glue:text}`a1_paper_ratio` at every profile (this run: {glue:text}`a1_ratio`); the width $C$;
# Adam at a fixed step budget, batch size and learning rate (this run: {glue:text}`a1_steps` steps
# at {glue:text}`a1_lr`, {glue:text}`a1_schedule` learning-rate schedule, chosen by the
# {ref}`budget calibration <calibration>` at seeds the book does not use; the `cpu` step budget is
# {glue:text}`a1_budget` of the `paper` one, so `cpu` takes larger steps); the localization test
# (`detector`, this run: {glue:text}`a1_detector`) calls index $i$ localized when the mean outputs
# at $i-1$ and $i+1$ differ, comparing predictions from *independent* inputs, a test whose
# false-positive rate and power are measured before it grades anything ({ref}`methods-detector`);
# the paper's Definition 2.3 (differ from *every* other index) is kept as the reference; the
# localization distance is how far localization reaches inward *without a break*
# ({ref}`methods-distance`); probes are ridge-regression 1×1 convolutions fitted on fresh noise.
# At the `cpu` profile the sequence is shortened and training is far shorter than the paper's
# (this run: $\ell$ = {glue:text}`a1_seq_len`, $R$ = {glue:text}`a1_R`).
# :::
#
# **Run time** of this chapter: {{ cost_a1_localization }}.

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
paper_record = None  # the recorded paper-scale run the chapter reads (make paper-run writes it)
#   [every profile: results/paper/a1.json]
live_seeds = None  # seeds of each network the live view runs in the page (0: no view)
#   [smoke 2 · cpu 5 · paper 1]
live_draws = None  # noise draws behind the live view's mean prediction
#   [smoke 16 · cpu 16 · paper 4]

# %% tags=["remove-input"]
from normbook.pages import fmt, report
from normbook.paper_a import live, paper_values, plots, recorded, run_tables
from normbook.paper_a.a1_localization import claims, figures, spec, tables, views
from normbook.paper_a.grading import late, sesoi
from normbook.paper_a.grading.sesoi import SLOPE
from normbook.paper_a.measures import bands, equivariance
from normbook.paper_a.runs import localization

params, run = report.start(spec.A1, globals())
setup = localization.Setup.from_params(params)
paper = recorded.read(params.paper_record)  # a recorded paper-scale run, read (never run) below
run.glue("a1_R", setup.radius)
run.glue("a1_seq_len", params.seq_len)
run.glue("a1_half", setup.half)
run.glue_all("a1_paper", {
    "len": paper_values.SEQ_LEN, "R": paper_values.RADIUS, "alpha": paper_values.WELCH_ALPHA,
    "n": f"{paper_values.SAMPLES_PER_INDEX:,}",
    "ratio": f"{paper_values.SEQ_LEN / paper_values.RADIUS:.1f}",
})  # fmt: skip
run.glue("a1_ratio", f"{params.seq_len / setup.radius:.1f}")
run.glue("a1_steps", f"{params.steps:,}")
run.glue("a1_lr", f"{params.lr:g}")
run.glue("a1_schedule", params.schedule)
profiles = spec.A1.profiles
run.glue("a1_budget", f"{profiles['cpu']['steps'] / profiles['paper']['steps']:.0%}")
run.glue("a1_detector", params.detector)

# %% [markdown]
# (a1-task)=
# ## The task and the receptive field
#
# One training example ({numref}`fig-a1-task`): noise in, ramp out. The grey bands mark the
# indices within $R$ of an end; only there can a convolution see the padding.

# %%
report.figure("fig-a1-task", figures.task_example(params.seq_len, setup.radius))

# %% [markdown]
# ```{glue:figure} fig-a1-task
# :name: fig-a1-task
# :alt: A noise sequence and the linear ramp target, with grey bands within R of each end.
#
# The localization task: input noise $x_i$ and target ramp $y_i$; grey, the indices within
# $R$ of an end. Drawn by `paper_a.a1_localization.figures.task_example`.
# ```
#
# **Receptive field, measured.** We differentiate the output at the centre index with respect to the
# input and record how far the non-zero gradient reaches. Without normalization it must stop at
# exactly $R$; a spatially pooled norm couples the output to every input. **Proposition C.1,
# checked.** We shift the input right and compare the interior outputs: a purely convolutional net
# must give *the same* outputs at matching interior positions (translation equivariance), which is
# why no interior index can be localized. The check runs in float64 and allows a change of
# {glue:text}`a1_shift_tol` for rounding: a convolution kernel may sum each output in an order that
# depends on its position, so even a network the proposition covers shows rounding-sized changes.
# Both checks run on the networks trained in {ref}`a1-training`.
# **The nulls.** Every claim that a network localizes is tested against two networks that
# cannot: the no-norm network of the same seed, and the *same* trained network evaluated with
# circular padding, which has no boundary at all and so carries the network's own noise but no
# position ({ref}`methods-null`).
#
# (a1-training)=
# ## Training
#
# Every seed's model is trained in one stacked pass (grouped convolutions; see
# `paper_a.cached.training.train_stack`) and cached on disk per seed, so re-running this chapter
# with the same parameters does not retrain. The two stacks train side by side in `workers`
# processes (`paper_a.runs.localization.pretrain`), each on one thread, so the numbers do not
# depend on `workers`.
#
# **The null's initialisation (a reconstruction, `null_init`).** The paper does not say how its
# networks are initialised. The normalized network starts from PyTorch's default conv init. The
# no-norm null starts from He et al.'s (2015), Kaiming normal with zero biases
# (`paper_a.cached.cnn.StackedCNN`): PyTorch's default shrinks a ReLU network's signal about
# 2.4-fold a layer, which normalization undoes and nothing else does. Measured before any
# result, on seeds the book does not use (100–109), at this chapter's `cpu` geometry: with the
# default init 6 of 10 no-norm networks died at the `cpu` learning rate (every ReLU dead, $R^2$
# 0.15), with He init none did; at the paper's 32 layers a default-initialised null's output
# does not move when its input is redrawn. A null that cannot learn is no control for the side
# channel; `-p null_init default` restores the old null.
#
# **The network and its training, from the library** (shown as the build found them; the long ones
# fold). Each seed is one slice of a stacked network: `norm` picks the layer after every
# convolution, and one Adam step trains every seed's slice at once.
#
# ```{code-of} normbook.paper_a.cached.cnn.StackedCNN
# ```
#
# ```{code-of} normbook.paper_a.cached.norms.make_norm
# ```
#
# ```{code-of} normbook.paper_a.cached.stacking.train
# ```

# %%
localization.pretrain(localization.chapter_networks(setup), params.workers)
no_norm = localization.localize(setup, setup.cnn("none"))
with_norm = localization.localize(setup, setup.chapter_cnn)
circular = localization.circular_null(setup, setup.chapter_cnn)
print("Trained models loaded from the cache:",
      fmt.from_cache({r.name: r.train_cache_hits for r in (no_norm, with_norm)}))  # fmt: skip
report.figure("fig-a1-loss", plots.loss_curves([no_norm, with_norm]))
run.glue("a1_n_eval", f"{no_norm.n_per_index:,}")

# %% [markdown]
# ```{glue:figure} fig-a1-loss
# :name: fig-a1-loss
# :alt: Training loss per step for each network and seed, on a log scale.
#
# Training loss (running mean) of every seed, without normalization and with
# it. Drawn by `paper_a.plots.loss_curves`.
# ```

# %%
shifts = [equivariance.check(r) for r in (no_norm, with_norm)]
report.md(run_tables.equivariance(shifts))
run.glue("a1_reach_none", int(max(shifts[0].reach)))
run.glue("a1_shift_none", f"{max(shifts[0].max_change):.2g}")
run.glue("a1_shift_tol", f"{equivariance.SHIFT_TOLERANCE:g}")
run.glue("a1_c1", "holds" if all(shifts[0].exact) else "FAILS (a bug)")
run.glue("a1_dead_none", fmt.count_of([r < 0 for r in shifts[0].reach]))

# %% [markdown]
# The no-norm network's gradient reaches {glue:text}`a1_reach_none` indices from the centre
# ($R$ = {glue:text}`a1_R`), and its largest interior change under a shift is
# {glue:text}`a1_shift_none`; Proposition C.1 requires zero (here: at most
# {glue:text}`a1_shift_tol`, float64 rounding), and the check {glue:text}`a1_c1`. The normalized
# network's output depends on inputs across the whole sequence and is not
# shift-equivariant in the interior. {glue:text}`a1_dead_none` no-norm networks ended training
# with every ReLU dead (constant output, gradient reach −1): like every no-norm network they
# cannot localize the interior, but they carry no output noise either, which is one reason every
# claim is also tested against the circular-padding null.
#
# (a1-live)=
# ## Nudge one index yourself
#
# The check above asks the trained networks one question; the view below lets you ask your
# own. It runs this chapter's trained networks ({glue:text}`a1_live_seeds`, the weights this
# build loaded from its cache) in your browser, with no kernel: pick an input (noise from a
# seed you choose, a constant, zeros with one spike, a shifted copy, or a region set to zero),
# nudge index $j$, and three plots follow: the prediction at every index against the ramp, the
# mean prediction over {glue:text}`a1_live_draws` noise draws, and how much every output moved.
# Without normalization no output farther than $R$ from $j$ can move, and the view reports
# zero, exactly. With normalization the nudge shifts every layer's statistics, which all
# positions share, so every output moves a little: the side channel, in one gesture. The build
# ran the same inputs through PyTorch and the browser check holds the page's numbers to them,
# within {glue:text}`a1_live_tol`.

# %%
report.show_view(live.live_view(
    "a1-live", {"no normalization": no_norm, with_norm.name: with_norm},
    "Prediction, mean prediction and change caused by a nudge at one index, for the chapter's "
    "trained networks, computed in the browser", params.live_seeds, params.live_draws))  # fmt: skip
run.glue("a1_live_seeds", live.seeds_text(params.live_seeds, params.seeds))
run.glue("a1_live_draws", params.live_draws)
run.glue("a1_live_tol", f"{live.TOLERANCE:g}")

# %% [markdown]
# (a1-fig1a)=
# ## Fig. 1a: mean prediction per index
#
# {numref}`fig-a1-fig1a` shows the mean prediction at every index over
# {glue:text}`a1_n_eval` fresh inputs, one thin line per seed; the shaded band is ± 1
# standard deviation of single predictions (seed 0); the rug at the bottom marks indices the
# localization test calls localized. The last panel is the circular-padding null.

# %%
report.figure("fig-a1-fig1a", figures.mean_predictions([no_norm, with_norm, circular]))

# %% [markdown]
# ```{glue:figure} fig-a1-fig1a
# ---
# name: fig-a1-fig1a
# alt: Mean prediction against index for both networks, with the target ramp and a rug of
#   localized indices.
# ---
# Fig. 1a reproduced: mean prediction per index without normalization (top left), with it
# (top right), and the same normalized networks with circular padding (below, the null); dashed,
# the target ramp; grey, within $R$ of an end. Drawn by
# `paper_a.a1_localization.figures.mean_predictions`.
# ```
#
# **Localization and effect sizes.** *Fraction localized* counts indices passing the localization
# test, in the interior (indices whose test uses only outputs that cannot see the padding:
# $[R+1, \ell-2-R]$ for the span test, which looks one index to each side) and overall.
# *Distance* is the localization distance (maximum possible: {glue:text}`a1_half`). The effect
# sizes answer the {ref}`public review <methods-sources>`'s objection that significance alone can
# flag negligible differences: the slope and $R^2$ of the mean predictions against the ramp (1 and
# 1 for a perfect localizer, 0 for none) and the mean absolute error of the mean predictions.

# %%
report.md(tables.localization([no_norm, with_norm, circular]))
for key, r in (("none", no_norm), ("norm", with_norm), ("circ", circular)):
    run.glue(f"a1_{key}_frac", fmt.mean_sd(r.frac_interior, ".1%"))
    run.glue(f"a1_{key}_slope", fmt.mean_sd(r.slope_interior, ".3f"))
    run.glue(f"a1_{key}_r2", fmt.mean_sd(r.r2_interior, ".2f"))
    run.glue(f"a1_{key}_dist", fmt.join(r.distances))
run.glue("a1_norm", with_norm.name)

# %% [markdown]
# With {glue:text}`a1_norm`, {glue:text}`a1_norm_frac` of the interior indices are localized
# (mean ± sd over seeds; localization distances per seed: {glue:text}`a1_norm_dist`), against
# {glue:text}`a1_none_frac` without normalization (distances {glue:text}`a1_none_dist`) and
# {glue:text}`a1_circ_frac` for the circular-padding null. For both nulls the interior outputs
# are identically distributed, so each index is flagged with probability $\alpha$; but the
# flags of one network come together (neighbouring indices share inputs, and a pooled
# statistic moves a whole sample's output up or down), so a single null network's fraction can
# lie far above $\alpha$. Its calibrated null distribution is on the Methods page
# ({ref}`methods-null-statistics`): the fraction and the distance are descriptions here, and no
# claim is graded on them.
# The size of the effect is what the claims grade: the interior slope of the mean predictions
# is {glue:text}`a1_norm_slope` (1 would be the ramp itself; no norm:
# {glue:text}`a1_none_slope`), with $R^2$ = {glue:text}`a1_norm_r2`. A constant shift of a
# whole sample's output, the sequence-wide noise that inflates the fraction, does not change a
# slope.
#
# (a1-curve)=
# ## Compute to effect
#
# Is the effect still growing when training stops? {numref}`fig-a1-curve` evaluates the states
# kept during training (at {glue:text}`a1_curve_fracs` of the budget) exactly like the trained
# networks. A claim can be *refuted* only when the quantity it tests has flattened: its gain
# over the last half of the budget must be below half the claim's smallest effect of interest
# (for the interior slope, {glue:text}`a1_flat_margin`) with {glue:text}`a1_claim_conf`
# confidence; a quantity that may still be rising leaves the claim *not shown at this budget*
# ({ref}`methods-verdicts`).

# %%
curves = [localization.curve(setup, r.cnn) for r in (no_norm, with_norm)]
report.figure("fig-a1-curve", plots.compute_to_effect(curves, params.alpha))
gain = late.late_gain(curves[1])
rising = late.rising(curves[1], bands.interior_slope)
run.glue_all("a1", {"curve_fracs": fmt.join(params.curve_fractions, ".3g"),
                     "flat_margin": f"{SLOPE.flat_margin:g}",
                     "late_gain": fmt.interval(gain),
                     "rising": "may still be rising" if rising else "has flattened"})  # fmt: skip

# %% [markdown]
# ```{glue:figure} fig-a1-curve
# ---
# name: fig-a1-curve
# alt: Interior slope and fraction localized against the fraction of the training budget, for
#   both networks, one thin line per seed.
# ---
# Compute to effect: interior slope (left) and detector fraction (right) of every seed through
# training; dotted, the detector's calibrated false-positive level. Drawn by
# `paper_a.plots.compute_to_effect`.
# ```
#
# The kept states behind {numref}`fig-a1-curve` can be watched directly: the view below
# (`paper_a.a1_localization.views.training_states`) draws {numref}`fig-a1-fig1a`'s mean
# predictions at each of them, with a seed selector.

# %%
report.show_view(views.training_states(curves))

# %% [markdown]
# Over the last half of the budget the normalized networks' interior slope gained
# {glue:text}`a1_late_gain` (mean [{glue:text}`a1_claim_conf` interval] over seeds): the curve
# {glue:text}`a1_rising`.
#
# (a1-fig1b)=
# ## Fig. 1b: where in depth does position appear?
#
# At each depth a linear probe (a 1×1 convolution shared by all positions) is fitted to
# the ramp on fresh noise, and the localization test is applied to its outputs
# ({numref}`fig-a1-fig1b`). Localization inside the cyan lines is something convolution
# alone could not do.

# %%
report.figure("fig-a1-fig1b", figures.depth_maps([no_norm, with_norm, circular]))
report.md(tables.probe_distances([no_norm, with_norm, circular]))

# %% [markdown]
# ```{glue:figure} fig-a1-fig1b
# :name: fig-a1-fig1b
# :alt: Depth by index maps of the fraction of seeds whose probe localizes each index.
#
# Fig. 1b reproduced: colour is the fraction of seeds whose depth probe localizes an index;
# the cyan lines mark the receptive-field reach $R(\text{depth})$ from both ends. Drawn by
# `paper_a.a1_localization.figures.depth_maps`.
# ```
#
# (a1-verdict)=
# ## Verdict at this profile
#
# In plain words, at this profile: that normalization localizes beyond the receptive field is
# {glue:text}`a1_side_channel`; that it localizes the whole sequence is
# {glue:text}`a1_whole_sequence`; the inward spread faster than the receptive field is
# {glue:text}`a1_inward_spread`;
# {glue:text}`a1_checks` checks hold. This network has {glue:text}`a1_n_norms` normalization
# layers, our reconstruction of the paper's (the `paper` profile) {glue:text}`a1_paper_depth`:
# how far the side channel carries may depend on how many there are (chapter {ref}`a5` measures
# it at a fixed receptive field), so a verdict on the whole sequence here is a verdict on this
# geometry. The `cpu` profile trains for a small fraction of the paper's budget on a shorter
# sequence, so the *size* of the effect (slope, $R^2$) is the number to watch when re-running
# at larger `steps` or at the `paper` profile.
#
# Each claim is one test over seeds, written out in `paper_a.a1_localization.claims` and on the
# Methods page ({ref}`methods-verdicts`): a per-seed slope of the normalized networks against
# the same slope of *both* nulls, in paired $t$ tests; it is *reproduced* when the difference
# clears the claim's smallest effect of interest (SESOI) against each null, with
# {glue:text}`a1_claim_conf` confidence, and *refuted* when it lies wholly below the SESOI
# against one of them while the tested quantity has stopped rising. The SESOI of a slope is
# {glue:text}`a1_sesoi` ({ref}`methods-sesoi` gives the reason). Three claims: the side
# channel exists (the slope over the interior beyond $R$); the whole sequence is localized,
# Fig. 1a's claim (the slope *beyond one hop*, farther than $3R$ from both ends: the interior
# fraction would count $[R, 3R)$, where the first hop puts all of the signal); and Fig. 1b's
# inward spread (how far, in layers of receptive-field growth, the depth probes localize
# beyond $R(\text{depth})$ at their best depth; whether it was still rising is judged on probes
# fitted at the same kept states as {numref}`fig-a1-curve`, with as many predictions per index).
# Before any is graded the networks must pass
# their positive control: they learned the task (their mean prediction explains at least
# {glue:text}`a1_learned` of the ramp's variance, $R^2$, as learning the ramp within $R$ of the
# ends does). A network with no side channel at all is no failed control for the
# whole-sequence claim but the strongest evidence against it. The effect
# column is the difference from the null that binds, with its {glue:text}`a1_claim_conf` $t$
# interval. Properties that hold by construction are checks, listed apart: a failed check is
# a bug.

#
# **What the side-channel row measures and how it is graded, from the library:** the interior
# slope of the mean prediction (the effect), the span detector behind the rug of localized
# indices, the paired comparison with both nulls, the rule, and the t test against the SESOI.
#
# ```{code-of} normbook.paper_a.measures.bands.interior_slope
# ```
#
# ```{code-of} normbook.paper_a.measures.detector.span_pvalues
# ```
#
# ```{code-of} normbook.paper_a.grading.nulls.slope_beyond_nulls
# ```
#
# ```{code-of} normbook.paper_a.grading.rules.localizes_verdict
# ```
#
# ```{code-of} normbook.grading.claims.mean_test
# ```
# %%
cyc = equivariance.cyclic_change(circular.net, params.seq_len, shift=setup.radius)
probe_curve = localization.curve(setup, with_norm.cnn, with_probes=True)
ledger, checks = claims.a1_ledger(
    no_norm, with_norm, circular, shifts[0], cyc, curves[1], probe_curve
)
run.glue("a1_sesoi", SLOPE.show())
run.glue("a1_learned", f"{sesoi.LEARNED_R2:g}")
run.glue_all("a1", {"n_norms": params.depth, "paper_depth": spec.A1.profiles["paper"]["depth"]})
report.show_verdicts("a1", ledger)
report.show_checks("a1", checks)
run.record("a1-verdict", claims=ledger, checks=checks)

# %% [markdown]
# (a1-paper-scale)=
# ## At the paper's scale (recorded run)
#
# Everything above ran at this build's profile. Paper A's own network is another size: $\ell$ =
# {glue:text}`a1_paper_len`, {glue:text}`a1_paper_depth` normalization layers, $R$ =
# {glue:text}`a1_paper_R`, trained for 20,000 steps and tested with
# {glue:text}`a1_paper_n` predictions per index, a GPU's work. That experiment runs as one
# self-contained program, `normbook.tools.paperscale`, on a machine with only Python, torch, numpy
# and scipy. It first times a few steps, then picks its budget from a ladder fixed in its code
# (predictions per index are cut first, training steps next, seeds last) and records that choice
# before any result exists; it trains the no-norm and InstanceNorm networks at the paper's
# geometry, evaluates them beside the circular-padding null with depth probes, and writes a
# *record* after every phase: provenance (commit, a hash of every module's code, device,
# driver, CUDA and cuDNN versions, precision, random-number scheme, date), the budget, its
# timings and the per-index moments. This section reads that record; a build never runs the
# program. The runs, the curve and the checks are rebuilt from the record's moments and graded
# by the rules, smallest effects of interest and positive controls of {ref}`a1-verdict`, as
# separate rows of the {ref}`ledger` marked *paper scale*.

# %%
report.md(recorded.status_md(paper, params.paper_record))

# %% [markdown]
# Fig. 1a from the record ({numref}`fig-a1-paper-fig1a`), drawn as {numref}`fig-a1-fig1a`.

# %%
report.figure("fig-a1-paper-fig1a", recorded.draw(paper, figures.mean_predictions))

# %% [markdown]
# ```{glue:figure} fig-a1-paper-fig1a
# :name: fig-a1-paper-fig1a
# :alt: Mean prediction against index at the paper's scale, from the recorded run.
#
# Fig. 1a at the paper's scale, from the recorded run: mean prediction per index without
# normalization, with InstanceNorm, and its circular-padding null. Drawn by
# `paper_a.a1_localization.figures.mean_predictions`.
# ```

# %%
report.figure("fig-a1-paper-fig1b", recorded.draw(paper, figures.depth_maps))

# %% [markdown]
# ```{glue:figure} fig-a1-paper-fig1b
# :name: fig-a1-paper-fig1b
# :alt: Depth by index maps of localization at the paper's scale, from the recorded run.
#
# Fig. 1b at the paper's scale, from the recorded run: the fraction of seeds whose depth probe
# localizes each index; cyan, the receptive-field reach $R(\text{depth})$. Drawn by
# `paper_a.a1_localization.figures.depth_maps`.
# ```

# %%
paper_claims, paper_checks = recorded.ungraded(paper)
report.show_verdicts("a1_paper", paper_claims)
report.show_checks("a1_paper", paper_checks)
run.record("a1-paper-scale", claims=paper_claims, checks=paper_checks, scale=recorded.SCALE)
run.glue("a1_paper_plain", recorded.plain_words(paper, paper_claims))

# %% [markdown]
# At the paper's scale: {glue:text}`a1_paper_plain`.

# %% [markdown]
# (a1-exercises)=
# ## Exercises
#
# Each exercise re-executes this chapter with other parameters (one command from the
# repository root; the page and the {ref}`ledger` are rebuilt from that run, and `make book`
# later restores the defaults from the cache). Predict first, then run. Each exercise states
# what it costs and what it retrains; `make exercises EXERCISES=<label>` runs it into a build
# folder of its own, and its solution then shows the outcome.
#
# :::{exercise} Poke the side channel
# :label: a1-ex-nudge
# In the view of {ref}`a1-live`, take noise as the input and nudge index 10 by 1, first
# without normalization, then with it. Predict first: how far from index 10 can an output
# move in each network? Then switch the input to a constant and nudge again. Why does the
# answer change? Last, take the spike, set the nudge index to the spike's position and nudge
# the spike up: the normalized network's far outputs barely move. Why, when the same nudge on
# noise moved them?
#
# **Cost at `cpu`:** {{ cost_a1_ex_nudge }}.
# :::
#
# :::{solution} a1-ex-nudge
# :class: dropdown
# Without normalization only the outputs within $R$ of index 10 move, and the view reports
# exactly zero beyond: each output is a function of the $2R + 1$ inputs around it. With
# normalization every output moves: the nudge changes each normalized layer's mean and
# variance, and every position is normalized by them. On a constant input the nudge is the only
# thing in the interior that tells one position from another: it moves the statistics far more
# than one index among many noisy ones does, and in most seeds the change beyond $j \pm R$ is
# several times larger than on noise. A lone spike is the opposite case: every channel is flat
# but for the spike's neighbourhood, and normalization divides out scale, so a taller spike
# raises the channel's deviation from its mean and its standard deviation alike, and a far
# output, (flat value − mean) / standard deviation, hardly changes. Nudge any other index
# instead and the far outputs move again: two bumps have a shape that one bump's height does
# not.
#
# **Outcome at `cpu`:** {{ outcome_a1_ex_nudge }}
# :::
#
# :::{exercise} A normalization that shares nothing
# :label: a1-ex-layer
# The `layer` normalization normalizes each position over its channels, with no pooling over
# positions. Predict the interior slope and the verdicts, then run
# `make chapter CHAPTER=book/a1_localization.py PARAMS='-p norm layer'`.
#
# **Cost at `cpu`:** {{ cost_a1_ex_layer }}.
# :::
#
# :::{solution} a1-ex-layer
# :class: dropdown
# Nothing is pooled across positions, so no position's activation depends on inputs farther
# than $R$ away: the network stays exactly translation-equivariant away from the ends, like the
# no-norm network. Expect a flat interior (slope near 0, fraction localized at the null's level)
# and the normalization claims *refuted* or *not shown*: normalizing is not enough, pooling over
# positions is what opens the channel ({ref}`a2`).
#
# **Outcome at `cpu`:** {{ outcome_a1_ex_layer }}
# :::
#
# :::{exercise} Halve the receptive field
# :label: a1-ex-kernel
# With kernel 3 instead of 5, $R = \lfloor k/2\rfloor \cdot d$ halves. Which of the two
# networks of {numref}`fig-a1-fig1a` should change its localized region, and how? Run
# `make chapter CHAPTER=book/a1_localization.py PARAMS='-p kernel 3'`.
#
# **Cost at `cpu`:** {{ cost_a1_ex_kernel }}.
# :::
#
# :::{solution} a1-ex-kernel
# :class: dropdown
# The no-norm network can only use the zero padding, which it sees within $R$ of an end, so
# its localized bands shrink with $R$. The InstanceNorm network's reach does not come from
# $R$: its statistics pool over the whole sequence, so its interior slope need not shrink (it
# may train more slowly, with fewer weights per layer). A normalized network whose interior
# stays sloped while $R$ halves is the paper's claim in its plainest form.
#
# **Outcome at `cpu`:** {{ outcome_a1_ex_kernel }}
# :::
#
# :::{exercise} Twice the training
# :label: a1-ex-steps
# {numref}`fig-a1-curve` shows the interior slope against the training budget. Predict the
# grades of the first two claims of {ref}`a1-verdict` after twice the `cpu` profile's steps:
# {{ command_a1_ex_steps }}.
#
# **Cost at `cpu`:** {{ cost_a1_ex_steps }}.
# :::
#
# :::{solution} a1-ex-steps
# :class: dropdown
# Start from this run's grades: the interior slope is {glue:text}`a1_side_channel`, localization
# beyond one hop {glue:text}`a1_whole_sequence`. Training longer cannot improve on a *reproduced*
# grade: that claim's effect may grow and its interval narrow, nothing more. The prediction
# worth making is for a claim that is not reproduced (at the `cpu` profile, the one beyond one
# hop). When it is graded *refuted*, its whole interval lies below the smallest effect of interest
# ({glue:text}`a1_sesoi`): it moves to *not shown* or *reproduced* only if twice the steps
# lift its effect past that threshold. Read in {ref}`a1-verdict`'s table how far below the
# threshold its interval lies, and whether the interior curve of {numref}`fig-a1-curve` is
# still rising at the end of the budget; a grade that stays says the refutation holds at twice
# this budget, still a statement about budgets of this size, which is why every verdict shows
# its effect beside the p-value.
#
# **Outcome at `cpu`:** {{ outcome_a1_ex_steps }}
# :::
#
# :::{exercise} The paper's own test
# :label: a1-ex-detector
# The paper calls index $i$ localized when its mean prediction differs from *every* other
# index's ({ref}`methods-detector`). Predict how the fraction of localized interior indices
# changes under that definition, for both networks, then run
# `make chapter CHAPTER=book/a1_localization.py PARAMS='-p detector definition'`.
#
# **Cost at `cpu`:** {{ cost_a1_ex_detector }}.
# :::
#
# :::{solution} a1-ex-detector
# :class: dropdown
# The definition is an intersection-union test: its p-value is the largest of $\ell - 1$ Welch
# p-values, and the hardest comparison is always with the nearest index, whose mean differs by
# one step of the ramp. A weak but real slope therefore passes at few interior indices: the
# fraction drops for the normalized network, while the no-norm network's ends still pass. The
# calibration on the Methods page measures this loss of power.
#
# **Outcome at `cpu`:** {{ outcome_a1_ex_detector }}
# :::

# %%
run.finish()
