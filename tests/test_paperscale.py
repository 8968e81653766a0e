"""The paper-scale runner (``normbook.tools.paperscale``) on the CPU: at ``smoke`` shape on a Python
that has only torch, numpy and scipy, its per-seed effects equal chapter A1's; its record
passes its schema, survives a kill and a deadline, stays small at the paper's shape; its
ladder picks budgets from measured rates; and the book reads it (fixture: the record made
here)."""

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from normbook.paper_a import recorded
from normbook.paper_a.a1_localization import figures
from normbook.paper_a.a1_localization.spec import A1
from normbook.paper_a.measures import equivariance
from normbook.paper_a.runs import localization
from normbook.publish import project
from normbook.runtime.records import MAX_BYTES, Record, RecordError, load, problems
from normbook.runtime.workers import single_thread
from normbook.tools.paperscale import a1, ladder

ROOT = Path(__file__).resolve().parents[1]
# What a bare GPU machine lacks: every dependency of the book beyond torch, numpy and scipy.
BLOCKED = ("tqdm", "matplotlib", "mpl_toolkits", "seaborn", "pandas", "sklearn", "scikit_learn",
           "altair", "vl_convert", "jupyter_book", "sphinx", "myst_nb", "myst_parser",
           "selenium", "jupytext", "dask", "distributed", "papermill", "nbclient", "ipykernel",
           "ipython", "hypothesis", "pytest", "_pytest", "normbook")  # fmt: skip


def bare_site(folder: Path) -> Path:
    """A site-packages of this environment without the blocked packages (links to the rest):
    what a GPU machine with only torch, numpy and scipy (and their own needs) has."""
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    folder.mkdir(parents=True, exist_ok=True)
    for entry in site.iterdir():
        top = entry.name.split("-")[0].split(".")[0].lower()
        if top not in BLOCKED and not entry.name.startswith("__editable__"):
            (folder / entry.name).symlink_to(entry)
    return folder


TINY = ["-p", "seq_len", "24", "-p", "depth", "2", "-p", "width", "4", "-p", "steps", "16",
        "-p", "n_eval", "256", "-p", "curve_eval", "128", "-p", "probe_batches", "2"]  # fmt: skip


def phases_done(path: Path) -> list[str]:
    """The phases a record on disk has finished (none before its first write)."""
    try:
        return [p["name"] for p in json.loads(path.read_text())["phases"]]
    except (OSError, ValueError):
        return []


def runner(out: Path, *args: str, deadline: float = 600, wait: bool = True):
    """The runner at smoke shape on the CPU, in a Python without site-packages (``-S``) that
    finds the repository's ``src`` and :func:`bare_site` only."""
    site = bare_site(Path(str(out) + "-site"))
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{site}"}
    cmd = [sys.executable, "-S", "-m", "normbook.tools.paperscale", "a1", "--out", str(out),
           "--deadline", str(deadline), "--shape", "smoke", "--device", "cpu", *args]  # fmt: skip
    if not wait:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> Path:
    """A complete smoke-shape record, made once by the bare runner."""
    out = tmp_path_factory.mktemp("paperscale")
    done = runner(out)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "a1 complete" in done.stdout
    return out / "a1.json"


def test_runner_on_a_bare_python_gives_chapter_a1s_numbers(record, tmp_path, monkeypatch):
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(localization, "_declared", False)
    setup = localization.Setup.from_params(A1.resolve("smoke"))
    with single_thread():  # as the chapter's kernel
        none = localization.localize(setup, setup.cnn("none"))
        normed = localization.localize(setup, setup.chapter_cnn)
        circular = localization.circular_null(setup, setup.chapter_cnn)
        curve = localization.curve(setup, setup.chapter_cnn)
        eq = equivariance.check(none)
    rec = recorded.read(record)
    assert rec.loaded.complete and rec.gradable and not rec.loaded.stale_modules()
    for ours, chapter in ((rec.no_norm, none), (rec.with_norm, normed), (rec.circular, circular)):
        np.testing.assert_array_equal(ours.out.mean, chapter.out.mean)
        np.testing.assert_array_equal(ours.out.std, chapter.out.std)
        np.testing.assert_array_equal(ours.probe_distances, chapter.probe_distances)
        np.testing.assert_array_equal(ours.depth_maps, chapter.depth_maps)
        assert ours.slope_interior == chapter.slope_interior
        assert ours.r2_interior == chapter.r2_interior
        assert ours.frac_interior == chapter.frac_interior and ours.distances == chapter.distances
    for ours, chapter in zip(rec.curves[1].runs, curve.runs, strict=True):
        np.testing.assert_array_equal(ours.out.mean, chapter.out.mean)
    np.testing.assert_array_equal(rec.eq_no_norm.reach, eq.reach)
    np.testing.assert_array_equal(rec.eq_no_norm.max_change, eq.max_change)
    effects = rec.data["effects"]["normed"]  # the runner's own summary agrees too
    assert effects["interior_slope"] == normed.slope_interior


