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
# (methods)=
# # Methods
#
# This page says how the book turns two papers into executed experiments: what each paper
# fixes and what we had to choose ({ref}`methods-reconstruction-a`,
# {ref}`methods-reconstruction-b`), how localization is tested ({ref}`methods-detector`),
# how a claim becomes a verdict ({ref}`methods-verdicts`), what the three profiles are
# ({ref}`methods-profiles`), and how the code is checked ({ref}`methods-tests`). Its tables
# are generated from the same specifications and rule functions the chapters run, so they
# cannot disagree with them.

# %% tags=["parameters", "hide-input"]
profile = "cpu"  # smoke, cpu or paper; a knob left at None takes the profile's value
oc_models = None  # simulated models per step and noise correlation length (detector calibration)
#   [smoke 20 · cpu 200 · paper 1,000]
power_draws = None  # simulated designs per point of the power figure
#   [smoke 20 · cpu 400 · paper 2,000]

# %% tags=["remove-input"]
from normbook.book_pages import ledger as ledger_page
from normbook.book_pages import methods
from normbook.grading import claims, ledger, stability, stats
from normbook.pages import report
from normbook.paper_a import paper_values as paper_values_a
from normbook.paper_a.a4_stress import claims as a4_claims
from normbook.paper_a.grading import nulls as nulls_a
from normbook.paper_a.grading import rules as rules_a
from normbook.paper_a.grading import sesoi
from normbook.paper_a.measures import detector_calibration as calibration
from normbook.paper_a.methods_page import figures
from normbook.paper_a.runs import localization
from normbook.paper_b.grading import sesoi as sesoi_b
from normbook.publish.chapters import SPECS
from normbook.tools import refutable

params, run = report.start(SPECS["methods"], globals())
specs = [s for name, s in SPECS.items() if name != "methods"]
a1, b3 = SPECS["a1_localization"].profiles["paper"], SPECS["b3_clusters"].profiles["paper"]
run.glue_all("m", {
    "alpha": paper_values_a.WELCH_ALPHA, "len": paper_values_a.SEQ_LEN,
    "radius": paper_values_a.RADIUS,
    "kernel": a1["kernel"], "width": a1["width"], "depth": a1["depth"],
    "seeds": len(a1["seeds"]), "k_range": f"{b3['k_min']} to {b3['k_max']}",
    "lr_ratio": f"{b3['cifar_lr_bn'] / b3['cifar_lr_nobn']:g}", "batch": a1["batch_size"],
    "cpu_seeds": len(SPECS["b1_setup_accuracy"].profiles["cpu"]["seeds"]),
    "level": claims.ALPHA, "conf": f"{stats.CONFIDENCE:.0%}",
    "claim_conf": f"{claims.CLAIM_CONFIDENCE:.0%}",
    "flat_margin": f"{sesoi.SLOPE.flat_margin:g}", "slope_sesoi": sesoi.SLOPE.show(),
})  # fmt: skip

# %% [markdown]
# (methods-profiles)=
# ## Profiles
#
# Every chapter runs at one of three profiles, chosen with its `profile` parameter; any
# single knob can be overridden on top (`make chapter CHAPTER=… PARAMS='-p steps 8000'`).
#
# - `smoke` proves that a chapter runs end to end in seconds; its numbers mean nothing and
#   its verdicts are not evidence. Continuous integration executes every chapter at `smoke`.
# - `cpu` is the profile the book is built with: every experiment at a scale that two CPU
#   cores train in minutes, with enough seeds ({glue:text}`m_cpu_seeds` paired seeds for the
#   seed-level tests) that a claim *can* be decided. Networks are smaller and trained for a
#   fraction of the papers' budget, so some effects are weak or absent at `cpu`: the verdicts
#   say so (*refuted*, or *not shown at this budget*) rather than hide it.
# - `paper` is the papers' own scale (sequence length {glue:text}`m_len`, full datasets), with
#   {glue:text}`m_seeds` seeds (the papers' four plus one); it needs a GPU and hours.
#
# **Paper scale, recorded.** Chapter A1's experiment at the paper's scale runs as one
# self-contained program (`normbook.tools.paperscale`) on a machine with a GPU and nothing but
# Python, torch, numpy and scipy. Its budget is fixed before any result: it times a few
# training steps and evaluated samples on networks at seeds no chapter uses, then takes the
# first rung of a ladder written in its code (the paper's budget; then fewer predictions per
# index, then fewer training steps, then fewer seeds) whose estimated time fits its deadline.
# It writes a *record* after every phase: provenance (commit, a hash of every module's source,
# device, driver, CUDA and cuDNN versions, precision flags, the random-number scheme, date),
# the budget and why, its rates against the plain fp32 eager path, and the per-index moments
# and depth-probe maps. The book reads the record and grades it with the same rules; where the
# record's computing modules differ from the book's code, the page says *recorded with earlier
# code* and names them. **Precision:** float32 storage; on a GPU, convolutions use TF32 (10
# mantissa bits in the operands, float32 sums: PyTorch's CUDA default), the depth probes'
# matrix products full float32, and the moments float64. No bfloat16 anywhere: it rounds in
# steps of 0.4 %, larger than one index's share of the ramp at $\ell$ = 600 (0.17 %). TF32
# rounds each operand, not a position, and the nulls are evaluated in the same precision, so
# their calibration holds. **Random numbers:** each model draws from its own generator per
# purpose, seeded from its seed, on the device it runs on (a GPU's generator is Philox, a
# CPU's the Mersenne Twister, so one seed gives other inputs on the two: the record names the
# device). The CPU keeps its own path, number for number.
#
# The knobs that differ most between the profiles:

