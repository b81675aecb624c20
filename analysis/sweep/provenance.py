"""Where and how a sweep was measured: the host CPU's model, the compiler's and GPU driver's versions,
and the provenance record of one shard.

Every field is read from the machine at measurement time; a tool that cannot be run (no nvcc,
no nvidia-smi) leaves its field None rather than failing the sweep.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from analysis.sweep import harness


def command_first_line(cmd: list[str]) -> str | None:
    """The first line a command prints, stripped; None where it cannot run or prints nothing."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.splitlines()[0].strip()
    except (OSError, IndexError, subprocess.SubprocessError):
        return None


def cpu_model() -> str:
    """The host CPU's model name."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def provenance_record(kernel: str, target: str, size_name: str, iterations: int, shard: tuple[int, int],
                      env: Mapping[str, Any], summary: Mapping[str, Any]) -> dict[str, Any]:
    """Where and how a shard was measured."""
    import kernel_tuner

    spec = harness.load_spec(kernel)
    rec: dict[str, Any] = {
        "kernel": kernel, "target": target, "size": size_name, "size_values": spec.size(size_name),
        "iterations": iterations, "shard": f"{shard[0]}/{shard[1]}", **summary,
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "host": {"cpu_model": cpu_model(), "cpu_count": os.cpu_count(), "machine": platform.machine(),
                 "os": platform.platform()},
        "software": {"kernel_tuner": (kernel_tuner.__version__ if hasattr(kernel_tuner, "__version__")
                                      else _kt_version()),
                     "python": platform.python_version(), "numpy": np.__version__},
    }
    if target == "cpu":
        rec["compiler"] = {"command": harness.CXX, "version": command_first_line([harness.CXX, "--version"]),
                           "flags": ["-fPIC", *harness.CXX_FLAGS, "-I<workflow/kernels/common>"]}
    else:
        rec["compiler"] = {"command": "nvcc (through Kernel Tuner's CUDA backend)",
                           "version": command_first_line(["nvcc", "--version"]) and
                           subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip()
                           .splitlines()[-1],
                           "flags": ["-std=c++17", "-I<workflow/kernels/common>"]}
        rec["gpu"] = {"name": env.get("device_name"), "driver": _nvidia_smi("driver_version"),
                      "cuda": env.get("cuda_version") or env.get("CUDA_version"),
                      "compute_capability": env.get("compute_capability")}
    rec["kernel_tuner_env"] = {k: v for k, v in env.items() if isinstance(v, (str, int, float, bool)) or v is None}
    return rec


def _kt_version() -> str:
    from importlib.metadata import version

    return version("kernel_tuner")


def _nvidia_smi(field: str) -> str | None:
    return command_first_line(["nvidia-smi", f"--query-gpu={field}", "--format=csv,noheader"])
