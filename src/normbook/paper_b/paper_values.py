"""What paper B reports, in one place, and the tolerances we compare it with: the chapters,
tables and verdicts read these numbers from here."""

from __future__ import annotations

# Table 1: CIFAR-10 test accuracy of VGG-16 with and without BatchNorm. The paper's public
# review quotes only this row; the MNIST row is not in our source.
TABLE1_ACCURACY = {("cifar10", True): 0.8599, ("cifar10", False): 0.79435}

WIDTH = {"mnist": 64, "cifar10": 1.0}  # standard CNN width k; VGG-16 channel multiplier
N_SEEDS = 4  # error bars are standard deviations over 4 seeds
N_IMAGES = 5_000  # training images whose representations are measured
K_RANGE = (2, 20)  # k-means: k = 2..20, k* = argmin DBI
N_CLASSES = 10  # both datasets
# Learning rates: SGD on MNIST (BN and no BN); Adam on CIFAR-10, 10x smaller without BN.
LR = {
    ("mnist", True): 0.01,
    ("mnist", False): 0.01,
    ("cifar10", True): 1e-3,
    ("cifar10", False): 1e-4,
}

# Our tolerances (the paper gives none).
TABLE1_TOLERANCE = 0.02  # a mean accuracy within 2 percentage points matches Table 1
K_STAR_TOLERANCE = 2  # k* within +-2 of the number of classes counts as "at the classes"


def table1_gap() -> float:
    """The paper's BN - no BN accuracy gap on CIFAR-10 (a fraction, not points)."""
    return TABLE1_ACCURACY["cifar10", True] - TABLE1_ACCURACY["cifar10", False]


def percent(value: float) -> str:
    """A reported accuracy as the paper prints it: ``0.8599`` -> ``"85.99 %"``."""
    return f"{100 * value:g} %"
