"""The project's own tools, each a command: the compute plan report, the benchmark, the
paper-shape run, the paper-scale runner, the view-library measurement, the refutability check and
the exercise runs. Nothing in the library imports them."""
