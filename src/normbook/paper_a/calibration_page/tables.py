"""The budget calibration page's table, returned as markdown: one row per candidate."""

from __future__ import annotations

from normbook.pages.fmt import join, num, table
from normbook.paper_a.calibration_page.budget import ONSET
from normbook.paper_a.grading.late import late_gain


def budget(results) -> str:
    """The budget calibration: one row per candidate (:mod:`.budget`)."""
    rows = []
    for r in results:
        g = late_gain(r.curve)
        rows.append(
            {
                "candidate": r.name,
                "steps": f"{r.curve.total:,}",
                "measured minutes per model": f"{r.seconds.mean() / 60:.2f}",
                "charged (mean of its batch size)": f"{r.minutes[-1]:.2f}",
                "plateau ends (min)": num(r.onset_minutes, ".2f"),
                "final interior slope": join(r.curve.slope[-1], ".3f"),
                "slope per minute": f"{r.slope_per_minute:.3f}",
                "gain over last half": num(g.effect, ".3f"),
            }
        )
    return table(rows, missing={
        "plateau ends (min)": f"the mean slope never reached {ONSET:g} within the budget",
        "gain over last half": "no state was kept by half the budget",
    })  # fmt: skip
