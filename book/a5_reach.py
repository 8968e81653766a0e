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
# (a5)=
# # A5. The reach of the side channel
#
# Paper A's network has {glue:text}`a5_paper_layers` normalization layers and, the paper reports,
# localizes the whole sequence; it explains this by multi-hop message passing, each normalization
# layer relaying the position one hop farther. {ref}`Chapter A1 <a1>`'s networks at this profile
# have {glue:text}`a5_base_layers` (at the paper's ratio $\ell/R$), and chapter
# {ref}`A1's verdict <a1-verdict>` grades whether their position signal carries beyond $3R$, one
# hop. This chapter asks how far the signal carries as the number of normalization layers grows at
# a fixed receptive field, and as the sequence grows at a fixed depth; it fits a law to both and
# states what the law predicts for the paper's network.
#
# :::{admonition} Paper facts and our reconstruction
# :class: important
# **Paper facts.** The paper's network: $\ell$ = {glue:text}`a5_paper_len`, $R$ =
# {glue:text}`a5_paper_R`, {glue:text}`a5_paper_layers` normalization layers (one per conv
# block), InstanceNorm, {glue:text}`a5_paper_n` predictions per index, Welch tests at level
# {glue:text}`a5_paper_alpha`; the whole sequence localized (Fig. 1a); one hop carries position
# to $3R$.
#
# **Our reconstruction** (every item is a parameter): more normalization layers at the same
# receptive field come from `reach_mix` kernel-1 conv → norm → ReLU blocks after each of the $d$
# blocks (a kernel-1 convolution widens no receptive field); the length axis keeps $k$ and $d$ and
# trains each length for its own budget (`reach_len_steps`); the reach is read from hop bands
# (distances $[R, 3R)$, $[3R, 5R)$, … from the nearer end, {ref}`Methods <methods-symmetry>`); the
# law is linear in $\log_2$ of both axes; its prediction assumes one prediction's standard
# deviation at the paper's network equal to ours.
# :::
#
# **Run time** of this chapter: {{ cost_a5_reach }}.
#
# **In plain words**, at this profile (each at its own level; the {ref}`ledger` gives the final
# verdict): the share of the side channel kept beyond one hop rises with the number of
# normalization layers: {glue:text}`a5_norm_layers`; it carries on undiminished:
# {glue:text}`a5_undiminished`; it fades with the sequence length:
# {glue:text}`a5_falls_with_length`; the fitted law's prediction for paper A's own network:
# {glue:text}`a5_law_slope`.

# %% tags=["parameters", "hide-input"]
profile = "cpu"  # smoke, cpu or paper; a knob left at None takes the profile's value
seq_len = None  # sequence length l [smoke 48 · cpu 75 · paper 600]
kernel = None  # convolution kernel size k [every profile: 5]
depth = None  # number of conv blocks d [smoke 2 · cpu 4 · paper 32]
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
#   [smoke 1,024 · cpu 6,400 · paper 800,000]
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
reach_mix = None  # kernel-1 conv-norm-ReLU blocks after each block (one family each)
#   [every profile: [0, 1]]
reach_lens = None  # sequence lengths of the length axis (at the base depth)
#   [smoke [48, 96] · cpu [75] · paper [600, 900, 1,200]]
reach_len_steps = None  # Adam steps per model at each of reach_lens
#   [smoke [40, 40] · cpu [5,000] · paper [20,000, 30,000, 40,000]]
reach_matched_mix = None  # matched control: kernel-1 blocks per block, normed and plain (0: none)
#   [every profile: 1]
reach_seeds = None  # seeds of the study's networks beyond the base family
#   [smoke [0, 1] · cpu [0, 1, 2] · paper 0-4]
reach_eval = None  # predictions per index for the study's networks
#   [smoke 2,048 · cpu 25,600 · paper 800,000]
paper_record = None  # the recorded paper-scale run the chapter reads (make paper-run writes it)
#   [every profile: results/paper/a1.json]
live_seeds = None  # seeds of each network the live view runs in the page (0: no view)
#   [smoke 2 · cpu 5 · paper 0]
live_draws = None  # noise draws behind the live view's mean prediction
#   [smoke 16 · cpu 16 · paper 4]

