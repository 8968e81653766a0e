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

# %% tags=["parameters"]
profile = "cpu"  # smoke, cpu or paper; a knob left at None takes the profile's value

# %%
from normbook import methods
from normbook.chapters import SPECS
from normbook.core import report
from normbook.paper_a import reported as reported_a
from normbook.paper_a import verdicts as verdicts_a
from normbook.paper_b import verdicts as verdicts_b

P, run = report.start(SPECS["methods"], globals())
specs = [s for name, s in SPECS.items() if name != "methods"]
a1, b3 = SPECS["a1_localization"].profiles["paper"], SPECS["b3_clusters"].profiles["paper"]
report.glue_all("m", {
    "alpha": reported_a.WELCH_ALPHA, "len": reported_a.SEQ_LEN, "radius": reported_a.RADIUS,
    "kernel": a1["kernel"], "width": a1["width"], "depth": a1["depth"],
    "seeds": len(a1["seeds"]), "k_range": f"{b3['k_min']} to {b3['k_max']}",
    "lr_ratio": f"{b3['cifar_lr_bn'] / b3['cifar_lr_nobn']:g}", "batch": a1["batch_size"],
    "cpu_seeds": len(SPECS["b1_setup_accuracy"].profiles["cpu"]["seeds"]),
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
# - `cpu` is the profile the book is built with: every effect at a scale that two CPU cores
#   train in minutes. Networks are smaller and trained for a fraction of the papers' budget,
#   so where a `cpu` result differs from a paper the chapter says so, and the verdict reads
#   "at this profile".
# - `paper` is the papers' own scale (sequence length {glue:text}`m_len`,
#   {glue:text}`m_seeds` seeds, full datasets); it needs a GPU and hours.
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
# ### The localization test
#
# The paper calls index $i^*$ *localized* when the mean prediction at $i^*$ differs from the
# mean prediction at every other index (its Definition 2.3), and tests it with Welch's
# t-test at $p <$ {glue:text}`m_alpha` on many predictions per index. Testing an index
# against every other index is expensive and, under a monotone ramp, the hardest comparison is
# with the neighbours, so we test $i$ against $i-1$ and $i+1$ only. Predictions come from two
# *independent* streams of evaluation batches (batches alternate between them): index $i$'s
# mean from one stream is compared with its neighbours' means from the other, so the two
# samples of each test are independent. Per-index counts, means and sums of squares are
# accumulated batch by batch, never the predictions themselves, and the test is
# `scipy.stats.ttest_ind_from_stats(..., equal_var=False)`. An index is localized when both
# of its neighbour tests reject at level $\alpha$; at the two ends, where one neighbour is
# missing, the one test decides.
#
# What this test does not yet have is a measured operating characteristic. Neighbouring
# outputs share most of their inputs, so the noise of the mean predictions is smooth along
# the sequence and the test's false positives come in runs (chapter {ref}`a3` shows
# networks that provably cannot localize whose interior is partly flagged), and under a ramp
# the two neighbour differences have opposite signs, so a stronger effect does not always
# mean more detections. Until the test's false-positive rate and power are measured on
# simulated data, read its fractions and distances next to the effect sizes (slope, $R^2$
# and mean absolute error of the mean predictions against the ramp), which every chapter
# reports, and next to the null networks of {ref}`methods-null`.
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
# ### The null level
#
# Two of chapter A3's networks cannot localize the interior by construction: the network
# without normalization, and BatchNorm evaluated with population statistics (a fixed affine
# map per channel). Both are checked to be exactly shift-equivariant in the interior. A
# network counts as localizing its interior only when both its interior fraction and its
# interior slope exceed the largest values among these null networks' seeds. One claim is
# judged against a null that contains the network itself: "population statistics destroy
# localization" asks that the population-statistics networks do not beat this null, which they
# cannot, so only the other half of that rule (exact shift-equivariance) is informative there.
# Nulls built only from other networks are not implemented yet.
#
# (methods-packnorm)=
# ### PackNorm and the multi-hop bound
#
# The paper's two-path, shared-weight network is reconstructed as follows. A noise sequence
# $z$ of length $2\ell'-o$ is drawn; path A gets $z[0:\ell']$, path B gets either
# $z[\ell'-o:2\ell'-o]$ (overlapping A by $o$ samples) or an independent sequence, with equal
# probability. Both paths run the same CNN; at each normalization layer the two activations
# are concatenated along space, normalized together (InstanceNorm) and split back, which is
# the only coupling. A head on path A says which case it is in. At $o = 0$ the two cases are
# identically distributed for path A, so accuracy is at chance by construction, and the
# per-path control (InstanceNorm on each path alone) cannot do better than chance at any
# overlap: both are checks of the pipeline, not evidence for the paper. The multi-hop bound
# follows the paper's hop: one hop carries position $2R(d)$ beyond the $R(d)$ an index sees
# directly, and the iterated bound allows one hop per normalization layer.
#
# **BatchNorm at evaluation.** With minibatch statistics, the samples of an evaluation batch
# share statistics, so their predictions are not independent, which the per-sample test
# assumes. Chapter A3 therefore also tests per-batch mean predictions (batches are
# independent) and reports the design effect, $b\cdot\mathrm{var}(\text{batch mean}) /
# \mathrm{var}(\text{single prediction})$: 1 for independent predictions.
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
# No difference between BN and no BN is yet tested for significance (with
# {glue:text}`m_cpu_seeds` seeds at `cpu` there is little to test with).
#
# (methods-statistics)=
# ### Seeds and error bars
#
# Every "mean ± sd" in the book is the mean over seeds and the *sample* standard deviation
# (divisor $n - 1$); with two seeds it is $|a - b|/\sqrt 2$. Same seed, same numbers: every random
# draw comes from a generator seeded from the model's seed and the draw's purpose, and the tests
# check that re-running gives bit-identical results.
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
# Every chapter ends with a table of the paper's claims, in our words, each graded
# *reproduced*, *partly reproduced* or *not reproduced*, or *inconclusive at this budget*
# when the positive control that the claim needs (a network that does localize) failed too,
# so that the budget, not the claim, is what the run tells about. Rows marked *(ours)* are
# claims we added. The rules were fixed before looking at the numbers, each is one function
# of measured values, and the evidence column prints every number it used. The rules, from
# their source:

# %%
report.md(methods.rules_table(verdicts_a, verdicts_b))

# %% [markdown]
# (methods-tests)=
# ## How the code is checked
#
# The library has unit tests for every piece the chapters rely on: that the stacked
# networks equal networks trained alone; that a network without normalization sees exactly
# $R$ inputs to each side and is bit-identical under shifts of its interior input (the
# premise of the paper's Proposition C.1), and that the normalizations pool what they claim
# to; that the streaming moments and the neighbour test equal scipy's Welch test on raw
# arrays; that PackNorm's two classes are identically distributed at zero overlap and not
# otherwise; that the data readers refuse corrupt, truncated and unverified files with a
# message that says how to fix them; that the same seed gives the same numbers, and that
# worker processes give the same models as one process; that the experiment cache never
# recomputes a hit, never reads a half-written entry, and is keyed by the code that produced
# it; that every chapter's parameters cell matches its specification and bad parameters stop
# before any computation; and that each verdict rule can produce each of its grades.
# Continuous integration runs these tests, executes every chapter at the `smoke` profile
# with an empty cache, and builds this book with warnings as errors.
#
# (methods-sources)=
# ## Sources
#
# - Pfrommer, Ma, Huang, Sojoudi, *Spooky Action at a Distance: Normalization Layers Enable
#   Side-Channel Spatial Communication*, arXiv 2507.04709, and its public review on Pith
#   (2026), whose objections chapters A1–A3 take up.
# - Potgieter, Mouton, Davel, *Impact of Batch Normalization on Convolutional Network
#   Representations*, arXiv 2501.14441 (SACAIR 2024), and its public review on Pith (2026).

# %%
run.finish()
