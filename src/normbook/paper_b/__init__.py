"""Paper B: Potgieter, Mouton, Davel, *Impact of Batch Normalization on Convolutional Network
Representations* (arXiv 2501.14441, SACAIR 2024). Chapters B1-B3.

Modules, in the order a chapter uses them: :mod:`.specs` (parameters), :mod:`.datasets`
(MNIST / CIFAR-10 readers), :mod:`.convnets`, :mod:`.classify` (training and caching),
:mod:`.representations` (sparsity and cluster metrics), :mod:`.analysis` (cached per-model
analysis), :mod:`.figures`, :mod:`.tables`, :mod:`.verdicts`, :mod:`.reported` (the paper's own
numbers).
"""
