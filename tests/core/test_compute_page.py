"""The Build and compute page: generated at render from the measured records (timings.json,
benchmark.json, results/paper), its numbers only from them, what is missing said; and the whole
book's execution kept in timings.json beside the chapters'."""

import json

import numpy as np
import pytest
import yaml

from normbook.book_pages import reference
from normbook.publish import compute_page, project, site, timings
from normbook.runtime import records

CPU = "AMD EPYC (cpu family 25, model 1)"
PAGES = ["intro", "a1_localization", "b1_setup_accuracy", "ledger"]


def _run(seconds, computed=0, measured="2026-12-05 05:19:17"):
    return {"seconds": seconds, "computed": computed, "loaded": 2, "cpu": CPU, "cores": 2,
            "measured": measured}  # fmt: skip


@pytest.fixture
def book(tmp_path, monkeypatch):
    """A project of four pages (no notebook executed) with its own build folder."""
    (tmp_path / "book").mkdir()
    for stem in PAGES:
        (tmp_path / "book" / f"{stem}.py").write_text("# %%\n")
    toc = {"format": "jb-book", "root": "book/intro",
           "parts": [{"caption": "All", "chapters": [{"file": f"book/{s}"} for s in PAGES[1:]]
                      + [{"file": compute_page.PAGE}]}]}  # fmt: skip
    (tmp_path / "_toc.yml").write_text(yaml.safe_dump(toc))
    monkeypatch.setattr(project, "ROOT", tmp_path)
    monkeypatch.setattr(project, "BOOK", tmp_path / "book")
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / "_build"))
    monkeypatch.setattr(reference, "RESULTS", tmp_path / "results")
    (tmp_path / "_build" / "cpu" / "ledger").mkdir(parents=True)
    return tmp_path


def _plant_timings(book, chapters, builds=None):
    data = {"format": 2, "chapters": chapters, **({"builds": builds} if builds else {})}
    (book / "_build" / "cpu" / "timings.json").write_text(json.dumps(data))


def test_the_page_lists_each_pages_times_and_says_what_is_missing(book):
    (book / "_build" / "cpu" / "ledger" / "b1_setup_accuracy.json").write_text("{}")
    _plant_timings(book, {
        "a1_localization": {"cold": _run(1140.6, 226), "cached": _run(12.2)},
        "b1_setup_accuracy": {"cached": _run(11.3)},  # writes a record: its cold run is missing
        "ledger": {"cached": _run(6.0)},  # writes none: it reads the others' records
    })  # fmt: skip
    text = compute_page.page("cpu")
    assert text.startswith("(build-and-compute)=\n# Build and compute\n")
    a1 = next(ln for ln in text.splitlines() if ln.startswith("| `a1_localization`"))
    assert "1,141 s (19 min), 226 cache entries computed (2026-12-05)" in a1
    assert "CPU s" not in a1  # not measured: nothing claimed
    assert "12.2 s (2026-12-05)" in a1 and f"{CPU}, 2 cores" in a1
    assert compute_page.READER in next(ln for ln in text.splitlines() if "`ledger`" in ln)
    assert "1,141 s (19 min) over 1 of 4 pages" in text
    assert "29.5 s over 3 of 4 pages" in text  # the cached runs, summed
    missing = text.split("## Not measured here yet")[1]
    assert "never executed here: intro" in missing
    assert "no cold run measured here: b1_setup_accuracy" in missing
    assert "the whole book's cold execution" in missing and "`make benchmark`" in missing
    assert "`make paper-run`" in missing and "None is recorded yet" in text


def test_without_any_record_the_page_says_nothing_is_measured(book):
    text = compute_page.page("cpu")
    assert text.count("not measured here yet") == 2 * len(PAGES)  # cold and cached, each page
    assert "No whole-book execution is recorded here yet" in text
    assert f"never executed here: {', '.join(PAGES)}" in text
    tables = text.split("## Each page's execution")[1].split("## Not measured")[0]
    assert " s (" not in tables and "GFLOP/s" not in tables  # no number but the record's


