"""One source of truth for versions: environment.yml must mirror pyproject.toml."""

import tomllib
from importlib.metadata import version
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _pyproject_pins():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return dict(d.split("==") for d in deps)


def test_every_dependency_is_pinned_exactly():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert all("==" in d for d in deps), deps


def test_environment_yml_mirrors_pyproject():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    pins = dict(p.split("==") for p in pip if "==" in p)
    assert pins == _pyproject_pins()


def test_installed_versions_match_the_pins():
    for name, pinned in _pyproject_pins().items():
        assert version(name).split("+")[0] == pinned, name


def test_the_lab_extra_is_pinned_too():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert extras["lab"] and all("==" in d for d in extras["lab"]), extras
