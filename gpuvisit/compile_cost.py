"""What compiling one CUDA configuration on its own costs: nvcc of its Kernel Tuner kernel string.

The GPU lease builds the optimisation variants of a precision combination together
(gpuvisit.cuda_modules), so its caches hold no per-configuration compile cost: their
`compile_time` is the look-up of a variant's function and `library_build_time` a shared build
(analysis.spaces.importers refuses such a cache without `compile_times`). A tuning run with
Kernel Tuner compiles every configuration it evaluates on its own; its default CUDA backend
(PyCUDA, `lang="CUDA"`) runs nvcc on the configuration's kernel string.

This measures that compile, and needs no GPU: for each configuration, in the seeded stratified
order of analysis.sweep.compile_cost.measurement_order (so every prefix is a sample of the
space), the kernel string Kernel Tuner 1.5.0 writes for it (cuda_modules.KernelStrings) is
compiled alone by nvcc with Kernel Tuner's compiler options for the GPU's architecture
(cuda_modules.compile_alone: `-cubin -arch=ARCH -std=c++17 -I...`), and the wall time of that
nvcc process is recorded as the entry's `compile_time` (ms) in a Kernel Tuner cache of the
space's parameters, which `compile_times:` of a space accepts. One nvcc at a time, so the
figure is a configuration's compile on an otherwise idle core. Resumable (what the cache holds
is skipped) and pausable (while a file PAUSE* exists beside the cache it waits between
configurations).

Not included, and said so in the provenance: loading the module on the device (needs a GPU;
about a millisecond), and that the compile runs on the machine where this is run, not on the
GPU machine's host.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import logging
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

from analysis import manifest
from analysis.errors import InputError
from analysis.io import write_gzip, write_json, write_text
from analysis.sweep import cachefile, harness
from analysis.sweep.compile_cost import ORDER_SEED, PAUSE_FILE, measurement_order
from analysis.sweep.configs import config_key
from analysis.sweep.provenance import cpu_model
from gpuvisit import cuda_modules
from gpuvisit.cache import ShardWriter, cache_header, entry_line, open_cache_text
from gpuvisit.plan import REPORT

log = logging.getLogger(__name__)
TARGET = "cuda"
SIZE = "gpu"
# The published records' wording (data/sweeps/cuda/<gpu>/compile/*.provenance.json and data/MANIFEST.csv): the
# module and command that measured them, named as they were then; kept so that publishing a measurement again
# gives the published files unchanged (tests/gpuvisit/test_cuda_compile_cost.py). The command is now
# `python -m gpuvisit cuda-compile-cost` (this module).
PUBLISHED_BY = "analysis.sweep.cuda_compile_cost"
MANIFEST_SOURCE = f"measured by this suite ({PUBLISHED_BY}, `python -m analysis.cli cuda-compile-cost`)"


def measure(kernel: str, cache: str | Path, *, count: int | None = None, size_name: str = SIZE, arch: str = "sm_90",
            nvcc: str | None = None, seconds: float | None = None) -> dict[str, int]:
    """Time nvcc on the first `count` configurations of the measurement order into the open cache `cache`.

    Stops after `seconds` when given (between two configurations). Returns counts.
    """
    spec = harness.load_spec(kernel)
    names = list(spec.tune_params(TARGET))
    order = measurement_order(spec, target=TARGET)[:count]
    cache = Path(cache)
    writer = ShardWriter(cache, {**cache_header(spec, cpu_model(), size_name), "objective": "compile_time"})
    strings = cuda_modules.KernelStrings(spec, size_name)
    nvcc = nvcc or cuda_modules.nvcc_path()
    start = time.monotonic()
    done = 0
    with tempfile.TemporaryDirectory(prefix=f"tsb-cuda-compile-{kernel}-") as tmp:
        for config in order:
            key = config_key(config, names)
            if key in writer.keys:
                continue
            if seconds is not None and time.monotonic() - start > seconds:
                break
            while any(cache.parent.glob(f"{PAUSE_FILE}*")):
                time.sleep(5)
            _, text = strings(config)
            out = Path(tmp) / "c.cubin"
            t0 = time.perf_counter()
            cuda_modules.compile_alone(spec, text, out, arch, nvcc)
            ms = (time.perf_counter() - t0) * 1000
            out.unlink()
            writer.append({key: {**{p: config[p] for p in names}, "compile_time": round(ms, 3),
                                 "timestamp": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")}})
            done += 1
    return {"measured_now": done, "measured": len(writer.keys), "order": len(order)}


def reopen(kernel: str, published: str | Path, cache: str | Path) -> int:
    """Write the open cache `cache` holding a published measurement's entries, so that it can be continued
    (`measure` skips what it holds) or published again (e.g. with its outside check once the kernel's GPU
    sweep is published). Refuses to overwrite a cache; returns the number of entries."""
    cache, published = Path(cache), Path(published)
    if cache.exists():
        raise InputError(cache, "exists already; --reopen writes a new cache only", field="--cache")
    try:
        with gzip.open(published, "rt") as fh:
            doc = json.load(fh)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(published, f"not a published compile measurement ({exc})", field="--reopen") from None
    names = list(harness.load_spec(kernel).tune_params(TARGET))
    if not isinstance(doc, dict) or doc.get("tune_params_keys") != names or not isinstance(doc.get("cache"), dict):
        raise InputError(published, f"holds no cache of {kernel}'s CUDA parameters {names}", field="tune_params_keys")
    header = {k: v for k, v in doc.items() if k != "cache"}
    cache.parent.mkdir(parents=True, exist_ok=True)
    write_text(open_cache_text(header) + "".join(entry_line(k, e) for k, e in doc["cache"].items()), cache)
    return len(doc["cache"])


def outside_check(kernel: str, lease_cache: Path) -> dict[str, Any] | None:
    """The GPU machine's own nvcc speed against this machine's, from the same kind of work: the lease's modules.

    The lease's cache records each module's build (`library_build_time`, 15 nvcc side by side on the GPU
    machine) and its variants; benchmarks/reports/bench_gpu_lease.json the grouped rate per core here. Their
    ratio says how much longer the GPU machine's nvcc took per variant, so how far a compile cost measured
    here may be from one paid there (under that machine's load during a lease).
    """
    if not lease_cache.is_file() or not REPORT.is_file():
        return None
    with gzip.open(lease_cache, "rt") as fh:
        entries = [e for e in json.load(fh)["cache"].values() if e.get("library_variants")]
    report = json.loads(REPORT.read_text())
    rate = (report["compile"].get(kernel) or {}).get("grouped_configurations_per_s_per_core")
    if not entries or not rate:
        return None
    there = median(e["library_build_time"] / e["library_variants"] for e in entries)
    here = 1000.0 / rate
    return {"gpu_machine_grouped_ms_per_variant_median": round(there, 1),
            "this_machine_grouped_ms_per_variant": round(here, 1),
            "ratio": round(there / here, 2),
            "gpu_machine": "the lease's modules (15 nvcc side by side while one core measured)",
            "this_machine": f"{REPORT.name}: {report['machine']['cpu_model']}, {report['jobs']} nvcc side by side, "
                            f"{report['date'][:10]}"}


def publish(kernel: str, cache: str | Path, out: str | Path, provenance: str | Path, *, arch: str = "sm_90",
            note: str = "", data_dir: str | Path = "data") -> Path:
    """Close `cache` into the gzipped cache `out` (entries in measurement order) with its provenance JSON;
    refresh data/MANIFEST.csv for `out`'s folder when it lies under `data_dir`."""
    spec = harness.load_spec(kernel)
    names = list(spec.tune_params(TARGET))
    cachefile.repair(Path(cache))
    doc = cachefile.read(Path(cache))
    rank = {config_key(c, names): i for i, c in enumerate(measurement_order(spec, target=TARGET))}
    entries = dict(sorted(doc["cache"].items(), key=lambda kv: rank[kv[0]]))
    out = Path(out)
    write_gzip(json.dumps({**{k: v for k, v in doc.items() if k != "cache"}, "cache": entries}).encode(), out)
    ms = [e["compile_time"] for e in entries.values()]
    stamps = sorted(e["timestamp"] for e in entries.values())
    write_json({
        "kernel": kernel, "target": TARGET, "size": SIZE,
        "what": "nvcc compiling each configuration's Kernel Tuner kernel string on its own (-cubin, Kernel Tuner's "
                "compiler options), as Kernel Tuner's PyCUDA backend does for every configuration it evaluates; "
                f"compile_time is that nvcc process's wall time (ms), one nvcc at a time ({PUBLISHED_BY})",
        "not_included": "loading the module on the GPU; that the GPU machine's host CPU compiles at another speed",
        "arch": arch, "nvcc": cuda_modules.nvcc_version(), "machine": doc.get("device_name") or cpu_model(),
        "configurations": len(entries), "space_configurations": len(rank),
        "sample": {"order_seed": ORDER_SEED, "order": "analysis.sweep.compile_cost.measurement_order, target cuda",
                   "is_prefix_of_order": max((rank[k] for k in entries), default=-1) + 1 == len(entries)},
        "compile_time_ms": {"mean": sum(ms) / len(ms), "min": min(ms), "max": max(ms)} if ms else None,
        "measured_from": stamps[0] if stamps else None, "measured_to": stamps[-1] if stamps else None,
        "outside_check": outside_check(kernel, out.parent.parent / f"{kernel}.json.gz"),
        "note": note,
    }, Path(provenance))

    manifest.record_measured(data_dir, out.parent, MANIFEST_SOURCE)
    return out
