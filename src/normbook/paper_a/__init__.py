"""Paper A: Pfrommer, Ma, Huang, Sojoudi, *Spooky Action at a Distance: Normalization Layers
Enable Side-Channel Spatial Communication* (arXiv 2507.04709). Chapters A1-A4.

Modules, in the order a chapter uses them: :mod:`.specs` (parameters), :mod:`.task`,
:mod:`.norms`, :mod:`.cnn`, :mod:`.stacking` (M models in one network), :mod:`.training`,
:mod:`.probes`, :mod:`.evaluation`, :mod:`.steps` (the cached steps and the code their keys
cover), :mod:`.detector` (the localization test), :mod:`.localization` (the experiment: setup,
networks, runs), :mod:`.equivariance`, :mod:`.packnet` (the PackNorm network) and
:mod:`.packnorm` (its experiment), :mod:`.multihop`, :mod:`.batchstats`, :mod:`.which_norms`
(chapter A3's experiments), :mod:`.interventions` and :mod:`.stress` (chapter A4's), the U-Net
and 2-D CNN (:mod:`.arch_common`, :mod:`.unet`, :mod:`.grid2d`, their runs in
:mod:`.arch_runs`), :mod:`.reach` (chapter A5's), :mod:`.figures`, :mod:`.diagrams`,
:mod:`.tables`, :mod:`.verdicts`, :mod:`.reported` (the paper's own numbers), :mod:`.recorded`
(chapter A1's recorded paper-scale run, read and graded);
(:mod:`normbook.tools.benchmark` times stacked training.)
"""
