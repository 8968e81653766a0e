"""Which spec belongs to which chapter (the build looks chapters up here by file name)."""

from __future__ import annotations

from normbook.book_pages.intro import INTRO
from normbook.book_pages.ledger import LEDGER
from normbook.book_pages.methods import METHODS
from normbook.paper_a.specs import A_SPECS
from normbook.paper_a.specs_stress import STRESS_SPECS
from normbook.paper_b.specs_stress import B_SPECS

SPECS = {
    **A_SPECS,
    **STRESS_SPECS,
    **B_SPECS,
    METHODS.chapter: METHODS,
    LEDGER.chapter: LEDGER,
    INTRO.chapter: INTRO,
}
