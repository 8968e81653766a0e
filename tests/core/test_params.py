import pytest

from normbook.paper_a.a1_localization.spec import A1
from normbook.publish import build, project
from normbook.publish.chapters import SPECS
from normbook.runtime.params import Param, ParameterError, Spec


def test_profiles_resolve_and_cpu_keeps_the_papers_length_to_radius_ratio():
    for profile in ("smoke", "cpu", "paper"):
        params = A1.resolve(profile)
        assert params.profile == profile
    cpu, paper = A1.resolve("cpu"), A1.resolve("paper")
    ratio = lambda params: params.seq_len / ((params.kernel // 2) * params.depth)
    assert ratio(paper) == pytest.approx(600 / 64)
    assert ratio(cpu) == pytest.approx(ratio(paper), rel=0.01)


def test_override_wins_and_none_keeps_the_profile_value():
    params = A1.resolve("cpu", seq_len=200, norm="group", groups=4, width=None)
    assert (params.seq_len, params.norm, params.groups, params.width) == (
        200,
        "group",
        4,
        A1.profiles["cpu"]["width"],
    )


@pytest.mark.parametrize(
    "overrides,match",
    [
        ({"seq_length": 10}, "unknown parameter 'seq_length'"),
        ({"seq_len": "long"}, "parameter 'seq_len': must be an integer"),
        ({"seq_len": 2.5}, "parameter 'seq_len'"),
        ({"norm": "weight"}, "parameter 'norm': must be one of"),
        ({"alpha": 0.9}, "parameter 'alpha': must be a number"),
        ({"steps": 0}, "parameter 'steps'"),
        ({"seeds": [0, -1]}, "parameter 'seeds'"),
        ({"seeds": []}, "parameter 'seeds'"),
        ({"seq_len": 18}, "parameter 'depth': receptive-field radius R"),  # R = 8 >= 18/2 - 2
        ({"kernel": 4}, "parameter 'kernel': must be odd"),
        ({"norm": "group", "groups": 5}, "parameter 'groups': must divide width=32"),
        ({"n_eval": 40}, "parameter 'n_eval': must be at least"),
        ({"norm": "none"}, "parameter 'norm': must name a normalization"),
    ],
)
def test_bad_parameters_give_a_one_line_error(overrides, match):
    with pytest.raises(ParameterError, match=match) as err:
        A1.resolve("cpu", **overrides)
    assert "\n" not in str(err.value)


def test_unknown_profile():
    with pytest.raises(
        ParameterError, match="parameter 'profile': must be one of smoke, cpu, paper"
    ):
        A1.resolve("gpu")


def test_command_line_values_are_coerced_by_type():
    p = Param("seeds", list, "", list_of=int, min=0)
    assert p.check("0,1, 2") == [0, 1, 2]
    assert Param("flag", bool, "").check("true") is True
    assert Param("lr", float, "").check("3e-3") == pytest.approx(3e-3)


def test_every_chapter_in_the_toc_has_a_spec():
    for chapter in project.chapters():
        assert chapter.stem in SPECS


def test_make_chapter_rejects_bad_parameters_before_executing(capsys, monkeypatch):
    monkeypatch.setattr(build, "execute", lambda *a, **k: pytest.fail("executed"))
    code = build.main(["chapter", "book/a1_localization.py", "-p", "seq_len", "abc"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0
    assert err.startswith("error: parameter 'seq_len'")
    code = build.main(["chapter", "book/a1_localization.py", "-p", "depth", "40"])
    assert code == 2 and "receptive-field radius" in capsys.readouterr().err
    code = build.main(["chapter", "book/a1_localization.py", "-p", "colour", "red"])
    assert code == 2 and "unknown parameter 'colour'" in capsys.readouterr().err


def test_the_parameters_cell_shows_every_profiles_value_within_the_line_limit():
    spec = Spec(
        chapter="demo",
        params=[
            Param("steps", int, "Adam steps per model"),
            Param("kernel", int, "kernel size"),
            Param("fracs", list, "overlaps swept, as fractions of the window", list_of=float),
        ],
        profiles={
            "smoke": dict(steps=40, kernel=5, fracs=[0.0, 1.0]),
            "cpu": dict(steps=5000, kernel=5, fracs=[i / 8 for i in range(9)]),
            "paper": dict(steps=20_000, kernel=5, fracs=[i / 16 for i in range(17)]),
        },
    )
    cell = spec.parameters_cell()
    assert "steps = None  # Adam steps per model [smoke 40 · cpu 5,000 · paper 20,000]" in cell
    assert "kernel = None  # kernel size [every profile: 5]" in cell
    assert all(len(line) <= 100 for line in cell.splitlines())
    wrapped = " ".join(line.lstrip("# ") for line in cell.splitlines())
    for prof in ("cpu", "paper"):  # nothing cut: every profile's whole list is shown
        shown = ", ".join(f"{v:g}" for v in spec.profiles[prof]["fracs"])
        assert f"{prof} [{shown}]" in wrapped
