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
# (a2)=
# # A2. How the message travels: overlap, PackNorm and multiple hops
#
# Chapter {ref}`a1` showed *that* a normalized CNN can localize indices its receptive field
# cannot reach. Paper A also proposes *how*: two indices whose receptive fields overlap share
# a patch of input noise, and the normalization statistics, pooled over all positions and
# broadcast back to every position, let one index's activation be read out by the other. One
# such hop carries position at most $3R$ from an end; repeated over depth, the hops add up
# ("multi-hop message passing").
#
# This chapter draws that mechanism ({ref}`a2-fig2`), runs the paper's synthetic test of it
# (PackNorm, {ref}`a2-fig3`), and puts numbers on the multi-hop argument using chapter A1's
# depth probes ({ref}`a2-multihop`).
#
# :::{admonition} Paper facts and our reconstruction
# :class: important
# **Paper facts.** The mechanism: overlapping receptive fields share a unique noise patch
# and the normalization layer transmits between them; one hop reaches $3R(d)$, so with
# $3R < \ell/2$ full-sequence localization needs several hops. PackNorm: two sequences with
# a shared-weight, two-path network whose only coupling is a normalization over both
# sequences concatenated; the network must tell overlapping from independent sequences;
# sequence length $\ell'$ = {glue:text}`a2_paper_len`; the transition lies between overlaps
# of about {glue:text}`a2_paper_band` ("about half the sequence length").
#
# **Our reconstruction** (see {ref}`methods-packnorm`; every item is a parameter of this
# chapter): Fig. 2 is our own drawing of the text. PackNorm is InstanceNorm (per channel,
# affine) over the two paths concatenated along space, split back; path A gets `z[0:ℓ′]` of
# a noise sequence `z` of length $2\ell'-o$, path B gets `z[ℓ′−o:2ℓ′−o]` (overlap $o$) or
# independent noise, with equal probability; $\ell' = 2R+1$; each block is conv → PackNorm →
# ReLU; the head averages path A's last features over positions and applies a linear map to
# one logit (`pack_head`); binary cross-entropy, Adam; one model per (overlap, seed);
# accuracy on fresh test pairs with Wilson intervals; the *transition overlap* is where
# accuracy first reaches `transition_level`, interpolated linearly. The control replaces
# PackNorm by per-path InstanceNorm (no channel between the paths). The multi-hop bound
# iterates the paper's hop: one hop of $2R(d)$ per normalization layer (`hop_factor` = 3
# gives the single-hop reach $3R(d)$). At this profile PackNorm uses $R$ =
# {glue:text}`a2_R_pack` and $\ell'$ = {glue:text}`a2_path_len`: a scaled-down version of
# the paper's.
# :::
#
# **Run time** of this chapter: {{ cost_a2_mechanism }}.

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
live_seeds = None  # seeds of each network the live view runs in the page (0: no view)
#   [smoke 2 · cpu 5 · paper 1]
live_draws = None  # noise draws behind the live view's mean prediction
#   [smoke 16 · cpu 16 · paper 4]

# %% tags=["remove-input"]
from normbook.grading import stats
from normbook.pages import fmt, report
from normbook.paper_a import live, paper_values
from normbook.paper_a.a2_mechanism import claims, figures, spec, tables
from normbook.paper_a.grading import late, rules, sesoi
from normbook.paper_a.measures import bands, multihop
from normbook.paper_a.runs import localization, packnorm

params, run = report.start(spec.A2, globals())
setup = localization.Setup.from_params(params)
pack_setup = packnorm.PackSetup.from_params(params)
run.glue("a2_paper_len", paper_values.PACK_PATH_LEN)
run.glue("a2_paper_band", "–".join(map(str, paper_values.PACK_TRANSITION)))
run.glue("a2_conf", f"{stats.CONFIDENCE:.0%}")
run.glue("a2_check_level", f"{rules.CHECK_LEVEL:g}")
run.glue("a2_hop", f"{params.hop_factor:g}")
run.glue("a2_hop_step", f"{params.hop_factor - 1:g}")

