"""Shared fixtures: a temporary folder and one local run of the tiny config (its tests are marked slow).
Shared helpers (paths, hand-made Kernel Tuner caches, the tiny space) are plain functions in `helpers.py`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO

HUB = REPO / "data" / "benchmark_hub"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that uses the tiny run (directly or through another fixture) is slow: the first one runs the
    whole tiny DAG."""
    for item in items:
        if "tiny_run" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


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
    """
    run = tmp_path_factory.mktemp("tiny_run")
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(run), "--cores", "2",
           "--configfile", str(REPO / "config/test.yaml")]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    (run / "snakemake.out").write_text(out.stdout + out.stderr)
    return run
