"""environment.yml carries pyproject.toml's pins: every pinned package once, at the same version."""

from __future__ import annotations

import fnmatch
import re
import subprocess
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


def test_every_data_file_of_the_packages_is_shipped() -> None:
    """A non-editable install gets every file that analysis/ and gpuvisit/ read besides their modules (the figures'
    matplotlibrc, the README's templates): each is declared in pyproject.toml's package-data."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    tracked = subprocess.run(["git", "ls-files", "analysis", "gpuvisit"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()
    data = [path for path in tracked if not path.endswith(".py")]
    assert data  # the check sees the files it is about
    shipped = [f"{package.replace('.', '/')}/{pattern}"
               for package, patterns in declared.items() for pattern in patterns]
    unshipped = [path for path in data if not any(fnmatch.fnmatch(path, pattern) for pattern in shipped)]
    assert unshipped == [], f"not in pyproject.toml's [tool.setuptools.package-data]: {unshipped}"
