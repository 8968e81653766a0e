"""The grading core: claims and their tests (claims), verdict rows (verdicts), statistics
primitives (stats) and the per-chapter claims record (ledger). Imports only the run-time
framework (:mod:`normbook.runtime`)."""