# %%
report.md(methods.profile_table(specs, methods.KEY_KNOBS))

# %% [markdown]
# (methods-reconstruction-a)=
# ## Paper A: what the paper fixes, and what we chose
#
# **The task.** Each input is a sequence of i.i.d. standard normal values, drawn fresh for
# every batch; the target at index $i$ is $i/(\ell-1)$, a ramp from 0 to 1; the loss is the
# mean squared error over all positions. Sequences are zero-padded, so the two ends are the
# only positional cue. The paper uses $\ell$ = {glue:text}`m_len` and a receptive-field
# radius $R$ = {glue:text}`m_radius`.
#
# **The network.** A stride-1 1-D CNN: $d$ blocks of convolution (kernel $k$) →
# normalization → ReLU, then a 1×1 convolution to one output per position; $R = \lfloor
# k/2\rfloor \cdot d$. The paper does not give $k$, $d$ or the width $C$ separately; we use
# $k$ = {glue:text}`m_kernel`, width {glue:text}`m_width`, and at `paper` $d$ =
# {glue:text}`m_depth`. At smaller profiles we keep the
# ratio $\ell/R$ close to the paper's, so that the interior that convolution alone cannot
# reach is the same fraction of the sequence. GroupNorm with $G = 1$ normalizes over channels
# and positions with a per-channel affine map (PyTorch's `LayerNorm` over (channels,
# positions) would learn a per-position affine map, which leaks absolute position); $G = C$
# is InstanceNorm. BatchNorm is trained with minibatch statistics and evaluated with either
# minibatch or population statistics.
#
# **Training.** Adam with a fixed number of steps, batch {glue:text}`m_batch`, one model per seed;
# the learning rate is ours (at `cpu` a larger one, because the step budget is a small fraction of
# the paper's). All seeds of one configuration train side by side in one network of grouped
# convolutions whose parts never interact, so each model follows the trajectory it would follow
# alone, and each is cached on its own.
#
# (methods-detector)=
# ### The localization test, and its operating characteristic
#
# The paper calls index $i^*$ *localized* when the mean prediction at $i^*$ differs from the
# mean prediction at every other index (its Definition 2.3), tested with Welch's t-test at
# $p <$ {glue:text}`m_alpha` on many predictions per index. Predictions come from two
# *independent* streams of evaluation batches (batches alternate between them), so that the two
# samples of every test are independent; per-index counts, means and sums of squares are
# accumulated batch by batch, and every test is `scipy.stats.ttest_ind_from_stats(...,
# equal_var=False)`. Three tests are implemented (the `detector` knob):
#
# - **span** (the primary test): index $i$ is localized when the mean output at $i+1$ (one
#   stream) differs from the mean output at $i-1$ (the other stream): the network tells the two
#   sides of $i$ apart. At the ends the missing side is $i$ itself.
# - **definition** (the reference): Definition 2.3 as an intersection-union test
# {cite:p}`berger1982multiparameter`, $i$ against
#   every $j \neq i$; its p-value is the largest of the $\ell - 1$ Welch p-values.
# - **neighbour** (this book's test before calibration): $i$ against $i-1$ *and* against $i+1$,
#   both two-sided.
#
# A detector grades claims only after its false-positive rate and its power are known. We
# simulate two independent streams of per-index means: a ramp rising by a fixed number of
# standard errors per index, plus Gaussian noise smoothed along the sequence (neighbouring
# outputs of a CNN share inputs, so their noise is correlated), and count the indices each
# test calls localized ({numref}`fig-methods-oc`; {glue:text}`m_oc_models` simulated models of
# {glue:text}`m_oc_len` indices per point).

# %%
oc = calibration.measured(alpha=paper_values_a.WELCH_ALPHA, n_models=params.oc_models)
report.figure("fig-methods-oc", figures.operating_characteristic(oc, paper_values_a.WELCH_ALPHA))
run.glue_all("m", {"oc_models": params.oc_models, "oc_len": calibration.SIM_LEN,
                     "oc_corr": ", ".join(map(str, calibration.CORR_LENS))})  # fmt: skip
for test in calibration.TESTS:
    run.glue(f"m_fpr_{test}", f"{calibration.false_positive_rate(oc, test):.3f}")
    run.glue(f"m_dip_{test}", f"{calibration.largest_dip(oc, test):.3f}")

