"""The Methods page's figure of paper A: the localization tests' operating characteristic
(:mod:`normbook.paper_a.measures.detector_calibration` measures it)."""

from __future__ import annotations

from normbook.pages.figures import canvas, shared_legend

TEST_NAMES = {
    "span": "span test (primary)",
    "neighbour": "neighbour test (before)",
    "definition": "Definition 2.3 (reference)",
}


def operating_characteristic(oc, alpha: float):
    """Detection rate per index against the per-index step (in standard errors), one panel per
    noise correlation length, one line per localization test; dotted, the level alpha."""
    corr_lens = sorted(oc.corr_len.unique())
    fig, axes = canvas(len(corr_lens), height=3.0, sharey=True)
    for ax, corr_len in zip(axes[0], corr_lens):
        for test, name in TEST_NAMES.items():
            g = oc[(oc.test == test) & (oc.corr_len == corr_len)].sort_values("step")
            ax.plot(g.step, g.rate, marker="o", ms=3, label=name)
        ax.axhline(alpha, color="k", ls=":", lw=1, label=f"α = {alpha:g}")
        ax.set_yscale("log")
        ax.set_ylim(1e-4, 1.05)
        ax.set_title(f"noise correlated over {corr_len} indices")
        ax.set_xlabel("step per index (standard errors)")
    axes[0, 0].set_ylabel("fraction of indices localized")
    shared_legend(fig)
    return fig
