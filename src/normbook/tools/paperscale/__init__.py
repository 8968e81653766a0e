"""Paper scale on one GPU: a self-contained runner that writes a *record*, which the book reads.

    PYTHONPATH=src python3 -m normbook.tools.paperscale a1 --out "$OUT" --deadline 540 \
        --device cuda --commit "$(cat results/paper/COMMIT)"

It needs Python with torch, numpy and scipy, nothing else (no network, no virtual
environment, no notebook machinery, no git history). It times a few steps first, picks its
precision path and its budget from a ladder fixed in code (:mod:`.ladder`), records that choice
before any result exists, then trains, evaluates and checks, rewriting its record after every
phase (:mod:`normbook.runtime.records`), so a run stopped at its deadline still leaves what it
finished. The record goes to ``--out``; ``results/paper/`` is where the book reads it. Each
experiment is a module with a list of phases (:mod:`.a1`: chapter A1's); :mod:`.rates`
measures the device.
"""
