"""Parameter specs of the Part B chapters (registered in normbook.specs.SPECS)."""
from __future__ import annotations

B_SPECS: dict = {}