# %% tags=["remove-input"]
from normbook.pages import fmt, report
from normbook.paper_a import live, paper_values, recorded
from normbook.paper_a.a5_reach import claims, figures, spec, text, views
from normbook.paper_a.grading import sesoi
from normbook.paper_a.runs import localization, reach

params, run = report.start(spec.A5, globals())
setup = localization.Setup.from_params(params)
paper = recorded.read(params.paper_record)  # chapter A1's recorded paper-scale run, if any
run.glue("a5_paper_n", f"{paper_values.SAMPLES_PER_INDEX:,}")
run.glue("a5_paper_len", paper_values.SEQ_LEN)
run.glue("a5_paper_R", paper_values.RADIUS)
run.glue("a5_paper_layers", paper_values.NORM_LAYERS)
run.glue("a5_paper_alpha", paper_values.WELCH_ALPHA)
run.glue("a5_reuse", text.base_note(params))
run.glue("a5_R", setup.radius)

# %%
fams = reach.families(setup, params)  # one family per value of each axis (layers, length)
matched = reach.matched_families(setup, params)  # the layer axis's matched control
run.glue("a5_base_layers", next(f.norm_layers for f in fams if f.a1))

# %% [markdown]
# The study's families are listed under {ref}`a5-bands`, all with $R$ = {glue:text}`a5_R`; the
# base family ({glue:text}`a5_reuse`) lies on both axes.

# %%
localization.pretrain(reach.networks(fams + matched), params.workers)
study = reach.study(fams)

# %% [markdown]
# (a5-controls)=
# ## Did every family learn?
#
# A family grades nothing until it passes both positive controls: its mean prediction's $R^2$
# against the ramp over the whole sequence is at least {glue:text}`a5_learned_r2` (it learned
# the task), and
# its own first hop band has a slope of at least the SESOI of a slope (it uses the side
# channel at all). A family that fails makes every row that uses it *not shown*, and the
# verdict says which control failed.

# %%
report.md(text.control_table(claims.controls(study)))
run.glue("a5_learned_r2", text.learned_r2())

# %% [markdown]
# (a5-bands)=
# ## Band slopes and reach
#
# For every family, the seed-mean slope of the mean prediction over each hop band, with its
# standard error from the networks' own sampling error ({numref}`fig-a5-bands`), and two
# reaches (the table below): the *effect-size reach*, the nearer edge of the first band
# whose slope is below the SESOI of a slope ({glue:text}`a5_slope_sesoi` of the ramp's), and
# the *significance reach*, the first band whose slope is not above 0 at one-sided level
# {glue:text}`a5_alpha`, with this evaluation's predictions per index and with the standard
# errors scaled to the paper's {glue:text}`a5_paper_n`. A reach equal to the half-sequence
# (the last column's largest value) means no band fell below.

# %%
report.figure("fig-a5-bands", figures.band_slopes(study.reaches, claims.REACH_ALPHA))
run.glue("a5_slope_sesoi", f"{sesoi.SLOPE.value:g}")
run.glue("a5_alpha", claims.REACH_ALPHA)
report.md(text.reach_table(study.reaches, sesoi.SLOPE.value, claims.REACH_ALPHA,
                           paper_values.SAMPLES_PER_INDEX))  # fmt: skip

# %% [markdown]
# ```{glue:figure} fig-a5-bands
# :name: fig-a5-bands
# :alt: Band slope of the mean prediction against the distance from the end, log scale.
#
# Seed-mean slope of the mean prediction over each hop band against the band's distance from
# the end (units of $R$; log scale; hollow: not above 0 at one-sided level
# {glue:text}`a5_alpha`, drawn at that bound; dotted: the SESOI of a slope). Drawn by
# `paper_a.a5_reach.figures.band_slopes`.
# ```
#
# One family at a time, with every seed's band slope beside the mean
# (`paper_a.a5_reach.views.band_slopes`):

# %%
report.show_view(views.band_slopes(study.reaches))

# %% [markdown]
# The table lists, per family, $k$, $d$ and the kernel-1 blocks, the budget, the band slopes
# (seed mean ± standard error), the share of the first band's slope the second keeps (mean ±
# sd over seeds) and the three reaches in units of $R$ (`paper_a.a5_reach.text.reach_table`).

