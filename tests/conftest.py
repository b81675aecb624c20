"""Shared fixtures: small hand-made Kernel Tuner cache files, the repository paths, one local run of the tiny config."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
HUB = REPO / "data" / "benchmark_hub"


def kt_cache(tune_params: dict[str, list], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A Kernel Tuner cache document holding `rows` (parameter values plus measured fields)."""
    keys = list(tune_params)
    cache = {}
    for r in rows:
        entry = {"compile_time": 1.0, "verification_time": 0.0, "benchmark_time": 2.0, **r}
        cache[",".join(str(r[p]) for p in keys)] = entry
    return {"device_name": "Test GPU", "kernel_name": "k", "problem_size": [8], "tune_params_keys": keys,
            "tune_params": tune_params, "objective": "time", "cache": cache}


def write(path: Path, doc: Any, gz: bool = False) -> Path:
    """Write `doc` as JSON (gzipped when asked) and return the path."""
    text = json.dumps(doc)
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


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
