"""Shared fixtures: small hand-made Kernel Tuner cache files and the repository paths."""

from __future__ import annotations

import gzip
import json
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
