"""normbook: the thin library behind the normalization-layers book."""

__version__ = "0.1.0"
