"""``make commands``: the commands the README and the exercises show, found in their text and
prepared to run at smoke (or skipped with a reason), and the order its tasks run in."""

import threading

import pytest

from normbook.publish import exercises, project
from normbook.tools import doc_commands as dc

README = """# A planted README

```bash
make book    # everything
make chapter CHAPTER=book/a1_localization.py PARAMS='-p seq_len 64'   # one chapter
export NORMBOOK_DATA=../data
make sweep CHAPTER=book/a3_which_norms.py \\
    GRID='-p group_counts 1,2'
```

```python
make chapter CHAPTER=book/a2_mechanism.py  # not a shell block
```
"""


def test_the_make_lines_of_the_readmes_bash_blocks_are_found():
    found = dc.readme_commands(README)
    assert [c.source for c in found] == ["README.md:4", "README.md:5", "README.md:7"]
    chapter = found[1]
    assert chapter.target == "chapter" and chapter.profile == "cpu"
    assert chapter.variables == {"CHAPTER": "book/a1_localization.py", "PARAMS": "-p seq_len 64"}
    assert chapter.text == "make chapter CHAPTER=book/a1_localization.py PARAMS='-p seq_len 64'"
    assert found[2].variables["GRID"] == "-p group_counts 1,2"  # a continued line joined
    assert chapter.at("smoke")[-1] == "PROFILE=smoke"


def test_the_books_readme_shows_commands_this_step_finds():
    found = dc.readme_commands((project.ROOT / "README.md").read_text())
    assert {"chapter", "sweep"} <= {c.target for c in found}


def test_a_planted_chapter_command_runs_at_smoke_as_make_gives_it():
    cmd = dc.readme_commands(README)[1]
    seen = {}
    job = dc.prepare(cmd, "smoke", seen)
    assert isinstance(job, dc.Job) and not job.sweep
    assert job.chapter == project.BOOK / "a1_localization.py"
    assert job.overrides == {"seq_len": 64}
    assert job.argv[:4] == ["chapter", "book/a1_localization.py", "--profile", "smoke"]
    again = dc.prepare(dc.Command("README.md:9", cmd.words), "smoke", seen)
    assert again == "at smoke it is the same run as README.md:5"


def test_a_non_runnable_exercise_is_skipped_with_its_reason():
    edit = exercises.Exercise("a1-ex-edit", "a1_localization", edit="a new detector")
    runnable = exercises.BY_LABEL["a1-ex-layer"]
    skipped, runs = dc.exercise_commands([edit, runnable])
    assert skipped.source == "exercise a1-ex-edit" and not skipped.words
    assert dc.prepare(skipped, "smoke", {}) == "it needs an edit of the library (a new detector)"
    assert runs.skip == "" and runs.target == "chapter"


def test_an_exercise_takes_its_values_at_smoke_where_they_depend_on_the_profile():
    (cmd,) = dc.exercise_commands([exercises.BY_LABEL["a1-ex-steps"]])
    spec = project.spec_for(project.BOOK / "a1_localization.py")
    shown_steps = 2 * spec.resolve("cpu").steps
    assert f"PARAMS=-p steps {shown_steps}" in cmd.words and cmd.profile == "cpu"
    assert f"PARAMS=-p steps {2 * spec.resolve('smoke').steps}" in cmd.at("smoke")


def _command(line: str) -> dc.Command:
    (cmd,) = dc.readme_commands(f"```bash\n{line}\n```\n")
    return cmd


@pytest.mark.parametrize(
    "line, reason",
    [
        ("make book", "the whole book"),
        ("make lab", "interactive"),
        ("make sweep GRID_FILE=grid.yml WORKERS=4", "grid file grid.yml is the reader's own"),
        ("make chapter CHAPTER=book/a1_localization.py PROFILE=paper", "smoke build's own run"),
        ("make chapter CHAPTER=book/a1_localization.py PARAMS='-p steps 5000'",
         "it sets steps to 5000, 125 times its value at smoke"),
        # valid at cpu (width 32), not at smoke (width 8)
        ("make chapter CHAPTER=book/a3_which_norms.py PARAMS='-p group_counts 1,16'",
         "invalid at smoke: parameter 'group_counts'"),
    ],
)  # fmt: skip
def test_a_command_that_cannot_run_at_smoke_says_why(line, reason):
    assert reason in dc.prepare(_command(line), "smoke", {})


