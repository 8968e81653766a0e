"""Chapter A2's claims: Fig. 3's transition and the multi-hop reach; o = 0, the per-path
control and the rise of accuracy with the overlap as the PackNorm family's checks and control.
The rules they share with the other chapters are in :mod:`normbook.paper_a.grading`."""

from __future__ import annotations

import numpy as np

from normbook.grading.claims import inside_band
from normbook.grading.verdicts import Verdict
from normbook.pages.fmt import join
from normbook.paper_a import paper_values
from normbook.paper_a.grading.late import probe_states, reach_rising, transition_rising
from normbook.paper_a.grading.nulls import null_learned, reach_test
from normbook.paper_a.grading.rules import accuracy_learned, at_chance, learned
from normbook.paper_a.grading.sesoi import REACH
from normbook.paper_a.measures import multihop
from normbook.paper_a.runs import packnorm


def a2_ledger(
    pack, with_norm, no_norm, circular, hop_factor: float, probe_curve=None, pack_kept=None
) -> tuple[list, list]:
    """Chapter A2: Fig. 3's transition and the multi-hop reach as claims; o = 0, the per-path
    control and the rise of accuracy with the overlap (which pooled statistics give at any
    receptive field, chapter A4) as the PackNorm family's checks and control.
    ``probe_curve``: the normalized networks' curve with depth probes (as
    :func:`normbook.paper_a.a1_localization.claims.a1_ledger`); ``pack_kept``: PackNorm's sweep
    at the late kept state (:func:`normbook.paper_a.grading.late.transition_rising`)."""
    o = list(pack.pack.overlaps)
    full = o.index(pack.setup.path_len) if pack.setup.path_len in o else None
    pack_ok = accuracy_learned(pack.pack.acc[full] if full is not None else [np.nan], "PackNorm")
    lo, hi = paper_values.pack_transition_fraction()
    per_seed = np.asarray(pack.transition_per_seed) / pack.setup.path_len
    band = inside_band(per_seed, lo, hi, null=f"paper: {lo:.2f}–{hi:.2f} l'")
    states = "the trained models only (no kept states)"
    if pack_kept is not None:
        half = pack_kept.at_step / pack.setup.train.steps
        states = f"rising judged at {half:.3g} of the budget and the end"
    hop = reach_test(with_norm, no_norm, circular, factor=hop_factor)
    excess = multihop.excess_beyond(with_norm.probe_distances, with_norm.cnn.kernel, hop_factor)
    claims = [
        Verdict.graded(
            "A",
            f"PackNorm's transition, as a fraction of the path length, lies inside the paper's "
            f"band ({lo:.2f}–{hi:.2f})",
            band,
            None,
            rising=transition_rising(pack, pack_kept),
            controls=(pack_ok,),
            evidence=(
                f"ours: o ≈ {pack.transition:.1f} of {pack.setup.path_len}"
                if pack.transition == pack.transition
                else "ours: accuracy never reaches the transition level"
            )
            + f" (per seed, as fractions of l': {join(per_seed, '.2f')}); grid step "
            f"{pack.grid_step:.2f} l'; {states}",
            unit=".2f",
            paper_says="The transition lies at about half the path length "
            f"(o ≈ {paper_values.PACK_TRANSITION[0]}–{paper_values.PACK_TRANSITION[1]} of "
            f"{paper_values.PACK_PATH_LEN}, Fig. 3)",
            key="a2_transition",
            rule=a2_ledger,
            measure=packnorm.transition_overlap,
        ),
        Verdict.graded(
            "A",
            f"At their best depth the probes localize beyond one hop ({hop_factor:g}R(d)) by at "
            "least one layer of receptive-field growth more than both nulls' probes",
            hop,
            REACH,
            rising=reach_rising(probe_curve, hop_factor),
            controls=(learned(with_norm), null_learned(no_norm)),
            evidence=f"reach beyond {hop_factor:g}R(d) at the best depth, in indices, per seed: "
            f"{join(excess, '.0f')}; " + probe_states(probe_curve),
            unit=".2f",
            paper_says="Position travels several hops, one per normalization layer (the "
            "multi-hop reading)",
            key="a2_multi_hop",
            rule=a2_ledger,
            measure=multihop.excess_beyond,
        ),
    ]
    checks = []
    if pack.p_zero:  # only when the overlap grid has o = 0
        checks.append(
            at_chance("PackNorm at o = 0", pack.pack.correct[0], pack.pack.n_test, pack.p_zero)
        )
    if pack.control.overlaps:
        checks.append(
            at_chance(
                "Per-path InstanceNorm (control)",
                pack.control.correct,
                pack.control.n_test,
                pack.control.chance_pvalues(),
            )
        )
    return claims, checks
