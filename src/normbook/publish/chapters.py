"""Which spec belongs to which chapter (the build looks chapters up here by file name)."""

from __future__ import annotations

from normbook.book_pages.intro import INTRO
from normbook.book_pages.ledger import LEDGER
from normbook.book_pages.methods import METHODS
from normbook.paper_a.a1_localization.spec import A1
from normbook.paper_a.a2_mechanism.spec import A2
from normbook.paper_a.a3_which_norms.spec import A3
from normbook.paper_a.a4_stress.spec import A4
from normbook.paper_a.a5_reach.spec import A5
from normbook.paper_a.calibration_page.spec import BUDGET
from normbook.paper_b.b1_setup_accuracy.spec import B1
from normbook.paper_b.b2_sparsity.spec import B2
from normbook.paper_b.b3_clusters.spec import B3
from normbook.paper_b.b4_stress.spec import B4

SPECS = {
    **{spec.chapter: spec for spec in (A1, A2, A3, BUDGET, A4, A5)},
    **{spec.chapter: spec for spec in (B1, B2, B3, B4)},
    METHODS.chapter: METHODS,
    LEDGER.chapter: LEDGER,
    INTRO.chapter: INTRO,
}