def test_a_command_invalid_at_the_profile_it_names_is_an_error():
    cmd = _command("make chapter CHAPTER=book/a1_localization.py PARAMS='-p colour red'")
    with pytest.raises(dc.CommandError, match="unknown parameter 'colour'"):
        dc.prepare(cmd, "smoke", {})


def test_a_sweep_runs_its_valid_points_and_names_the_others():
    cmd = _command("make sweep CHAPTER=book/a3_which_norms.py GRID='-p group_counts 1,2,16'")
    job = dc.prepare(cmd, "smoke", {})
    assert job.sweep and job.argv[-2:] == ["group_counts", "1,2,16"]
    assert "'16'" in job.note and "must divide width" in job.note


def _job(stem: str, source: str) -> dc.Job:
    return dc.Job(dc.Command(source, ("make", "chapter")), project.BOOK / f"{stem}.py", [])


def test_a_chapters_commands_go_to_successive_rounds_the_longest_first():
    jobs = [_job("a1_localization", "a"), _job("a2_mechanism", "b"),
            _job("a1_localization", "c"), _job("a1_localization", "d")]  # fmt: skip
    rounds = dc.rounds(jobs, {"a1_localization": 10.0, "a2_mechanism": 50.0})
    assert [[j.command.source for j in r] for r in rounds] == [["b", "a"], ["c"], ["d"]]


def test_tasks_run_after_what_they_wait_for():
    events, lock = [], threading.Lock()

    def task(name, problem="", after=(), needs_ok=True):
        def run():
            with lock:
                events.append(name)
            return problem

        return dc.Task(name, run, after, needs_ok)

    tasks = [task("c1"), task("c2", "it broke"), task("p1", after=("c1", "c2")),
             task("p2", after=("c1", "c2"), needs_ok=False), task("c3"),
             task("p3", after=("c3",))]  # fmt: skip
    failed = dc.run_tasks(tasks, jobs=2, say=lambda line: None)
    assert failed == {"c2": "it broke", "p1": "not run: c2"}
    assert "p1" not in events
    for page, chapters in (("p2", ("c1", "c2")), ("p3", ("c3",))):
        assert all(events.index(page) > events.index(c) for c in chapters)


def test_make_test_runs_the_readmes_commands_and_checks_the_exercises():
    readme, exercise = (
        _job("a1_localization", "README.md:70"),
        _job("a1_localization", "exercise x"),
    )
    assert dc.runs(readme, "readme") and not dc.runs(exercise, "readme")
    assert dc.runs(exercise, "all") and not dc.runs(readme, "none")
    assert dc.headline(
        "    [intro] error: book/intro.py failed in cell 3: ValueError: x\n    ..."
    ) == ("[intro] error: book/intro.py failed in cell 3: ValueError: x")


def test_a_failed_chapter_leaves_the_smoke_builds_record_for_the_rounds_pages(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("NORMBOOK_BUILD_DIR", str(tmp_path / "_build"))
    monkeypatch.setenv("NORMBOOK_CACHE", str(tmp_path / "cache"))
    default = tmp_path / "_build" / "smoke" / "ledger" / "a1_localization.json"
    default.parent.mkdir(parents=True)
    default.write_text('{"the smoke build": true}')
    rerun = tmp_path / "round-1" / "smoke" / "ledger" / "a1_localization.json"
    rerun.parent.mkdir(parents=True)
    rerun.write_text('{"half a run": true}')
    job = _job("a1_localization", "exercise x")
    job.overrides = {"seq_len": 1}  # refused before any compute: the child fails at once
    problem = dc.chapter_task(job, tmp_path / "round-1", "smoke").run()
    assert "error: parameter 'seq_len'" in dc.headline(problem)
    assert rerun.read_text() == default.read_text()
