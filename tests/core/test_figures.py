"""Figure text as the page shows it: a figure is FIGURE_DPI px per inch, scaled down to the
column when wider; the book's canvas keeps every panel's text at the caption's size."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from normbook.grading import ledger  # noqa: E402
from normbook.pages import figures, report  # noqa: E402
from normbook.publish import site  # noqa: E402
from normbook.publish.project import BuildError  # noqa: E402


def _labelled(fig, axes):
    for ax in axes.flat:
        ax.plot([0, 1], [0, 1], label="a line")
        ax.set_title("a title")
        ax.set_xlabel("x")
        ax.legend()
    return fig


def test_a_canvas_is_the_column_wide_and_its_text_reaches_the_caption():
    for ncols, nrows in ((1, 1), (2, 1), (3, 2), (10, 2)):
        fig = _labelled(*figures.canvas(ncols=ncols, nrows=nrows))
        assert fig.get_size_inches()[0] == pytest.approx(figures.COLUMN_IN)
        assert figures.smallest_text_px(fig) >= figures.CAPTION_PX
        plt.close(fig)


def test_rows_wider_than_max_cols_wrap_onto_further_lines():
    fig, axes = figures.canvas(ncols=3, nrows=2)
    assert axes.shape == (2, 3) and len(fig.spare_axes) == 2  # the empty places, kept blank
    assert not any(ax.axison for ax in fig.spare_axes)
    fig.canvas.draw()
    pos = {(r, j): axes[r, j].get_position() for r in range(2) for j in range(3)}
    assert pos[0, 2].x0 == pytest.approx(pos[0, 0].x0)  # panel 2 starts the next line
    assert pos[0, 2].y0 < pos[0, 0].y0 and pos[1, 0].y0 < pos[0, 2].y0  # row 1 comes below it
    fig5, axes5 = figures.canvas(ncols=10, max_cols=5)
    assert len({round(a.get_position().y0, 3) for a in axes5.flat}) == 2  # two lines of five
    plt.close(fig), plt.close(fig5)


def test_a_wider_figure_shows_its_text_smaller_and_a_narrow_one_is_not_enlarged():
    one = figures.smallest_text_px(_labelled(*figures.canvas()))
    wide_fig, wide_axes = plt.subplots(1, 4, figsize=(4 * figures.COLUMN_IN / 2, 3), squeeze=False)
    wide = figures.smallest_text_px(_labelled(wide_fig, wide_axes))
    assert 1.6 < one / wide < 2.4  # twice the column's width: text at about half its size
    narrow_fig, narrow_axes = plt.subplots(figsize=(2.5, 2), squeeze=False)
    narrow = figures.smallest_text_px(_labelled(narrow_fig, narrow_axes))
    assert narrow == pytest.approx(figures.TEXT_PT / 72 * figures.FIGURE_DPI)
    plt.close("all")


def test_the_run_record_names_the_smallest_figure_text(monkeypatch):
    monkeypatch.setattr(report, "LEGIBILITY", {"fig-a": 20.0, "fig-b": 6.5})
    line = report.legibility_line()
    assert "1 of 2 figures at least the caption's 16 px" in line and "`fig-b` 6.5 px" in line


def test_a_strict_build_refuses_figure_text_under_the_captions_size(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path))
    monkeypatch.setattr(site, "chapters", lambda: [tmp_path / "a1_localization.py"])
    monkeypatch.setattr(site, "is_executed", lambda path, profile: True)
    ledger.write_figure_text("a1_localization", "smoke", {"fig-a": 16.7, "fig-b": 8.3})
    with pytest.raises(BuildError, match=r"a1_localization: fig-b \(8.3 px\)"):
        site._check_figure_text("smoke")
    ledger.write_figure_text("a1_localization", "smoke", {"fig-a": 16.7})
    site._check_figure_text("smoke")  # every figure at the caption's size: nothing to refuse
    ledger.forget("a1_localization", "smoke")  # a chapter starting over drops its sizes too
    assert ledger.small_figure_text("smoke", ["a1_localization"], 100.0) == []


def test_a_title_wider_than_its_panel_is_wrapped_and_a_short_one_kept():
    fig, axes = figures.canvas(ncols=2)
    long = "a title far too long to fit above one of two panels of the column"
    axes[0, 0].set_title(long)
    axes[0, 1].set_title("short")
    figures.wrap_labels(fig)
    renderer = fig.canvas.get_renderer()
    assert "\n" in axes[0, 0].get_title() and axes[0, 0].get_title().replace("\n", " ") == long
    assert (
        axes[0, 0].title.get_window_extent(renderer).width
        <= axes[0, 0].get_window_extent(renderer).width
    )
    assert axes[0, 1].get_title() == "short"
    plt.close(fig)


def test_a_shared_legend_takes_the_empty_place_or_goes_under_the_panels():
    fig, axes = figures.canvas(ncols=3)
    for ax in axes.flat:
        ax.plot([0, 1], [0, 1], color="k", label="same line")
        ax.plot([0, 1], [1, 0], label=f"own line {id(ax)}")
        ax.legend()
    figures.shared_legend(fig)
    assert all(ax.get_legend() is None for ax in axes.flat)
    legend = fig.spare_axes[0].get_legend()
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels.count("same line") == 1 and len(labels) == 4  # each label once
    two, axes2 = figures.canvas(ncols=2)
    axes2[0, 0].plot([0, 1], label="a line")
    figures.shared_legend(two)
    assert two.legends and two.legends[0].get_texts()[0].get_text() == "a line"
    plt.close(fig), plt.close(two)


def test_an_axis_label_longer_than_its_panel_is_wrapped():
    fig, axes = figures.canvas(ncols=2)
    long = "fraction of the epoch budget at which the kept model stopped training"
    axes[0, 0].set_xlabel(long)
    figures.wrap_labels(fig)
    assert "\n" in axes[0, 0].get_xlabel()
    assert axes[0, 0].get_xlabel().replace("\n", " ") == long
    plt.close(fig)


def test_a_legend_under_the_panels_leaves_the_panels_their_height():
    fig, axes = figures.canvas(ncols=2, height=3.0)
    for i, ax in enumerate(axes.flat):
        for j in range(3):
            ax.plot([0, 1], [j, i], label=f"line {i}.{j}")
    figures.shared_legend(fig)
    assert fig.get_figheight() > 3.0  # grown by the legend's three lines
    plt.close(fig)


def test_a_legend_under_the_panels_fits_the_figure_in_as_few_rows_as_it_can():
    short, axes = figures.canvas(ncols=2)
    for i in range(3):
        axes[0, i % 2].plot([0, 1], [i, i], label=f"line {i}")
    figures.shared_legend(short)
    renderer = short.canvas.get_renderer()
    rows = {round(t.get_window_extent(renderer).y0) for t in short.legends[0].get_texts()}
    assert len(rows) == 1  # three short labels: one row
    wide, axes = figures.canvas(ncols=2)
    for i in range(5):
        axes[0, i % 2].plot([0, 1], [i, i], label=f"a label long enough to need a row {i}")
    figures.shared_legend(wide)
    renderer = wide.canvas.get_renderer()
    assert wide.legends[0].get_window_extent(renderer).width <= wide.bbox.width
    plt.close(short), plt.close(wide)


def test_no_book_figure_draws_a_legend_inside_its_panels():
    """Every legend of a figure function goes through shared_legend (under the panels or in an
    empty place), or is anchored outside its panel (bbox_to_anchor)."""
    import re
    from pathlib import Path

    import normbook

    root = Path(normbook.__file__).parent
    modules = [*(str(p.relative_to(root)) for p in sorted(root.glob("paper_a/*/figures.py"))),
               "paper_a/plots.py", "paper_b/plots.py",
               *(str(p.relative_to(root)) for p in sorted(root.glob("paper_b/*/figures.py"))),
               "book_pages/methods.py", "book_pages/ledger.py"]  # fmt: skip
    inside = [f"{m}: {call}" for m in modules
              for call in re.findall(r"\.legend\([^)]*\)", (root / m).read_text())
              if "bbox_to_anchor" not in call]  # fmt: skip
    assert not inside, inside