# %% [markdown]
# ```{glue:figure} fig-methods-oc
# ---
# name: fig-methods-oc
# alt: Detection rate against the per-index step for three tests at three noise correlation
#   lengths; the span test rises from alpha, the neighbour test dips below it.
# ---
# Operating characteristic of the three localization tests on simulated streams: fraction of
# indices localized against the step per index (in standard errors of one mean), for noise
# correlated over {glue:text}`m_oc_corr` indices; dotted, the level $\alpha$. Drawn by
# `paper_a.methods_page.figures.operating_characteristic`.
# ```
#
# Under the null (step 0) the span test flags at most {glue:text}`m_fpr_span` of the indices at
# any correlation length: its false-positive rate is $\alpha$ up to simulation error, because its
# two samples are independent whatever the correlation *within* a stream. Its detection rate never
# falls as the step grows (largest dip: {glue:text}`m_dip_span`), because its p-value depends on
# the step through one Welch statistic of a difference whose expected value is twice the step. The
# neighbour test fails the second property (largest dip {glue:text}`m_dip_neighbour`): under a
# ramp its two differences have opposite signs and share $i$'s noise, so a small real effect makes
# it pass *less* often than no effect at all, which is why this book no longer uses it. Definition
# 2.3 is valid (false-positive rate {glue:text}`m_fpr_definition`) but, as an intersection of
# $\ell - 1$ tests, it has almost no power until the step reaches several standard errors (largest
# dip: {glue:text}`m_dip_definition`). Unit tests assert both properties for the span test (within
# simulation error) and the neighbour test's failure of the second.
#
# (methods-distance)=
# ### The localization distance
#
# How far inward from the ends localization reaches *without a break*: walking in from the
# ends, the last boundary distance $r$ at which at least `distance_threshold` of the indices
# within `distance_window` of $r$ are localized (both knobs are ours). Requiring a connection
# to the boundary stops a run of false positives in the middle from counting as reach; the
# price is that a gap next to the boundary band stops the reach even when much of the
# interior is localized, which is why the interior fraction is reported beside it. Depth
# probes (Fig. 1b) are 1×1 convolutions shared by all positions, fitted by ridge regression to
# the ramp on fresh noise with the network frozen, and tested the same way.
#
# (methods-null)=
# ### The nulls
#
# A fraction or a distance measured with a significance test says nothing until it is compared
# with what a network that *cannot* localize shows, measured the same way. Every claim that a
# network localizes is compared with two such networks: the network of the same architecture and
# seed *without normalization* (Proposition C.1: its interior outputs are identically distributed),
# and the *same trained network evaluated with circular padding*. Circular padding removes the
# boundary, so every index is equivalent and nothing can be localized, but the outputs keep the
# normalized network's own noise, including its correlation along the sequence. Both are checked:
# the no-norm network's interior outputs are unchanged, up to float64 rounding, by a shift of its
# input, and the circular network's outputs move with a cyclic shift of its input. A network is
# never part of its own null.
#
# (methods-null-statistics)=
# ### What a null network's fraction and distance look like
#
# The interior fraction and the localization distance count indices, and the indices of one
# network do not err independently: neighbouring outputs share inputs, and a pooled statistic
# moves a whole sample's output up or down together. Each index is flagged with probability
# $\alpha$ whatever the correlation, but a network's flags come together, so a single null
# network can show a fraction far above $\alpha$ and a distance that reaches the middle.
# {numref}`fig-methods-nulls` simulates networks that localize only where they see the padding
# (a steep ramp within $R$ of each end, flat beyond, at chapter A1's geometry), with noise
# correlated along the sequence and a share of it common to the whole sequence; the ticks are
# this build's networks of chapter A1 that cannot localize beyond $R$, measured the same way:
# the circular-padding networks for the fraction, the no-norm networks for the distance (a
# network with no boundary has no distance from it; a no-norm network whose every ReLU died
# localizes nothing at all and sits far left).

# %%
a1 = ledger.executed_params(SPECS["a1_localization"], params.profile)  # as chapter A1 ran
setup_a1 = localization.Setup.from_params(a1)
nulls = calibration.measured_nulls(a1.alpha, a1.seq_len, setup_a1.radius, a1.distance_window,
                                   a1.distance_threshold, n_models=params.oc_models)  # fmt: skip
circ = localization.circular_null(setup_a1, setup_a1.chapter_cnn)  # chapter A1's, cached
none = localization.localize(setup_a1, setup_a1.cnn("none"))  # no boundary to measure from: none's
marks = {"frac_interior": circ.frac_interior,
         "distance_beyond": [d - setup_a1.radius for d in none.distances]}  # fmt: skip
report.figure("fig-methods-nulls", methods.null_figure(nulls, marks))
quantiles = calibration.null_quantiles(nulls)
report.md(methods.null_quantile_table(quantiles))
run.glue_all("m", {"q_none": f"{quantiles.loc[0.0].frac_interior.max():.2f}",
                     "q_half": f"{quantiles.loc[0.5].frac_interior.max():.2f}"})  # fmt: skip

