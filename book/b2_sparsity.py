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
# # B2. Does BatchNorm change representational sparsity?
#
# A ReLU network's hidden representation is *sparse* when many of its activations are
# exactly zero. Earlier work found BatchNorm reduces sparsity in MLPs. Paper B measures it
# layer by layer in CNNs and reports that the direction is not consistent: with BatchNorm
# the MNIST network is **less** sparse, the CIFAR-10 VGG-16 **more** sparse, although the BN
# models generalize better in both settings. Hence its conclusion that sparsity is not what
# explains BatchNorm's benefit.
#
# :::{admonition} Paper facts and our reconstruction
# :class: important
# **Paper facts.** Representations are the post-ReLU activations of every conv layer, on
# 5,000 training images, model in evaluation mode. *Layer sparsity*: the fraction of exactly
# zero activations in a layer. *Average channel sparsity*: the sparsity of each channel,
# averaged over the layer's channels. Mean ± standard deviation over 4 seeds.
#
# **Our reconstruction** (every item a parameter): the models are those of chapter B1 (same
# training parameters, loaded from the cache); the 5,000 images are class-balanced and drawn
# from each model's training subset; for the channel sparsity each channel map is first
# averaged over space, so a channel counts as zero for an image only when its whole map is
# zero (`channel_spatial_mean`; counting single elements instead would make the average
# identical to layer sparsity). At the `cpu` profile the networks are narrow, briefly
# trained, and there are 2 seeds, so the standard deviations rest on two values each.
# :::

# %% tags=["parameters"]
profile = "cpu"               # smoke, cpu or paper (knobs set to None take the profile value)
seeds = None                  # training seeds (as in B1)
mnist_width = None            # standard CNN width k
vgg_width = None              # VGG-16 channel multiplier
mnist_lr = None               # MNIST SGD learning rate
mnist_momentum = None         # MNIST SGD momentum
cifar_lr_bn = None            # CIFAR-10 Adam learning rate with BN
cifar_lr_nobn = None          # CIFAR-10 Adam learning rate without BN
batch_size = None             # minibatch size
init = None                   # weight initialisation: kaiming or pytorch
mnist_epochs = None           # MNIST maximum epochs
cifar_epochs = None           # CIFAR-10 maximum epochs
patience = None               # early-stopping patience (evaluations)
evals_per_epoch = None        # validation evaluations per epoch
mnist_train = None            # MNIST training images
cifar_train = None            # CIFAR-10 training images
n_val = None                  # validation images
n_test = None                 # test images
split_seed = None             # seed of the data subsets
allow_unverified = None       # env, yes or no
workers = None                # parallel worker processes
device = None                 # auto, cpu or cuda
sparsity_images = None        # images whose activations are measured
sparsity_split = None         # train or test images
channel_spatial_mean = None   # channel sparsity per image (spatial mean) or per element
zero_threshold = None         # activations at most this (in absolute value) count as zero; paper 0

# %%
import numpy as np
import matplotlib.pyplot as plt

from normbook import classify, data, plots_b, report, repr_analysis, verdicts, verdicts_b
from normbook.specs_b import B2

P, run = report.start(B2, globals())

# %% [markdown]
# ## Models and data
#
# The trained models of chapter B1, from the cache (same parameters, same cache entries).

# %%
models, splits = classify.train_from_params(P)
shown = set()
for sp in splits.values():
    for prov in sp.provenance:
        if not prov.verified and (prov.dataset, prov.sha256) not in shown:
            report.md(data.provenance_admonition(prov))
            shown.add((prov.dataset, prov.sha256))
    run.provenance.extend(classify.provenance_lines(sp))
hits = [t.hit for ts in models.values() for t in ts]
print(f"{len(hits)} trained models, {sum(hits)} loaded from the cache")
acc = {v: np.array([t.test_acc for t in ts]) for v, ts in models.items()}

# %% [markdown]
# ## Sparsity per layer

# %%
scfg = repr_analysis.SparsityConfig(split=P.sparsity_split, n_images=P.sparsity_images,
                                    channel_spatial_mean=P.channel_spatial_mean,
                                    eps=P.zero_threshold)
sp = repr_analysis.analyse_variants(scfg, models, splits, workers=P.workers)
secs = sum(float(e["seconds"]) for es in sp.values() for e in es)
print(f"sparsity analysis: {sum(e.hit for es in sp.values() for e in es)} of "
      f"{sum(len(es) for es in sp.values())} models from the cache; {secs:.0f} s of "
      f"single-thread compute when they were computed")
layer = {v: repr_analysis.stack(e, "layer") for v, e in sp.items()}      # [seeds, layers]
channel = {v: repr_analysis.stack(e, "channel") for v, e in sp.items()}
names = {ds: models[ds, True][0].model().conv_layer_names() for ds in ("mnist", "cifar10")}
label = {True: "BN", False: "no BN"}

fig, axes = plots_b.figure(ncols=2, nrows=2, width=5.2, height=3.0)
for col, ds in enumerate(("mnist", "cifar10")):
    plots_b.layer_profile(axes[0, col], {label[bn]: layer[ds, bn] for bn in (True, False)},
                          "layer sparsity", names[ds])
    plots_b.layer_profile(axes[1, col], {label[bn]: channel[ds, bn] for bn in (True, False)},
                          "average channel sparsity", names[ds])
    axes[0, col].set_title(plots_b.DATASET_TITLES[ds])
    axes[0, col].legend(fontsize=8)
