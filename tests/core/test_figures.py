"""Figure text as the page shows it: a figure wider than the column is scaled down with it."""

import matplotlib

matplotlib.use("Agg")

from normbook.core import figures, report  # noqa: E402


def _fig(ncols, fontsize):
    fig, axes = figures.canvas(ncols=ncols, width=3.0, height=2.5)
    axes[0, 0].set_title("a title", fontsize=fontsize)
    for ax in axes[0]:
        ax.tick_params(labelsize=fontsize)
    return fig


def test_a_wider_figure_shows_its_text_smaller():
    one, five = figures.smallest_text_px(_fig(1, 10)), figures.smallest_text_px(_fig(5, 10))
    assert five < one / 3  # five panels in the same column width
    bigger = figures.smallest_text_px(_fig(1, 20))
    assert 1.8 < bigger / one < 2.2  # text size scales with its points at one figure width


def test_the_run_record_names_the_smallest_figure_text(monkeypatch):
    monkeypatch.setattr(report, "LEGIBILITY", {"fig-a": 20.0, "fig-b": 6.5})
    line = report.legibility_line()
    assert "1 of 2 figures at least the caption's 16 px" in line and "`fig-b` 6.5 px" in line
