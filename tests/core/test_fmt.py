"""A number that cannot be computed is shown as an en dash with a reason, never "nan" or "n/a"."""

import math

import numpy as np

from normbook.grading.claims import ClaimTest
from normbook.pages import fmt

NAN = math.nan


def _no_missing_words(text: str) -> bool:
    return "nan" not in text.split() and "n/a" not in text


def test_a_missing_number_is_a_dash():
    assert fmt.num(NAN, ".3f") == fmt.num(None, ".3f") == "–"
    assert fmt.num(np.float32("nan"), ".2f") == "–" and fmt.num(0.5, ".2f") == "0.50"
    assert fmt.join([0.1, NAN, 0.3], ".1f") == "0.1, –, 0.3" and fmt.join(["a", 2]) == "a, 2"


def test_an_interval_that_cannot_be_computed_says_why():
    assert fmt.bracket(0.103, 0.061, 0.146) == "0.103 [0.061, 0.146]"
    assert fmt.bracket(0.095, NAN, NAN, why="one seed: no interval") == (
        "0.095 [–, –] (one seed: no interval)"
    )
    assert fmt.bracket(NAN, NAN, NAN, why="no estimate") == "– (no estimate)"
    one = ClaimTest(0.095, NAN, NAN, NAN, NAN, 1, "gain", "flat")
    assert fmt.interval(one) == "0.095 [–, –] (one seed: no interval)"
    none = ClaimTest(NAN, NAN, NAN, NAN, NAN, 0, "no state kept by half the budget", "")
    assert fmt.interval(none) == "– (no state kept by half the budget)"
    two = ClaimTest(0.2, 0.1, 0.3, NAN, NAN, 2, "gain", "flat")
    assert fmt.interval(two) == "0.200 [0.100, 0.300]"


def test_mean_sd_of_one_seed_or_none():
    assert fmt.mean_sd([1.0, 2.0]) == "1.500 ± 0.707"
    assert fmt.mean_sd([1.0]) == "1.000 ± – (one seed)"
    assert fmt.mean_sd([NAN, 1.0], why="a dead network") == "– (a dead network)"
    assert fmt.mean_sd([]) == "–"


def test_a_table_with_a_dash_has_a_footnote_that_says_why():
    rows = [{"norm": "none", "R²": NAN, "range": "0.50–0.62"}, {"norm": "x", "R²": 0.5,
                                                                  "range": "1"}]  # fmt: skip
    text = fmt.table(rows, missing={"R²": "constant predictions have no R²"})
    assert text.splitlines()[2] == "| none | – | 0.50–0.62 |" and _no_missing_words(text)
    assert text.endswith("\n\n– in R²: constant predictions have no R²")
    # no dash shown, no footnote; a range's dash is not a missing number
    assert "\n\n" not in fmt.table(rows[1:], missing={"R²": "x", "range": "y"})
    assert fmt.table(rows, missing="one reason").endswith("\n\n–: one reason")


def test_from_cache_counts_per_run():
    assert fmt.from_cache({"none": [True, True], "instance": [True, False]}) == (
        "3 of 4 (none: 2 of 2; instance: 1 of 2)"
    )
    assert fmt.from_cache({"none": True, "instance, circular padding": False}) == (
        "1 of 2 (none: yes; instance, circular padding: no)"
    )
