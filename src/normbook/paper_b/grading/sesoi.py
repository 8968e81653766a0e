"""Paper B's smallest effects of interest and positive controls, declared before any number
is seen (the Methods page lists them from here).

Every effect is signed the claim's way (positive: BatchNorm moves the metric as the paper says)
and is one value per seed, the BN and no-BN model of a seed forming a pair. Davies-Bouldin
indices have no natural unit (they scale with the geometry of each layer), so their effects
are relative: the no-BN model's index minus the BN model's, over the no-BN model's.
"""

from __future__ import annotations

from normbook.grading.claims import Sesoi

ACCURACY = Sesoi(
    0.005,
    "of test accuracy",
    "half a percentage point is the smallest gain a practitioner would act on at these "
    "accuracies, about a thirteenth of the CIFAR-10 gap paper B reports between BN and no BN",
    name="accuracy",
)
SPARSITY = Sesoi(
    0.02,
    "of activations (fraction counted as zero, |a| ≤ threshold)",
    "two percentage points of the activations; paper B's sparsity differences that it reads as "
    "no consistent signature are several times larger, and a smaller change could not account "
    "for a difference in what a layer represents",
    name="sparsity",
)
DBI = Sesoi(
    0.05,
    "of the no-BN model's index (relative)",
    "a Davies-Bouldin index 5 % lower means clusters 5 % tighter relative to their separation; "
    "below that, a difference is within what the choice of images moves it by",
    name="Davies-Bouldin index",
)
SILHOUETTE = Sesoi(
    0.02,
    "silhouette score",
    "silhouettes range over [-1, 1] and these layers' lie near 0; a difference of 0.02 is a "
    "tenth of a typical layer-to-layer change",
    name="silhouette",
)
SETTLE = Sesoi(
    0.5,
    "conv layer",
    "'in earlier layers' means a different layer: at least one layer earlier, by a rank test "
    "of the shift (the settling layer is a whole number and 'never' has no size; a SESOI "
    "between 0 and 1 makes no network tie with a shifted one)",
    name="settling layer",
)

# How far a k-means partition's DBI may move when the inputs move by a rounding error (1e-7,
# relative): k-means can hold two partitions of nearly equal inertia, and a rounding error picks
# one or the other. Measured on the cpu networks (CIFAR-10 and MNIST, BN, seed 0, every conv
# layer, k = 2..20): at most 0.5 % (2.35e-2 on a DBI of 4.58), in a handful of the 323 (layer, k)
# cells, with 1, 2, 3, 10 or 30 restarts alike, so more restarts do not buy stability. A
# fifth of the DBI SESOI; tests/paper_b/test_representations.py holds k-means to it.
KMEANS_REPRODUCIBLE = 0.01

# Positive control: a classifier family grades nothing until it has learned.
LEARNED_ACCURACY = 0.2  # test accuracy at least twice chance (10 classes) in every seed


SESOIS = (ACCURACY, SPARSITY, DBI, SILHOUETTE, SETTLE)
