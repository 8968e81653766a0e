"""What paper A reports, in one place: the chapters and verdicts compare with these numbers."""

from __future__ import annotations

SEQ_LEN = 600  # localization task: sequence length
RADIUS = 64  # receptive-field radius of the paper's network
NORM_LAYERS = 32  # normalization layers of the paper's network (d = 32, k = 5)
SAMPLES_PER_INDEX = 3_200_000  # predictions per index of its Welch tests
N_SEEDS = 4  # seeds per configuration
WELCH_ALPHA = 0.1  # level of the Welch test in Definition 2.3
PACK_PATH_LEN = 129  # PackNorm: path length l'
PACK_TRANSITION = (64, 80)  # PackNorm: accuracy transition between these overlaps (Fig. 3)
HOP_FACTOR = 3.0  # one hop carries position R + 2R = 3R from an end
GROUP_COUNTS = (1, 2, 4, 8, 16, 32)  # Fig. 4
WIDTH = 32  # channels of the GroupNorm study (G = 32 is InstanceNorm)


def pack_transition_fraction() -> tuple[float, float]:
    """The paper's transition as a fraction of the path length."""
    lo, hi = PACK_TRANSITION
    return lo / PACK_PATH_LEN, hi / PACK_PATH_LEN