# %% [markdown]
# ```{glue:figure} fig-methods-nulls
# ---
# name: fig-methods-nulls
# alt: Empirical distribution functions of the interior fraction and of the distance beyond R
#   for simulated null networks at three shares of sequence-wide noise.
# ---
# Null distributions of the interior fraction (left) and of the localization distance beyond
# $R$ (right) for simulated networks that cannot localize beyond $R$: colour, the share of the
# noise common to the whole sequence; line style, its correlation length along the sequence;
# dotted, the 95 % level; ticks, this build's circular-padding networks (left) and no-norm
# networks (right). Drawn by
# `book_pages.methods.null_figure`.
# ```
#
# The table gives each null's 95 % quantile. With no shared noise a null network's fraction
# stays below {glue:text}`m_q_none` (95 %, at every correlation length); with half of it
# shared, up to {glue:text}`m_q_half` of the interior can be flagged by chance. This is why no
# claim of the book is graded on a fraction or a distance: the claims grade slopes of the mean
# prediction, which a shift of the whole sequence leaves unchanged, against the two null
# networks measured the same way.
#
# (methods-packnorm)=
# ### PackNorm and the multi-hop bound
#
# The paper's two-path, shared-weight network is reconstructed as follows. A noise sequence $z$ of
# length $2\ell'-o$ is drawn; path A gets $z[0:\ell']$, path B gets either $z[\ell'-o:2\ell'-o]$
# (overlapping A by $o$ samples) or an independent sequence, with equal probability. Both paths
# run the same CNN; at each normalization layer the two activations are concatenated along space,
# normalized together (InstanceNorm) and split back, which is the only coupling. A head on path A
# says which case it is in. At $o = 0$ the two cases are identically distributed for path A, so
# accuracy is at chance by construction, and the per-path control (InstanceNorm on each path
# alone) cannot do better than chance at any overlap: both are checks of the pipeline, not
# evidence for the paper. At full overlap path B *is* path A, so the claim that overlap enables
# discrimination is graded at partial overlaps. The multi-hop bound follows the paper's hop: one
# hop carries position $2R(d)$ beyond the $R(d)$ an index sees directly, and the iterated bound
# allows one hop per normalization layer.
#
# **BatchNorm at evaluation.** With minibatch statistics, the samples of an evaluation batch
# share statistics, so their predictions are not independent, which the per-sample test
# assumes. Chapter A3 therefore also tests per-batch mean predictions (batches are
# independent) and reports the design effect, $b\cdot\mathrm{var}(\text{batch mean}) /
# \mathrm{var}(\text{single prediction})$: 1 for independent predictions. Every BatchNorm
# verdict uses the batch-mean test.
#
# (methods-symmetry)=
# ### What translation symmetry implies far from both ends
#
# Let the input be i.i.d. noise and write the output at index $i$ as $g(z_{[i-R,i+R]}, s)$,
# where $s$ collects every normalization statistic (each a mean over all $\ell$ positions)
# and $g$ is the same function at every interior index. The mean prediction $E[g]$ depends
# on $i$ only through the *joint* law of the patch $z_{[i-R,i+R]}$ and $s$. Split $s$ into the
# terms whose inputs overlap the patch or are chained to it through overlapping neighbours,
# and the rest. The boundary enters only through terms within $R$ of an end, and a chain of
# overlapping terms links them to the patch only when the patch is within one hop ($2R$) of
# them: beyond $3R$ from an end the lower-order dependence between the patch and $s$ (means,
# covariances) is the same at every index, and what differs is carried by higher-order
# cumulants of $s$, which, for a mean over $\ell$ positions, shrink like $\ell^{1-k}$ for the
# $k$-th cumulant. Two predictions follow. (1) With constant input every interior index is
# equivalent and the output is exactly flat beyond $R$ ({ref}`a4-constant` checks it). (2)
# With noise, the slope of the mean prediction need not vanish beyond $3R$ but should drop
# sharply there and keep shrinking with each further hop; it is exactly zero only as
# $\ell \to \infty$. (This is a heuristic argument, not a proof; the measurements are the
# test.)
#
# **How many hops, at which order.** Each normalization layer's statistics are means over all
# $\ell$ positions of a function of that layer's input, which depends on the input within the
# layer's own reach and on the *earlier* layers' statistics. A boundary term enters one
# statistic with weight $1/\ell$ per position, about $R/\ell$ in all; a patch beyond $3R$ can
# only see it through a chain in which one statistic carries it to a term that overlaps a
# second statistic's term, and so on: $h$ hops need a chain of $h$ statistics, ordered by
# layer, and enter at order $(R/\ell)^h$ times whatever gain the trained network applies. A
# network with $N$ normalization layers has $\binom{N}{h}$ such chains. So the share of the
# first band's slope that the second band keeps should scale like $(N-1)\,R/\ell$: at a fixed
# receptive field it should *grow* with the number of normalization layers (roughly doubling
# per doubling of $N$: the exponent of $N-1$ against $N$ is a little above 1 at these $N$) and
# *halve* per doubling of $\ell$. In the power law that chapter {ref}`a5-law`
# fits, $\log_2$ share $= b_0 + b_1 \log_2 N + b_2 \log_2 \ell$, this predicts $b_1 \approx 1$
# and $b_2 \approx -1$; the gain a trained network applies can raise or lower both, which the
# measurement decides. The argument is an expansion in small $(N-1)R/\ell$: at paper A's
# geometry that product exceeds 1, where longer chains are no longer small and the expansion
# says nothing, so the chapter's extrapolation there rests on the fitted law alone.
#
# (methods-reconstruction-b)=
# ## Paper B: what the paper fixes, and what we chose
#
# **Data.** MNIST is read from its four IDX files and CIFAR-10 from the official binary
# archive, both parsed with numpy (nothing is unpickled) and verified against the published
# checksums; a copy that fails verification is used only when explicitly allowed, and then
# every chapter that uses it says so. MNIST is zero-padded to 32×32 so that the standard CNN's
# geometry works; both datasets are normalized with the usual per-channel constants; there is
# no data augmentation.
#
# **Networks and training.** MNIST uses the "standard CNN" of Nakkiran et al. (3×3 convolutions of
# widths $k, 2k, 4k, 8k$, each conv → BatchNorm → ReLU, max-pools, one linear layer), trained with
# SGD at the paper's learning rate with and without BatchNorm; CIFAR-10 uses VGG-16 with Adam at
# the paper's two learning rates, one with BatchNorm and {glue:text}`m_lr_ratio` times smaller
# without (the confound the paper's {ref}`public review <methods-sources>` objects to). "No BN"
# replaces each BatchNorm by the identity and changes nothing else. Our choices: He initialisation
# as in torchvision's VGG, the minibatch size, SGD momentum, a validation split held out of the
# training split, and an early-stopping rule (the weights with the lowest validation loss are
# kept; training stops after
# `patience` evaluations without improvement or when the epochs run out). At `cpu` both networks
# are narrower and see fewer images and epochs than the paper's, so their accuracies are far below
# the paper's and only the BN versus no-BN comparison is at stake.
#
# **Representations and metrics.** The post-ReLU activations of every convolutional layer, model
# in evaluation mode, on class-balanced images. *Layer sparsity* is the fraction of exactly-zero
# activations; *average channel sparsity* averages each channel map over space first (our
# reading), so that it differs from layer sparsity. Cluster purity is the Davies–Bouldin index
# (`sklearn.metrics.davies_bouldin_score`), with the true labels as clusters and for k-means
# partitions (`sklearn.cluster.KMeans`, $k$ from {glue:text}`m_k_range`, $k^*$ = the $k$ with the
# lowest index). k-means may run on principal components to save time, but every index is computed
# on the raw activations. We also report the index at a fixed $k$, chosen without looking at it.
# The BN and no-BN models of one seed start from the same initial convolution weights and see
# the same minibatch order, so they form a *pair*, and every BN-versus-no-BN claim is one paired
# test over seeds on a contrast declared in advance (the mean over layers, the deeper half of the
# layers, the last layer or the settling layer); per-layer differences are shown as description.
#
# (methods-statistics)=
# ### Seeds, error bars and tests
#
# Every "mean ± sd" in the book is the mean over seeds and the *sample* standard deviation
# (divisor $n - 1$). Same seed, same numbers: every random draw comes from a generator seeded
# from the model's seed and the draw's purpose, and the tests check that re-running gives
# bit-identical results.
#
# The unit of every claim's test is an independently trained network, never an index or a layer
# (neighbouring indices share inputs; layers of one network share everything). A claim that
# compares two conditions seed by seed tests the mean of the per-seed effects (signed so that a
# positive value goes the claim's way) against the claim's smallest effect of interest with a
# one-sample $t$ test (`scipy.stats.ttest_1samp`), in both directions: does the effect clear the
# SESOI, is it below it? Its two-sided {glue:text}`m_claim_conf` interval is the one both
# questions read: the lower end above the SESOI is "clears" at level {glue:text}`m_level`, the
# upper end below it is "below". An earlier version of this book used the exact paired
# sign-flip test, which with five seeds reaches 0.05 only when all five seeds agree: one
# discordant seed, however small, decided a claim. The $t$ test tolerates one seed that
# barely learned (a worked example is in {ref}`methods-verdicts`), at the price of assuming the
# per-seed effects are roughly normal: with five seeds a skewed spread can make one of the two
# questions easier to answer than its level says, and the power figure below is for normal
# spreads. Where every seed gives the same value (whole layers, whole indices) there is no
# $t$ test and the exact sign test's bound, $2^{-n}$, is used instead. Trends over many
# independently trained models (the group count of GroupNorm, the sequence length of the decay
# study) use Spearman's rank correlation with a Fisher-$z$ interval against a SESOI on $\rho$;
# accuracies against chance use exact binomial tests with Clopper–Pearson intervals; the
# papers' reported values are compared by two one-sided tests against the paper's band.
# Descriptive intervals elsewhere in the book (figures, per-layer tables) are
# {glue:text}`m_conf`.
#
# **How many seeds.** {numref}`fig-methods-power` shows the chance that the test gives a
# decisive answer when the truth is one SESOI beyond it (an effect of twice the SESOI gets
# *reproduced*; by symmetry, no effect at all gets *refuted*), against the SESOI in units of the
# seeds' spread, for four to six seeds: simulated with the test itself ({glue:text}`m_draws`
# designs per point, dots) and from the noncentral $t$ distribution (lines). The ticks are this
# build's claims, each at the spread it measured. The `cpu` profile uses
# {glue:text}`m_cpu_seeds` seeds: a sixth would raise the power at a SESOI of one seed standard
# deviation from {glue:text}`m_power5` to {glue:text}`m_power6` and cost a fifth more
# training in every chapter; where a claim's spread is small (most of them) five seeds already
# decide it. Four, the papers' own number, would save a fifth of the training, but no row whose
# seeds all give the same value could then be decided: the exact sign test's smallest $p$ is
# $2^{-4}$ = 0.0625, above the level (tried for the `cpu` book's ceiling on 2026-12-07: A3's
# BatchNorm boundary row, refuted with five seeds, read *not shown* with four).

