"""Shared fixtures: a temporary folder and one local run of the tiny config (its tests are marked slow).
Shared helpers (paths, hand-made Kernel Tuner caches, the tiny space) are plain functions in `helpers.py`.

Two tiers (README "Test"): a plain `pytest` runs the tests not marked slow; `pytest --slow` runs every test, the
slow ones too (the whole tiny DAG and what reads it, and the tests over about 20 s). `.ci/run` runs the plain suite,
then the slow tier alone (`pytest --slow --slurm -m slow`).
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

import analysis  # noqa: F401  (first: it pins the numeric kernels before numpy loads, analysis/numerics.py)
from helpers import REPO

HUB = REPO / "data" / "benchmark_hub"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true",
                     help="also run the tests marked slow: the whole tiny DAG, the tests that read it and the tests "
                          "over about 20 s (a plain pytest leaves them out; .ci/run asks)")
    parser.addoption("--slurm", action="store_true",
                     help="also run tests/workflow/test_slurm.py, which installs Debian's slurm-wlm and munge where "
                          "missing and starts a single-node Slurm on this machine (root); .ci/run asks for it")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slurm: installs and starts a Slurm cluster on this machine; runs with --slurm")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked `slurm` runs only when asked (--slurm): nothing outside the project is installed or started by
    a plain `pytest`."""
    if item.get_closest_marker("slurm") and not item.config.getoption("--slurm"):
        pytest.skip("installs and starts a Slurm cluster on this machine: runs with --slurm (.ci/run asks)")


@pytest.hookimpl(tryfirst=True)  # before `-m` selects on the slow marker added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that uses the tiny run (directly or through another fixture) is slow: the first one runs the
    whole tiny DAG. Without --slow the slow tests are deselected (the Slurm test stays when --slurm asks for it).

    The long tests go first, so that the xdist workers end together instead of one running a long test
    alone at the end: the Slurm test (it makes the tiny run, then mostly waits on the cluster's jobs),
    then the other slow tests that do not wait for the tiny run, then the rest in their order.
    """
    uses_run = {item.nodeid for item in items if "tiny_run" in getattr(item, "fixturenames", ())}
    for item in items:
        if item.nodeid in uses_run:
            item.add_marker(pytest.mark.slow)

    def rank(item: pytest.Item) -> int:
        if item.path.name == "test_slurm.py":
            return 0
        return 1 if item.get_closest_marker("slow") and item.nodeid not in uses_run else 2

    if not config.getoption("--slow"):
        asked = config.getoption("--slurm")
        left_out = [item for item in items
                    if item.get_closest_marker("slow") and not (asked and item.get_closest_marker("slurm"))]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            dropped = {id(item) for item in left_out}
            items[:] = [item for item in items if id(item) not in dropped]
    items.sort(key=rank)  # stable: each rank keeps the collection order


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    """A fresh temporary folder."""
    return tmp_path


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    """The folder of one local run of config/test.yaml (`snakemake --cores 2`), made once per session.

    Its outputs are under `.test-output/`. test_workflow checks what it made; test_slurm runs the
    same DAG through Slurm and compares the tables byte for byte. Tests read it, never write into
    its `.test-output/`.

    Under pytest-xdist (pyproject.toml's addopts) the workers share one run: the first to need it
    makes it in the session's common temporary folder while holding a lock, the others wait and read it.
    """
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return _tiny_run(tmp_path_factory.mktemp("tiny_run"))
    common = tmp_path_factory.getbasetemp().parent  # this session's folder, above each worker's own
    with open(common / "tiny_run.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        run = common / "tiny_run"
        if not run.exists():
            run.mkdir()
            return _tiny_run(run)
    if not (run / "snakemake.out").exists():
        pytest.fail(f"the tiny run failed in another worker (its folder: {run})", pytrace=False)
    return run


def _tiny_run(run: Path) -> Path:
    """Run the tiny config in `run`; snakemake.out, its output, is written only when the run succeeded."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(run), "--cores", "2",
           "--configfile", str(REPO / "config/test.yaml")]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    (run / "snakemake.out").write_text(out.stdout + out.stderr)
    return run