def test_the_record_passes_its_schema_and_catches_damage(record, tmp_path):
    data = json.loads(record.read_text())
    assert problems(data) == []
    assert data["ladder"]["index"] == 0  # a generous deadline: the profile's own budget
    assert data["config"]["params"] == dict(A1.resolve("smoke"))
    prov = data["provenance"]
    assert prov["device"]["type"] == "cpu" and "Mersenne" in prov["rng"]
    assert {"paper_a.cached.training", "paper_a.cached.evaluation", "tools.paperscale.a1"} <= set(
        prov["code"]
    )
    assert [p["name"] for p in data["phases"]][:2] == ["timing", "plan"]
    for k in ("ms_per_step", "tflops", "share_of_fp32_peak"):
        assert k in data["rates"]["train"]["instance, eager fp32"]
    # on the CPU both paths are the same code: the fast path agrees exactly, and is used
    assert data["rates"]["agreement"]["first_step"] == 0 and data["rates"]["agreement"]["ok"]
    assert data["config"]["train"]["graphs"] and "tools.paperscale.a1" in prov["computed_by"]
    broken = {**data, "provenance": {k: v for k, v in prov.items() if k != "code"}}
    assert problems(broken) == ["provenance lacks 'code'"]
    assert "phase 'summary' finished but 'effects' is missing" in problems(
        {k: v for k, v in data.items() if k != "effects"}
    )
    assert problems({**data, "schema": 99}) == ["schema 99, this code reads 1"]
    # a damaged array is refused, naming it
    (tmp_path / "a1.json").write_text(record.read_text())
    arrays = dict(np.load(record.with_suffix(".npz")))
    arrays["normed.out_mean"] = arrays["normed.out_mean"] + 1e-9
    np.savez(tmp_path / "a1.npz", **arrays)
    with pytest.raises(RecordError, match="normed.out_mean"):
        load(tmp_path / "a1.json")


def test_a_killed_run_leaves_the_phases_it_finished(tmp_path):
    proc = runner(tmp_path, *TINY, wait=False)
    path, t0 = tmp_path / "a1.json", time.monotonic()
    while time.monotonic() - t0 < 240:
        if "train none" in phases_done(path):
            break
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        time.sleep(0.05)
    proc.kill()  # SIGKILL: nothing runs after it
    proc.wait()
    rec = load(path)
    assert rec.data["status"] == "running"
    assert rec.phases[:3] == ["timing", "plan", "train none"]
    assert "none.loss" in rec.arrays
    assert recorded.rebuild(rec).no_norm is None  # nothing evaluated: nothing to grade


def test_a_stopped_run_says_so(tmp_path):
    done = runner(tmp_path / "deadline", *TINY, deadline=0.01)
    assert done.returncode == 3
    rec = load(tmp_path / "deadline" / "a1.json")
    assert rec.data["status"].startswith("stopped at its deadline")
    assert rec.phases in ([], ["timing"])  # the deadline is checked between phases
    proc = runner(tmp_path / "term", *TINY, wait=False)
    path = tmp_path / "term" / "a1.json"
    while "plan" not in phases_done(path):
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 3
    assert "SIGTERM" in load(path).data["status"]


def test_bad_arguments_stop_before_any_compute(tmp_path):
    done = runner(tmp_path, "-p", "seq_len", "7")
    assert done.returncode == 2 and done.stderr.startswith("error: parameter")
    assert not (tmp_path / "a1.json").exists()


# fake rates of about an H200's order (ms per step of a five-model stack, µs per sample)
FAKE = {"train": {"none, fast": {"ms_per_step": 4.0}, "instance, fast": {"ms_per_step": 5.0}},
        "sample_us": {"fast, probes": 100.0, "fast, outputs": 30.0}}  # fmt: skip


def _rates(factor: float) -> dict:
    return {
        "train": {k: {"ms_per_step": v["ms_per_step"] * factor} for k, v in FAKE["train"].items()},
        "sample_us": {k: v * factor for k, v in FAKE["sample_us"].items()},
    }


def test_the_ladder_picks_the_largest_budget_that_fits():
    params = A1.resolve("paper")
    top = ladder.choose(params, _rates(0.02), 540, a1.cost)
    assert (
        top.index == 0
        and top.params["steps"] == params.steps
        and top.params["n_eval"] == params.n_eval
    )
    totals = [row["total"] for row in top.estimates]
    assert totals == sorted(totals, reverse=True)  # each rung costs less than the one above
    for factor in (0.02, 0.3, 1.0, 3.0):
        c = ladder.choose(params, _rates(factor), 540, a1.cost)
        assert c.estimates[c.index]["total"] * ladder.SAFETY <= 540
        assert c.index == 0 or c.estimates[c.index - 1]["total"] * ladder.SAFETY > 540
        assert c.params["n_eval"] % params.eval_batch_size == 0
        A1.resolve("paper", **c.params)  # every rung is a valid chapter configuration
    slow = ladder.choose(params, _rates(100.0), 540, a1.cost)
    assert slow.index == len(ladder.LADDER) - 1 and "no rung fits" in slow.reason
    picks = [
        ladder.choose(params, _rates(f), 540, a1.cost).index for f in (0.02, 0.3, 1.0, 3.0, 100.0)
    ]
    assert picks == sorted(picks) and len(set(picks)) >= 4  # slower devices, smaller rungs