def test_the_whole_book_the_benchmark_and_paper_records_are_tabled(book):
    builds = {"cold": {**_run(2576.0), "computed": 1005, "chapters": 13, "jobs": 2}}
    _plant_timings(book, {}, builds)
    bench = {"cpu": CPU, "cores": 2, "measured": "2026-12-06 10:00:00", "rounds": 3,
             "setup": "A1 at cpu: 5 models", "peak_gflops": 74.2, "mflop_per_step": 1.0,
             "stacked_steps_s": 29.9, "stacked_share": 0.45, "naive_steps_s": 19.4,
             "speedup": 1.54, "faults_per_step": 0.0,
             "paper": [{"geometry": "paper A: l=600", "seconds_per_step": 0.31,
                        "gflops": 59.0, "share": 0.8}]}  # fmt: skip
    (book / "_build" / "cpu" / "benchmark.json").write_text(json.dumps(bench))
    rec = records.Record(book / "results" / "paper", "a1", "make paper-run")
    rec.data["provenance"] = {k: {} for k in records.PROVENANCE}
    rec.data["provenance"]["device"] = {"type": "cuda", "name": "NVIDIA H100"}
    rec.data["ladder"] = {"rung": {"name": "the paper's budget"}}
    rec.add_arrays("loss", {"seed0": np.zeros(3)})
    rec.phase("timing", 12.5)  # writes the record (its rates are missing: fine for a table)
    rec.data["rates"] = {}
    rec.phase("plan", 0.5)
    (book / "results" / "paper" / "broken.json").write_text("{")
    text = compute_page.page("cpu")
    assert "| cold, 1005 cache entries computed | 2,576 s (43 min) | 13 | 2 |" in text
    assert "74.2 GFLOP/s" in text and "29.9 steps/s, 45% of the peak" in text
    assert "paper A: l=600 | 0.31 s, 59.0 GFLOP/s, 80% of the peak" in text
    assert "| `a1.json` | running | NVIDIA H100 |" in text and "the paper's budget" in text
    assert "| `broken.json` | unreadable: cannot read record" in text
    assert "the whole book's cold" not in text and "`make benchmark` measures" not in text


def test_a_cell_stays_one_line_of_at_most_200_characters_and_escapes_pipes():
    assert compute_page.cell("a | b\nc") == "a \\| b c"
    assert len(compute_page.cell("x" * 500)) == 200


def test_the_site_holds_the_page_and_the_toc_names_it_but_never_executes_it(book, monkeypatch):
    monkeypatch.setattr(site, "site_config", lambda profile: b"title: t\n")
    tree = site.assemble_site("cpu", partial=True)
    page = tree / f"{compute_page.PAGE}.md"
    assert page.read_text().startswith("(build-and-compute)=")
    toc = yaml.safe_load((tree / "_toc.yml").read_text())
    assert toc["root"] == compute_page.PAGE  # nothing executed yet: the one page there is
    assert all(c.stem != "build_and_compute" for c in project.chapters())
    assert not (book / f"{compute_page.PAGE}.md").exists()  # never in the repository's book/


def test_the_real_toc_ends_the_appendix_with_the_page():
    toc = yaml.safe_load((project.ROOT / "_toc.yml").read_text())
    assert toc["parts"][-1]["chapters"][-1] == {"file": compute_page.PAGE}


def test_a_build_that_executed_every_chapter_is_kept_as_cold_or_cached(book):
    _plant_timings(book, {"a1_localization": {"cold": _run(300.0, 40)}})
    kinds = {"a1_localization": "cold", "ledger": "cached"}
    assert timings.record_build("cpu", 2500.0, kinds, jobs=2) == "cold"
    assert timings.record_build("cpu", 40.0, {"a1_localization": "cached"}, jobs=2) == "cached"
    assert timings.record_build("cpu", 9.0, {"a1_localization": None}, jobs=2) is None
    builds = timings.load_builds("cpu")
    assert builds["cold"]["seconds"] == 2500.0 and builds["cold"]["computed"] == 40
    assert builds["cached"]["seconds"] == 40.0 and builds["cold"]["chapters"] == 2
    timings.record_timing("cpu", "ledger", 5.0)  # a chapter's run keeps the builds
    assert timings.load_builds("cpu") == builds
    # CPU seconds, where every chapter's run measured them, reach both tables
    _plant_timings(book, {"a1_localization": {"cold": {**_run(300.0, 40), "cpu_s": 590.0}},
                          "ledger": {"cached": {**_run(5.0), "cpu_s": 4.0}}})  # fmt: skip
    timings.record_build("cpu", 310.0, kinds, jobs=2)
    text = compute_page.page("cpu")
    assert "40 cache entries computed, 590 CPU s (" in text
    assert "cold, 40 cache entries computed, 594 CPU s in its chapters" in text
    builds = timings.load_builds("cpu")
    timings.record_timing("cpu", "ledger", 5.0)
    assert timings.load_builds("cpu") == builds
    assert timings.load_timings("cpu")["a1_localization"]["cold"]["seconds"] == 300.0


