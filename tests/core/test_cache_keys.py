"""Cache keys cover computation only: editing a figure, a table or a sentence never changes an
experiment's key (so it never retrains), editing the code that computes does."""

import importlib
import inspect
import re

import pytest

from normbook.core import cache

# Importing every chapter's library declares every cached step.
LIBRARIES = [
    "normbook.paper_a.steps", "normbook.paper_a.localization", "normbook.paper_a.batchstats",
    "normbook.paper_a.stress", "normbook.paper_a.packnorm", "normbook.paper_a.calibration",
    "normbook.paper_a.unet", "normbook.paper_a.grid2d",
    "normbook.paper_b.classify", "normbook.paper_b.analysis", "normbook.paper_b.stress_analyses",
    "normbook.paper_b.projections", "normbook.methods",
]  # fmt: skip
PRESENTATION = [
    "normbook.paper_a.figures", "normbook.paper_a.stress_figures", "normbook.paper_a.tables",
    "normbook.paper_a.diagrams", "normbook.paper_b.figures", "normbook.paper_b.tables",
    "normbook.paper_b.provenance", "normbook.paper_b.stress_text", "normbook.core.fmt",
    "normbook.core.report", "normbook.claims_ledger", "normbook.methods",
    "normbook.core.views", "normbook.paper_a.views", "normbook.paper_b.views",
    "normbook.paper_a.recorded",
]  # fmt: skip
# What asks for results (setups from parameters, which networks, summaries of loaded entries)
# is not what computes them: editing it re-executes chapters from the cache.
ORCHESTRATION = [
    "normbook.paper_a.localization", "normbook.paper_a.batchstats", "normbook.paper_a.stress",
    "normbook.paper_a.packnorm", "normbook.paper_a.which_norms", "normbook.paper_a.reach",
    "normbook.paper_a.budget", "normbook.paper_a.arch_runs",
    "normbook.paper_b.classify", "normbook.paper_b.factorial",
]  # fmt: skip


@pytest.fixture(scope="module")
def steps():
    for name in LIBRARIES:
        importlib.import_module(name)
    # the Methods page declares its power step when it first runs
    cache.step("m_power", importlib.import_module("normbook.core.claims"),
               importlib.import_module("normbook.core.seeding"))  # fmt: skip
    return dict(cache.STEPS)


def _hashes(steps):
    return {k: s.code_hash for k, s in steps.items()}


def _edited(monkeypatch, target, text: str = "\n# an edit\n"):
    """Make ``inspect.getsource`` see ``target`` (a module or a function) with ``text`` added."""
    real = inspect.getsource

    def fake(obj):
        src = real(obj)
        return src + text if obj is target else src

    monkeypatch.setattr(cache.inspect, "getsource", fake)


def test_every_chapter_step_is_declared(steps):
    for kind in ("a_train", "a_eval", "a_batchstats", "a_intervene", "a_pack_train",
                 "a_pack_eval", "a_unet_train", "a_grid2d_train", "b_train", "b_sparsity",
                 "b_clusters", "b_threshold", "b_silhouette", "b_projection"):  # fmt: skip
        assert kind in steps, kind


@pytest.mark.parametrize("name", PRESENTATION + ORCHESTRATION)
def test_editing_presentation_or_orchestration_changes_no_key(steps, monkeypatch, name):
    before = _hashes(steps)
    _edited(monkeypatch, importlib.import_module(name))
    assert _hashes(steps) == before


@pytest.mark.parametrize(
    "function",
    ["normbook.paper_a.stress_figures:unet_predictions", "normbook.paper_b.figures:class_dbi",
     "normbook.paper_b.provenance:provenance_admonition", "normbook.paper_a.specs:a1_reuse_note",
     "normbook.paper_b.stress_text:setup_glue", "normbook.paper_b.stress_verdicts:factorial_ledger",
     "normbook.paper_b.verdicts:b1_ledger", "normbook.paper_a.verdicts:a1_ledger"],
)  # fmt: skip
def test_editing_a_figure_prose_or_verdict_function_changes_no_key(steps, monkeypatch, function):
    module, name = function.split(":")
    fn = getattr(importlib.import_module(module), name)
    mod = importlib.import_module(fn.__module__)
    before = _hashes(steps)
    # the edit changes the function and so the source of the module that holds it
    _edited(monkeypatch, mod)
    assert _hashes(steps) == before


# paper A's training, and the PackNorm, U-Net and 2-D CNN entries that keep their states as its do
TRAINED_LIKE_A1 = {"a_train", "a_eval", "a_batchstats", "a_intervene", "a_pack_train",
                   "a_unet_train", "a_grid2d_train"}  # fmt: skip


@pytest.mark.parametrize(
    "module, kinds",
    [
        ("normbook.paper_a.training", TRAINED_LIKE_A1),
        ("normbook.paper_a.evaluation", {"a_eval", "a_batchstats", "a_intervene"}),
        ("normbook.paper_a.interventions", {"a_intervene"}),
        ("normbook.paper_a.packnet", {"a_pack_train", "a_pack_eval"}),
        ("normbook.paper_b.training", {"b_train", "b_sparsity", "b_clusters", "b_threshold"}),
        ("normbook.paper_a.arch_common", {"a_unet_train", "a_grid2d_eval"}),
        ("normbook.paper_a.unet", {"a_unet_train", "a_unet_eval"}),
        ("normbook.paper_a.grid2d", {"a_grid2d_train", "a_grid2d_eval"}),
    ],
)
def test_editing_training_changes_its_keys(steps, monkeypatch, module, kinds):
    before = _hashes(steps)
    _edited(monkeypatch, importlib.import_module(module))
    after = _hashes(steps)
    assert all(after[k] != before[k] for k in kinds)
    assert after["a_calibration"] == before["a_calibration"]  # unrelated steps keep theirs
    if module.endswith(("evaluation", "interventions")):
        assert after["a_train"] == before["a_train"]  # evaluating differently never retrains


def test_keyed_code_holds_no_presentation(steps):
    """No keyed module draws, formats prose or renders pages (those edits would retrain)."""
    forbidden = re.compile(
        r"matplotlib|\bplt\.|canvas\(|core\.figures|report\.(md|glue)|admonition|altair|"
        r"core\.views|"
        r"from \.\.core\.fmt|from \.(figures|tables|provenance) "
    )
    for kind, s in steps.items():
        for code in s.code:
            src = inspect.getsource(code)
            assert not forbidden.search(src), f"{kind} is keyed by {cache.code_name(code)}"


def test_run_record_lists_the_steps_a_chapter_used(steps):
    from normbook.core import stats

    s = cache.step("t_record", stats)
    s.cached({"a": 1}, lambda: cache.Entry({"x": __import__("numpy").zeros(1)}))
    used = {st.kind: (hits, new) for st, hits, new in cache.steps_used()}
    assert used["t_record"] == (0, 1) and s.code_names == ["core.stats"]
    with pytest.raises(ValueError, match="declared twice"):
        cache.step("t_record", stats, cache)