# %%
power = methods.simulated_power(params.power_draws)
recs = ledger_page.records(params.profile)
report.figure("fig-methods-power", methods.power_figure(power, methods.claim_ratios(recs),
                                                        seeds=len(a1.seeds)))  # fmt: skip
run.glue_all("m", {"blocked": len(refutable.blocked(recs)),
                   "claims": sum(len(r["claims"]) for r in recs)})  # fmt: skip
at_one = power[power.ratio == 1.0].set_index("n").analytic
run.glue_all("m", {"draws": params.power_draws, "power5": f"{at_one[5]:.2f}",
                     "power6": f"{at_one[6]:.2f}"})  # fmt: skip

# %% [markdown]
# ```{glue:figure} fig-methods-power
# ---
# name: fig-methods-power
# alt: Power of the seed-level t test against the SESOI in units of the seeds' standard
#   deviation, for four, five and six seeds; simulated points on analytic curves.
# ---
# Power of the claims' $t$ test over seeds: the chance of a decisive verdict when the truth is
# one SESOI beyond the SESOI, against SESOI / (standard deviation of the per-seed effect);
# dots, simulated with `grading.claims.mean_test`; lines, the noncentral $t$ distribution; dotted,
# 80 %; ticks, this build's claims. Drawn by `book_pages.methods.power_figure`.
# ```
#
# (methods-reconstructed-knobs)=
# ### Every reconstructed knob
#
# Each of these is a parameter of the chapters listed; their values at every profile are in
# each chapter's parameter table.

