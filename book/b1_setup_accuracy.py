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
# # B1. Setup and accuracy: BatchNorm versus no BatchNorm
#
# Paper B (Potgieter, Mouton, Davel, arXiv 2501.14441, SACAIR 2024) trains the same
# convolutional networks with and without BatchNorm and compares what their hidden layers
# represent: how sparse the post-ReLU activations are (chapter B2) and how cleanly they
# cluster (chapter B3). This chapter sets the experiment up: the data and its provenance,
# the two architectures, the training runs, and the paper's Table 1 (test accuracy). The
# models trained here are cached on disk; B2 and B3 load them instead of retraining.
#
# :::{admonition} Paper facts and our reconstruction
# :class: important
# **Paper facts.** MNIST with the "standard CNN" of Nakkiran et al. (3×3 convs of widths
# $k, 2k, 4k, 8k$, each conv → BN → ReLU, max-pools, one linear layer), trained with SGD at
# learning rate 0.01 with and without BatchNorm; CIFAR-10 with VGG-16 (13 convs, one linear
# layer 512 → 10), trained with Adam at learning rate $10^{-3}$ *with* BatchNorm and
# $10^{-4}$ *without* (the review's main objection: BatchNorm and learning rate change
# together); 4 seeds, error bars are standard deviations over seeds; "no BN" means BatchNorm
# replaced by the identity. Table 1 of the paper: CIFAR-10 test accuracy 85.99 % with BN and
# 79.435 % without.
#
# **Our reconstruction** (PROTOCOL B.1; every item is a parameter): MNIST zero-padded to
# 32×32 and both datasets normalized with the usual per-channel constants; no data
# augmentation; He (Kaiming) initialisation as in torchvision's VGG; a validation split held
# out of the training split and an early-stopping rule (below); minibatch size; SGD
# momentum. The paper's width is $k = 64$ and full VGG-16; at the `cpu` profile both networks
# are much narrower, trained on 10,000 images for a few epochs, with 2 seeds, so their
# accuracies are far below the paper's. What this profile can test is the *comparison*
# between BN and no BN, not the paper's absolute numbers.
# :::

# %% tags=["parameters"]
profile = "cpu"          # smoke, cpu or paper (knobs set to None take the profile value)
seeds = None             # training seeds, one model per seed and variant
mnist_width = None       # standard CNN width k (paper 64)
vgg_width = None         # VGG-16 channel multiplier (paper 1.0)
mnist_lr = None          # MNIST SGD learning rate (paper 0.01)
mnist_momentum = None    # MNIST SGD momentum
cifar_lr_bn = None       # CIFAR-10 Adam learning rate with BN (paper 1e-3)
cifar_lr_nobn = None     # CIFAR-10 Adam learning rate without BN (paper 1e-4)
batch_size = None        # minibatch size
init = None              # weight initialisation: kaiming or pytorch
mnist_epochs = None      # MNIST maximum epochs
cifar_epochs = None      # CIFAR-10 maximum epochs
patience = None          # early stopping: evaluations without a lower validation loss
evals_per_epoch = None   # validation evaluations per epoch
mnist_train = None       # MNIST training images
cifar_train = None       # CIFAR-10 training images
n_val = None             # validation images (held out of the training split)
n_test = None            # test images
split_seed = None        # seed of the train / validation / test subsets
allow_unverified = None  # env, yes or no: accept a data copy failing its checksum
workers = None           # parallel worker processes
device = None            # auto, cpu or cuda

# %%
import numpy as np
import matplotlib.pyplot as plt

from normbook import classify, convnets, data, plots_b, report, verdicts, verdicts_b
from normbook.specs_b import B1

P, run = report.start(B1, globals())

# %% [markdown]
# ## Data and provenance
#
# Both datasets are read from the data directory (`NORMBOOK_DATA`) and checked against the
# published checksums before use. A copy that fails the check is used only when explicitly
# allowed (parameter `allow_unverified`, or `NORMBOOK_ALLOW_UNVERIFIED=1` when it is
# `env`), and is then flagged here and in the run record.

# %%
allow = classify.allow_flag(P.allow_unverified)
full = {ds: classify.load_full(ds, allow) for ds in ("mnist", "cifar10")}
shown = set()
for ds, sp in full.items():
    for prov in sp.provenance:
        if (prov.dataset, prov.sha256) not in shown:  # CIFAR-10: one archive, both splits
            report.md(data.provenance_admonition(prov))
            shown.add((prov.dataset, prov.sha256))
    run.provenance.extend(classify.provenance_lines(sp))
unverified = [p.dataset for sp in full.values() for p in sp.provenance if not p.verified]
data_note = ("an unverified copy of " + " and ".join(sorted(set(unverified)))
             if unverified else "verified copies of both datasets")