def test_a_paper_shape_record_fits_the_size_limit(tmp_path):
    """The arrays of a record at the paper's shape (five seeds, l = 600, 32 layers, three kept
    states, 20,000 steps) stay under the limit with the JSON."""
    rng = np.random.default_rng(0)
    params = A1.resolve("paper")
    m, L, d, steps = len(params.seeds), params.seq_len, params.depth, params.steps
    rec = Record(tmp_path, "a1", "test")
    moments = lambda: {"out_mean": rng.random((2, m, L)), "out_std": rng.random((2, m, L)),
                       "out_count": np.array([10**6, 10**6])}  # fmt: skip
    for which in ("none", "normed", "circular"):
        rec.add_arrays(which, {**moments(), "probe_maps": rng.random((d, m, L)) < 0.5,
                               "probe_distances": rng.integers(-1, 300, (d, m))})  # fmt: skip
    for which in ("none", "normed"):
        rec.add_arrays(which, {"loss": rng.random((1000, m)).astype(np.float32),
                               "loss_steps": np.arange(1000) * steps // 1000})  # fmt: skip
        for step in (*[round(f * steps) for f in params.curve_fractions], steps):
            rec.add_arrays(f"curve.{which}.{step}", moments())
    rec.write()
    size = rec.json_path.stat().st_size + rec.npz_path.stat().st_size
    assert size < MAX_BYTES, f"{size / 2**20:.1f} MiB"


def test_the_book_reads_a_record_grades_it_and_draws_it(record, tmp_path):
    rec = recorded.read(record)
    claims, checks = recorded.ledger(rec)
    assert len(claims) == 3 and all(v.claim.startswith(recorded.CLAIM_PREFIX) for v in claims)
    assert [v.key for v in claims] == [
        "a1_paper_side_channel",
        "a1_paper_whole_sequence",
        "a1_paper_inward_spread",
    ]  # apart from the chapter's
    assert len(checks) == 2 and all(c.holds for c in checks)
    assert [v.sesoi for v in claims][0].name  # graded against the chapter's SESOIs
    for fn in (figures.mean_predictions, figures.depth_maps):
        assert recorded.draw(rec, fn) is not None
    text = recorded.status_md(rec, record)
    assert "The recorded run" in text and "recorded with earlier code" not in text
    assert recorded.plain_words(None, []).startswith("no record")


def test_a_record_made_with_other_code_says_which_modules(record, tmp_path):
    data = json.loads(record.read_text())
    data["provenance"]["code"]["paper_a.cached.evaluation"] = "0" * 16
    (tmp_path / "a1.json").write_text(json.dumps(data))
    (tmp_path / "a1.npz").write_bytes(record.with_suffix(".npz").read_bytes())
    rec = recorded.read(tmp_path / "a1.json")
    assert rec.loaded.stale_modules() == ["paper_a.cached.evaluation"]
    assert "recorded with earlier code" in recorded.status_md(rec, "x")


def test_without_a_record_the_pages_say_what_is_missing_and_the_command(tmp_path):
    assert recorded.read(tmp_path / "a1.json") is None
    text = recorded.missing_md("results/paper/a1.json")
    assert recorded.COMMAND in text and recorded.BARE_COMMAND in text
    assert recorded.draw(None, figures.mean_predictions).startswith("*Not drawn")
    assert recorded.ungraded(None) == ([], [])


def test_a_new_record_re_executes_the_chapters_that_read_it(tmp_path, monkeypatch):
    a1 = ROOT / "book" / "a1_localization.py"
    resolved = dict(A1.resolve("smoke", paper_record=str(tmp_path / "a1.json")))
    before = project.chapter_key(a1, "smoke", resolved)
    (tmp_path / "a1.json").write_text("{}")
    assert project.chapter_key(a1, "smoke", resolved) != before


def test_the_setup_is_the_chapters(record):
    """The runner's configuration is chapter A1's at the chosen budget."""
    data = json.loads(record.read_text())
    setup = localization.Setup.from_params(A1.resolve("smoke"))
    for name, cfg in (("train", setup.train), ("eval", setup.eval), ("detector", setup.detector)):
        assert data["config"][name] == json.loads(json.dumps(asdict(cfg))), name


def test_a_fast_path_that_disagrees_at_the_first_step_is_not_used():
    from normbook.tools.paperscale import rates

    eager = np.array([[1.0, 2.0], [0.9, 1.8]])
    assert rates.agreement(eager, eager * (1 + 1e-3))["ok"]  # TF32-sized rounding
    bad = rates.agreement(eager, eager * 1.5)
    assert not bad["ok"] and bad["first_step"] == pytest.approx(0.5)