# %%
report.md(methods.reconstruction_table(specs))

# %% [markdown]
# (methods-verdicts)=
# ## From claims to verdicts
#
# Every chapter ends with two tables. **Claims**: the paper's claims in our words (rows marked
# *(ours)* are claims we added), each graded by one test fixed before looking at the numbers,
# with its effect size and interval beside the claim's **smallest effect of interest** (SESOI:
# the smallest effect that would matter, declared with its reason before any number was seen;
# {ref}`methods-sesoi`), the test and its p-values, and the null it was compared with. The
# grades:
#
# - *reproduced*: the effect's {glue:text}`m_claim_conf` interval clears the SESOI on the
#   claim's side;
# - *partly reproduced*: a claim of several parts (datasets, learning rates, thresholds, the
#   two halves of "higher except at the last layer") of which some are reproduced; the row
#   names which;
# - *refuted*: the interval lies wholly below the SESOI (smaller than the smallest effect that
#   would matter, or of the other sign), the network family passed its positive control, and
#   the tested quantity has stopped rising: the claim is false at this profile;
# - *not shown at this budget*: neither. The interval contains the SESOI (too little power),
#   or a family's positive control failed, or the quantity may still be rising, or no kept
#   states can tell whether it is;
# - *moot*: the claim rests on another claim (its premise) that was refuted, so its question
#   does not arise at this profile: how much of BatchNorm's interior slope survives a larger
#   evaluation batch, where BatchNorm showed no interior slope. Counted apart from *not shown*:
#   no budget or power would decide it while its premise stays refuted;
# - *not testable at this profile*: what only the papers' scale can test (their absolute
#   accuracies).
#
# Non-significance alone is never a verdict against a claim: "the claim is false" and "this
# budget cannot tell" are different answers. One example per outcome, graded by the same
# function the chapters call (`grading.verdicts.decide`), with a SESOI of 0.05:

# %%
report.md(methods.worked_examples())