# %% [markdown]
# (a5-layers)=
# ## More normalization layers, the same receptive field
#
# If each normalization layer relays one hop, a network with more of them carries the signal
# farther. We measure it by the *share kept*: the slope of the mean prediction over the band
# beyond one hop ({glue:text}`a5_band`, the same band for every family, so that no length averages
# over a farther stretch than another) over the first hop band's. The first row grades the rank
# correlation of the number of normalization layers with the share kept, over every model on this
# axis. At the `cpu` profile the axis has two families, 4 and 8 normalization layers: the
# 16-layer family was the book's trade for its 60-minute ceiling ({ref}`compute-trade`), so the
# rank correlation rests on two levels; `reach_mix` 0,1,3 puts it back. The second asks what
# paper A's Fig. 1a shows, that the signal carries on *undiminished*:
# the base networks keep at least {glue:text}`a5_share_sesoi` of the first band's slope
# ({ref}`chapter A1's verdict <a1-verdict>` asks the weaker question, whether any slope worth the
# name is left beyond $3R$). No row can be refuted while some family's slope beyond one hop may
# still move by half the SESOI of a slope over the last half of its budget.
#
# Each added kernel-1 block adds a convolution and a ReLU as well as a normalization layer, so
# depth and capacity grow along this axis too. The third row is its matched control (ours):
# {glue:text}`a5_matched_blocks` kernel-1 blocks with their normalization against the same
# blocks without it (conv → ReLU: the same depth, widths and parameters, the base family's
# {glue:text}`a5_base_layers` normalization layers), same seeds; what the normalization adds to
# the share kept must reach {glue:text}`a5_gain_sesoi` of the first band's slope.

# %%
layers = study.on("norm layers")
rows = [claims.grows_with_norm_layers(layers), claims.undiminished(study)]
if matched:
    pair = reach.study(matched)
    rows.append(claims.normalization_not_depth(pair))
run.glue("a5_matched_blocks", params.reach_matched_mix * params.depth)
run.glue("a5_gain_sesoi", f"{sesoi.SHARE_GAIN.value:g}")
run.glue("a5_share_sesoi", f"{sesoi.SHARE.value:.0%}")
run.glue("a5_band", text.band_text(study))
run.glue("a5_decision", text.a1_decision(rows[0], study))
report.show_verdicts("a5_layers", rows)
run.record("a5-layers", claims=rows)

# %% [markdown]
# (a5-live)=
# ### Nudge the deeper networks yourself
#
# The view below runs this axis's trained networks in your browser (no kernel), as in
# {ref}`a1-live`, and the matched control's plain network beside them: nudge one index and read
# how far past $j \pm R$ the change reaches, and how large it is there, for
# {glue:text}`a5_live_layers` normalization layers at the same receptive field. The browser
# check holds the page's numbers to PyTorch's within {glue:text}`a5_live_tol`.

# %%
nets = {f.label: r for f, r in zip(layers.families, layers.runs)}
if matched:
    nets[pair.families[1].label] = pair.runs[1]  # the plain kernel-1 blocks (no norm added)
report.show_view(live.live_view("a5-live", nets, "Prediction and change caused by a nudge at "
                                "one index for networks with more normalization layers, "
                                "computed in the browser", params.live_seeds,
                                params.live_draws))  # fmt: skip
run.glue("a5_live_layers", fmt.join([f.norm_layers for f in layers.families]))
run.glue("a5_live_tol", f"{live.TOLERANCE:g}")

# %% [markdown]
# (a5-length)=
# ## Longer sequences, the same depth
#
# Every statistic averages over all $\ell$ positions. The critics' reading: each hop beyond the
# first keeps less of the signal for longer sequences, because what one sample's statistics carry
# about any one position shrinks with $\ell$ (the {ref}`Methods page <methods-symmetry>` makes the
# order explicit). Each length trains for its own budget, and every length's networks must pass
# both controls before their fading counts. At the `cpu` profile this section trains one length,
# the base family's, so its row is not testable there: the two longer lengths graded nothing at
# that budget and were the book's trade for its 60-minute ceiling ({ref}`compute-trade`);
# `reach_lens` and `reach_len_steps` put them back, and the `paper` profile trains three.

