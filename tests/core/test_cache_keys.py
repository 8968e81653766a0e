"""Cache keys cover computation only: editing a figure, a table or a sentence never changes an
experiment's key (so it never retrains), editing the code that computes does."""

import importlib
import inspect
import re

import pytest

from normbook.runtime import cache, code_keys

# Importing every chapter's library declares every cached step.
LIBRARIES = [
    "normbook.paper_a.cached.cache_keys",
    "normbook.paper_a.runs.localization",
    "normbook.paper_a.runs.batchstats",
    "normbook.paper_a.runs.stress",
    "normbook.paper_a.runs.packnorm",
    "normbook.paper_a.measures.detector_calibration",
    "normbook.paper_a.cached.unet",
    "normbook.paper_a.cached.grid2d",
    "normbook.paper_b.runs.classify",
    "normbook.paper_b.cached.analysis",
    "normbook.paper_b.cached.stress_analyses",
    "normbook.paper_b.cached.projections",
    "normbook.book_pages.methods",
]  # fmt: skip
PRESENTATION = [
    "normbook.paper_a.plots", "normbook.paper_a.run_tables", "normbook.paper_a.view_parts",
    "normbook.paper_a.a1_localization.figures", "normbook.paper_a.a1_localization.tables",
    "normbook.paper_a.a1_localization.views", "normbook.paper_a.a2_mechanism.figures",
    "normbook.paper_a.a2_mechanism.tables", "normbook.paper_a.a3_which_norms.figures",
    "normbook.paper_a.a3_which_norms.tables", "normbook.paper_a.a3_which_norms.views",
    "normbook.paper_a.a4_stress.figures", "normbook.paper_a.a4_stress.views",
    "normbook.paper_a.a4_stress.text", "normbook.paper_a.a5_reach.figures",
    "normbook.paper_a.a5_reach.text", "normbook.paper_a.a5_reach.views",
    "normbook.paper_a.calibration_page.figures", "normbook.paper_a.calibration_page.tables",
    "normbook.paper_a.methods_page.figures",
    "normbook.paper_b.plots", "normbook.paper_b.differences",
    "normbook.paper_b.b1_setup_accuracy.figures", "normbook.paper_b.b1_setup_accuracy.tables",
    "normbook.paper_b.b2_sparsity.figures", "normbook.paper_b.b2_sparsity.tables",
    "normbook.paper_b.b3_clusters.figures", "normbook.paper_b.b3_clusters.tables",
    "normbook.paper_b.b3_clusters.views", "normbook.paper_b.b4_stress.figures",
    "normbook.paper_b.b4_stress.tables", "normbook.paper_b.b4_stress.text",
    "normbook.paper_b.data.provenance", "normbook.pages.fmt",
    "normbook.pages.report", "normbook.book_pages.ledger", "normbook.book_pages.methods",
    "normbook.pages.views",
    "normbook.paper_a.recorded",
]  # fmt: skip
# What asks for results (setups from parameters, which networks, summaries of loaded entries)
# is not what computes them: editing it re-executes chapters from the cache.
ORCHESTRATION = [
    "normbook.paper_a.runs.localization",
    "normbook.paper_a.runs.batchstats",
    "normbook.paper_a.runs.stress",
    "normbook.paper_a.runs.packnorm",
    "normbook.paper_a.runs.which_norms",
    "normbook.paper_a.runs.reach",
    "normbook.paper_a.calibration_page.budget",
    "normbook.paper_a.runs.arch_runs",
    "normbook.paper_b.runs.classify",
    "normbook.paper_b.b4_stress.factorial",
]  # fmt: skip


@pytest.fixture(scope="module")
def steps():
    for name in LIBRARIES:
        importlib.import_module(name)
    # the Methods page declares its power step when it first runs
    cache.step("m_power", importlib.import_module("normbook.grading.claims"),
               importlib.import_module("normbook.grading.power"),
               importlib.import_module("normbook.runtime.seeding"))  # fmt: skip
    return dict(cache.STEPS)


def _hashes(steps):
    return {k: s.code_hash for k, s in steps.items()}


def _edited(monkeypatch, target, text: str = "\n_AN_EDIT = 1\n"):
    """Make the cache see ``target`` (a module or a function) with ``text`` added (by default
    a line of code: comments and docstrings are not what a key hashes)."""
    real = code_keys.source_of

    def fake(obj):
        src = real(obj)
        return src + text if obj is target else src

    monkeypatch.setattr(code_keys, "source_of", fake)


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
    ["normbook.paper_a.a4_stress.figures:unet_predictions",
     "normbook.paper_b.b3_clusters.figures:class_dbi",
     "normbook.paper_b.data.provenance:provenance_admonition",
     "normbook.paper_a.params:a1_reuse_note", "normbook.paper_b.b4_stress.text:setup_glue",
     "normbook.paper_b.b4_stress.claims:factorial_ledger",
     "normbook.paper_b.b1_setup_accuracy.claims:b1_ledger",
     "normbook.paper_a.a1_localization.claims:a1_ledger"],
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
        ("normbook.paper_a.cached.training", TRAINED_LIKE_A1),
        ("normbook.paper_a.cached.evaluation", {"a_eval", "a_batchstats", "a_intervene"}),
        ("normbook.paper_a.cached.interventions", {"a_intervene"}),
        ("normbook.paper_a.cached.packnet", {"a_pack_train", "a_pack_eval"}),
        (
            "normbook.paper_b.cached.training",
            {"b_train", "b_sparsity", "b_clusters", "b_threshold"},
        ),
        ("normbook.paper_a.cached.arch_common", {"a_unet_train", "a_grid2d_eval"}),
        ("normbook.paper_a.cached.unet", {"a_unet_train", "a_unet_eval"}),
        ("normbook.paper_a.cached.grid2d", {"a_grid2d_train", "a_grid2d_eval"}),
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
    from normbook.grading import stats

    s = cache.step("t_record", stats)
    s.cached({"a": 1}, lambda: cache.Entry({"x": __import__("numpy").zeros(1)}))
    used = {st.kind: (hits, new) for st, hits, new in cache.steps_used()}
    assert used["t_record"] == (0, 1) and s.code_names == ["grading.stats"]
    with pytest.raises(ValueError, match="declared twice"):
        cache.step("t_record", stats, cache)