# %% [markdown]
# **Positive controls.** A network family grades nothing until it has shown that it learned:
# paper A's networks must have learned the task (in every seed the mean prediction explains at
# least {glue:text}`m_learned` of the ramp's variance, $R^2$ over the whole sequence: a network
# that learned the ramp where it sees the padding explains about half of it, one that learned
# nothing or whose every ReLU died, far less), and,
# for claims about a share of the side channel's slope (how much of it the second hop keeps,
# how much an intervention removes, how it fades with the length), show the side channel itself in
# their first hop band ($[R, 3R)$, slope at least the SESOI in every seed); PackNorm's must
# tell identical paths apart (accuracy at full overlap at least {glue:text}`m_pack_learned`);
# paper B's classifiers must reach {glue:text}`m_b_learned` test accuracy in every seed (twice
# chance). A failed control
# makes the claims resting on that family *not shown*, and the row says which control failed.
# So that paper A's null can pass its control, the no-norm networks start from He
# initialisation (Kaiming normal, zero biases) and the normalized ones from PyTorch's default,
# a rule fixed on seeds the book does not use (chapter A1, *Training*: with the default, 6 of 10
# no-norm networks died at the `cpu` learning rate, with He's none did).
#
# **Compute to effect.** The chapters keep each network's state at fractions of its training
# budget and measure the kept states like the trained network. Paper A's slopes and paper B's
# sparsity, class-based Davies–Bouldin index and validation accuracy are measured at every kept
# state (the compute-to-effect figures); every other graded quantity (the depth probes, the
# batch-mean tests, the interventions, the U-Net, the 2-D CNN and PackNorm, the k-means
# analyses, silhouettes, thresholds, test images and the BN × learning-rate 2 × 2) at the two
# states its late gain reads: the last kept at or before half the budget, and the end, on the
# same inputs or images. *Refuted* requires that the quantity the claim tests has stopped
# moving its way: its gain over the last half of the budget, per seed, must have its
# {glue:text}`m_claim_conf` interval's upper end below half the claim's SESOI (for a slope,
# {glue:text}`m_flat_margin` of the ramp). Networks compared at a matched accuracy are taken
# at a state fixed by that accuracy, not by a budget, so there is no late gain to wait for.
# Paper B's networks train under an early-stopping rule (chapter B1, *Training*), and a network
# that its stopping rule ended is finished: the book trains it no further, so a quantity of
# finished networks has stopped moving by definition. The check exists because a budget can cut
# training short, so it applies only to a row some of whose networks the epoch cap ended; such a
# row, held at *not shown*, says how many (the ledger's "a longer budget"). Paper A's networks
# train for a fixed number of steps, with no stopping rule, so every paper A row keeps it. A
# claim that could never come out refuted would be a defect: the build keeps an inventory of
# such rows ({glue:text}`m_blocked` of {glue:text}`m_claims` at this profile) and fails on
# any it does not list. The `cpu` profile's
# learning rate, schedule and batch size were chosen on the {ref}`budget calibration
# <calibration>` page, at seeds no chapter uses, by slope reached per minute of training.
#
# **Many claims.** Each chapter grades a claim at level {glue:text}`m_level` for that claim
# alone. The verdict of record, in the {ref}`ledger` and the introduction's findings, is decided
# by a Benjamini–Hochberg adjustment of the deciding p-values over all the tested claims of one
# paper: a decisive grade whose adjusted p is not below {glue:text}`m_level` becomes *not
# shown*. The ledger is read as a set of findings, so the adjustment controls the expected share
# of wrong verdicts among the decisive ones (the false-discovery rate), valid for positively
# dependent tests such as rows that share networks; the ledger also says how many verdicts
# Holm's family-wise adjustment would leave.
#
# **"Flat" is a claim.** Where symmetry makes a quantity 0 in expectation (the interior slope of
# a network with no boundary, or with statistics that do not depend on the sample), the book
# does not read a slope that is not significantly different from 0 as flat: it tests
# equivalence, two one-sided $t$ tests that the mean over seeds lies within ± the SESOI, and a
# slope too noisy to tell reads *not shown*. **Ordinal outcomes.** The layer where k* settles
# at the classes is a whole number, and a network that never settles has no layer at all (it
# is censored after the last layer). Its claims use a rank test of the shift, Gehan's
# generalized Wilcoxon statistic of one family's layers against the other's shifted by the
# SESOI, exact over every split of the networks: a pair is ordered only where the order is
# sure, so two networks that never settle, or a "never" against a shifted layer past the last,
# stay undecided instead of being ordered by the shift (without censored networks it is
# Mann–Whitney's $U$). With it come the Hodges–Lehmann shift and its interval; never a mean of
# sentinel values.
#
# A few rows compare our number with the paper's reported value instead (the PackNorm
# transition, Table 1's accuracies); their "SESOI" is the paper's band. **Checks**: properties
# that hold by construction (exact shift-equivariance, a control at chance, the nulls having no
# boundary). A check cannot be a verdict on the
# paper; a failed check is a bug.
#
# (methods-sesoi)=
# ### The smallest effects of interest
#
# Every SESOI the claims use, from `paper_a.grading.sesoi` and `paper_b.grading.sesoi`, with its
# reason, how many of this build's claims use it, and the power of those claims' designs against it
# (the chance of a decisive verdict when the truth is one SESOI beyond it, at the seed spread each
# claim measured; {numref}`fig-methods-power`):

