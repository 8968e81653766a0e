"""Paper B: Potgieter, Mouton, Davel, *Impact of Batch Normalization on Convolutional Network
Representations* (arXiv 2501.14441, SACAIR 2024). Chapters B1-B4.

Layers, bottom to top: :mod:`.data` (MNIST / CIFAR-10 readers) and :mod:`.paper_values` (the
paper's own numbers); :mod:`.cached` (networks, training, and the cached analyses); :mod:`.runs`
(which networks a chapter asks for); :mod:`.grading` (smallest effects of interest, rules, seed
pairing); then one folder per chapter (:mod:`.b1_setup_accuracy`, :mod:`.b2_sparsity`,
:mod:`.b3_clusters`, :mod:`.b4_stress`) holding its spec, claims, figures, tables, views and
text, beside what several chapters share: :mod:`.params` (parameter lists and checks),
:mod:`.plots` (plot helpers) and :mod:`.differences` (per-layer difference tables).
"""
