"""Chapter A1's claims: the side channel (beyond R), Fig. 1a (beyond one hop: the whole
sequence) and Fig. 1b (the inward spread) as claims; Prop. C.1 and the circular-padding null
as checks. The rules they share with the other chapters (the controls, the nulls, "localizes
beyond R") are in :mod:`normbook.paper_a.grading`."""

from __future__ import annotations

from normbook.grading.verdicts import Verdict
from normbook.pages.fmt import join
from normbook.paper_a.grading.late import probe_states, reach_rising, rising
from normbook.paper_a.grading.nulls import null_learned, reach_test, slope_beyond_nulls
from normbook.paper_a.grading.rules import (
    beats_nulls,
    cyclic_null,
    exactly_equivariant,
    learned,
    localizes_verdict,
)
from normbook.paper_a.grading.sesoi import REACH, SLOPE
from normbook.paper_a.measures import bands, multihop


def a1_ledger(
    no_norm, with_norm, circular, eq_no_norm, cyc, curve, probe_curve=None
) -> tuple[list, list]:
    """Chapter A1: the side channel (beyond R), Fig. 1a (beyond one hop: the whole sequence)
    and Fig. 1b as claims; Prop. C.1 and the null as checks. ``curve``: the normalized
    networks' compute-to-effect curve; ``probe_curve``: the same with depth probes (None, as in
    a paper-scale record that kept no probes: Fig. 1b's claim cannot be refuted)."""
    half = (with_norm.seq_len - 1) // 2
    whole = slope_beyond_nulls(bands.beyond_hop_slope, with_norm, no_norm, circular)
    hop = int(round(3 * with_norm.radius))  # an index beyond one hop is this far from both ends
    no_band = "" if half >= hop else (
        f" (–: no index is {hop} = 3R from both ends at l = {with_norm.seq_len})")  # fmt: skip
    # no side channel at all would be evidence, not a failure: the controls are learning only
    controls = (learned(with_norm), null_learned(no_norm))
    spread = reach_test(with_norm, no_norm, circular, factor=1.0)
    excess = [
        multihop.excess_beyond(r.probe_distances, r.cnn.kernel)
        for r in (with_norm, no_norm, circular)
    ]
    claims = [
        localizes_verdict(
            beats_nulls(f"With {with_norm.name}"),
            with_norm,
            no_norm,
            circular,
            curve,
            f"; interior fraction {join(with_norm.frac_interior, '.2f')}",
            paper_says="Normalization lets the network localize indices beyond its receptive "
            "field (the side channel)",
            key="a1_side_channel",
        ),  # fmt: skip
        Verdict.graded(
            "A",
            f"With {with_norm.name}: the mean prediction beyond one hop (farther than 3R from both "
            f"ends) rises faster than both nulls' by at least {SLOPE.value:g} of the ramp's slope",
            whole,
            SLOPE,
            rising=rising(curve, bands.beyond_hop_slope),
            controls=controls,
            evidence=f"slope beyond 3R {join(bands.beyond_hop_slope(with_norm), '.4f')} vs nulls "
            f"{join(bands.beyond_hop_slope(no_norm), '.4f')} / "
            f"{join(bands.beyond_hop_slope(circular), '.4f')}{no_band}; localization distances "
            f"{with_norm.distances} (middle: {half})",
            unit=".4f",
            paper_says=f"With {with_norm.name} the whole sequence is localized (Fig. 1a)",
            key="a1_whole_sequence",
            rule=a1_ledger,
            measure=bands.beyond_hop_slope,
        ),
        Verdict.graded(
            "A",
            "With normalization: at their best depth the depth probes localize beyond R(depth) "
            "by at least one layer of receptive-field growth more than both nulls' probes",
            spread,
            REACH,
            rising=reach_rising(probe_curve, 1.0),
            controls=controls,
            evidence=f"reach beyond R(d) at the best depth, in indices, per seed: "
            f"{join(excess[0], '.0f')} (nulls: {join(excess[1], '.0f')} / "
            f"{join(excess[2], '.0f')}); " + probe_states(probe_curve),
            unit=".2f",
            paper_says="Localization spreads inward faster than the receptive field grows "
            "(Fig. 1b)",
            key="a1_inward_spread",
            rule=a1_ledger,
            measure=multihop.excess_beyond,
        ),
    ]
    checks = [exactly_equivariant(eq_no_norm), cyclic_null(circular.name, cyc)]
    return claims, checks
