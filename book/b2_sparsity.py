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
# (b2)=
# # B2. Does BatchNorm change representational sparsity?
#
# A ReLU network's hidden representation is *sparse* when many of its activations are
# exactly zero. Earlier work found BatchNorm reduces sparsity in MLPs. Paper B measures it
# layer by layer in CNNs and reports that the direction is not consistent: with BatchNorm
# the MNIST network is **less** sparse, the CIFAR-10 VGG-16 **more** sparse, although the BN
# models generalize better in both settings. Hence its conclusion that sparsity is not what
# explains BatchNorm's benefit. This chapter measures both sparsities on chapter {ref}`b1`'s
# models ({ref}`b2-layers`) and grades the three claims ({ref}`b2-verdict`).
#
# :::{admonition} Paper facts and our reconstruction
# :class: important
# **Paper facts.** Representations are the post-ReLU activations of every conv layer, on
# {glue:text}`b2_paper_images` training images, model in evaluation mode. *Layer
# sparsity*: the fraction of exactly zero activations in a layer. *Average channel
# sparsity*: the sparsity of each channel, averaged over the layer's channels. Mean ±
# standard deviation over {glue:text}`b2_paper_seeds` seeds.
#
# **Our reconstruction** (see {ref}`methods-reconstruction-b`; every item a parameter): the
# models are those of chapter {ref}`b1` (same training parameters, loaded from the cache);
# the images (`sparsity_images`) are class-balanced and drawn from each model's training
# subset (the paper's 5,000 at `paper`; 2,000 at `cpu`, part of the book's trade for its
# 60-minute ceiling, {ref}`compute-trade`); for the channel sparsity each channel map is first
# averaged over space, so a channel counts as zero for an image only when its whole map is zero
# (`channel_spatial_mean`; counting single elements instead would make the average
# identical to layer sparsity). At the `cpu` profile the networks are narrow, briefly
# trained, and there are {glue:text}`b2_run_seeds` seeds in this run, so each standard
# deviation rests on that many values.
# :::
#
# **Run time** of this chapter: {{ cost_b2_sparsity }}.

# %% tags=["parameters", "hide-input"]
profile = "cpu"  # smoke, cpu or paper; a knob left at None takes the profile's value
seeds = None  # training seeds (one model per seed and variant) [smoke [0, 1] · cpu 0-4 · paper 0-4]
mnist_width = None  # standard CNN width k (channels k, 2k, 4k, 8k) [smoke 4 · cpu 8 · paper 64]
vgg_width = None
#   VGG-16 channel multiplier (1 = 64 ... 512 channels) [smoke 0.0625 · cpu 0.125 · paper 1]
mnist_lr = None  # MNIST SGD learning rate, BN and no BN (paper: 0.01) [every profile: 0.01]
mnist_momentum = None  # MNIST SGD momentum [smoke 0.9 · cpu 0.9 · paper 0]
cifar_lr_bn = None  # CIFAR-10 Adam learning rate with BN (paper: 1e-3) [every profile: 0.001]
cifar_lr_nobn = None  # CIFAR-10 Adam learning rate without BN (paper: 1e-4) [every profile: 0.0001]
batch_size = None  # training minibatch size [smoke 32 · cpu 32 · paper 128]
init = None  # weight initialisation: He normal as torchvision's VGG, or PyTorch's layer defaults
#   [every profile: kaiming]
mnist_epochs = None  # MNIST: maximum epochs (early stopping may end sooner)
#   [smoke 1 · cpu 16 · paper 100]
cifar_epochs = None  # CIFAR-10: maximum epochs (early stopping may end sooner)
#   [smoke 1 · cpu 24 · paper 100]
patience = None  # early stopping: evaluations without a lower validation loss
#   [smoke 2 · cpu 3 · paper 5]
evals_per_epoch = None  # validation evaluations per epoch [smoke 2 · cpu 2 · paper 1]
mnist_train = None  # MNIST training images (from the 60,000)
#   [smoke 600 · cpu 10,000 · paper 55,000]
cifar_train = None  # CIFAR-10 training images (from the 50,000)
#   [smoke 600 · cpu 10,000 · paper 45,000]
n_val = None  # validation images held out of the training split
#   [smoke 200 · cpu 2,000 · paper 5,000]
n_test = None  # test images for the test accuracy (of 10,000)
#   [smoke 500 · cpu 10,000 · paper 10,000]
split_seed = None  # seed of the train / validation / test subsets [every profile: 0]
allow_unverified = None  # accept a data copy failing its checksum (env: NORMBOOK_ALLOW_UNVERIFIED)
#   [every profile: env]
curve_fractions = None  # epoch-budget fractions whose weights are kept (compute-to-effect)
#   [smoke [0.5] · cpu [0.25, 0.5] · paper [0.25, 0.5]]
curve_images = None  # class-balanced images the compute-to-effect curves are measured on
#   [smoke 50 · cpu 250 · paper 2,000]
workers = None  # parallel worker processes (0: one per core; results do not depend on it)
#   [smoke 1 · cpu 0 · paper 2]
device = None  # where models train: 'auto' is cuda when available, else cpu
#   [smoke cpu · cpu cpu · paper auto]
sparsity_images = None  # class-balanced images measured (paper: 5,000 training images)
#   [smoke 200 · cpu 2,000 · paper 5,000]
sparsity_split = None  # images from the training subset or the test set [every profile: train]
channel_spatial_mean = None  # channel sparsity per image: average each map over space first
#   [every profile: True]
zero_threshold = None
#   |a| <= threshold counts as zero (paper: exact zeros) [every profile: 0]

