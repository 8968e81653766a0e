"""Paper A: Pfrommer, Ma, Huang, Sojoudi, *Spooky Action at a Distance: Normalization Layers
Enable Side-Channel Spatial Communication* (arXiv 2507.04709). Chapters A1-A4.

Modules, in the order a chapter uses them: :mod:`.specs` (parameters), :mod:`.task`,
:mod:`.norms`, :mod:`.cnn`, :mod:`.stacking` (M models in one network), :mod:`.training`,
:mod:`.probes`, :mod:`.detector` (the localization test), :mod:`.localization` (the experiment
runner), :mod:`.equivariance`, :mod:`.packnorm`, :mod:`.multihop`, :mod:`.batchstats`,
:mod:`.which_norms` (chapter A3's experiments), :mod:`.figures`, :mod:`.diagrams`,
:mod:`.tables`, :mod:`.verdicts`, :mod:`.reported` (the paper's own numbers);
(:mod:`normbook.benchmark` times stacked training.)
"""