# %% [markdown]
# (a2-fig2)=
# ## Fig. 2: the hypothesized mechanism
#
# Panel (a) of {numref}`fig-a2-mechanism` is one hop at one depth. Index $i$ is within $R$ of the
# end, so its receptive field includes the zero padding and its activation can depend on where it
# is. Index $j$ further in cannot see the padding, but its receptive field overlaps $i$'s on a
# patch of noise. The normalization layer pools every position into one mean and variance per
# channel and then rescales every position by them: $i$'s position-dependent activation moves the
# statistics, and $j$, which sees part of the same noise, can correlate that movement with its own
# input. Panel (b) turns the argument into reach per depth for this chapter's configuration: the
# receptive field $R(d)$, one hop {glue:text}`a2_hop`$R(d)$, and one hop of
# {glue:text}`a2_hop_step`$R(d)$ at every normalization layer.

# %%
fig = figures.mechanism(params.kernel, params.depth, params.seq_len, params.hop_factor)
report.figure("fig-a2-mechanism", fig)
run.glue("a2_R_loc", setup.radius)
run.glue("a2_single_final", f"{params.hop_factor * setup.radius:g}")
run.glue("a2_half", setup.half)

# %% [markdown]
# ```{glue:figure} fig-a2-mechanism
# :name: fig-a2-mechanism
# :alt: Schematic of one hop through the normalization statistics, and reach against depth.
#
# Fig. 2 redrawn from the paper's text: (a) one hop; (b) the reach per depth of the receptive
# field, of one hop, and of one hop per normalization layer. Drawn by
# `paper_a.a2_mechanism.figures.mechanism`.
# ```
#
# At this profile $R$ = {glue:text}`a2_R_loc` at the last layer, so one hop reaches at most
# {glue:text}`a2_single_final` indices from an end, while the middle of the sequence is
# {glue:text}`a2_half` indices from either end.
#
# (a2-fig3)=
# ## Fig. 3: PackNorm
#
# The two-path network runs one CNN (shared weights) on two sequences. At every
# normalization layer the two paths' activations are concatenated along space, normalized
# together, and split again; nothing else connects them. Path A must say whether path B is
# an overlapping continuation of it (by $o$ samples) or independent noise.
# {numref}`fig-a2-pair` shows one example of each class, at an overlap of half the path
# length.