# %%
rows = [claims.falls_with_length(study.on("length"))]
report.show_verdicts("a5_length", rows)
run.record("a5-length", claims=rows)

# %% [markdown]
# (a5-law)=
# ## A law, and what it predicts for paper A's network
#
# We fit the share kept, model by model, as a power law on the linear scale: its expected
# value is $2^{b_0 + b_1 \log_2 (N/N_0) + b_2 \log_2 (\ell/\ell_0)}$ ($N$ normalization
# layers), fitted by weighted nonlinear least squares (quasi-likelihood) that keeps every
# model, a share at or below 0 included: taking logarithms would drop those models, and
# dropping them biases the law upward where shares are small. Each model's variance is its own
# squared standard error plus a multiplicative spread between models, $(\tau\,\mathrm{E}[y])^2$,
# with $\tau$ set so that the Pearson statistic equals its degrees of freedom; the coefficients'
# standard errors are sandwich estimates clustered by family (CR1: one family's networks share
# its geometry and budget, so they are not independent looks at the law), and intervals use $t$
# on families − terms degrees of freedom (few families leave wide intervals, as they should;
# {numref}`fig-a5-law`; the {ref}`Methods page <methods-symmetry>` predicts its exponents).
# Before the law grades anything it must fit its own families: a pure-error
# lack-of-fit $F$ test (the families' means against the law, beside the scatter within
# families) must be testable and must not reject.
# The predictions for paper A's network ({glue:text}`a5_paper_layers` normalization layers, $\ell$ =
# {glue:text}`a5_paper_len`) come from the same fit of the slope beyond one hop itself (the
# first band's slope grows with $N$ too, so a product of the share with a measured first band
# would understate it): the slope, and the fraction of the indices beyond $3R$ that the span
# test at level {glue:text}`a5_paper_alpha` with {glue:text}`a5_paper_n` predictions per index
# would flag at that slope, with one prediction's standard deviation as in the base family.
# Both extrapolate far beyond the data, and their intervals are those of the fitted mean
# (the typical network, not one network); they are predictions, graded as such, and chapter
# {ref}`A1 <a1>` at the `paper` profile measures the paper's network itself.

# %%
share_law = reach.fit_law(study.reaches, *reach.base_geometry(study))
report.figure("fig-a5-law", figures.law_fit(study.reaches, share_law))
run.glue("a5_law", text.law_text(share_law))
run.glue("a5_exponents", text.exponents_text(share_law))
run.glue_all("a5", {
    "n_lens": len(params.reach_lens), "lens": fmt.join(params.reach_lens, ",", " and "),
    "len_steps": fmt.join(params.reach_len_steps, ",", " and "),
    "len_note": text.length_note(len(set(params.reach_lens))),
})  # fmt: skip

# %%
rows = claims.paper_prediction(study, claims.beyond_law(study))
report.md(text.prediction_table(share_law, *rows))
report.show_verdicts("a5_law", rows)
run.record("a5-law", claims=rows)

# %% [markdown]
# ```{glue:figure} fig-a5-law
# :name: fig-a5-law
# :alt: Share of the first band's slope kept, per model, against norm layers and length.
#
# Share of the first hop band's slope that the band beyond one hop keeps, per model, against
# the number of normalization layers (left) and the sequence length (right), log-log, with the
# fitted power law and its interval extended to paper A's values (dashed). Drawn by
# `paper_a.a5_reach.figures.law_fit`.
# ```
#
# The fit: {glue:text}`a5_law`. Against the symmetry argument of the
# {ref}`Methods page <methods-symmetry>`: {glue:text}`a5_exponents`.
#
# The length axis has {glue:text}`a5_n_lens` lengths ({glue:text}`a5_lens`, trained
# {glue:text}`a5_len_steps` steps: a longer sequence needs more steps before its family passes
# its positive controls): {glue:text}`a5_len_note`. The axis that decides the prediction for
# paper A's network is then the recorded run at the paper's own geometry ({ref}`a5-recorded`),
# which measures the share kept there instead of extrapolating to it.

