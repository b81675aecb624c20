"""The pin table: every replicated library function is pinned, the pins match the installed libraries, and a
changed function is refused with the difference shown."""

from __future__ import annotations

import inspect
import re
import zipfile
from pathlib import Path

import pytest

from analysis import fastpath
from analysis.fastpath import pins
from helpers import REPO


@pytest.mark.parametrize("pin", pins.ALL_PINS, ids=[p.upstream for p in pins.ALL_PINS])
def test_the_installed_library_is_the_pinned_one(pin) -> None:
    assert pin.group in (*fastpath.GROUPS, *pins.HARNESS_GROUPS)
    assert pins.sha256_of(pins.installed_source(pin)) == pin.sha256, (
        f"{pin.upstream} changed: see `python -m analysis.cli fastpath --diff`, mend {pin.replica}, update its pin")
    assert pins.replica_object(pin) is not None
    # the pinned source is found again in the module's text, as it would be in the pinned release's wheel
    assert pins.sha256_of(pins.pinned_source(pin)) == pin.sha256


def test_every_group_and_every_replica_module_is_pinned() -> None:
    assert {pin.group for pin in pins.PINS} == set(fastpath.GROUPS)
    modules = {p.stem for p in (REPO / "analysis/fastpath").glob("*.py")} - {"__init__", "pins", "patching"}
    assert modules == {pin.replica.split(":")[0].rsplit(".", 1)[-1] for pin in pins.PINS
                       if pin.replica.startswith("analysis.fastpath.")}
    assert len({pin.upstream for pin in pins.ALL_PINS}) == len(pins.ALL_PINS)


def test_the_pinned_versions_are_the_projects() -> None:
    pyproject = (REPO / "pyproject.toml").read_text()
    for package, version in pins.PINNED.items():
        assert f'"{pins.distribution(package)}=={version}"' in pyproject


def _changed(pin: pins.Pin) -> str:
    """The installed source of `pin` with one line changed, as an upgrade would."""
    source = inspect.getsource(pins.upstream_object(pin))
    return source.replace("\n", "\n    # changed upstream\n", 1)


def test_a_changed_function_is_refused_and_its_difference_shown(monkeypatch, tmp_path) -> None:
    pin = next(p for p in pins.PINS if p.upstream.endswith("SimulationRunner.run"))
    module = inspect.getmodule(pins.upstream_object(pin))
    text = Path(inspect.getsourcefile(module)).read_text()
    # the installed library is "upgraded": the function's source differs and its version is not the pinned one
    monkeypatch.setattr(pins, "installed_source", lambda p: _changed(p) if p == pin else inspect.getsource(
        pins.upstream_object(p)))
    monkeypatch.setattr(pins, "installed_version", lambda package: "9.9.9")
    expected = r"(?s)group 'runner'.*SimulationRunner\.run.*installed 9\.9\.9.*TSB_STOCK"
    with pytest.raises(pins.PinMismatch, match=expected):
        pins.check_group("runner")
    pins.check_group("mating")  # other groups stay usable
    # the pinned source comes from the pinned release's wheel (here a stand-in in the cache folder)
    monkeypatch.setenv("TSB_UPSTREAM_CACHE", str(tmp_path))
    with zipfile.ZipFile(tmp_path / "kernel_tuner-1.5.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("kernel_tuner/runners/simulation.py", text)
    diff = pins.diff(pin)
    assert re.search(r"^\+    # changed upstream$", diff, re.M), diff
    assert "(kernel_tuner 1.5.0)" in diff and "(installed 9.9.9)" in diff
    report, ok = pins.report(show_diff=True)
    assert not ok and "CHANGED  kernel_tuner.runners.simulation:SimulationRunner.run" in report and diff in report
    assert f"installed sha256 {pins.sha256_of(_changed(pin))}" in report


def test_a_mismatch_stops_a_run_only_where_the_group_is_used(monkeypatch) -> None:
    from analysis.simulate import simulate_run
    from helpers import tiny_space

    pin = next(p for p in pins.PINS if p.group == "diff_evo")
    monkeypatch.setattr(pins, "installed_source", lambda p: _changed(p) if p == pin else inspect.getsource(
        pins.upstream_object(p)))
    monkeypatch.setattr(pins, "_checked", set())
    simulate_run(tiny_space(1), "rs", {}, 10, 1)
    with pytest.raises(pins.PinMismatch, match="diff_evo"):
        simulate_run(tiny_space(1), "diff_evo", {}, 10, 1)
    monkeypatch.setenv(fastpath.ENV, "diff_evo")
    assert simulate_run(tiny_space(1), "diff_evo", {}, 10, 1).evaluations_spent == 10


def test_the_harness_pins_are_checked_and_cannot_be_switched_off(monkeypatch) -> None:
    pin = pins.HARNESS_PINS[0]
    monkeypatch.setattr(pins, "installed_source", lambda p: _changed(p) if p == pin else inspect.getsource(
        pins.upstream_object(p)))
    monkeypatch.setattr(pins, "_checked", set())
    monkeypatch.setenv(fastpath.ENV, "1")
    with pytest.raises(pins.PinMismatch, match=r"(?s)relies on library internals.*tune_kernel.*cannot avoid"):
        from analysis.simulate import simulate_run
        from helpers import tiny_space

        simulate_run(tiny_space(1), "rs", {}, 10, 1)


def test_a_run_checks_its_pins_without_importing_the_scoring_package() -> None:
    """The pin checks of a simulate job import nothing the job itself does not (autotuning_methodology is a slow
    import, and only the constraint-aware scores need it)."""
    import subprocess
    import sys

    code = ("import sys, warnings; warnings.simplefilter('ignore')\n"
            "from helpers import tiny_space\n"
            "from analysis.simulate import simulate_run\n"
            "for name in ('rs', 'nsga2', 'nsga3_unaware', 'diff_evo'):\n"
            "    simulate_run(tiny_space(2 if name != 'rs' and name != 'diff_evo' else 1), name, {}, 10, 1)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('autotuning_methodology', 'sklearn'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO / "tests",
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