report.glue("b1_data_note", data_note)

fig, axes = plt.subplots(2, 10, figsize=(10, 2.3), constrained_layout=True)
for row, (ds, sp) in enumerate(full.items()):
    first = [int(np.flatnonzero(sp.y_train == c)[0]) for c in range(10)]
    for c, i in enumerate(first):
        img = sp.x_train[i]
        axes[row, c].imshow(img if img.ndim == 2 else img.transpose(1, 2, 0),
                            cmap="gray" if img.ndim == 2 else None)
        axes[row, c].set_axis_off()
        name = str(c) if ds == "mnist" else data.CIFAR10_CLASSES[c]
        axes[row, c].set_title(name, fontsize=8)
plt.show()

# %% [markdown]
# This run uses {glue:text}`b1_data_note` (one training image per class above). The
# offline CIFAR-10 copy was rebuilt from a JPEG export, so every pixel went through lossy
# compression: accuracies on it are close to, not equal to, accuracies on the original
# archive.
#
# ## The networks at this profile
#
# Output shape (channels × height × width) of every conv layer, for this run's widths and
# for the paper's. The representations analysed in B2 and B3 are the post-ReLU outputs of
# exactly these layers.

# %%
cfgs = classify.configs(P)
rows = []
for ds, in_ch in (("mnist", 1), ("cifar10", 3)):
    ours = cfgs[ds, True].build(0)
    paper_kw = {"width": 64} if ds == "mnist" else {"width_mult": 1.0}
    paper_net = convnets.build(cfgs[ds, True].arch, seed=0, batchnorm=True, **paper_kw)
    x0 = np.zeros((1, in_ch, 32, 32), np.float32)
    a_ours = convnets.capture_activations(ours, x0)
    a_paper = convnets.capture_activations(paper_net, x0)
    for name in a_ours:
        rows.append({"dataset": ds, "layer": name,
                     "ours (C×H×W)": "×".join(map(str, a_ours[name].shape[1:])),
                     "paper (C×H×W)": "×".join(map(str, a_paper[name].shape[1:]))})
    n_ours = sum(p.numel() for p in ours.parameters())
    n_paper = sum(p.numel() for p in paper_net.parameters())
    rows.append({"dataset": ds, "layer": "**parameters**", "ours (C×H×W)": f"{n_ours:,}",
                 "paper (C×H×W)": f"{n_paper:,}"})
report.md(report.table(rows))

# %% [markdown]
# ## Training
#
# **Early-stopping rule** (our reconstruction; the paper does not state one). Each model
# trains for at most `mnist_epochs` / `cifar_epochs` passes over its training images, in a
# seeded minibatch order. `evals_per_epoch` times per epoch it is evaluated on the
# validation images; the weights with the lowest validation cross-entropy so far are kept,
# and training stops after `patience` evaluations without improvement. Test accuracy, and
# everything in B2 and B3, use the kept weights. Models are trained `workers` at a time in
# separate processes with one thread each, which gives bit-identical results whatever the
# number of workers, and each (configuration, seed) is cached on disk.

# %%
models, splits = classify.train_from_params(P)
hits = sum(t.hit for ts in models.values() for t in ts)
n_models = sum(len(ts) for ts in models.values())
train_s = sum(t.entry.meta["train_seconds"] for ts in models.values() for t in ts)
print(f"{n_models} models, {hits} loaded from the cache; "
      f"{train_s:.0f} s of single-thread training in total")

fig, axes = plots_b.figure(ncols=2, nrows=2, width=5.2, height=3.0)
for col, ds in enumerate(("mnist", "cifar10")):
    curves = {cfgs[ds, bn].label: [t.curves for t in models[ds, bn]] for bn in (True, False)}
    plots_b.training_curves(axes[0, col], axes[1, col], curves)
    axes[0, col].set_title(plots_b.DATASET_TITLES[ds])
plt.show()

rows = []
for (ds, bn), ts in models.items():
    for t in ts:
        m = t.entry.meta
        rows.append({"dataset": ds, "variant": t.cfg.label, "seed": t.seed,
                     "optimizer": f"{t.cfg.optimizer} lr {t.cfg.lr:g}",
                     "stopped (epoch)": f"{m['stopped_epoch']:.2f}",
                     "kept (epoch)": f"{m['best_epoch']:.2f}",
                     "early-stopped": "yes" if m["early_stopped"] else "no",
                     "test accuracy": f"{t.test_acc:.2%}"})
report.md(report.table(rows))