plt.show()

# %% [markdown]
# Top: layer sparsity (fraction of exactly-zero activations) per conv layer; bottom: average
# channel sparsity (fraction of images for which a channel's whole map is zero, averaged over
# channels). Lines and bands are mean ± sd over seeds, dots single seeds. Numbers per layer:

# %%


def ms(a):
    sd = a.std(ddof=1) if len(a) > 1 else float("nan")
    return f"{a.mean():.3f} ± {sd:.3f}"


rows = []
for ds in ("mnist", "cifar10"):
    for j, name in enumerate(names[ds]):
        b, n = layer[ds, True][:, j], layer[ds, False][:, j]
        rows.append({"dataset": ds, "layer": name, "BN": ms(b), "no BN": ms(n),
                     "BN − no BN": f"{b.mean() - n.mean():+.3f}",
                     "channel: BN": ms(channel[ds, True][:, j]),
                     "channel: no BN": ms(channel[ds, False][:, j])})
report.md(report.table(rows))

diff = {ds: float(layer[ds, True].mean() - layer[ds, False].mean()) for ds in ("mnist", "cifar10")}
lower = {ds: verdicts_b.layer_direction(layer[ds, True], layer[ds, False], "lower")
         for ds in ("mnist", "cifar10")}
for ds in ("mnist", "cifar10"):
    report.glue(f"b2_diff_{ds}", f"{diff[ds]:+.3f}")
    report.glue(f"b2_lower_{ds}", f"{int(lower[ds].sum())} of {lower[ds].size}")
    report.glue(f"b2_mean_bn_{ds}", f"{layer[ds, True].mean():.3f}")
    report.glue(f"b2_mean_nobn_{ds}", f"{layer[ds, False].mean():.3f}")
_ = report.glue("b2_n_images", f"{P.sparsity_images:,}")

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
# together (1e-3 vs 1e-4), so any difference is the paper's confounded comparison. And a
# no-BN model that is still far from converged (chapter B1's curves) has representations
# closer to its initialisation; its sparsity is then partly a statement about how far
# training got.
#
# ## Verdict at this profile
#
# Rules (`normbook.verdicts_b`), fixed up front: a direction claim is *reproduced* when the
# mean over seeds goes the paper's way in every conv layer, *partly* in a strict majority
# of layers, *not* otherwise. The "no consistent signature" claim is *reproduced* when BN is
# less sparse in a majority of layers on one dataset and more sparse on the other (the
# paper's evidence) while BN has the higher mean test accuracy on both; *partly* when the
# two datasets differ but one has no majority direction, or the accuracy condition fails;
# *not* when both datasets move the same way (a consistent signature after all).

# %%
higher_c = verdicts_b.layer_direction(layer["cifar10", True], layer["cifar10", False], "higher")
direction = {ds: verdicts_b.majority_direction(layer[ds, True], layer[ds, False])
             for ds in ("mnist", "cifar10")}
bn_better = all(acc[ds, True].mean() > acc[ds, False].mean() for ds in ("mnist", "cifar10"))
ch_diff = {ds: float(channel[ds, True].mean() - channel[ds, False].mean())
           for ds in ("mnist", "cifar10")}
ledger = [
    verdicts.Verdict("B", "MNIST: BN representations are less sparse than no-BN ones",
                     verdicts_b.direction_grade(lower["mnist"]),
                     f"BN lower in {int(lower['mnist'].sum())}/{lower['mnist'].size} layers; "
                     f"mean difference {diff['mnist']:+.3f} (channel {ch_diff['mnist']:+.3f})"),
    verdicts.Verdict("B", "CIFAR-10: BN representations are more sparse than no-BN ones",
                     verdicts_b.direction_grade(higher_c),
                     f"BN higher in {int(higher_c.sum())}/{higher_c.size} layers; mean "
                     f"difference {diff['cifar10']:+.3f} (channel {ch_diff['cifar10']:+.3f})"),
    verdicts.Verdict("B", "No consistent sparsity signature: BN moves sparsity in opposite "
                     "directions on the two datasets yet generalizes better on both",
                     verdicts_b.no_consistent_signature(direction["mnist"], direction["cifar10"],
                                                        bn_better),
                     f"BN sparsity vs no BN, majority of layers: MNIST {direction['mnist']}, "
                     f"CIFAR-10 {direction['cifar10']}; BN more accurate on both: "
                     f"{'yes' if bn_better else 'no'}"),
]
report.show_verdicts("b2", ledger)

# %% [markdown]
# In plain words, at this profile: BN being less sparse on MNIST is
# {glue:text}`b2_verdict_0`; BN being more sparse on CIFAR-10 is {glue:text}`b2_verdict_1`;
# the paper's conclusion that sparsity has no consistent BN signature is
# {glue:text}`b2_verdict_2`. Exact zeros are the paper's definition; the parameter
# `zero_threshold` re-runs the chapter counting near-zero activations too.

# %%
run.finish()
