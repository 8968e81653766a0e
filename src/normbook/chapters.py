"""Which spec belongs to which chapter (the build looks chapters up here by file name)."""

from __future__ import annotations

from .claims_ledger import LEDGER
from .findings import INTRO
from .methods import METHODS
from .paper_a.specs import A_SPECS
from .paper_a.specs_stress import STRESS_SPECS
from .paper_b.specs_stress import B_SPECS

SPECS = {
    **A_SPECS,
    **STRESS_SPECS,
    **B_SPECS,
    METHODS.chapter: METHODS,
    LEDGER.chapter: LEDGER,
    INTRO.chapter: INTRO,
}
