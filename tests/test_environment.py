"""environment.yml carries pyproject.toml's pins: every pinned package once, at the same version."""

from __future__ import annotations

import re
import tomllib

import yaml

from helpers import REPO


def _name(spec: str) -> str:
    """A package's name as both package managers compare it (case, `-`, `_` and `.` alike)."""
    return re.sub(r"[-_.]+", "-", spec).lower()


def pyproject_pins() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    specs = [*project["dependencies"], *(s for extra in project["optional-dependencies"].values() for s in extra)]
    pins = {}
    for spec in specs:
        name, _, version = spec.partition("==")
        assert version, f"pyproject.toml: {spec!r} is not pinned with =="
        pins[_name(name)] = version
    return pins


def environment_pins() -> list[tuple[str, str]]:
    """(name, version) of every entry of environment.yml, conda's and pip's, in order."""
    out = []
    for entry in yaml.safe_load((REPO / "environment.yml").read_text())["dependencies"]:
        for spec in entry["pip"] if isinstance(entry, dict) else [entry]:
            name, _, version = re.split(r"(==|=)", spec, maxsplit=1) if "=" in spec else (spec, "", "")
            out.append((_name(name), version))
    return out


def test_environment_yml_pins_every_package_of_pyproject_once_at_its_version():
    listed = [(name, version) for name, version in environment_pins() if name not in ("python", "pip")]
    names = [name for name, _ in listed]
    assert sorted({n for n in names if names.count(n) > 1}) == [], "listed twice in environment.yml"
    pins = pyproject_pins()
    assert sorted(set(pins) - set(names)) == [], "pinned in pyproject.toml, missing from environment.yml"
    assert {n: v for n, v in listed if pins.get(n, v) != v} == {}, "another version than pyproject.toml's"