# %% tags=["remove-input"]
from normbook.pages import fmt, report
from normbook.paper_b import differences, paper_values, plots
from normbook.paper_b.b1_setup_accuracy import claims as b1_claims
from normbook.paper_b.b2_sparsity import claims, figures, spec, tables
from normbook.paper_b.cached import analysis
from normbook.paper_b.data import provenance
from normbook.paper_b.grading import pairing, rules, sesoi
from normbook.paper_b.runs import classify

params, run = report.start(spec.B2, globals())
run.glue("b2_paper_images", f"{paper_values.N_IMAGES:,}")
run.glue("b2_paper_seeds", paper_values.N_SEEDS)
run.glue("b2_run_seeds", len(params.seeds))
run.glue("b2_lrs", f"{fmt.sci(params.cifar_lr_bn)} vs {fmt.sci(params.cifar_lr_nobn)}")

# %% [markdown]
# (b2-models)=
# ## Models and data
#
# The trained models of chapter {ref}`b1`, from the cache (same parameters, same cache
# entries).

#
# **The networks and their training, from the library:** a conv block (BatchNorm or not), the
# VGG-16 built from them (the MNIST network is built the same way), and one network's training
# with early stopping.
#
# ```{code-of} normbook.paper_b.cached.convnets.ConvBlock
# ```
#
# ```{code-of} normbook.paper_b.cached.convnets.VGG16
# ```
#
# ```{code-of} normbook.paper_b.cached.training.train_one
# ```
# %%
models = classify.trained_models(classify.Setup.from_params(params))
report.md(provenance.provenance_notes(models.splits, only_unverified=True))
run.provenance.extend(models.provenance)
print(f"{models.n_models} trained models, {models.cache_hits} loaded from the cache")

# %% [markdown]
# (b2-layers)=
# ## Sparsity per layer

#
# **What is measured and how it is tested, from the library:** layer and channel sparsity, and the
# paired test over seeds behind every BN-against-no-BN row.
#
# ```{code-of} normbook.paper_b.cached.representations.layer_sparsity
# ```
#
# ```{code-of} normbook.paper_b.cached.representations.channel_sparsity
# ```
#
# ```{code-of} normbook.paper_b.grading.rules.direction
# ```
# %%
sparsity = analysis.sparsity(models, analysis.SparsityConfig.from_params(params), params.workers)
print(
    f"sparsity analysis: {sparsity.cache_hits} of {sparsity.n_models} models from the "
    f"cache; {sparsity.seconds:.0f} s of single-thread compute when they were computed"
)
report.figure("fig-b2-sparsity", figures.sparsity_profiles(sparsity))

