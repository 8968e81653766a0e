"""The Methods page's generated tables list what the code really has."""

from normbook.book_pages import methods
from normbook.paper_a.grading import nulls, rules
from normbook.paper_b.b1_setup_accuracy import claims as b1_claims
from normbook.publish.chapters import SPECS


def test_rules_table_lists_every_rule_and_no_ledger():
    text = methods.rules_table(rules, nulls, b1_claims)
    for name in ("localizes_verdict", "learned", "side_channel", "at_chance"):
        assert f"paper_a.grading.rules.{name}`" in text, name
    for name in ("beyond_nulls", "alive", "null_learned", "reach_test"):
        assert f"paper_a.grading.nulls.{name}`" in text, name
    assert "paper_a.grading.rules.null_learned`" not in text  # imported there, listed once
    assert "paper_b.b1_setup_accuracy.claims.table1`" in text
    assert "_ledger" not in text and "Verdict`" not in text  # imported names are not rules
    assert text.count("\n") + 1 == 2 + text.count("| `paper_")


def test_reconstruction_table_has_every_reconstructed_knob_once():
    specs = [s for name, s in SPECS.items() if name != "methods"]
    text = methods.reconstruction_table(specs)
    knobs = {p.name for s in specs for p in s.reconstructed()}
    assert knobs and all(text.count(f"| `{k}` |") == 1 for k in knobs)
    assert "| `seeds` |" not in text  # not a reconstruction


def test_profile_table_shows_the_profiles_values():
    text = methods.profile_table([SPECS["a1_localization"]], {"a1_localization": ["seq_len"]})
    a1 = SPECS["a1_localization"].profiles
    assert (
        f"| {a1['smoke']['seq_len']} | {a1['cpu']['seq_len']} | {a1['paper']['seq_len']} |" in text
    )
