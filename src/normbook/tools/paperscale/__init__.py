"""Paper scale on one GPU: a self-contained runner that writes a *record*, which the book reads.

    PYTHONPATH=src python -m normbook.tools.paperscale a1 --out results/paper --deadline 540

It needs Python with torch, numpy and scipy, nothing else (no network, no virtual
environment, no notebook machinery). It times a few steps first, picks its budget from a
ladder fixed in code (:mod:`.ladder`), records that choice before any result exists, then
trains, evaluates and checks, rewriting its record after every phase (:mod:`.record`), so a
run stopped at its deadline still leaves what it finished. Each experiment is a module with a
list of phases (:mod:`.a1`: chapter A1's); :mod:`.rates` measures the device.
"""