# %% [markdown]
# Training loss (solid) and validation loss (dashed) on top, validation accuracy below, one
# line per seed. A run whose validation loss still falls at its last evaluation stopped
# because the epochs ran out, not because it converged: at reduced budgets that is the
# fate of the slower no-BN runs, which matters for reading every comparison that follows.
#
# ## Table 1: test accuracy

# %%
PAPER_ACC = {("cifar10", True): 0.8599, ("cifar10", False): 0.79435}
acc = {v: np.array([t.test_acc for t in ts]) for v, ts in models.items()}


def mean_sd(a):
    sd = a.std(ddof=1) if len(a) > 1 else float("nan")
    return f"{a.mean():.2%} ± {sd:.2%}"


rows = []
for ds in ("mnist", "cifar10"):
    for bn in (True, False):
        paper = PAPER_ACC.get((ds, bn))
        rows.append({"dataset": ds, "model": "standard CNN" if ds == "mnist" else "VGG-16",
                     "variant": cfgs[ds, bn].label, "lr": f"{cfgs[ds, bn].lr:g}",
                     f"ours (mean ± sd, {len(P.seeds)} seeds)": mean_sd(acc[ds, bn]),
                     "paper": f"{paper:.3%}" if paper else "not in our source"})
report.md(report.table(rows))

for ds in ("mnist", "cifar10"):
    for bn, tag in ((True, "bn"), (False, "nobn")):
        report.glue(f"b1_acc_{ds}_{tag}", mean_sd(acc[ds, bn]))
    report.glue(f"b1_gap_{ds}", f"{100 * (acc[ds, True].mean() - acc[ds, False].mean()):+.2f}")
_ = report.glue("b1_paper_gap", f"{100 * (0.8599 - 0.79435):+.3f}")

# %% [markdown]
# On CIFAR-10 our BN models reach {glue:text}`b1_acc_cifar10_bn` test accuracy and the no-BN
# models {glue:text}`b1_acc_cifar10_nobn` (mean ± sd over seeds): a gap of
# {glue:text}`b1_gap_cifar10` percentage points, against the paper's 85.99 % and 79.435 %
# (gap {glue:text}`b1_paper_gap` points). On MNIST: {glue:text}`b1_acc_mnist_bn` with BN,
# {glue:text}`b1_acc_mnist_nobn` without (gap {glue:text}`b1_gap_mnist` points). The
# review we work from quotes only the CIFAR-10 row of the paper's Table 1, so the MNIST
# comparison with the paper is left open. At reduced width, data and epochs our absolute
# accuracies are not the paper's; see the profile note at the top.
#
# ## Verdict at this profile
#
# Rules fixed in `normbook.verdicts_b` before looking at the numbers. *BN generalizes
# better*: reproduced when every BN seed beats every no-BN seed, partly when only the mean
# is higher. *Table 1 values*: reproduced when both CIFAR-10 means are within 2 percentage
# points of the paper's; partly when the BN − no-BN gap has the paper's sign and is within a
# factor of two of the paper's 6.555 points.

# %%
ledger = [
    verdicts.Verdict("B", "BN models reach higher test accuracy than no-BN models on CIFAR-10 "
                     "(VGG-16; lr 1e-3 vs 1e-4)",
                     verdicts_b.accuracy_gain(acc["cifar10", True], acc["cifar10", False]),
                     f"BN {mean_sd(acc['cifar10', True])}, no BN "
                     f"{mean_sd(acc['cifar10', False])}"),
    verdicts.Verdict("B", "BN models reach higher test accuracy than no-BN models on MNIST "
                     "(standard CNN; same SGD lr)",
                     verdicts_b.accuracy_gain(acc["mnist", True], acc["mnist", False]),
                     f"BN {mean_sd(acc['mnist', True])}, no BN {mean_sd(acc['mnist', False])}"),
    verdicts.Verdict("B", "Table 1: CIFAR-10 test accuracy 85.99 % (BN) and 79.435 % (no BN)",
                     verdicts_b.matches_paper(acc["cifar10", True].mean(),
                                              acc["cifar10", False].mean(), 0.8599, 0.79435),
                     f"ours {acc['cifar10', True].mean():.2%} / "
                     f"{acc['cifar10', False].mean():.2%}, profile `{P.profile}`"),
]
report.show_verdicts("b1", ledger)

# %% [markdown]
# In plain words, at this profile: BN's accuracy advantage on CIFAR-10 is
# {glue:text}`b1_verdict_0`, on MNIST {glue:text}`b1_verdict_1`, and the paper's Table 1
# values themselves are {glue:text}`b1_verdict_2`. On CIFAR-10 the comparison is the
# paper's, confound included: the BN models train with a ten times larger learning rate.

# %%
run.finish()
