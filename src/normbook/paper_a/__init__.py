"""Paper A: Pfrommer, Ma, Huang, Sojoudi, *Spooky Action at a Distance: Normalization Layers
Enable Side-Channel Spatial Communication* (arXiv 2507.04709). Chapters A1-A5.

Layers, bottom to top: :mod:`.paper_values` (the paper's own numbers); :mod:`.cached` (the
networks, training, evaluation and interventions the cache keys cover); :mod:`.measures` (the
localization test, bands, equivariance, hop bounds); :mod:`.runs` (which networks a chapter asks
for, and their summaries); :mod:`.grading` (smallest effects of interest, the nulls, late-training
rules, and the rules several chapters' claims share); then one folder per chapter
(:mod:`.a1_localization`, :mod:`.a2_mechanism`, :mod:`.a3_which_norms`, :mod:`.a4_stress`,
:mod:`.a5_reach`, :mod:`.calibration_page`, :mod:`.methods_page`) holding its spec, claims,
figures, tables, views and text, beside what several chapters share: :mod:`.params` (parameter
lists, A1's base profiles and checks), :mod:`.plots` (plot helpers and shared figures),
:mod:`.run_tables` (shared tables), :mod:`.view_parts` (explorable-view building blocks) and
:mod:`.recorded` (chapter A1's recorded paper-scale run, read and graded).
(:mod:`normbook.tools.benchmark` times stacked training.)
"""
