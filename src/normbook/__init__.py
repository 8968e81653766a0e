"""normbook: the library behind the normalization-layers book.

Layers, bottom to top (a module imports its own layer and those below, never one above;
``tests/test_layout.py`` holds it):

- :mod:`normbook.runtime`: parameters, the experiment cache, seeding, devices, workers,
  progress, planned compute and recorded runs.
- :mod:`normbook.grading`: claim tests, power, verdict rows, statistics, the ledger record.
- :mod:`normbook.pages`: what a chapter calls to show things (figures, numbers, views, report).
- :mod:`normbook.paper_a` and :mod:`normbook.paper_b`, one package per paper: the cached
  computation (``cached``: every module a cache key covers), the measures or data readers,
  the orchestration of runs (``runs``), grading shared by the paper's chapters, and one folder
  per chapter (its spec, claims, figures, tables and text).
- :mod:`normbook.book_pages`: the pages that read the whole book (intro, Methods, ledger).
- :mod:`normbook.publish`: the build and the site (chapters registry, stamps, execution,
  timings, render, checks).
- :mod:`normbook.tools`: the project's own commands (benchmark, paper-shape run, paper-scale
  runner, view benchmark, refutability check, exercise runs).

ARCHITECTURE.md at the repository's top describes each folder and why it is separate.
"""

__version__ = "0.3.0"