# %% [markdown]
# ```{glue:figure} fig-b2-sparsity
# ---
# name: fig-b2-sparsity
# alt: Layer sparsity and average channel sparsity per conv layer, BN and no BN, for MNIST
#   and CIFAR-10.
# ---
# Top: layer sparsity (fraction of exactly-zero activations) per conv layer; bottom: average
# channel sparsity (fraction of images for which a channel's whole map is zero, averaged
# over channels); MNIST left, CIFAR-10 right. Lines and bands are mean ± sd over seeds, dots
# single seeds. Drawn by `paper_b.b2_sparsity.figures.sparsity_profiles`.
# ```
#
# The numbers behind {numref}`fig-b2-sparsity`, per layer:

# %%
report.md(tables.sparsity_per_layer(sparsity))

# %% [markdown]
# And the paired differences BN − no BN per layer (same seed), mean over seeds with a 95% t
# interval. These describe where the difference sits; they are not the tests (the layers of
# one network are not independent units), which come in {ref}`b2-verdict`.

# %%
report.md(differences.layer_differences(
    {"layer sparsity": sparsity.layer, "channel sparsity": sparsity.channel},
    sparsity.layer_names,
))  # fmt: skip
for ds, c in rules.Contrast.per_dataset(sparsity.layer).items():
    run.glue(f"b2_diff_{ds}", f"{c.diff:+.3f}")
    run.glue(f"b2_lower_{ds}", fmt.count_of(c.lower))
    run.glue(f"b2_mean_bn_{ds}", f"{c.mean_bn:.3f}")
    run.glue(f"b2_mean_nobn_{ds}", f"{c.mean_nobn:.3f}")
run.glue("b2_n_images", f"{params.sparsity_images:,}")

# %% [markdown]
# Averaged over layers and seeds, BN changes layer sparsity by {glue:text}`b2_diff_mnist` on
# MNIST ({glue:text}`b2_mean_bn_mnist` with BN, {glue:text}`b2_mean_nobn_mnist` without;
# BN is the less sparse one in {glue:text}`b2_lower_mnist` layers) and by
# {glue:text}`b2_diff_cifar10` on CIFAR-10 ({glue:text}`b2_mean_bn_cifar10` vs
# {glue:text}`b2_mean_nobn_cifar10`; BN less sparse in {glue:text}`b2_lower_cifar10`
# layers), measured on {glue:text}`b2_n_images` images per model. The paper's pattern is
# BN less sparse on MNIST and more sparse on CIFAR-10.
#
# Two cautions in reading this at reduced scale. On CIFAR-10, BN and learning rate change
# together ({glue:text}`b2_lrs`), so any difference is the paper's confounded comparison. And
# the networks are small and trained on a fifth of the images: early stopping ends each one
# ({ref}`b1-training`), but a no-BN network at the paper's ten times smaller learning rate
# stops at a lower accuracy ({numref}`fig-b1-curves` in chapter {ref}`b1`), so its sparsity
# is partly a statement about how far that rate takes it.
#
# (b2-curve)=
# **Compute to effect.** Is the difference stable, or does it grow or vanish as the networks
# train? The weights at {glue:text}`b2_curve_fracs` of each run's epoch budget were kept; the
# same measure on {glue:text}`b2_curve_images` images at each kept state and for the kept
# model ({numref}`fig-b2-curve`).

# %%
curves = analysis.through_training(models, sparsity.config, params.curve_images, params.workers)
report.figure("fig-b2-curve", plots.difference_through_training(
    curves, {"mnist": "lower", "cifar10": "higher"}, rules.layer_mean, sesoi.SPARSITY,
    "layer sparsity effect (the paper's way)"))  # fmt: skip
run.glue_all(
    "b2",
    {
        "curve_fracs": fmt.join(params.curve_fractions, ".3g"),
        "curve_images": f"{params.curve_images:,}",
        "curve_missing": curves.missing,
    },
)