# %%
report.md(methods.sesoi_table(recs))
run.glue_all("m", {"learned": f"{sesoi.LEARNED_R2:g}",
                     "b_learned": f"{sesoi_b.LEARNED_ACCURACY:.0%}",
                     "pack_learned": f"{0.5 + sesoi.CHANCE_MARGIN:g}"})  # fmt: skip

# %% [markdown]
# The rules, from their source:

# %%
from normbook.paper_b.b1_setup_accuracy import claims as b1_claims
from normbook.paper_b.b2_sparsity import claims as b2_claims
from normbook.paper_b.b3_clusters import claims as b3_claims
from normbook.paper_b.b4_stress import claims as b4_claims
from normbook.paper_b.grading import pairing as pairing_b

report.md(
    methods.rules_table(rules_a, nulls_a, a4_claims, pairing_b, b1_claims, b2_claims, b3_claims)
)
report.md(methods.rules_table(b4_claims, only=methods.B4_RULES))

# %% [markdown]
# (methods-stability)=
# ### How firmly a verdict holds, and the reference ledger
#
# The same code with the same seeds does not give the same numbers on every processor. The
# convolution library (oneDNN) picks its kernels by instruction set, AVX2 on one CPU and AVX-512
# on another; they add in another order, the last bit of a sum differs, and thousands of
# optimizer steps turn that bit into another network. PyTorch promises bitwise equality only on
# identical hardware and software. A verdict far from the line that decides it survives such a
# difference; one near it can come out otherwise. Every row of the {ref}`ledger` therefore says
# how far it sits from its line, in standard errors (`grading.stability.distance`):
#
# - for a tested claim, its adjusted p against the level {glue:text}`m_level`: the distance is
#   $|z(p_{adj}) - z(\alpha)|$, with $z$ the standard normal quantile of $1 - p$, the p-value's
#   distance from the level on the scale of its test statistic (a $t$ test, a rank test or an
#   adjusted p alike);
# - where *refuted* or *not shown: may still be rising* was decided by the late gain, the upper
#   end of the gain's interval against its margin, in the gain's standard errors.
#
# A row closer than {glue:text}`m_near_line` is flagged **near its line**: it
# can come out otherwise on another processor ({glue:text}`m_near_rows` of this build's
# {glue:text}`m_claims` rows). A failed positive control has no distance (its evidence is a
# per-seed value against a threshold); a claim the profile cannot test, or one the rules keep
# undecided by construction, has no line a rounding difference could cross.
#
# **Choosing the flag's width by measurement.** The committed reference ledger
# (`results/<profile>/ledger.json`, written by `make reference` from a full build) is compared
# with every build: the {ref}`introduction <intro>` and the ledger say how many claims give
# its verdict and list each that does not. To see what a last-bit difference does, the same
# commit was built twice on the same CPU, as usual and with oneDNN held to an older instruction
# set, and both ledgers committed (`results/<profile>/isa/<commit>/`: they stay a study of that
# commit when the reference moves to newer code); the flag's width was chosen so that every
# claim whose verdict differs between the two is flagged in one build or the other:

# %% tags=["hide-input"]
report.md(methods.stability_study(params.profile))
near = sum(bool(c["near_line"]) for r in recs for c in r["claims"])
plural = "" if stability.NEAR_LINE == 1 else "s"
run.glue_all("m", {"near_line": f"{stability.NEAR_LINE:g} standard error{plural}",
                   "near_rows": str(near)})  # fmt: skip

# %% [markdown]
# (methods-tests)=
# ## How the code is checked
#
# The library has unit tests for every piece the chapters rely on: that the stacked
# networks equal networks trained alone; that a network without normalization sees exactly
# $R$ inputs to each side and is unchanged, up to rounding, by shifts of its interior input (the
# premise of the paper's Proposition C.1), and that the normalizations pool what they claim
# to; that the streaming moments and the localization tests equal scipy's Welch test on raw
# arrays; that the primary localization test keeps its false-positive rate at $\alpha$ and
# never loses power as the effect grows, on simulated streams, while the old neighbour test is
# shown to fail; that PackNorm's two classes are identically distributed at zero overlap and not
# otherwise; that the data readers refuse corrupt, truncated and unverified files with a
# message that says how to fix them; that the same seed gives the same numbers, and that
# worker processes give the same models as one process; that the experiment cache never
# recomputes a hit, never reads a half-written entry, and is keyed by the code that produced
# it; that every chapter's parameters cell matches its specification and bad parameters stop
# before any computation; and that each verdict rule has a case where it must pass and one where
# it must fail.
# Continuous integration runs these tests, executes every chapter at the `smoke` profile
# with an empty cache, and builds this book with warnings as errors.
#
# (methods-sources)=
# ## Sources
#
# - Paper A {cite:p}`pfrommer2025spooky` and its public review on Pith (2026), whose
#   objections chapters A1–A4 take up.
# - Paper B {cite:p}`potgieter2025batchnorm` and its public review on Pith (2026), whose
#   objections chapter B4 takes up.
# - Every other work the book relies on is listed under {ref}`references`.

# %%
run.finish()
