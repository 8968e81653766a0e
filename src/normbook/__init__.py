"""normbook: the thin library behind the normalization-layers book.

Three subpackages, one per concern:

- :mod:`normbook.core`: shared machinery (experiment cache, chapter parameters, the build
  pipeline, chapter reports, progress bars, figure theme, seeding, worker pools, statistics
  primitives and the verdict vocabulary). Its modules import neither paper's package.
- :mod:`normbook.paper_a`: paper A, *Spooky Action at a Distance* (arXiv 2507.04709):
  the localization task, the stacked 1-D CNNs, the localization detector, PackNorm, and the
  figures and verdict rules of chapters A1-A4.
- :mod:`normbook.paper_b`: paper B, *Impact of Batch Normalization on Convolutional Network
  Representations* (arXiv 2501.14441): MNIST / CIFAR-10 readers, the classifiers, the
  representation metrics, and the figures and verdict rules of chapters B1-B3.

Beside them, :mod:`normbook.publish.chapters` maps each chapter to its spec,
:mod:`normbook.book_pages.methods` builds the Methods page's tables, and
:mod:`normbook.tools.paperscale` is the self-contained paper-scale runner (torch, numpy and scipy
only) whose records chapters A1 and A5 read. A chapter imports from ``core`` and from its own
paper's package (and, where it reads a record, ``paperscale``); its build stamp hashes exactly
those (and ``normbook/__init__.py``), so editing one paper never re-executes the other's chapters.
"""

__version__ = "0.2.0"
