"""Property-based: any value for any parameter of any chapter gives a valid configuration or a
one-line ParameterError, never a traceback."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from normbook.publish.chapters import SPECS
from normbook.runtime.params import PROFILES, ParameterError

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(10**6), 10**6),
    st.floats(),  # nan and inf included
    st.text(max_size=12),
    st.sampled_from(["nan", "inf", "-inf", "1e400", "0", "-1", "1.5", " 3 ", "true", "cpu"]),
)
VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=4),
    st.lists(st.integers(-3, 70), max_size=4).map(lambda xs: ",".join(map(str, xs))),
)


def _numbers(value):
    return value if isinstance(value, list) else [value]


@settings(max_examples=600, deadline=None)
@given(st.data())
def test_any_values_give_a_configuration_or_a_one_line_error(data):
    with_params = sorted(c for c in SPECS if SPECS[c].names)
    chapter = data.draw(st.sampled_from(with_params), label="chapter")
    spec = SPECS[chapter]
    names = data.draw(st.lists(st.sampled_from(spec.names), min_size=1, max_size=3, unique=True))
    overrides = {n: data.draw(VALUES, label=n) for n in names}
    profile = data.draw(st.sampled_from(PROFILES), label="profile")
    try:
        params = spec.resolve(profile, **overrides)
    except ParameterError as exc:
        msg = str(exc)
        assert "\n" not in msg and msg.startswith("parameter") and len(msg) < 600, msg
        return
    for name in spec.names:  # a valid configuration: every value passes its own check again
        assert spec.param(name).check(params[name]) == params[name]
        for x in _numbers(params[name]):
            assert not isinstance(x, float) or math.isfinite(x), (name, params[name])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(SPECS)), st.text(min_size=1, max_size=20))
def test_unknown_names_are_one_line_errors(chapter, name):
    spec = SPECS[chapter]
    if name in spec.names or name == "profile":  # profile is resolve's first argument
        return
    try:
        spec.resolve("smoke", **{name: 1})
    except ParameterError as exc:
        assert "\n" not in str(exc) and "unknown parameter" in str(exc)
    else:
        raise AssertionError(f"{name!r} accepted")


def test_profile_given_twice_is_a_one_line_error():
    try:
        SPECS["a1_localization"].resolve("smoke", profile="cpu")
    except ParameterError as exc:
        assert "given twice" in str(exc) and "\n" not in str(exc)
    else:
        raise AssertionError("profile given twice accepted")


def test_an_unknown_name_suggests_the_closest_valid_one():
    try:
        SPECS["a1_localization"].resolve("smoke", seed=[0])
    except ParameterError as exc:
        assert "did you mean 'seeds'?" in str(exc)
    else:
        raise AssertionError("'seed' accepted")
