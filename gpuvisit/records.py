"""Provenance of the GPU machine: nvidia-smi's answers, the host and the software versions."""

from __future__ import annotations

import contextlib
import os
import platform
import subprocess
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from analysis.sweep.provenance import cpu_model

SMI_FIELDS = ("name", "driver_version", "pci.bus_id", "compute_cap", "memory.total", "clocks.sm", "clocks.mem",
              "clocks.max.sm", "clocks.max.mem", "clocks.applications.graphics", "clocks.applications.memory",
              "power.limit", "power.default_limit", "persistence_mode", "pstate", "temperature.gpu", "mig.mode.current",
              "clocks_event_reasons.active")


def nvidia_smi(fields: Sequence[str] = SMI_FIELDS) -> dict[str, str | None]:
    """nvidia-smi's answer per field for GPU 0 (None where it has none or nvidia-smi is missing)."""
    def query(fs: Sequence[str]) -> list[str] | None:
        try:
            proc = subprocess.run(["nvidia-smi", "-i", "0", f"--query-gpu={','.join(fs)}", "--format=csv,noheader"],
                                  capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return None
        if proc.returncode != 0:
            return None
        values = [v.strip() for v in proc.stdout.strip().split(",")]
        return values if len(values) == len(fs) else None

    values = query(fields)
    if values is not None:
        return dict(zip(fields, values))
    out = {}
    for f in fields:  # one unknown field fails the whole query: ask one by one
        v = query([f])
        out[f] = v[0] if v else None
    return out


def host_record() -> dict[str, Any]:
    return {"cpu_model": cpu_model(), "cpu_count": os.cpu_count(), "machine": platform.machine(),
            "os": platform.platform(), "load_average": [round(x, 2) for x in os.getloadavg()]}


def software_record() -> dict[str, Any]:
    rec: dict[str, Any] = {"python": platform.python_version(), "numpy": np.__version__}
    for dist in ("kernel_tuner", "cupy", "cupy-cuda12x", "cupy-cuda13x", "nvidia-ml-py", "ml_dtypes"):
        with contextlib.suppress(PackageNotFoundError):
            rec[dist] = version(dist)
    return rec
