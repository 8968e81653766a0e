"""The paper-scale runner (``normbook.tools.paperscale``) on the CPU: its documented bare command,
at ``smoke`` shape on a Python that has only torch, numpy and scipy, leaves a complete record in
the folder it names, whose per-seed effects equal chapter A1's; the record passes its schema,
survives a kill and a deadline at known phases (no race: the runner stops itself,
:data:`a1.STOP_AFTER`), stays small at the paper's shape; the device, the commit, the path and
the budget are chosen as documented (fakes stand for CUDA and for the measured rates); and the
book reads and grades the record, a stopped one too (fixture: the record made here)."""

import json
import os
import shlex
import signal
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import torch

from normbook.grading.verdicts import REFUTED
from normbook.paper_a import recorded
from normbook.paper_a.a1_localization import figures
from normbook.paper_a.a1_localization.spec import A1
from normbook.paper_a.cached import training
from normbook.paper_a.measures import equivariance
from normbook.paper_a.runs import localization
from normbook.publish import compute_page, project
from normbook.runtime import devices
from normbook.runtime.records import MAX_BYTES, Record, RecordError, load, problems
from normbook.runtime.workers import single_thread
from normbook.tools.paperscale import __main__ as cli
from normbook.tools.paperscale import a1, ladder, rates

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
COMMIT = "0123abc+test"  # the commit every run here is given, as the bare command gives one


def bare_args(out, commit: str) -> list[str]:
    """The documented bare command's arguments after the module's name, with ``$OUT`` and the
    commit file's contents filled in as the shell would."""
    words = shlex.split(recorded.BARE_COMMAND)
    fill = {"$OUT": str(out), "$(cat results/paper/COMMIT)": commit}
    return [fill.get(w, w) for w in words[words.index("normbook.tools.paperscale") + 1 :]]