# %% [markdown]
# ```{glue:figure} fig-b2-curve
# ---
# name: fig-b2-curve
# alt: The BN-vs-no-BN layer-sparsity difference against the fraction of the epoch budget,
#   per seed and mean, MNIST and CIFAR-10.
# ---
# Compute to effect: BN's effect on layer sparsity (mean over conv layers), signed the way the
# paper states it (MNIST: no BN − BN; CIFAR-10: BN − no BN), at the kept states and for the
# kept model; thin lines single seeds; dotted, the smallest effect of interest. Drawn by
# `paper_b.plots.difference_through_training`.
# ```
#
# A direction claim can be *refuted* only when this difference has stopped moving its way
# over the last half of training ({ref}`methods-verdicts`); {glue:text}`b2_curve_missing`
# kept states were missing because their run had stopped earlier (its kept weights stand in).
#
# (b2-verdict)=
# ## Verdict at this profile
#
# In plain words, at this profile: BN being less sparse on MNIST is
# {glue:text}`b2_less_sparse_mnist`; BN being more sparse on CIFAR-10 is
# {glue:text}`b2_more_sparse_cifar10`; the paper's conclusion that sparsity has no consistent BN
# signature is {glue:text}`b2_signature`. Exact zeros are the paper's definition; the parameter
# `zero_threshold` re-runs the chapter counting near-zero activations too.
#
# Rules (`paper_b.b2_sparsity.claims`, listed in {ref}`methods-verdicts`), fixed up front. The
# unit is the seed (the BN and no-BN model of a seed are paired; checked below), and each claim
# is one pre-declared contrast per seed, here the layer sparsity averaged over all conv layers,
# signed so that a positive value goes the paper's way, tested by a $t$ test over the
# {glue:text}`b2_run_seeds` seeds against its smallest effect of interest,
# {glue:text}`b2_sesoi` ({ref}`methods-sesoi`): *reproduced* when the
# {glue:text}`b2_claim_conf` interval clears it, *refuted* when it lies wholly below it while
# the difference has stopped moving ({numref}`fig-b2-curve`), *not shown* otherwise; both
# families must first have learned. The paper's conclusion, "no consistent sparsity
# signature", is these two rows together with chapter {ref}`b1`'s accuracy rows (BN less
# sparse on MNIST, more sparse on CIFAR-10, yet more accurate on both); it is read from them
# below rather than graded as a row of its own, which would count the same tests twice.

# %%
run.glue("b2_sesoi", sesoi.SPARSITY.show())
ledger = claims.b2_ledger(sparsity, models, curves)
report.show_verdicts("b2", ledger)
run.record("b2-verdict", claims=ledger)
run.glue(
    "b2_signature", claims.signature_reading(ledger, b1_claims.b1_ledger(models, params.profile))
)

# %% [markdown]
# What the paired tests rely on, checked on this run's configurations
# ({glue:text}`b2_checks` hold):

# %%
checks = pairing.seed_pairing(models)
report.show_checks("b2", checks)
run.record("b2-verdict", checks=checks)

# %% [markdown]
# (b2-exercises)=
# ## Exercises
#
# Each exercise re-executes this chapter with other parameters (one command from the
# repository root); predict first, then run.
# Each exercise states what it costs and what it retrains; `make exercises
# EXERCISES=<label>` runs it into a build folder of its own, and its solution then shows
# the outcome.
#
# :::{exercise} Count near-zeros
# :label: b2-ex-threshold
# Count an activation as zero when $|a| \le 0.01$:
# `make chapter CHAPTER=book/b2_sparsity.py PARAMS='-p zero_threshold 0.01'`. Which variant's
# sparsity grows more, and why?
#
# **Cost at `cpu`:** {{ cost_b2_ex_threshold }}.
# :::
#
# :::{solution} b2-ex-threshold
# :class: dropdown
# An absolute threshold means different things at different activation scales: BN's
# post-ReLU activations have a scale set by the normalization, no-BN activations whatever the
# weights give. The variant with the smaller scale gains more "zeros". Chapter
# {ref}`b4-threshold` uses thresholds relative to each layer's scale for this reason.
#
# **Outcome at `cpu`:** {{ outcome_b2_ex_threshold }}
# :::
#
# :::{exercise} Per-channel sparsity without spatial averaging
# :label: b2-ex-channel
# Predict the average channel sparsity with `PARAMS='-p channel_spatial_mean False'`, then run
# it.
#
# **Cost at `cpu`:** {{ cost_b2_ex_channel }}.
# :::
#
# :::{solution} b2-ex-channel
# :class: dropdown
# Without averaging each map over space first, a channel's sparsity is the fraction of its
# zero elements, and the mean over channels equals the layer sparsity exactly (every channel
# has the same number of elements). The two panels of {numref}`fig-b2-sparsity` become the
# same numbers.
#
# **Outcome at `cpu`:** {{ outcome_b2_ex_channel }}
# :::

# %%
run.finish()
