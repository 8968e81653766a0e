"""The library's shape: one concern per module, none over 500 lines (a newcomer reads a module
whole before changing one experiment)."""

from pathlib import Path

import normbook

MAX_LINES = 500


def test_no_library_module_is_over_500_lines():
    root = Path(normbook.__file__).parent
    long = {
        str(p.relative_to(root)): n
        for p in root.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them by concern): {long}"
