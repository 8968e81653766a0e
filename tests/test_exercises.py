"""The exercises' registry against the chapters' text, the cost and outcome sentences their
pages show, and ``make exercises``' guard against training."""

import json
import re
import sys

import pytest

from normbook.publish import costs, exercises, project
from normbook.tools import exercise_runs

BLOCK = re.compile(r"^# :::\{(exercise|solution)\}(.*?)^# :::$", re.M | re.S)


def _plain(block: str) -> str:
    """A Markdown cell's text without the ``# `` prefixes, on one line."""
    return " ".join(line.removeprefix("#").strip() for line in block.splitlines())


def _blocks() -> dict[str, dict[str, str]]:
    """{label: {"exercise": text, "solution": text, "chapter": stem}} from book/*.py."""
    found: dict[str, dict[str, str]] = {}
    for path in sorted(project.BOOK.glob("*.py")):
        for m in BLOCK.finditer(path.read_text()):
            kind, body = m.group(1), m.group(2)
            if kind == "exercise":
                label = re.search(r"^# :label: (\S+)", body, re.M).group(1)
            else:
                label = body.split("\n", 1)[0].strip()
            found.setdefault(label, {"chapter": path.stem})[kind] = body
    return found


def test_the_registry_has_every_exercise_of_the_book_and_its_text_uses_its_sentences():
    blocks = _blocks()
    assert len(blocks) == len(exercises.EXERCISES) == 27
    assert set(blocks) == set(exercises.BY_LABEL)
    for label, b in blocks.items():
        ex = exercises.BY_LABEL[label]
        assert ex.chapter == b["chapter"], label
        assert f"**Cost at `cpu`:** {{{{ cost_{ex.key} }}}}." in b["exercise"], label
        last = b["solution"].rstrip().splitlines()[-1]
        assert last == f"# **Outcome at `cpu`:** {{{{ outcome_{ex.key} }}}}", label


def test_each_runnable_exercise_runs_the_parameters_its_text_names():
    blocks = _blocks()
    for ex in exercises.EXERCISES:
        if not ex.runnable:
            assert (ex.edit or ex.live) and not ex.overrides
            continue
        spec = project.spec_for(ex.path)
        values = ex.values()
        checked = {k: spec.param(k).check(v) for k, v in values.items()}
        spec.resolve(ex.profile, **checked)  # valid together (the cross-checks)
        text = _plain(blocks[ex.label]["exercise"])
        if f"{{{{ command_{ex.key} }}}}" in text:
            continue
        for k, v in values.items():
            assert f"-p {k} {v}" in text, (ex.label, k, v)


def test_twice_the_steps_is_twice_the_profiles_steps():
    ex = exercises.BY_LABEL["a1-ex-steps"]
    params = project.spec_for(ex.path).resolve("cpu")
    assert ex.values() == {"steps": str(2 * params.steps)}
    assert f"-p steps {2 * params.steps}'" in ex.command()


def test_every_substitution_a_page_uses_is_defined(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / "_build"))  # nothing measured
    subs = costs.substitutions("smoke")
    used = set()
    for path in project.BOOK.glob("*.py"):
        used |= set(re.findall(r"\{\{\s*(\w+)\s*\}\}", path.read_text()))
    assert used and not used - set(subs)
    assert all("{{" not in v and "$" not in v for v in subs.values())


def _timings(tmp_path):
    run = {"cpu": "AMD EPYC (cpu family 25, model 1)", "cores": 2, "measured": "2026-12-06"}
    data = {
        "a1_localization": {"cold": {**run, "seconds": 327, "computed": 40, "loaded": 0},
                            "cached": {**run, "seconds": 11, "computed": 0, "loaded": 40}},
        "b2_sparsity": {"cached": {**run, "seconds": 24, "computed": 0, "loaded": 9}},
        **{ch: {"cold": {**run, "seconds": 400, "computed": 9, "loaded": 0}}
           for ch in exercises.PAPER_A if ch != "a1_localization"},
    }  # fmt: skip
    (tmp_path / "_build" / "cpu").mkdir(parents=True)
    (tmp_path / "_build" / "cpu" / "timings.json").write_text(
        json.dumps({"format": 2, "chapters": data})
    )


def _claim(section, verdict, effect, claim="a claim"):
    return {"section": section, "claim": claim, "verdict": verdict, "effect": effect,
            "low": effect - 0.01, "high": effect + 0.01, "unit": ".3f"}  # fmt: skip


def _outcome(ex, **fields):
    folder = exercises.exercise_dir(ex)
    folder.mkdir(parents=True)
    record = {"label": ex.label, "status": "done", "seconds": 41.3, "cpu": "AMD EPYC",
              "cores": 2, "measured": "2026-12-06 10:00:00", "cache": {"loaded": 30,
              "computed": 2}, "new_entries": {"b_sparsity": 2}, **fields}  # fmt: skip
    (folder / "outcome.json").write_text(json.dumps(record))


