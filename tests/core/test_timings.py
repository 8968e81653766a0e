"""timings.json: a chapter's last cold and last cached run, told apart by its ledger record's
cache counts; the old format read; the cost sentences and the site configuration built on it."""

import json
import os

import pytest
import yaml

from normbook.grading import ledger
from normbook.publish import costs, project, timings


@pytest.fixture
def build(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / "_build"))
    return tmp_path / "_build"


def _record(chapter: str, computed: int, loaded: int = 3, age: float = 0.0) -> None:
    """A ledger record as a chapter's run writes it (``age`` seconds old)."""
    folder = ledger.ledger_dir("cpu")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{chapter}.json"
    path.write_text(json.dumps({"chapter": chapter, "cache": {"loaded": loaded,
                                                              "computed": computed}}))  # fmt: skip
    if age:
        t = path.stat().st_mtime - age
        os.utime(path, (t, t))


def test_a_run_that_computed_entries_is_the_cold_one_and_a_cached_run_keeps_it(build):
    _record("a1_localization", computed=12)
    assert timings.record_timing("cpu", "a1_localization", 352.04) == "cold"
    _record("a1_localization", computed=0, loaded=15)
    assert timings.record_timing("cpu", "a1_localization", 11.0) == "cached"
    assert timings.record_timing("cpu", "a1_localization", None) is None  # up to date
    runs = timings.load_timings("cpu")["a1_localization"]
    assert runs["cold"]["seconds"] == 352.0 and runs["cold"]["computed"] == 12
    assert runs["cached"]["seconds"] == 11.0 and runs["cached"]["loaded"] == 15
    assert json.loads((build / "cpu" / "timings.json").read_text())["format"] == timings.FORMAT
    table = timings.timings_table("cpu", ["a1_localization", "ledger"])
    assert "cold 352.0 s" in table and "cached 11.0 s" in table and "never measured" in table


def test_a_page_without_a_record_of_its_own_run_counts_as_cached(build):
    assert timings.record_timing("cpu", "ledger", 5.2) == "cached"  # no record at all
    _record("a2_mechanism", computed=4, age=3600)  # an older run's record: not this run's
    assert timings.record_timing("cpu", "a2_mechanism", 9.0) == "cached"


def test_an_old_timings_file_is_read_as_runs_of_unknown_kind(build):
    (build / "cpu").mkdir(parents=True)
    old = {"b4_stress": {"seconds": 2432.1, "cpu": "AMD EPYC", "cores": 2,
                         "measured": "2026-12-05 02:58:14"}, "junk": 3}  # fmt: skip
    (build / "cpu" / "timings.json").write_text(json.dumps(old))
    assert timings.load_timings("cpu") == {"b4_stress": {"unknown": old["b4_stress"]}}
    assert "cold or cached 2432.1 s" in timings.timings_table("cpu", ["b4_stress"])
    assert "whether that run trained" in costs.chapter_cost(timings.load_timings("cpu")[
        "b4_stress"], "cpu")  # fmt: skip
    _record("b4_stress", computed=0)
    timings.record_timing("cpu", "b4_stress", 40.0)
    assert set(timings.load_timings("cpu")["b4_stress"]) == {"unknown", "cached"}
    _record("b4_stress", computed=30)
    timings.record_timing("cpu", "b4_stress", 900.0)  # cold and cached known: unknown dropped
    assert set(timings.load_timings("cpu")["b4_stress"]) == {"cold", "cached"}


def _run(seconds, computed=0):
    cpu = "AMD EPYC (cpu family 25, model 1)"
    return {"seconds": seconds, "computed": computed, "loaded": 5, "cpu": cpu, "cores": 2,
            "measured": "2026-12-06"}  # fmt: skip


def test_a_chapters_cost_sentence_states_both_runs_or_says_it_is_not_measured():
    both = costs.chapter_cost({"cold": _run(327.4, 40), "cached": _run(11.6)}, "cpu")
    assert both.startswith("about 5 min 27 s cold (40 cache entries computed")
    assert "12 s from the cache" in both and "AMD EPYC (cpu family 25, model 1), 2 cores" in both
    assert "not measured" in costs.chapter_cost({"cached": _run(11.6)}, "cpu")
    assert costs.chapter_cost(None, "smoke").startswith("not measured on this machine yet")
    assert [costs.duration(s) for s in (0.2, 59.4, 327, 2461, 4320)] == [
        "1 s", "59 s", "5 min 27 s", "41 min", "1 h 12 min"]  # fmt: skip


def test_the_site_configuration_carries_every_chapters_cost(build):
    (build / "cpu").mkdir(parents=True)
    data = {"format": 2, "chapters": {"a1_localization": {"cold": _run(327, 40)}}}
    (build / "cpu" / "timings.json").write_text(json.dumps(data))
    config = yaml.safe_load(costs.site_config("cpu"))
    source = yaml.safe_load((project.ROOT / "_config.yml").read_text())
    assert config["parse"]["myst_enable_extensions"] == source["parse"]["myst_enable_extensions"]
    assert "substitution" in config["parse"]["myst_enable_extensions"]
    subs = config["parse"]["myst_substitutions"]
    assert subs["cost_a1_localization"].startswith("about 5 min 27 s cold")
    assert {f"cost_{c.stem}" for c in project.chapters()} <= set(subs)
    assert config["sphinx"] == source["sphinx"]


def test_a_runs_cpu_seconds_are_kept_summed_for_the_build_and_shown(build):
    """CPU seconds, where measured, go with the run, into the build's sum (only when every
    chapter's run has them) and into the printed table."""
    _record("a1_localization", computed=12)
    timings.record_timing("cpu", "a1_localization", 100.0, cpu_s=180.44)
    _record("a2_mechanism", computed=0)
    timings.record_timing("cpu", "a2_mechanism", 10.0, cpu_s=9.5)
    kinds = {"a1_localization": "cold", "a2_mechanism": "cached"}
    assert timings.record_build("cpu", 105.0, kinds, jobs=2) == "cold"
    book = timings.load_builds("cpu")["cold"]
    assert book["cpu_s"] == pytest.approx(189.9) and book["computed"] == 12
    assert "180 CPU s" in timings.timings_table("cpu", ["a1_localization"])
    _record("a3_which_norms", computed=4)
    timings.record_timing("cpu", "a3_which_norms", 50.0)  # not measured: no sum
    kinds["a3_which_norms"] = "cold"
    timings.record_build("cpu", 160.0, kinds, jobs=2)
    assert "cpu_s" not in timings.load_builds("cpu")["cold"]


def test_a_chapters_cpu_seconds_include_the_processes_it_started():
    """run_child's CPU seconds are those of the chapter's whole tree: a child that waits for a
    grandchild reports at least what the grandchild measured of itself (the same work
    counted twice, never a race with the clock)."""
    import sys

    from normbook.publish.chapter_jobs import run_child

    grandchild = (
        "import resource; s = sum(i * i for i in range(300_000)); "
        "u = resource.getrusage(resource.RUSAGE_SELF); print(u.ru_utime + u.ru_stime)"
    )
    child = (
        f"import subprocess, sys; print(subprocess.run([sys.executable, '-c', {grandchild!r}],"
        " capture_output=True, text=True, check=True).stdout.strip())"
    )
    lines = []
    run = run_child([sys.executable, "-c", child], "t", say=lines.append)
    assert run.returncode == 0 and run.cpu_s >= float(lines[-1].split()[-1]) > 0