# %% [markdown]
# (a5-recorded)=
# ## The law against the paper's network (recorded run)
#
# Chapter A1's {ref}`recorded run <a1-paper-scale>` trained paper A's network itself (where
# it exists: a GPU makes it). Here the law's predictions are held against what that run
# measured on its InstanceNorm networks: the share of the first band's slope kept beyond one
# hop, the slope beyond one hop, and the fraction of indices beyond $3R$ that the localization
# test flags, the last predicted at the record's own number of predictions per index. The
# intervals are those of the fitted mean, so a measured mean outside them says that the law,
# fitted on small networks, does not carry to the paper's.

# %%
report.md(recorded.versus_md(paper, study, share_law, claims.beyond_law(study),
                             params.paper_record))  # fmt: skip

# %% [markdown]
# (a5-decision)=
# ## What it decides for chapter A1
#
# Paper A's Fig. 1a is about a network with {glue:text}`a5_paper_layers` normalization layers;
# chapter A1's has {glue:text}`a5_base_layers`.
# From the first row of {ref}`a5-layers`: {glue:text}`a5_decision`. Every verdict of this
# chapter is in the {ref}`ledger`.

# %% [markdown]
# (a5-exercises)=
# ## Exercises
#
# Each exercise re-executes this chapter with other parameters and states what it costs and
# what it retrains; predict first, then run. `make exercises EXERCISES=<label>` runs one into
# a build folder of its own, and its solution then shows the outcome.
#
# :::{exercise} How far does one nudge reach?
# :label: a5-ex-live
# In the view of {ref}`a5-live`, nudge index 10 of each network on the layer axis in turn
# ({glue:text}`a5_live_layers` normalization layers) and note the largest change beyond
# $j \pm R$. Predict first:
# should the change far from $j$ grow with the number of normalization layers, if each relays
# one hop? Then compare the network with the plain kernel-1 blocks: same depth, fewer norms.
#
# **Cost at `cpu`:** {{ cost_a5_ex_live }}.
# :::
#
# :::{solution} a5-ex-live
# :class: dropdown
# Every normalized network moves outputs beyond $j \pm R$, and none of them stops at a hop
# boundary: one nudge moves every layer's statistics at once, so a single layer already
# reaches the whole sequence. What the number of layers changes is how much of that change
# the network *uses*, which is what the share kept of {ref}`a5-layers` measures on average over
# many inputs; one nudge of one input is an anecdote beside it.
#
# **Outcome at `cpu`:** {{ outcome_a5_ex_live }}
# :::
#
# :::{exercise} As many normalization layers as the paper
# :label: a5-ex-mix
# Add a family with seven kernel-1 blocks per block (32 normalization layers, as many as paper
# A's network): `make chapter CHAPTER=book/a5_reach.py PARAMS='-p reach_mix 0,1,3,7'`. Predict
# its share kept from {numref}`fig-a5-law` before you run it.
#
# **Cost at `cpu`:** {{ cost_a5_ex_mix }}.
# :::
#
# :::{solution} a5-ex-mix
# :class: dropdown
# Read the fitted law at $N$ = 32 on the left panel: under the multi-hop reading the point lies
# well above the base family's; if the law is flat, the new family's share kept stays within
# the base family's spread. Either way the new family must first pass both controls.
#
# **Outcome at `cpu`:** {{ outcome_a5_ex_mix }}
# :::
#
# :::{exercise} A longer sequence
# :label: a5-ex-len
# Stretch the length axis fourfold: $\ell$ = 75, 150 and 300, with 12,000 and 24,000 steps for
# the two longer ones (a longer sequence needs more steps before it learns the side channel):
# `make chapter CHAPTER=book/a5_reach.py PARAMS='-p reach_lens 75,150,300`
# `-p reach_len_steps 5000,12000,24000'`. What does the {ref}`Methods page <methods-symmetry>`
# predict for its share kept?
#
# **Cost at `cpu`:** {{ cost_a5_ex_len }}.
# :::
#
# :::{solution} a5-ex-len
# :class: dropdown
# Beyond one hop the interior mean can depend on the position only through statistics that
# average over all $\ell$ positions, so the share kept should fall with $\ell$. If the longer
# networks fail their first-hop control even at that budget, the row stays *not shown*: a
# longer sequence makes the side channel harder to learn, not only weaker.
#
# **Outcome at `cpu`:** {{ outcome_a5_ex_len }}
# :::

# %%
run.finish()