def test_costs_and_outcomes_from_measured_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / "_build"))
    _timings(tmp_path)
    default = [
        _claim("v", "reproduced", 0.2, "interior"),
        _claim("v", "refuted", 0.008, "hop"),
        _claim("v", "refuted", 0.1, "at batch 128"),
        _claim("v", "refuted", 0.1, "same"),
    ]
    _outcome(exercises.BY_LABEL["b2-ex-threshold"],
             claims=[_claim("v", "reproduced", 0.21, "interior"),
                     _claim("v", "not shown", 0.03, "hop"), _claim("v", "refuted", 0.1, "same"),
                     _claim("v", "refuted", 0.2, "at batch 32")], default=default)  # fmt: skip
    subs = costs.substitutions("cpu")
    # trains: the chapter's cold run, scaled; trains nothing: its run from the cache
    assert subs["cost_a1_ex_steps"].startswith("it retrains both of the chapter's networks")
    assert (
        "an estimated 11 min at `cpu` (twice the chapter's measured cold run, 5 min 27 s"
        in subs["cost_a1_ex_steps"]
    )
    # a cold run that also loaded entries (networks another chapter trained first): a lower bound
    shared = {"a1_localization": {"cold": {"seconds": 56.0, "computed": 10, "loaded": 68}}}
    text = exercises.planned_cost(exercises.BY_LABEL["a1-ex-steps"], shared)
    assert "more than an estimated 1 min 52 s" in text and "also loaded 68 cache entries" in text
    assert subs["cost_a1_ex_detector"].startswith("it retrains nothing")
    assert "about 11 s at `cpu`" in subs["cost_a1_ex_detector"]
    assert "chapter B4's learning-rate factorial trains exactly" in subs["cost_b1_ex_lr"]
    # the paper-A edit: the sum of paper A's cold runs
    assert "retrains all of paper A" in subs["cost_a3_ex_implement"]
    assert "about 39 min of chapter time" in subs["cost_a3_ex_implement"]
    assert "cannot run this exercise" in subs["outcome_a3_ex_implement"]
    # not run yet: the command that runs it, and what the chapter's run took
    assert subs["outcome_a1_ex_detector"] == (
        "Not run on this machine yet: `make exercises EXERCISES=a1-ex-detector` runs it (the "
        "chapter's run from the cache took 11 s)."
    )
    assert "not measured" in subs["cost_a2_ex_hop"]
    # run: its time, what it computed, the claims that changed against the default build
    out = subs["outcome_b2_ex_threshold"]
    assert out.startswith("Run on this machine in 41 s (2026-12-06, AMD EPYC, 2 cores)")
    assert "it retrained nothing, loading 30 cache entries and computing 2 of evaluations" in out
    assert "1 of 4 claims changed verdict: *hop*: refuted → not shown, effect 0.008 [-0.002, " \
           "0.018] → 0.030 [0.020, 0.040]" in out  # fmt: skip
    assert "*interior* stays reproduced, effect 0.200" in out
    assert "1 kept its effect unchanged" in out  # "same"
    assert "*at batch 32* (in place of the default's *at batch 128*) stays refuted, effect " \
           "0.100 [0.090, 0.110] → 0.200" in out  # fmt: skip
    # the default build's record now, when there is one, rather than the one recorded
    ledger = tmp_path / "_build" / "cpu" / "ledger"
    ledger.mkdir(parents=True)
    (ledger / "b2_sparsity.json").write_text(json.dumps({"claims": default[:1]}))
    out = exercises.substitutions()["outcome_b2_ex_threshold"]
    assert "no claim changed verdict (1 compared)" in out
    assert "measured for this exercise: 41 s" in subs["cost_b2_ex_threshold"]


def test_an_outcome_names_what_was_trained_and_a_stopped_run(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / "_build"))
    _outcome(exercises.BY_LABEL["a1-ex-layer"], new_entries={"a_train": 5, "a_eval": 10},
             claims=[_claim("v", "refuted", 0.0)], default=None)  # fmt: skip
    _outcome(exercises.BY_LABEL["a1-ex-kernel"], status="stopped", stopped_at=["a_train/x"])
    subs = exercises.substitutions()
    assert "it trained networks anew, 5 trained entries" in subs["outcome_a1_ex_layer"]
    assert "Its claims: 1 refuted (no default `cpu` build's record" in subs["outcome_a1_ex_layer"]
    assert subs["outcome_a1_ex_kernel"].startswith("Not run: it started training")


def test_the_guard_stops_an_exercise_that_starts_training(tmp_path, monkeypatch):
    """``--no-training``: the first training lock stops the run before it writes an entry.
    The stand-in run takes its lock and then never finishes on its own (its sleep only bounds
    a failing test), so only the guard can end it."""
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / "_build"))
    cache_root = tmp_path / "cache"
    locks, end = repr(str(cache_root / ".locks" / "a_train")), tmp_path / "end"
    script = (f"import pathlib, time; d = pathlib.Path({locks}); d.mkdir(parents=True); "
              f"(d / 'k.lock').touch(); time.sleep(600); "
              f"pathlib.Path({str(end)!r}).touch()")  # fmt: skip
    monkeypatch.setattr(exercise_runs, "execute_command",
                        lambda *a, **k: [sys.executable, "-c", script])  # fmt: skip
    ex = exercises.BY_LABEL["a1-ex-layer"]
    record = exercise_runs.run_exercise(ex, no_training=True, say=lambda s: None)
    assert record["status"] == "stopped" and record["stopped_at"] == ["a_train/k.lock"]
    assert not end.exists()  # stopped by the guard, not ended by itself
    assert exercises.read_outcome(ex)["status"] == "stopped"


def test_exercises_that_need_an_edit_are_never_selected():
    assert all(ex.runnable for ex in exercise_runs.selected(None))
    with pytest.raises(SystemExit, match="need an edit"):
        exercise_runs.selected("a3-ex-implement")
    with pytest.raises(SystemExit, match="done in a chapter's live view"):
        exercise_runs.selected("a1-ex-nudge")
    with pytest.raises(SystemExit, match="unknown exercise"):
        exercise_runs.selected("a1-ex-nope")


def test_a_live_exercise_costs_nothing_and_names_its_view():
    ex = exercises.BY_LABEL["a2-ex-frozen"]
    assert not ex.runnable
    assert exercises.planned_cost(ex, {}).startswith("none: it is done in the live view above")
    assert "checked its numbers against PyTorch" in exercises.outcome(ex, None, {})