def runner(out: Path, *args: str, deadline: float = 600, stop_after: str = "", argv=None):
    """The runner at smoke shape on the CPU (``argv``: its whole argument list instead), in a
    Python without site-packages (``-S``) that finds the repository's ``src`` and
    :func:`bare_site` only; ``stop_after``: the value of :data:`a1.STOP_AFTER`. It runs to its
    end (the timeout only guards against a hang)."""
    site = bare_site(Path(str(out) + "-site"))
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{site}"}
    env.pop(a1.STOP_AFTER, None)
    if stop_after:
        env[a1.STOP_AFTER] = stop_after
    argv = argv or ["a1", "--out", str(out), "--deadline", str(deadline), "--shape", "smoke",
                    "--device", "cpu", "--commit", COMMIT, *args]  # fmt: skip
    cmd = [sys.executable, "-S", "-m", "normbook.tools.paperscale", *argv]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> Path:
    """A complete smoke-shape record, made once by the documented bare command on the CPU
    (``--device cpu --shape smoke``) into a scratch folder that stands for ``$OUT``."""
    out = tmp_path_factory.mktemp("paperscale")
    argv = bare_args(out, COMMIT)
    argv[argv.index("--device") + 1] = "cpu"
    done = runner(out, argv=[*argv, "--shape", "smoke"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert "a1 complete" in done.stdout and "WARNING" not in done.stderr
    return out / "a1.json"


def test_the_bare_command_leaves_a_complete_record_in_its_folder(record):
    assert sorted(p.name for p in record.parent.iterdir()) == ["a1.json", "a1.npz"]
    rec = load(record)
    assert rec.complete and rec.data["provenance"]["commit"] == COMMIT
    assert f"--out {record.parent} " in rec.data["command"]
    # what the book grades comes before the curves, which come last
    assert rec.phases.index("checks") < rec.phases.index("summary") < rec.phases.index("curves")
    assert rec.phases[-1] == "curves"


def test_the_bare_command_is_the_same_everywhere_and_writes_to_out():
    cmd = recorded.BARE_COMMAND
    assert compute_page.BARE_COMMAND == cmd
    for doc in ("README.md", "results/paper/README.md"):
        text = (ROOT / doc).read_text()
        assert cmd in text and "`$OUT/a1.json` and `$OUT/a1.npz` into `results/paper/`" in text
    words, args = shlex.split(cmd), bare_args("OUT", "C")
    assert args[:3] == ["a1", "--out", "OUT"]  # the folder that comes back from the GPU
    assert args[args.index("--device") + 1] == "cuda" and args[args.index("--commit") + 1] == "C"
    assert {"PYTHONUNBUFFERED=1", "PYTHONPATH=src"} <= set(words)
    # the runner's own deadline passes before `timeout` stops it
    assert float(words[words.index("timeout") + 1]) > float(args[args.index("--deadline") + 1])
    assert "/results/paper/COMMIT" in (ROOT / ".gitignore").read_text().splitlines()
    assert "paper-run: venv paper-commit" in (ROOT / "Makefile").read_text()


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


@pytest.mark.heavy
def test_a_killed_run_leaves_the_phases_it_finished(tmp_path):
    done = runner(tmp_path, *TINY, stop_after="train none")  # SIGKILL right after that record
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    rec = load(tmp_path / "a1.json")
    assert rec.data["status"] == "running"
    assert rec.phases == ["timing", "plan", "train none"]
    assert "none.loss" in rec.arrays
    assert recorded.rebuild(rec).no_norm is None  # nothing evaluated: nothing to grade


def test_a_stopped_run_says_so(tmp_path):
    done = runner(tmp_path / "deadline", *TINY, deadline=1e-9)  # past before the first phase
    assert done.returncode == 3
    rec = load(tmp_path / "deadline" / "a1.json")
    assert rec.data["status"] == "stopped at its deadline (before or during timing)"
    assert rec.phases == []
    done = runner(tmp_path / "term", *TINY, stop_after="plan:SIGTERM")  # as `timeout` stops it
    assert done.returncode == 3, done.stderr[-2000:]
    rec = load(tmp_path / "term" / "a1.json")
    assert rec.phases == ["timing", "plan"] and "SIGTERM" in rec.data["status"]


def test_a_run_stopped_during_its_curves_is_graded(tmp_path):
    """The checks and the summary come before the curves: a run stopped in them keeps what the
    book grades, and without the curves no claim can be refuted as having stopped rising."""
    done = runner(tmp_path, *TINY, stop_after="summary:SIGTERM")
    assert done.returncode == 3, done.stderr[-2000:]
    rec = recorded.read(tmp_path / "a1.json")
    assert rec.data["status"].startswith("stopped at its deadline")
    assert rec.loaded.phases[-2:] == ["checks", "summary"] and "curves" not in rec.loaded.phases
    assert not rec.curves and rec.gradable
    claims, checks = recorded.ungraded(rec)
    assert len(claims) == 3 and len(checks) == 2 and all(c.holds for c in checks)
    assert REFUTED not in [v.verdict for v in claims]
    assert recorded.plain_words(rec, claims).startswith("the side channel: ")


def test_cuda_without_cuda_stops_at_once(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # a machine without CUDA
    out = tmp_path / "out"
    code = cli.main(["a1", "--out", str(out), "--deadline", "540", "--device", "cuda"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: device 'cuda'") and err.count("\n") == 1
    assert not out.exists()  # no record: nothing ran


def test_the_device_is_named_and_auto_says_when_it_falls_back(monkeypatch, capsys):
    with pytest.raises(SystemExit) as exc:  # --device has no default
        cli._parser().parse_args(["a1", "--out", "x", "--deadline", "1"])
    assert exc.value.code == 2 and "--device" in capsys.readouterr().err
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert cli.resolve("auto") == "cpu"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "WARNING" in err and "CPU" in err
    assert cli.resolve("cpu") == "cpu" and capsys.readouterr().err == ""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert cli.resolve("auto") == "cuda" and capsys.readouterr().err == ""


def test_the_commit_comes_from_the_flag_git_or_the_commit_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "COMMIT_FILE", tmp_path / "COMMIT")
    monkeypatch.setattr(devices, "git_commit", lambda short=False: "unknown")  # no git history
    assert cli.commit_of("abc") == "abc"
    (tmp_path / "COMMIT").write_text("f00d+changes\n")  # make paper-commit, before the copy
    assert cli.commit_of("") == "f00d+changes" and capsys.readouterr().err == ""
    (tmp_path / "COMMIT").unlink()
    assert cli.commit_of("  ") == "unknown"  # `$(cat ...)` of a missing file: the last resort
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "WARNING" in err and "unknown" in err
    monkeypatch.setattr(devices, "git_commit", lambda short=False: "beef")
    assert cli.commit_of("") == "beef"


def test_bad_arguments_stop_before_any_compute(tmp_path):
    done = runner(tmp_path, "-p", "seq_len", "7")
    assert done.returncode == 2 and done.stderr.startswith("error: parameter")
    assert not (tmp_path / "a1.json").exists()


# fake rates of about an H200's order (ms per step of a five-model stack, µs per sample), eager
# fp32 ten times slower than the fast path
FAKE = {"train": {"none, fast": {"ms_per_step": 4.0}, "instance, fast": {"ms_per_step": 5.0},
                  "none, eager fp32": {"ms_per_step": 40.0},
                  "instance, eager fp32": {"ms_per_step": 50.0}},
        "sample_us": {"fast, probes": 100.0, "fast, outputs": 30.0, "eager fp32, probes": 1000.0,
                      "eager fp32, outputs": 300.0}}  # fmt: skip


def _rates(factor: float, agree: bool = True) -> dict:
    """:data:`FAKE` times ``factor``, as :func:`.rates.measure` returns them, with the fast path
    agreeing with eager fp32 at the first step or not."""
    first = 1e-4 if agree else 0.5
    return {
        "train": {k: {"ms_per_step": v["ms_per_step"] * factor} for k, v in FAKE["train"].items()},
        "sample_us": {k: v * factor for k, v in FAKE["sample_us"].items()},
        "agreement": {
            "first_step": first,
            "over_steps": first,
            "ok": agree,
            "tolerance": rates.FIRST_STEP_TOLERANCE,
        },  # fmt: skip
        **rates.speed_check(10.0),
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
    eager = np.array([[1.0, 2.0], [0.9, 1.8]])
    assert rates.agreement(eager, eager * (1 + 1e-3))["ok"]  # TF32-sized rounding
    bad = rates.agreement(eager, eager * 1.5)
    assert not bad["ok"] and bad["first_step"] == pytest.approx(0.5)


def test_a_disagreeing_fast_path_gives_way_to_fp32_and_its_budget_is_recosted(tmp_path):
    """At the paper's shape, fake rates: the fast path fits the paper's budget; eager fp32, ten
    times slower, is what a run whose fast path disagrees uses, costed at its own rates."""
    params = A1.resolve("paper")
    runs = {}
    for agree in (True, False):
        run = a1.Run(params, "cpu", tmp_path / str(agree), 540, "test", COMMIT, small=True)
        run.record.data["rates"] = _rates(0.1, agree)
        run.plan()
        runs[agree] = run
    fast, eager = runs[True], runs[False]
    assert (fast.path, eager.path) == (rates.FAST, rates.EAGER)
    ladders = fast.record.data["ladder"], eager.record.data["ladder"]
    assert ladders[0]["index"] == 0 and ladders[1]["index"] > 0
    assert [x["path"] for x in ladders] == [rates.FAST, rates.EAGER]
    for part in ("train", "evaluate", "curves"):
        assert ladders[1]["estimates"][0][part] == pytest.approx(
            10 * ladders[0]["estimates"][0][part]
        )
    prec = eager.record.data["provenance"]["precision"]
    assert prec["path"] == rates.EAGER and "full fp32" in prec["path_why"]
    assert fast.record.data["provenance"]["precision"]["path"] == rates.FAST
    assert eager.setup.train.graphs is False and fast.setup.train.graphs is True
    # on CUDA the recorded flags follow the path: none of the fast path's on eager fp32
    on = rates.precision_flags("cuda", fast=True)
    off = rates.precision_flags("cuda", fast=False)
    assert on["conv_tf32"] and on["cuda_graphs"] and on["cudnn_benchmark"]
    assert not (
        off["conv_tf32"] or off["matmul_tf32"] or off["cuda_graphs"] or off["cudnn_benchmark"]
    )


def test_a_disagreeing_fast_path_trains_with_tf32_off(tmp_path, monkeypatch):
    """The phases after the plan run with eager fp32's flags: TF32 off for convolutions and
    matmuls, matmul precision "highest", no algorithm search, no CUDA graphs."""
    seen = {}

    class Seen(Exception):
        """Raised by the spy: the flags are read, the rest of the run is not needed."""

    def spy(cnn, tc, seeds, **kw):
        cudnn, matmul = torch.backends.cudnn, torch.backends.cuda.matmul
        seen.update(conv_tf32=cudnn.allow_tf32, benchmark=cudnn.benchmark,
                    matmul_tf32=matmul.allow_tf32, precision=torch.get_float32_matmul_precision(),
                    graphs=tc.graphs)  # fmt: skip
        raise Seen

    monkeypatch.setattr(rates, "measure", lambda *args: _rates(1.0, agree=False))  # a fake device
    monkeypatch.setattr(training, "train_stack", spy)
    params = A1.resolve("smoke", **dict(zip(TINY[1::3], TINY[2::3])))
    run = a1.Run(params, "cpu", tmp_path, 540, "test", COMMIT, small=True)
    with rates.precision(fast=True):  # the fast path's flags, as a CUDA default would have them
        torch.set_float32_matmul_precision("high")
        with pytest.raises(Seen):
            run.run()
        assert torch.backends.cudnn.allow_tf32 and torch.get_float32_matmul_precision() == "high"
    assert seen == {"conv_tf32": False, "benchmark": False, "matmul_tf32": False,
                    "precision": "highest", "graphs": False}  # fmt: skip
    assert load(tmp_path / "a1.json").phases == ["timing", "plan"]


def test_the_fast_paths_speed_is_judged_against_its_target(record):
    data = {**json.loads(record.read_text()), "effects": {}}  # (JSON has no NaN to format)
    r = data["rates"]
    assert set(r["train"]) == {f"{n}, {p}" for n in ("none", "instance")
                               for p in (rates.FAST, rates.EAGER)}  # fmt: skip
    assert r["speedup_target"] == rates.SPEEDUP_TARGET == 3
    assert r["speedup_ok"] is (r["speedup"] >= rates.SPEEDUP_TARGET)
    for speedup, said in ((3.2, "(target 3x: reached)"), (1.1, "(target 3x: NOT reached)")):
        data["rates"].update(rates.speed_check(speedup))
        assert said in cli.summary(data)
        assert ("not reached" in recorded.rates_text(data["rates"])) is (speedup < 3)
