"""Paper A's smallest effects of interest and positive controls, declared before any number
is seen (the Methods page lists them from here).

Effects on localization are measured as slopes of the per-index mean prediction against the
ramp, in units of the ramp's own slope (1: the mean prediction is the ramp; 0: flat), so that
the size of an effect reads the same at every sequence length and profile.
"""

from __future__ import annotations

from normbook.grading.claims import Sesoi

SLOPE = Sesoi(
    0.05,
    "of the ramp's slope",
    "a mean prediction that rises by 5 % of the target's range across the interior is about the "
    "least a reader can see on Fig. 1a's axes, and it removes a tenth of the interior's squared "
    "error (1 - (1 - 0.05)^2); smaller slopes can be significant with millions of predictions "
    "per index while localizing nothing a downstream layer could use",
    name="slope",
)
SHARE = Sesoi(
    0.5,
    "of the first hop band's slope",
    "'undiminished' (the whole sequence localized, as in paper A's Fig. 1a) needs the band "
    "beyond one hop to keep at least half of the first band's slope; a signal that halves at "
    "every hop is already gone a few hops in",
    name="share kept",
)
SHARE_GAIN = Sesoi(
    0.02,
    "of the first hop band's slope (share kept)",
    "normalization layers, not depth, relay the signal: the same kernel-1 blocks with their "
    "normalization must keep more of the first band's slope beyond one hop than without it; a "
    "gain under a twenty-fifth of what 'undiminished' needs (the share kept's SESOI, 0.5) "
    "would take dozens of added normalization layers to matter",
    name="share gained",
)
REACH = Sesoi(
    1.0,
    "layer of receptive-field growth (⌊k/2⌋ indices)",
    "the receptive field grows by ⌊k/2⌋ indices per layer; a reach beyond the nulls' that is "
    "smaller than one layer's growth is within what the test's window and a single layer "
    "could explain",
    name="reach",
)
REMOVED = Sesoi(
    0.9,
    "of the interior slope removed",
    "'the statistics are the channel' predicts that replacing them removes the slope; removing "
    "less than 90 % leaves a tenth of the effect to some other route",
    name="slope removed",
)
CHANCE = Sesoi(
    0.05,
    "accuracy above chance (1/2)",
    "a head that is right 55 % of the time on a balanced task has learned something real about "
    "the two cases; below 5 points a reader would call it chance",
    name="accuracy above chance",
)
TREND = Sesoi(
    0.3,
    "Spearman's rho",
    "a rank correlation below 0.3 accounts for under a tenth of the ranks' variance: a trend "
    "too weak to read off Fig. 4",
    name="trend",
)
BOUNDARY_GAP = Sesoi(
    0.1,
    "of the indices within R",
    "'misses some indices near the boundary' needs at least a tenth of the boundary band (one "
    "or two indices at these geometries) to be lost, beyond what the no-norm network localizes",
    name="boundary gap",
)

FADED = Sesoi(
    0.5,
    "of the interior slope lost",
    "our claim that a larger evaluation batch dilutes each sample's share of the minibatch "
    "statistics says the slope fades; losing at least half of it at four times the training "
    "batch is fading a reader would notice (as the batch grows without bound the statistics "
    "become the population's, which cannot localize at all: a check)",
    name="slope lost",
)
FLAGGED = Sesoi(
    0.9,
    "of the indices beyond 3R flagged",
    "paper A's Fig. 1a reads as the whole sequence localized: nine in ten indices beyond one hop "
    "flagged by the test at the paper's number of predictions is the least that reads so (the "
    "test flags a tenth of them at its level even where nothing is there)",
    name="indices flagged",
)

# Positive controls: a family grades nothing until it has learned.
# The mean prediction explains at least this share of the ramp's variance over the whole
# sequence (R², every seed). A network that learned the ramp where it sees the padding (within R
# of both ends) explains about half of it at these geometries; one that learned nothing, or
# whose every ReLU died (its output then depends on the position near the padding only), well
# under a quarter.
LEARNED_R2 = 0.25
CHANCE_MARGIN = 0.25  # PackNorm: accuracy at full overlap at least 1/2 + this (the family learned)


SESOIS = (SLOPE, SHARE, SHARE_GAIN, REACH, REMOVED, CHANCE, TREND, BOUNDARY_GAP, FADED, FLAGGED)