def test_the_page_compares_this_build_with_the_reference_and_names_both_machines(book):
    from normbook.book_pages import ledger as claims_ledger
    from normbook.grading import ledger
    from normbook.grading.claims import ClaimTest
    from normbook.grading.verdicts import Grade, Verdict

    test = ClaimTest(0.2, 0.1, 0.3, 1e-4, 0.99, 5, "paired t test", "none", 0.05)
    row = ledger.claim_record(Verdict("A", "it localizes", Grade("reproduced", "x", 1e-4, test),
                                      test, key="a1_side"), "a1-verdict")  # fmt: skip
    zen3 = {"cpu": CPU, "isa": "Intel AVX2", "flags": {}}
    rec = {"format": ledger.FORMAT, "chapter": "a1_localization", "profile": "cpu",
           "params": {"seeds": [0, 1]}, "overrides": {}, "written": "2026-12-06 06:00:00",
           "claims": [row], "checks": [], "numbers": {}, "provenance": [],
           "cache": {"loaded": 0, "computed": 0}, "code": "c0",
           "machine": {**zen3, "cpu": "AMD EPYC (cpu family 25, model 17)",
                       "isa": "Intel AVX-512"}}  # fmt: skip
    (book / "_build" / "cpu" / "ledger" / "a1_localization.json").write_text(json.dumps(rec))
    assert "No reference ledger for the `cpu` profile" in compute_page.page("cpu")
    fp = {"as_is": {"a": "1", "b": "2", "s_per_step": {"a": 1.0, "b": 1.0}},
          "pinned": {"a": "3", "b": "4", "s_per_step": {"a": 1.5, "b": 2.0}}}  # fmt: skip
    ref = reference.snapshot(claims_ledger.records("cpu"), "cpu",
                             {"commit": "abc", "date": "2026-12-06", "machine": zen3,
                              "fingerprint": fp})  # fmt: skip
    ref["chapters"]["a1_localization"]["machine"] = zen3
    (book / "results" / "cpu").mkdir(parents=True)
    (book / "results" / "cpu" / "ledger.json").write_text(reference.dumps(ref))
    text = compute_page.page("cpu").split("## Against the reference ledger")[1]
    assert "gives the reference's verdict for 1 of 1 claims" in text
    assert "AMD EPYC (cpu family 25, model 1), oneDNN on Intel AVX2, 2026-12-06" in text
    assert "this build: AMD EPYC (cpu family 25, model 17), oneDNN on Intel AVX-512" in text
    assert "| {doc}`a1_localization` | same code and parameters | 1 of 1 | c0 |" in text
    assert "This machine's are not measured yet: `make fingerprint`" in text
    mine = {**fp, "as_is": {**fp["as_is"], "a": "9"}, "machine": rec["machine"]}
    (book / "_build" / "cpu" / "fingerprint.json").write_text(json.dumps(mine))
    text = compute_page.page("cpu")
    assert "9 / 2 as it chooses (other numbers), 3 / 4 pinned (the same numbers" in text
    assert "take 1.50x and 2.00x the time" in text and "should reproduce the reference" in text