#
# **The PackNorm network and its training, from the library.**
#
# ```{code-of} normbook.paper_a.cached.packnet.PackNorm
# ```
#
# ```{code-of} normbook.paper_a.cached.packnet.StackedPackNet
# ```
#
# ```{code-of} normbook.paper_a.cached.packnet.train_pack
# ```
# %%
report.figure(
    "fig-a2-pair", figures.packnorm_example(pack_setup.path_len, pack_setup.path_len // 2)
)
run.glue("a2_R_pack", pack_setup.radius)
run.glue("a2_path_len", pack_setup.path_len)
run.glue("a2_overlaps", fmt.join(pack_setup.overlaps))

# %% [markdown]
# ```{glue:figure} fig-a2-pair
# :name: fig-a2-pair
# :alt: Two pairs of noise paths, one overlapping path A at its end, one independent.
#
# PackNorm's two classes: path B continues path A with an overlap (left) or is independent
# noise (right). Drawn by `paper_a.a2_mechanism.figures.packnorm_example`.
# ```
#
# The path length is $\ell'$ = {glue:text}`a2_path_len` ($= 2R+1$ with $R$ =
# {glue:text}`a2_R_pack`, so that path A's centre output sees all of path A), and the overlaps
# swept are $o \in \{${glue:text}`a2_overlaps`$\}$. All (overlap, seed) models and the control
# are trained side by side in one stacked network each, and cached.

# %%
pack = packnorm.overlap_sweep(pack_setup)
for name, a in (("PackNorm", pack.pack), ("control", pack.control)):
    print(
        f"{name} models loaded from cache: {sum(a.train_cache_hits)} of "
        f"{len(a.train_cache_hits)}; training time of this run {a.train_seconds:.1f} s"
    )
report.figure("fig-a2-fig3", figures.packnorm_accuracy(pack))
report.md(tables.packnorm(pack))

# %% [markdown]
# ```{glue:figure} fig-a2-fig3
# :name: fig-a2-fig3
# :alt: Test accuracy against overlap for each seed, the control near chance, loss curves.
#
# Fig. 3 reproduced: test accuracy (Wilson {glue:text}`a2_conf` intervals) against the overlap
# $o$, per seed and mean; crosses, the per-path InstanceNorm control; green, the paper's
# transition scaled to our $\ell'$. Below: training loss per overlap. Drawn by
# `paper_a.a2_mechanism.figures.packnorm_accuracy`.
# ```
#
# **At $o = 0$ the task is impossible by construction**: path B is then `z[ℓ′:2ℓ′]`, which is
# independent of path A, exactly like the other class, so the two classes have the same joint
# distribution and no network can do better than a coin. An exact binomial test of each seed's
# accuracy against 1/2 checks that ours does not. The control network has the same architecture
# with per-path InstanceNorm; its path A never sees path B, so it must stay at chance even at full
# overlap. Both are **checks**, listed apart from the claims below: beyond a false-alarm rate of
# {glue:text}`a2_check_level` per model, they fail only if the code is wrong. That accuracy
# rises with the overlap is not a claim either: jointly normalized paths that share samples
# reveal it through their statistics whatever the receptive field is (chapter A4 shows it with
# kernel 1, {ref}`a4-packnorm`). At full overlap ($o = \ell'$) path B *is* path A: a network
# that cannot tell them apart there has not learned, so accuracy at full overlap is the
# PackNorm family's positive control.

# %%
lo, hi = paper_values.pack_transition_fraction()
rho, rho_p = pack.spearman
no_zero = f"{fmt.DASH} (the overlap grid has no o = 0)"
run.glue("a2_acc0", fmt.join(pack.pack.acc[0], ".3f") if pack.p_zero else no_zero)
run.glue("a2_p0", fmt.join(pack.p_zero, ".2f") or no_zero)
run.glue("a2_acc_full", fmt.join(pack.pack.acc[-1], ".3f"))
run.glue("a2_o_full", pack.pack.overlaps[-1])
run.glue("a2_acc_ctrl", fmt.join(pack.control.acc.ravel(), ".3f"))
run.glue("a2_p_ctrl", fmt.join(pack.control.chance_pvalues(), ".2f"))
run.glue("a2_rho", f"{rho:.2f} (p = {rho_p:.2g})")
run.glue("a2_trans", f"{pack.transition:.1f}" if pack.transition == pack.transition else "none")
frac = pack.transition_fraction
run.glue("a2_trans_frac", f"{frac:.2f}" if frac == frac else f"{fmt.DASH} (no transition)")
run.glue("a2_trans_seeds", fmt.join(pack.transition_per_seed, ".1f"))
run.glue("a2_paper_scaled", f"{lo * pack_setup.path_len:.1f}–{hi * pack_setup.path_len:.1f}")
run.glue("a2_level", f"{pack_setup.transition_level:g}")

# %% [markdown]
# At $o = 0$ the accuracies are {glue:text}`a2_acc0` (per seed; exact binomial p-values against
# 1/2: {glue:text}`a2_p0`). At full overlap ($o$ = {glue:text}`a2_o_full`) they are
# {glue:text}`a2_acc_full`, while the per-path InstanceNorm control scores
# {glue:text}`a2_acc_ctrl` (p-values {glue:text}`a2_p_ctrl`). Accuracy rises with the
# overlap (Spearman $\rho$ = {glue:text}`a2_rho`, two-sided, over all models including $o = 0$
# and $o = \ell'$: a description).
#
# **Where is the transition?** Mean accuracy over seeds first reaches
# {glue:text}`a2_level` at $o \approx$ {glue:text}`a2_trans` (per seed:
# {glue:text}`a2_trans_seeds`), i.e. at {glue:text}`a2_trans_frac` of the path length. The
# paper's transition, between overlaps {glue:text}`a2_paper_band` of
# {glue:text}`a2_paper_len`, scaled to our $\ell'$ is $o \approx$
# {glue:text}`a2_paper_scaled` (the green band). Our network is much smaller (and trained far
# less) than the paper's, so a different transition point is no surprise; the verdict table
# below says whether ours falls inside the paper's band.
#
# (a2-multihop)=
# ## The multi-hop argument, quantitatively
#
# Chapter {ref}`a1` fitted a linear probe at every depth of its trained networks and tested which
# indices each probe localizes (its Fig. 1b). Here we reload those cached networks and probe
# results (same parameters, so nothing is retrained) and compare, depth by depth, the probes'
# localization distance with three reaches ({numref}`fig-a2-hops`): the receptive field $R(d)$,
# one hop {glue:text}`a2_hop`$R(d)$, and iterated hops (one per normalization layer up to $d$). A
# distance beyond {glue:text}`a2_hop`$R(d)$ is something a single hop cannot explain; a distance
# beyond the iterated reach would contradict the hop picture itself.

# %%
localization.pretrain(localization.chapter_networks(setup), params.workers)
no_norm = localization.localize(setup, setup.cnn("none"))
with_norm = localization.localize(setup, setup.chapter_cnn)
circular = localization.circular_null(setup, setup.chapter_cnn)
print("A1's results loaded from the cache:",
      fmt.from_cache({r.name: r.cache_hit for r in (no_norm, with_norm, circular)}))  # fmt: skip
hops = multihop.compare(with_norm.probe_distances, params.kernel, params.seq_len, params.hop_factor)
report.figure("fig-a2-hops", figures.probe_reach([no_norm, with_norm], params.hop_factor))
report.md(tables.hops(hops, with_norm, no_norm, params.hop_factor))

# %% [markdown]
# ```{glue:figure} fig-a2-hops
# :name: fig-a2-hops
# :alt: Probe localization distance per depth and seed against three reach curves.
#
# Localization distance of chapter A1's depth probes against the receptive field $R(d)$, one
# hop and one hop per normalization layer. Drawn by `paper_a.a2_mechanism.figures.probe_reach`.
# ```

# The multi-hop claim needs networks that have finished learning: chapter A1's
# {numref}`fig-a1-curve` shows these networks through training (their kept states, evaluated
# like the trained ones).

# %%
curves = [localization.curve(setup, r.cnn) for r in (no_norm, with_norm)]
rising = late.rising(curves[1], bands.interior_slope)
run.glue("a2_rising", "may still be rising" if rising else "has flattened")

# %% [markdown]
# The normalized networks' interior slope {glue:text}`a2_rising` by the end of the budget
# (the rule of {ref}`a1-curve`). The multi-hop claim below has a curve of its own: the depth
# probes fitted at the same kept states, with as many predictions per index, tell whether the
# reach was still rising.

# %% tags=["remove-input"]
run.glue("a2_norm", with_norm.name)
run.glue("a2_first_beyond_R", fmt.depths(hops.first_beyond_radius))
run.glue("a2_first_beyond_single", fmt.depths(hops.first_beyond_single))
run.glue("a2_max_hops", fmt.join(hops.max_hops))
run.glue("a2_beyond_iter", "; ".join(fmt.join(b) or "none" for b in hops.depths_beyond_iterated))
run.glue("a2_out_dist", fmt.join(with_norm.distances))
run.glue("a2_out_dist_none", fmt.join(no_norm.distances))

# %% [markdown]
# With {glue:text}`a2_norm`, the probes first localize beyond the receptive field at depth
# {glue:text}`a2_first_beyond_R` (per seed) and first beyond one hop, {glue:text}`a2_hop`$R(d)$,
# at depth {glue:text}`a2_first_beyond_single`; the most hops any depth needs is
# {glue:text}`a2_max_hops`. Depths whose distance exceeds even the iterated reach:
# {glue:text}`a2_beyond_iter`. The network's own output localizes to distances
# {glue:text}`a2_out_dist` (no normalization: {glue:text}`a2_out_dist_none`; the middle of the
# sequence is {glue:text}`a2_half` from the ends).
#
# Two cautions in reading this. The hop bounds are reach limits, not predictions: the
# argument says where position *can* have travelled, and a network may use less. And the
# distances are significance-based ({ref}`methods-distance`) on a finite sample; chapter
# {ref}`a1` reports how large the position signal behind them is.
#
# (a2-live)=
# ## The statistics are the channel: freeze them
#
# The argument says position travels through the normalization statistics. The view below
# puts that to a test you can run: it runs chapter A1's trained networks in your browser (no
# kernel), as in {ref}`a1-live`. Nudge index $j$ and the normalized network's outputs move
# everywhere. Then tick *freeze the norm statistics*: the nudged input is normalized with the
# means and variances of the un-nudged one, every convolution and affine parameter unchanged.
# If the statistics are the only path past $R$, nothing beyond $j \pm R$ can move any more.
# The page's numbers, frozen statistics included, are held to PyTorch's within
# {glue:text}`a2_live_tol` by the browser check (`paper_a.live.predict_frozen` computes them
# in the build).

# %%
report.show_view(live.live_view(
    "a2-live", {"no normalization": no_norm, with_norm.name: with_norm},
    "Prediction and change caused by a nudge at one index, with the normalization statistics "
    "live or frozen, computed in the browser", params.live_seeds, params.live_draws,
    freeze=True))  # fmt: skip
run.glue("a2_live_tol", f"{live.TOLERANCE:g}")

# %% [markdown]
# (a2-verdict)=
# ## Verdict at this profile
#
# In plain words, at this profile: the transition location is {glue:text}`a2_transition`;
# multi-hop reach is {glue:text}`a2_multi_hop`; {glue:text}`a2_checks` checks (chance at
# $o = 0$, the per-path control) hold. Where the networks' localization stays within one hop,
# the multi-hop
# argument is simply not needed to explain it: that neither confirms nor refutes the mechanism,
# and a longer training run (chapter A1's `steps`, or the `paper` profile) is what would put it to
# the test. PackNorm shows that a normalization layer *can* carry information between inputs that
# share a noise patch; as the paper's {ref}`public review <methods-sources>` points out, it does
# not show that chapter A1's networks *do* it this way. The depth-by-depth comparison above is
# consistent with hopping, but only an intervention on the trained networks' statistics could test
# the mechanism directly.
#
# The rules are in `paper_a.a2_mechanism.claims` and on the Methods page
# ({ref}`methods-verdicts`). The transition is a comparison with the paper's number: *reproduced*
# when the $t$ interval of our per-seed transitions lies inside the paper's band, *refuted* when
# it lies wholly outside, *not shown* when it straddles an edge; it is graded only if every
# PackNorm model learned (accuracy at full overlap at least {glue:text}`a2_learned_level`). It
# is refuted only if the transition has also stopped moving: the sweep is tested again, with as
# many pairs, at the weights kept at {glue:text}`a2_pack_half` of the budget, and each seed's
# depth inside the band must have gained less than half a grid step since. Multi-hop measures,
# per seed, how far the depth probes localize beyond {glue:text}`a2_hop`$R(d)$ at their best depth
# (0 if at no depth), in layers of receptive-field growth, and tests it against the same
# measure of both nulls of chapter {ref}`a1` (the no-norm network and the same network with
# circular padding) in paired $t$ tests against a smallest effect of interest of
# {glue:text}`a2_reach_sesoi` ({ref}`methods-sesoi`).

#
# **What the multi-hop rows measure and how they are graded, from the library:** the reach beyond
# $R(d)$ of the depth probes, its test against both nulls, and the chapter's rules.
#
# ```{code-of} normbook.paper_a.measures.multihop.excess_beyond
# ```
#
# ```{code-of} normbook.paper_a.grading.nulls.reach_test
# ```
#
# ```{code-of} normbook.paper_a.a2_mechanism.claims.a2_ledger
# ```
# %%
probe_curve = localization.curve(setup, with_norm.cnn, with_probes=True)
pack_kept = packnorm.late_accuracy(pack_setup)
run.glue("a2_pack_half", fmt.join(pack_setup.train.checkpoints, ".3g") or "none")
ledger, checks = claims.a2_ledger(
    pack, with_norm, no_norm, circular, params.hop_factor, probe_curve, pack_kept
)
run.glue("a2_learned_level", f"{0.5 + sesoi.CHANCE_MARGIN:g}")
run.glue("a2_reach_sesoi", sesoi.REACH.show())
report.show_verdicts("a2", ledger)
report.show_checks("a2", checks)
run.record("a2-verdict", claims=ledger, checks=checks)

# %% [markdown]
# (a2-exercises)=
# ## Exercises
#
# Each exercise re-executes this chapter with other parameters (one command from the
# repository root); predict first, then run.
# Each exercise states what it costs and what it retrains; `make exercises
# EXERCISES=<label>` runs it into a build folder of its own, and its solution then shows
# the outcome.
#
# :::{exercise} Freeze the statistics
# :label: a2-ex-frozen
# In the view of {ref}`a2-live`, pick the normalized network and nudge an index in the middle
# of the sequence: note the largest change beyond $j \pm R$. Now tick *freeze the norm
# statistics*. Predict the largest change beyond $j \pm R$ before you look, and say what the
# answer shows about where the side channel runs. Does the change *within* $j \pm R$ stay the
# same?
#
# **Cost at `cpu`:** {{ cost_a2_ex_frozen }}.
# :::
#
# :::{solution} a2-ex-frozen
# :class: dropdown
# With the statistics frozen the largest change beyond $j \pm R$ is zero, exactly: every path
# from index $j$ to a position farther than $R$ went through a mean or a variance, so the
# statistics are the side channel and the only one. Within $j \pm R$ the change on noise is
# close to, but not the same as, before: the live statistics also moved the positions near $j$.
# Try it on a constant input too: within $j \pm R$ the frozen change can be far larger, since a
# flat input's variance is tiny and the nudge is divided by it, where live statistics would
# have grown with the nudge.
#
# **Outcome at `cpu`:** {{ outcome_a2_ex_frozen }}
# :::
#
# :::{exercise} The control that cannot communicate
# :label: a2-ex-control
# Per-path InstanceNorm normalizes each path on its own, so the two paths share nothing.
# Predict its accuracy at half overlap, then add that control:
# `make chapter CHAPTER=book/a2_mechanism.py PARAMS='-p control_fracs 0.5,1.0'`.
#
# **Cost at `cpu`:** {{ cost_a2_ex_control }}.
# :::
#
# :::{solution} a2-ex-control
# :class: dropdown
# Chance (one half), whatever the overlap: path B's input never reaches the head on path A.
# This is why the book reports it as a check, not a claim: it cannot come out otherwise. The
# informative comparison is PackNorm at the same overlap, which can only beat chance through
# the shared statistics.
#
# **Outcome at `cpu`:** {{ outcome_a2_ex_control }}
# :::
#
# :::{exercise} Train longer
# :label: a2-ex-steps
# Predict how the transition overlap of {numref}`fig-a2-fig3` moves when every PackNorm network
# trains twice as long: `make chapter CHAPTER=book/a2_mechanism.py PARAMS='-p pack_steps 3000'`.
#
# **Cost at `cpu`:** {{ cost_a2_ex_steps }}.
# :::
#
# :::{solution} a2-ex-steps
# :class: dropdown
# Longer training can only help a network exploit a weak signal, so accuracies at small
# overlaps rise and the transition (the smallest overlap reaching the accuracy level
# `transition_level`) moves to smaller overlaps or stays. If it moves a lot, the transition is
# a property of the budget, not of the overlap; chapter {ref}`a4-packnorm` asks the same
# question with a kernel of size 1.
#
# **Outcome at `cpu`:** {{ outcome_a2_ex_steps }}
# :::
#
# :::{exercise} A deeper hop
# :label: a2-ex-hop
# The multi-hop argument assumes one hop reaches $3R$ (`hop_factor` 3). Re-run with a
# generous single hop, `PARAMS='-p hop_factor 5'`, and predict which of the multi-hop
# statements in {ref}`a2-multihop` change.
#
# **Cost at `cpu`:** {{ cost_a2_ex_hop }}.
# :::
#
# :::{solution} a2-ex-hop
# :class: dropdown
# A larger single-hop reach makes more of the sequence reachable in one hop, so the depth at which
# the argument requires several hops moves deeper, and the claim that localization reaches beyond
# one hop becomes harder to reproduce. The measured probe results do not change (no network is
# retrained); only their reading does, which shows how much the conclusion rests on the assumed
# reach.
#
# **Outcome at `cpu`:** {{ outcome_a2_ex_hop }}
# :::

# %%
run.finish()
