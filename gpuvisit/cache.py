"""A kernel's identity and its Kernel Tuner cache text during a visit: the sources' hash, the lease order,
cache keys, and the open shard cache a visit appends to entry by entry (crash-safe)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from analysis.errors import InputError
from analysis.sweep import cachefile, harness
from analysis.sweep.spec import COMMON_DIR, KernelSpec, list_kernels

SIZE = "gpu"  # the problem size a visit measures at


class LeaseError(InputError):
    """Packs, caches or options of a lease are inconsistent."""


# ---- identity of a kernel's sources ------------------------------------------------------------------------

def source_hash(kernel: str) -> str:
    """sha256 over what a CUDA measurement of the kernel depends on: spec, reference, kernel.cu, headers."""
    spec = harness.load_spec(kernel)
    files = [spec.folder / f for f in ("spec.yaml", "reference.py", "kernel.cu", f"{kernel}.h")]
    files += sorted(COMMON_DIR.glob("*.h"))
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0")
        h.update(f.read_bytes() if f.exists() else b"")
    return h.hexdigest()


def ordered_kernels(kernels: Iterable[str] | None = None) -> list[str]:
    """Kernels by CUDA space size, smallest first (ties by name)."""
    names = list(kernels) if kernels else list_kernels()
    unknown = sorted(set(names) - set(list_kernels()))
    if unknown:
        raise LeaseError(None, f"unknown kernel(s) {unknown} (known: {', '.join(list_kernels())})", field="--kernels")
    sizes = {k: len(harness.load_spec(k).valid_configs("cuda")) for k in names}
    return sorted(names, key=lambda k: (sizes[k], k))


def cache_names(spec: KernelSpec) -> list[str]:
    """The cache's parameter order: the cuda target's tune_params (own parameters, then precision)."""
    return list(spec.tune_params("cuda"))


def config_key(config: Mapping[str, Any], names: Sequence[str]) -> str:
    """Kernel Tuner's cache key of a configuration."""
    return ",".join(str(config[p]) for p in names)


# ---- Kernel Tuner cache text (open caches, appended entry by entry) -------------------------------------------

def cache_header(spec: KernelSpec, device_name: str, size_name: str) -> dict[str, Any]:
    """The header of a kernel's shard cache (Kernel Tuner's fields; the spec's full tune_params)."""
    return {"device_name": device_name, "kernel_name": spec.function, "problem_size": spec.problem_size(size_name),
            "tune_params_keys": cache_names(spec), "tune_params": spec.tune_params("cuda"), "objective": "time"}


def open_cache_text(header: Mapping[str, Any]) -> str:
    """A Kernel Tuner cache's opening text (ends in `"cache": {`), as util.process_cache writes it."""
    text = json.dumps({**header, "cache": {}}, indent="")
    if not text.endswith("{}\n}"):
        raise AssertionError("unexpected JSON layout")
    return text[:-3]


def entry_line(key: str, entry: Mapping[str, Any]) -> str:
    """One appended cache line, as util.store_cache writes it."""
    return "\n" + json.dumps({key: entry})[1:-1] + ","


def closed_cache(header: Mapping[str, Any], entries: Mapping[str, Any]) -> dict[str, Any]:
    """A complete Kernel Tuner cache document."""
    return {**header, "cache": dict(entries)}


class ShardWriter:
    """A kernel's open shard cache in the work folder, appended batch by batch (crash-safe with cachefile.repair)."""

    def __init__(self, path: str | Path, header: Mapping[str, Any]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        cachefile.repair(self.path)
        if self.path.exists():
            doc = cachefile.read(self.path)
            if doc.get("tune_params_keys") != header["tune_params_keys"]:
                raise LeaseError(self.path, "parameters differ from the kernel's", field="tune_params_keys")
            self.keys = set(doc["cache"])
        else:
            self.path.write_text(open_cache_text(header))
            self.keys = set()

    def append(self, entries: Mapping[str, Mapping[str, Any]]) -> int:
        new = {k: v for k, v in entries.items() if k not in self.keys}
        if new:
            with open(self.path, "a") as f:
                f.write("".join(entry_line(k, v) for k, v in new.items()))
                f.flush()
                os.fsync(f.fileno())
            self.keys |= set(new)
        return len(new)