def test_the_recorded_profile_ratios_and_epochs_are_tabled_from_their_records(book):
    machine = {
        "cpu": CPU,
        "isa": "Intel AVX2",
        "aten_capability": "AVX2",
        "threads": 1,
        "flags": {},
        "torch": "2.13.0+cpu",
        "onednn": "3.12.0",
        "versions": {},
    }
    speed = {
        "started": "2026-12-07T08:00:00+00:00",
        "commit": "0123456789abcdef",
        "machine": machine,
        "network": "B1's VGG",
        "epoch": {
            "wall_s": 12.0,
            "phases_wall_s": {"forward": 3.0, "backward": 6.0, "evaluation": 1.0},
        },
        "analyses_s": {"clusters": 30.5},
        "peak_gflops": 60.0,
        "today_gflops": 12.0,
        "today_share_of_peak": 0.2,
        "ratios": {
            "today": {"ms_per_image": 1.0, "speed_vs_today": 1.0},
            "batch 128": {"ms_per_image": 0.7, "speed_vs_today": 1.43},
        },
    }
    net = {
        "dataset": "cifar10",
        "batchnorm": False,
        "lr": 1e-4,
        "seed": 100,
        "stopped_epoch": 13.0,
        "best_epoch": 11.5,
        "ended_by": "early stopping",
        "seconds": 184.9,
    }
    epochs = {
        "started": "2026-12-07T07:36:00+00:00",
        "machine": machine,
        "seeds": [100],
        "cap": 40,
        "networks": [net],
    }
    (book / "results" / "cpu").mkdir(parents=True)
    text = compute_page.page("cpu")
    assert "the training profile: `python -m normbook.tools.speed" in text  # missing: said
    (book / "results" / "cpu" / "speed.json").write_text(json.dumps(speed))
    (book / "results" / "cpu" / "epochs_needed.json").write_text(json.dumps(epochs))
    text = compute_page.page("cpu").split("## Where a network's time goes")[1]
    assert "| backward | 6.00 s | 60% |" in text  # share of the phases' sum (10 s)
    assert "| analysis: clusters (one network, as the book runs it) | 30.50 s |  |" in text
    assert "12.0 GFLOP/s, 20% of this thread's kernel peak (60.0 GFLOP/s)" in text
    assert "| batch 128 | 0.700 | 1.43x | not taken at `cpu`" in text
    assert "| cifar10 | no BN | 0.0001 | 100 | 13 | 11.5 | early stopping |  | 185 s |" in text


def test_paper_as_stacked_training_profile_is_tabled_from_its_record(book):
    """The paper-A part reads ``speed_a.json``: each phase's share, the top operators, the
    evaluation, and each candidate against today's step; without the record it says so."""
    (book / "results" / "cpu").mkdir(parents=True)
    text = compute_page.page("cpu")
    assert "paper A's training profile: `python -m normbook.tools.speed_a --profile cpu`" in text
    top = [{"op": "aten::convolution_backward", "self_s": 2.5, "calls": 9}]
    rec = {
        "started": "2026-12-08T01:40:00+00:00", "commit": "abcdef1234567", "steps": 300,
        "machine": {"cpu": "AMD EPYC (cpu family 25, model 1)", "isa": "Intel AVX2"},
        "network": "chapter A5's family", "top_ops": top,
        "phases_wall_s": {"data": 1.0, "forward": 3.0, "backward": 5.0, "optimizer": 1.0},
        "evaluation": {"samples": 2048, "probe_batches": 64, "wall_s": 4.25, "top_ops": top},
        "ratios": {"today": {"ms_per_step": 33.3, "speed_vs_today": 1.0},
                   "head as a matmul": {"ms_per_step": 30.0, "speed_vs_today": 1.11}},
    }  # fmt: skip
    (book / "results" / "cpu" / "speed_a.json").write_text(json.dumps(rec))
    text = compute_page.page("cpu").split("### Paper A: one stacked training")[1]
    assert "| backward | 5.00 s | 50% |" in text and "`aten::convolution_backward` 2.50 s" in text
    assert "on 2,048 samples (64 probe batches) took 4.25 s" in text
    assert "| head as a matmul | 30.00 | 1.11x |" in text
    assert "paper A's training profile" not in compute_page.page("cpu")
