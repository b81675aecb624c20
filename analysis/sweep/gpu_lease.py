"""GPU sweeps that fit a lease: the nine kernels' CUDA spaces in as few short GPU visits as possible.

    python -m analysis.cli gpu-lease --deadline-min 25 --out OUT [--resume PACKS ...]   # on the GPU machine
    python -m analysis.cli gpu-lease --plan [--resume PACKS ...]                       # anywhere
    python -m analysis.cli gpu-lease --compile-only --kernels bessel --arch sm_90 --out DIR

A visit (a lent GPU machine: bare, about 25 usable minutes, at most 8 result files of 16 MiB)
runs, in the order of the kernels' CUDA space sizes, smallest first, so that each visit
completes whole spaces:

1. resume: every configuration already in the shard caches that earlier visits brought back
   (`--resume`: their pack files) or that this visit measured before a crash (the work folder)
   is skipped; packs of another GPU, size or source version of a kernel are refused;
2. compile ahead: every pending configuration's module is built by nvcc in a pool of processes
   on all cores but one (analysis.sweep.cuda_modules: one module per chunk of a precision
   combination's optimisation variants, each variant its own code from Kernel Tuner's own
   kernel string), alongside the measurement; the float64 references of the next kernels are
   computed in another worker meanwhile;
3. per kernel: the correctness gate (analysis.sweep.shard.reference_check on the GPU, the
   reference configuration against the float64 reference at the sweep's size; a kernel that
   fails it is skipped and the failure recorded); then `tune_kernel` calls (Kernel Tuner's
   brute force, CuPy backend, its own benchmarking: `iterations` timed runs with CUDA events)
   of batches of precision combinations, each into a scratch cache appended to the kernel's
   shard cache; the error metrics on the device (analysis.sweep.device_metrics); energy per
   configuration through Kernel Tuner's NVML observer where NVML answers;
4. a clean stop before the deadline: before each configuration Kernel Tuner asks its budget
   whether to go on, and here the budget answers no once the next configuration (twice the
   longest of the recent ones) would end after the deadline less `reserve_s`;
5. packing: the visit's shard caches (gzipped Kernel Tuner caches, split where large) and the
   provenance (GPU, driver, CUDA, clocks, Kernel Tuner and CuPy versions, energy status,
   per-kernel counts, gates and throughput per stage) into at most 8 tar files of at most
   16 MiB each (`pack`).

`merge_packs` (`gpu-lease-merge`) joins every visit's packs of one GPU: a complete space into
the merged cache, definition and provenance of analysis.sweep.merge.merge; a partial one into a
cache named `<kernel>.partial.json.gz` whose provenance says how much of the space it holds.

The plan (`plan`, `--plan`, and the generated section of docs/kernels.md) estimates each
kernel's time from a measure rate and a compile rate: the measure rate measured by an earlier
visit on that GPU (from the packs' provenance) where there is one, else the issue's target of
20 configurations/s, an assumption; the compile rate is nvcc's per-core rate measured by
`benchmarks/bench_gpu_lease.py` (on the machine named in its report) times the GPU machine's
compile workers, an assumed scaling.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import gzip
import hashlib
import io
import json
import logging
import math
import multiprocessing
import os
import platform
import subprocess
import tarfile
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from analysis import manifest
from analysis.errors import InputError
from analysis.io import write_json
from analysis.sweep import cachefile, cuda_modules, harness, progress
from analysis.sweep import device_metrics as dm
from analysis.sweep.kt_setup import cuda_options, kernel_tuner_scratch
from analysis.sweep.merge import merge, write_definition
from analysis.sweep.provenance import cpu_model
from analysis.sweep.shard import reference_check
from analysis.sweep.spec import COMMON_DIR, ROOT, KernelSpec, list_kernels

log = logging.getLogger(__name__)

SIZE = "gpu"
ASSUMED_MEASURE_RATE = 20.0  # configurations/s: the target for one H100; an assumption until measured
ASSUMED_COMPILE_WORKERS = 15  # nvcc processes on the 16-core GPU machine (one core measures): an assumption
# usable minutes of one visit: a session is lent 15 minutes of device time, the machine's start, the transfers
# and the install included (2026-11-26: start and transfer about 35 s, install 10 s, a first visit of 8.6 min)
VISIT_MINUTES = 12
RESERVE_S = 60.0  # seconds kept free before the deadline for packing
PACK_FILES = 8
PACK_BYTES = 16 * 2**20
PACK_FORMAT = "tsb-gpu-lease/1"
BATCH_MIN = 256  # configurations per tune_kernel call (whole precision combinations)
# Energy is off by default: Kernel Tuner 1.5.0 benchmarks a configuration continuously for max(1 s, the window)
# when a continuous observer (NVML's energy) is present (core.py, DeviceInterface.benchmark), so energy costs at
# least a second per configuration: 0.99 configurations/s on kmeans on an H200 (visit 20261126T021416Z).
ENERGY_WINDOW_S = 0.0
EXIT_WATCHDOG_S = 60.0  # after a lease has packed, the process must be gone within this many seconds
REPORT = ROOT / "benchmarks" / "reports" / "bench_gpu_lease.json"
PACKS = ROOT / "data" / "sweeps" / "cuda"  # every published visit's packs: data/sweeps/cuda/<gpu>/packs/
DOC = ROOT / "docs" / "kernels.md"
DOC_BEGIN = "<!-- gpu-plan:begin: generated by `python -m analysis.cli gpu-plan-doc`; do not edit -->"
DOC_END = "<!-- gpu-plan:end -->"


class LeaseError(InputError):
    """Packs, caches or options of a lease are inconsistent."""


class DeadlineReached(Exception):
    """The next configuration would end after the lease's stop time."""


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


# ---- resume ------------------------------------------------------------------------------------------------

@dataclass
class Resumed:
    """What earlier visits (or this visit before a restart) measured, per kernel."""

    entries: dict[str, dict[str, dict]] = field(default_factory=dict)  # kernel -> key -> cache entry
    headers: dict[str, dict] = field(default_factory=dict)  # kernel -> cache header (without entries)
    provenance: list[dict] = field(default_factory=list)  # one per pack set (visit)
    refused: list[str] = field(default_factory=list)

    def done(self, kernel: str) -> set[str]:
        return set(self.entries.get(kernel, {}))

    def add(self, kernel: str, doc: Mapping[str, Any], where: str) -> None:
        spec = harness.load_spec(kernel)
        if doc.get("tune_params_keys") != cache_names(spec):
            raise LeaseError(where, f"{kernel}: parameters {doc.get('tune_params_keys')} differ from the spec's "
                                    f"{cache_names(spec)}", field="tune_params_keys")
        have = self.entries.setdefault(kernel, {})
        for key, entry in doc["cache"].items():
            if key in have and have[key] != entry:
                raise LeaseError(where, f"{kernel}: configuration '{key}' was measured twice, with different results",
                                 field=f"cache.{key}")
            have[key] = entry
        self.headers.setdefault(kernel, {k: v for k, v in doc.items() if k != "cache"})


def _kernel_of_function(function: str) -> str | None:
    for k in list_kernels():
        if harness.load_spec(k).function == function:
            return k
    return None


def read_pack(path: str | Path) -> tuple[dict[str, Any], dict[str, list[dict]]]:
    """(provenance, kernel -> cache documents) of one pack file."""
    path = Path(path)
    docs: dict[str, list[dict]] = {}
    prov: dict[str, Any] | None = None
    try:
        with tarfile.open(path) as tar:
            for member in tar.getmembers():
                if not member.isfile():
                    continue
                data = tar.extractfile(member).read()
                if member.name == "provenance.json":
                    prov = json.loads(data)
                elif member.name.endswith(".json.gz"):
                    kernel = member.name.split(".", 1)[0]
                    docs.setdefault(kernel, []).append(json.loads(gzip.decompress(data)))
    except (tarfile.TarError, OSError, json.JSONDecodeError) as exc:
        raise LeaseError(path, f"not a readable lease pack ({exc})") from None
    if prov is None or prov.get("format") != PACK_FORMAT:
        raise LeaseError(path, f"has no provenance.json of format {PACK_FORMAT}")
    return prov, docs


def _pack_files(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out += sorted(q for q in p.rglob("*.tar"))
        elif p.exists():
            out.append(p)
        else:
            raise LeaseError(p, "does not exist", field="--resume")
    return out


def resume(paths: Iterable[str | Path], *, size_name: str = SIZE, gpu: str | None = None,
           kernels: Iterable[str] | None = None) -> Resumed:
    """Everything the packs (or Kernel Tuner caches) at `paths` hold for the current sources, size and GPU.

    A pack of another size or of other kernel sources (source_hash) is an error; one of another GPU
    (when `gpu` is given) is left out with a note in `refused`.
    """
    res = Resumed()
    wanted = set(kernels or list_kernels())
    hashes = {k: source_hash(k) for k in wanted}
    seen_runs: set[str] = set()
    for f in _pack_files(paths):
        if f.suffix == ".tar":
            prov, docs = read_pack(f)
            if prov.get("size") != size_name:
                raise LeaseError(f, f"was measured at size '{prov.get('size')}', this lease's is '{size_name}'")
            device = (prov.get("gpu") or {}).get("name")
            if gpu is not None and device != gpu:
                res.refused.append(f"{f.name}: GPU {device!r}, not {gpu!r}")
                continue
            for kernel, kdocs in docs.items():
                if kernel not in wanted:
                    continue
                old = (prov.get("kernels") or {}).get(kernel, {}).get("source_sha256")
                if old != hashes[kernel]:
                    raise LeaseError(f, f"{kernel} was measured with other sources (sha256 {old}); the kernel's "
                                        f"current sources hash to {hashes[kernel]}; its measurements cannot be "
                                        "continued", field=f"kernels.{kernel}.source_sha256")
                for doc in kdocs:
                    res.add(kernel, doc, str(f))
            run = run_key(prov)
            if run not in seen_runs:
                seen_runs.add(run)
                res.provenance.append(prov)
                missing = [n for n in (prov.get("pack") or {}).get("files", []) if not (f.parent / n).exists()]
                if missing:  # what they held is measured again
                    log.warning("resume: visit %s's pack file(s) %s are not beside %s",
                                prov.get("visit", {}).get("id"), missing, f.name)
        else:  # a plain Kernel Tuner cache (.json, .json.gz), e.g. a work folder's shard
            raw = f.read_bytes()
            text = gzip.decompress(raw).decode() if f.name.endswith(".gz") else raw.decode()
            try:
                doc = cachefile.parse(text)
            except (json.JSONDecodeError, KeyError) as exc:
                raise LeaseError(f, f"not a readable Kernel Tuner cache ({exc})") from None
            kernel = _kernel_of_function(doc.get("kernel_name", ""))
            if kernel is None:
                raise LeaseError(f, f"kernel_name '{doc.get('kernel_name')}' is no kernel's function")
            if kernel in wanted:
                if gpu is not None and doc.get("device_name") != gpu:
                    res.refused.append(f"{f.name}: GPU {doc.get('device_name')!r}, not {gpu!r}")
                    continue
                res.add(kernel, doc, str(f))
    return res


def run_key(prov: Mapping[str, Any]) -> str:
    """A lease run is known by its whole visit record: a run that continues a visit's work folder keeps the
    visit's id but has its own start, length and stop, and its pack repeats the earlier run's entries."""
    return json.dumps(prov.get("visit") or {}, sort_keys=True)


def measured_kernels(prov: Mapping[str, Any]) -> list[str]:
    """The kernels a lease run measured at least one configuration of."""
    return sorted(k for k, rec in (prov.get("kernels") or {}).items() if rec.get("measured_now", 0) > 0)


def measured_rates(provenance: Sequence[Mapping[str, Any]]) -> dict[str, tuple[float, str]]:
    """Per kernel, the measure rate (configurations/s) the lease runs recorded, with where it came from.

    A kernel's runs are pooled: the configurations they measured over their measuring seconds. Runs with
    energy on (Kernel Tuner's NVML observer benchmarks each configuration for at least a second) are left
    out where the kernel has runs without it.
    """
    runs: dict[str, list[tuple[bool, int, float, str]]] = {}
    for prov in provenance:
        energy = bool((prov.get("energy") or {}).get("recorded"))
        for kernel in measured_kernels(prov):
            rec = prov["kernels"][kernel]
            seconds = (rec.get("throughput") or {}).get("measure_s")
            if isinstance(seconds, (int, float)) and seconds > 0:
                runs.setdefault(kernel, []).append((energy, rec["measured_now"], float(seconds),
                                                    str((prov.get("gpu") or {}).get("name"))))
    rates: dict[str, tuple[float, str]] = {}
    for kernel, every in runs.items():
        rs = [r for r in every if not r[0]] or every
        n, seconds = sum(r[1] for r in rs), sum(r[2] for r in rs)
        if n >= 50:
            gpus = ", ".join(sorted({r[3] for r in rs}))
            energy = ("; energy on" if rs[0][0] else
                      f"; {len(every) - len(rs)} with energy on left out" if len(rs) < len(every) else "")
            rates[kernel] = (n / seconds, f"measured on {gpus} ({n:,} configurations in {len(rs)} lease "
                                          f"run{'s' if len(rs) > 1 else ''}{energy})")
    return rates


# ---- plan ----------------------------------------------------------------------------------------------------

@dataclass
class KernelPlan:
    """One kernel's place in the plan."""

    kernel: str
    total: int
    done: int
    measure_rate: float
    measure_source: str
    compile_rate: float | None
    compile_source: str
    visits: tuple[int, int] = (0, 0)  # first and last visit (1-based) that work on it

    @property
    def pending(self) -> int:
        return self.total - self.done

    @property
    def rate(self) -> float:
        """Configurations/s of the pipeline: the slower of compile and measure."""
        return min(self.measure_rate, self.compile_rate) if self.compile_rate else self.measure_rate

    @property
    def seconds(self) -> float:
        return self.pending / self.rate


def compile_rates(report: str | Path | None = REPORT, workers: int = ASSUMED_COMPILE_WORKERS
                  ) -> dict[str, tuple[float, str]]:
    """Per kernel, nvcc's grouped rate per core from the benchmark report times `workers` (assumed scaling)."""
    path = Path(report) if report else None
    if path is None or not path.is_file():
        return {}
    doc = json.loads(path.read_text())
    where = f"{doc['machine']['cpu_model']}, {doc['date'][:10]}"
    out = {}
    for kernel, rec in doc["compile"].items():
        per_core = rec.get("grouped_configurations_per_s_per_core")
        if per_core:
            out[kernel] = (per_core * workers, f"{per_core:.1f}/s per core measured ({where}) x {workers} workers")
    return out


def plan(kernels: Iterable[str] | None = None, resumed: Resumed | None = None, *,
         rates: Mapping[str, tuple[float, str]] | None = None,
         compile: Mapping[str, tuple[float, str]] | None = None,
         visit_minutes: float = VISIT_MINUTES, reserve_s: float = RESERVE_S) -> list[KernelPlan]:
    """The kernels in lease order with their counts, rates and the visits they fall in.

    A visit offers `visit_minutes` less `reserve_s`; kernels fill visits in order (a kernel that does
    not fit in what is left of a visit continues in the next).
    """
    resumed = resumed or Resumed()
    rates = dict(rates or {})
    compile = dict(compile or {})
    out = []
    capacity = visit_minutes * 60 - reserve_s
    visit, used = 1, 0.0
    for k in ordered_kernels(kernels):
        spec = harness.load_spec(k)
        total = len(spec.valid_configs("cuda"))
        done = len(resumed.done(k) & {config_key(c, cache_names(spec)) for c in spec.valid_configs("cuda")})
        m_rate, m_src = rates.get(k, (ASSUMED_MEASURE_RATE,
                                      "assumed (the issue's target; no GPU has measured this kernel)"))
        c_rate, c_src = compile.get(k, (None, "not measured"))
        kp = KernelPlan(k, total, done, m_rate, m_src, c_rate, c_src)
        need = kp.seconds
        first = visit
        while need > 0:
            room = capacity - used
            if room <= 0:
                visit, used = visit + 1, 0.0
                continue
            step = min(room, need)
            used += step
            need -= step
        kp.visits = (first if kp.pending else 0, visit if kp.pending else 0)
        out.append(kp)
    return out


def plan_report(kernels: Iterable[str] | None = None, resume_paths: Iterable[str | Path] = (), *,
                size_name: str = SIZE, gpu: str | None = None, visit_minutes: float = VISIT_MINUTES,
                reserve_s: float = RESERVE_S) -> str:
    """What `gpu-lease --plan` prints: the plan of what the earlier visits' packs leave, and what it assumes.

    Rates come from those packs where they measured one (`measured_rates`), else they are assumed;
    a pack refused for another GPU is logged as a warning and left out.
    """
    resumed = resume(resume_paths, size_name=size_name, gpu=gpu, kernels=kernels)
    for note in resumed.refused:
        log.warning("resume: left out %s", note)
    plans = plan(kernels, resumed, rates=measured_rates(resumed.provenance), compile=compile_rates(),
                 visit_minutes=visit_minutes, reserve_s=reserve_s)
    return (f"{format_plan(plans)}\n\nvisits of {visit_minutes:g} usable minutes less {reserve_s:g} s for packing; a "
            "rate 'assumed' is no measurement (see docs/kernels.md, GPU sweeps in short leases)")


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f}"


def format_plan(plans: Sequence[KernelPlan]) -> str:
    """The plan as text (`gpu-lease --plan`)."""
    lines = [f"{'order':>5}  {'kernel':<15}{'configurations':>15}{'done':>9}{'pending':>9}{'cfg/s':>8}"
             f"{'minutes':>9}  visits  rate from"]
    for i, p in enumerate(plans, 1):
        visits = f"{p.visits[0]}-{p.visits[1]}" if p.visits[0] and p.visits[0] != p.visits[1] else (
            str(p.visits[0]) if p.visits[0] else "-")
        src = p.measure_source if p.rate == p.measure_rate else f"compile: {p.compile_source}"
        lines.append(f"{i:>5}  {p.kernel:<15}{p.total:>15,}{p.done:>9,}{p.pending:>9,}{p.rate:>8.1f}"
                     f"{_minutes(p.seconds):>9}  {visits:<6}  {src}")
    total = sum(p.total for p in plans)
    pending = sum(p.pending for p in plans)
    seconds = sum(p.seconds for p in plans)
    last = max((p.visits[1] for p in plans), default=0)
    lines.append(f"{'':>5}  {'total':<15}{total:>15,}{total - pending:>9,}{pending:>9,}{'':>8}{_minutes(seconds):>9}"
                 f"  {last or '-'}")
    return "\n".join(lines)


def plan_markdown(report: str | Path = REPORT, packs: str | Path = PACKS) -> str:
    """The generated section of docs/kernels.md: the lease plan of what the published packs leave, with the
    measure rates they recorded, and the compile throughput figures."""
    path = Path(report)
    if not path.is_file():
        raise LeaseError(path, "missing: run benchmarks/bench_gpu_lease.py --write-report first")
    doc = json.loads(path.read_text())
    resumed = resume([Path(packs)] if Path(packs).is_dir() else [])
    rates = measured_rates(resumed.provenance)
    plans = plan(resumed=resumed, rates=rates, compile=compile_rates(path))
    machine = doc["machine"]
    rows = [f"| order | kernel | CUDA configurations | measured | modules of {doc['chunk']} | nvcc grouped, per core "
            "(measured) | nvcc alone, per core (measured) | slowest alone (measured) | compile on "
            f"{ASSUMED_COMPILE_WORKERS} cores (assumed scaling) | measure | estimate of what is left | visit |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for i, p in enumerate(plans, 1):
        rec = doc["compile"][p.kernel]
        visits = ("–" if not p.visits[0] else f"{p.visits[0]}-{p.visits[1]}" if p.visits[0] != p.visits[1]
                  else str(p.visits[0]))
        measure = f"{p.measure_rate:.1f}/s (measured)" if p.kernel in rates else f"{p.measure_rate:.0f}/s (assumed)"
        rows.append(f"| {i} | {p.kernel} | {p.total:,} | {p.done:,} | {rec['modules_in_space']:,} | "
                    f"{rec['grouped_configurations_per_s_per_core']:.1f}/s | "
                    f"{rec['alone_configurations_per_s_per_core']:.1f}/s | {rec['alone_nvcc_s_max']:.1f} s | "
                    f"{p.compile_rate:.0f}/s | {measure} | {_minutes(p.seconds)} min | {visits} |")
    total = sum(p.total for p in plans)
    done = sum(p.done for p in plans)
    seconds = sum(p.seconds for p in plans)
    last = max(p.visits[1] for p in plans)
    measured_on = "; ".join(f"{k}: {rate:.1f} configurations/s, {src}" for k, (rate, src) in sorted(rates.items()))
    setups = {}
    for prov in resumed.provenance:
        for k, rec in (prov.get("kernels") or {}).items():
            if "reference_s" in rec and "prepare_s" in rec:
                setups.setdefault(k, (rec["reference_s"], rec["prepare_s"], (prov.get("gpu") or {}).get("name")))
    setup_text = "; ".join(f"{k} on the {g}: reference {r:.0f} s, then gate and inputs {q:.0f} s"
                           for k, (r, q, g) in sorted(setups.items()))
    speedups = [r["grouped_configurations_per_s_per_core"] / r["alone_configurations_per_s_per_core"]
                for r in doc["compile"].values()]
    core_h = {m: sum(r["configurations_in_space"] / r[f"{m}_configurations_per_s_per_core"]
                     for r in doc["compile"].values()) / 3600 for m in ("grouped", "alone")}
    load = machine["load_average_before"]
    typical = float(np.median([r["alone_nvcc_s"] / r["sampled_configurations"] for r in doc["compile"].values()]))
    text = [
        "Generated from the specs, the published visits' packs (`data/sweeps/cuda/<gpu>/packs/`) and "
        "`benchmarks/reports/bench_gpu_lease.json` by `python -m analysis.cli gpu-plan-doc` (`gpu-lease --plan` "
        "prints the same for any set of packs).",
        "",
        *rows,
        f"| | total | {total:,} | {done:,} | | | | | | | {_minutes(seconds)} min | {last or '–'} |",
        "",
        f"*Measured* by `benchmarks/bench_gpu_lease.py` ({doc['date'][:10]}, {machine['cpu_model']}, "
        f"{machine['cpu_count']} cores, {doc['jobs']} nvcc processes side by side, load average "
        f"{load[0]:.2f} before, {doc['nvcc']}): per kernel {doc['groups']} precision combinations drawn at random, "
        f"{doc['chunk']} of each one's optimisation variants drawn at random, compiled as one module per "
        "combination (grouped) and one by one from Kernel Tuner's kernel strings (alone); configurations per "
        f"nvcc-second of one core. Grouping compiles {min(speedups):.1f}-{max(speedups):.1f} times faster per "
        f"configuration; the whole nine spaces would take {core_h['grouped']:.1f} core-hours of nvcc grouped and "
        f"{core_h['alone']:.1f} alone. The samples are small and compile times have a long tail (the slowest "
        f"column against a median of {typical:.2f} s per configuration alone), so the compile figures are rough. "
        "*Measured on a GPU* (a visit records its measure rate per kernel in its provenance: configurations "
        "per second of `tune_kernel` wall time, Kernel Tuner's benchmarking and the device metrics included): "
        f"{measured_on or 'none yet'}. "
        "*Assumed*: that the GPU machine's nvcc reaches the same rate per core on "
        f"{ASSUMED_COMPILE_WORKERS} of its 16 cores (not measured there), and, for a kernel no visit has "
        f"measured, a measure rate of {ASSUMED_MEASURE_RATE:.0f} configurations/s, the issue's target for one H100 "
        "at the `gpu` sizes. A kernel's estimate is its configurations left over the slower of the two rates "
        f"(they run side by side); visits of {VISIT_MINUTES} usable minutes less {RESERVE_S:.0f} s for packing. "
        "Not in the "
        "estimate: each kernel's set-up on the GPU (its float64 reference at the `gpu` size, computed in a "
        "worker process ahead of its turn; its inputs in every type; the correctness gate) and the first "
        f"modules' latency{f' (measured: {setup_text})' if setup_text else ''}.",
    ]
    runs = runs_markdown(resumed.provenance)
    return "\n".join(text + (["", "Every lease run of the published packs, in order:", "", *runs] if runs else []))


def runs_markdown(provenance: Sequence[Mapping[str, Any]]) -> list[str]:
    """A table of lease runs (one per distinct visit record): start, GPU, visit id, minutes asked and run, why it
    stopped, and what it measured of each kernel at what rate."""
    rows = []
    for prov in sorted(provenance, key=lambda p: p["visit"]["started"]):
        v = prov["visit"]
        done = []
        for k in measured_kernels(prov):
            rec = prov["kernels"][k]
            rate = (rec.get("throughput") or {}).get("measure_configurations_per_s")
            state = "complete" if rec.get("complete") else f"{rec.get('done_after', 0):,} of {rec['configurations']:,}"
            done.append(f"{k} {rec['measured_now']:,} ({state}) at {rate:.1f}/s" if rate else
                        f"{k} {rec['measured_now']:,} ({state})")
        energy = "on" if (prov.get("energy") or {}).get("recorded") else "off"
        stop = str(v.get("stop", "")).replace("|", "/")
        rows.append(f"| {v['started'][:16].replace('T', ' ')} | {(prov.get('gpu') or {}).get('name')} | {v['id']} | "
                    f"{v['deadline_min']:g} | {v['seconds'] / 60:.1f} | {energy} | {stop} | "
                    f"{'; '.join(done) or 'nothing'} |")
    if not rows:
        return []
    return ["| started (UTC) | GPU | visit | minutes given | minutes run | energy | stop | measured now |",
            "|---|---|---|---:|---:|---|---|---|", *rows]


def render_doc(doc: str | Path = DOC, report: str | Path = REPORT, check: bool = False) -> int:
    """Write (or with `check`, compare) the generated plan section of docs/kernels.md; 1 when it differs."""
    path = Path(doc)
    text = path.read_text()
    if DOC_BEGIN not in text or DOC_END not in text:
        raise LeaseError(path, f"has no section between '{DOC_BEGIN}' and '{DOC_END}'")
    head, rest = text.split(DOC_BEGIN, 1)
    _, tail = rest.split(DOC_END, 1)
    new = head + DOC_BEGIN + "\n\n" + plan_markdown(report) + "\n\n" + DOC_END + tail
    if new == text:
        return 0
    if check:
        log.error("%s: the GPU plan section is stale; run `python -m analysis.cli gpu-plan-doc`", path)
        return 1
    path.write_text(new)
    log.info("wrote the GPU plan section of %s", path)
    return 0


# ---- packing -------------------------------------------------------------------------------------------------

def _tar_size(member_sizes: Iterable[int]) -> int:
    """Bytes of an uncompressed ustar archive holding members of these sizes (512-byte blocks, 10240-byte records)."""
    blocks = sum(512 + -(-s // 512) * 512 for s in member_sizes) + 1024
    return -(-blocks // tarfile.RECORDSIZE) * tarfile.RECORDSIZE


def _gz(doc: Mapping[str, Any]) -> bytes:
    return gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), compresslevel=6, mtime=0)


def _parts(kernel: str, header: Mapping[str, Any], entries: Mapping[str, Any], limit: int) -> list[bytes]:
    """A kernel's entries as gzipped caches of at most `limit` bytes each (split in equal parts where needed)."""
    keys = list(entries)
    n = 1
    while True:
        size = -(-len(keys) // n)
        blobs = [_gz(closed_cache(header, {k: entries[k] for k in keys[i:i + size]}))
                 for i in range(0, len(keys), size)]
        if all(len(b) <= limit for b in blobs):
            return blobs
        if size <= 1:
            raise LeaseError(None, f"{kernel}: one configuration's entry compresses to over {limit} bytes")
        n = max(n + 1, math.ceil(n * max(len(b) for b in blobs) / limit))


def pack(out: str | Path, stamp: str, caches: Mapping[str, tuple[Mapping[str, Any], Mapping[str, Any]]],
         provenance: Mapping[str, Any], *, files: int = PACK_FILES, limit: int = PACK_BYTES,
         extra: Mapping[str, bytes] | None = None) -> list[Path]:
    """Write `caches` (kernel -> (header, entries)) and `provenance` into at most `files` tar files of at most
    `limit` bytes each, named `lease-<stamp>-<i>of<n>.tar`; earlier packs of the same stamp are replaced.

    Members: `<kernel>.part<NN>.json.gz` (a gzipped, closed Kernel Tuner cache), `provenance.json` in every
    file (with the list of all files and members), and `extra` members in the first file where they fit.
    A LeaseError (and nothing written) when they cannot fit.
    """
    out = Path(out)
    base = len(json.dumps({**provenance, "format": PACK_FORMAT}, indent=1, sort_keys=True, allow_nan=False))
    # room for provenance.json: itself plus the list of files and members (at most 99 parts per kernel)
    prov_room = base + 2048 + len(caches) * 99 * 48 + files * 64
    item_limit = limit - _tar_size([prov_room, 0]) - 512
    if item_limit <= 0:
        raise LeaseError(out, f"a pack file of {limit} bytes cannot hold the provenance ({prov_room} bytes)")
    items: list[tuple[str, bytes]] = []
    for kernel in sorted(caches):
        header, entries = caches[kernel]
        if not entries:
            continue
        for i, blob in enumerate(_parts(kernel, header, entries, item_limit)):
            items.append((f"{kernel}.part{i:02d}.json.gz", blob))
    bins: list[list[tuple[str, bytes]]] = []
    for name, blob in sorted(items, key=lambda it: -len(it[1])):  # first fit, largest first
        for b in bins:
            if _tar_size([prov_room, *(len(x) for _, x in b), len(blob)]) <= limit:
                b.append((name, blob))
                break
        else:
            bins.append([(name, blob)])
    if not bins:
        bins.append([])
    extra = dict(extra or {})
    for name, blob in extra.items():
        if _tar_size([prov_room, *(len(x) for _, x in bins[0]), len(blob)]) <= limit:
            bins[0].append((name, blob))
        else:
            log.warning("pack: %s (%d bytes) left out: no room in the first file", name, len(blob))
    if len(bins) > files:
        raise LeaseError(out, f"the measurements need {len(bins)} files of {limit} bytes; at most {files} may "
                              "come back")
    n = len(bins)
    names = [f"lease-{stamp}-{i + 1}of{n}.tar" for i in range(n)]
    prov = {**provenance, "format": PACK_FORMAT,
            "pack": {"files": names, "members": {nm: sorted(x for x, _ in b) for nm, b in zip(names, bins)}}}
    prov_bytes = (json.dumps(prov, indent=1, sort_keys=True, allow_nan=False) + "\n").encode()
    if len(prov_bytes) > prov_room:
        raise LeaseError(out, f"provenance.json has {len(prov_bytes)} bytes, more than the {prov_room} kept for it")
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob(f"lease-{stamp}-*of*.tar"):
        if old.name not in names:
            old.unlink()
    written = []
    for name, b in zip(names, bins):
        tmp = out / f".{name}.tmp"
        with tarfile.open(tmp, "w", format=tarfile.USTAR_FORMAT) as tar:
            for member, blob in [("provenance.json", prov_bytes), *sorted(b)]:
                info = tarfile.TarInfo(member)
                info.size = len(blob)
                info.mtime = 0
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(blob))
        size = tmp.stat().st_size
        if size > limit:
            tmp.unlink()
            raise AssertionError(f"{name}: {size} bytes, over {limit}")
        os.replace(tmp, out / name)
        written.append(out / name)
    return written


# ---- provenance of the GPU machine ----------------------------------------------------------------------------

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
    from importlib.metadata import PackageNotFoundError, version

    rec: dict[str, Any] = {"python": platform.python_version(), "numpy": np.__version__}
    for dist in ("kernel_tuner", "cupy", "cupy-cuda12x", "cupy-cuda13x", "nvidia-ml-py", "ml_dtypes"):
        with contextlib.suppress(PackageNotFoundError):
            rec[dist] = version(dist)
    return rec


# ---- the lease ---------------------------------------------------------------------------------------------------

class Guard:
    """The lease's stop rule: start nothing (a kernel, a batch, a configuration) that would end after `stop_at`.

    `check()` is called before every configuration (Kernel Tuner's budget asks it); the time between two such
    calls within a batch is a configuration's duration, and the next one is estimated as twice the longest of
    the last 20 (`first_estimate` before any). What surrounds the configurations is timed too: a kernel's
    set-up (`begin_kernel()` to its first batch: reference, gate, inputs), a batch's set-up (`begin_batch()` to
    its first configuration: Kernel Tuner's search space and device interface) and a batch's tail (its last
    check to `end_batch()`: the last configuration, the cache, the observers). Each is estimated as the longest
    seen, and a step starts only with room for itself and everything that must follow it before the batch can
    end: a configuration needs a tail, a batch its set-up and a configuration, a kernel its set-up and a batch.
    """

    STAGES = ("kernel", "batch", "tail")

    def __init__(self, clock: Callable[[], float], stop_at: float, first_estimate: float = 2.0):
        self.clock = clock
        self.stop_at = stop_at
        self.first_estimate = first_estimate
        self.recent: list[float] = []
        self.spans: dict[str, list[float]] = {s: [] for s in self.STAGES}
        self.last: float | None = None
        self.began: dict[str, float] = {}
        self.stopped = False

    def estimate(self) -> float:
        return 2.0 * max(self.recent[-20:]) if self.recent else self.first_estimate

    def longest(self, stage: str) -> float:
        return max(self.spans[stage][-20:], default=0.0)

    def left(self) -> float:
        return self.stop_at - self.clock()

    def record(self) -> dict[str, Any]:
        """The stop rule and what it measured, for the provenance."""
        return {"rule": "start a step only with room for the longest set-up and tail seen and twice the longest of "
                        "the last 20 configurations", "configuration_s": round(max(self.recent, default=0.0), 3),
                "kernel_setup_s": round(max(self.spans["kernel"], default=0.0), 3),
                "batch_setup_s": round(max(self.spans["batch"], default=0.0), 3),
                "batch_tail_s": round(max(self.spans["tail"], default=0.0), 3)}

    def _ask(self, now: float, need: float, what: str) -> None:
        if self.stopped or now + need > self.stop_at:
            self.stopped = True
            raise DeadlineReached(f"{self.stop_at - now:.1f} s left, {what} estimated at {need:.2f} s")

    def begin_kernel(self) -> None:
        """Before a kernel's set-up: room for it, a batch's set-up, a configuration and a tail."""
        now = self.clock()
        self._ask(now, self.longest("kernel") + self.longest("batch") + self.estimate() + self.longest("tail"),
                  "the next kernel's set-up and first configuration")
        self.began = {"kernel": now}
        self.last = None

    def begin_batch(self) -> None:
        """Before a batch (a tune_kernel call): room for its set-up, a configuration and a tail."""
        now = self.clock()
        if "kernel" in self.began:  # the kernel's set-up ends where its first batch begins
            self.spans["kernel"].append(now - self.began.pop("kernel"))
        self._ask(now, self.longest("batch") + self.estimate() + self.longest("tail"),
                  "the next batch's set-up and first configuration")
        self.began["batch"] = now
        self.last = None

    def end_batch(self) -> None:
        now = self.clock()
        if self.last is not None:
            self.spans["tail"].append(now - self.last)
        self.began.pop("batch", None)
        self.last = None

    def new_batch(self) -> None:
        """The same batch measured again (e.g. without energy): its configurations' timing starts afresh."""
        self.last = None

    def check(self) -> None:
        """Before a configuration: room for it and a batch's tail."""
        now = self.clock()
        if "batch" in self.began:  # the batch's set-up ends at its first configuration
            self.spans["batch"].append(now - self.began.pop("batch"))
        elif self.last is not None:
            self.recent.append(now - self.last)
            del self.recent[:-100]
        self.last = now
        self._ask(now, self.estimate() + self.longest("tail"), "the next configuration and the batch's tail")


@contextlib.contextmanager
def deadline_budget(guard: Guard):
    """While active, Kernel Tuner's tuning budget consults `guard` before each configuration.

    Kernel Tuner's runner asks `budget.is_done()` before every configuration; raising there stops the
    `tune_kernel` call between two configurations, with every finished one in its cache.
    """
    from kernel_tuner import util

    original = util.TuningBudget

    class DeadlineBudget(original):  # type: ignore[misc, valid-type]
        def is_done(self):
            guard.check()
            return super().is_done()

    util.TuningBudget = DeadlineBudget
    try:
        yield
    finally:
        util.TuningBudget = original


@dataclass
class Batch:
    """Configurations measured by one tune_kernel call: whole precision combinations, their chunks."""

    configs: list[dict[str, Any]]
    chunks: list[cuda_modules.Chunk]


def batches(spec: KernelSpec, chunks: Sequence[cuda_modules.Chunk], batch_min: int = BATCH_MIN) -> list[Batch]:
    """Consecutive precision combinations (in chunk order) gathered until a batch has `batch_min` configurations."""
    out: list[Batch] = []
    current = Batch([], [])
    last_key = None
    for ch in chunks:
        key = cuda_modules.precision_key(spec, ch.configs[0])
        if key != last_key and len(current.configs) >= batch_min:
            out.append(current)
            current = Batch([], [])
        current.configs += ch.configs
        current.chunks.append(ch)
        last_key = key
    if current.configs:
        out.append(current)
    return out


def narrowed_params(spec: KernelSpec, configs: Sequence[Mapping[str, Any]]) -> dict[str, list]:
    """The cuda tune_params narrowed to the values the configurations take (same names, spec order)."""
    full = spec.tune_params("cuda")
    return {p: [v for v in values if any(c[p] == v for c in configs)] for p, values in full.items()}


class ReferencePool:
    """The float64 references at the lease's size, computed ahead in a worker process into .npy files."""

    def __init__(self, folder: Path, size_name: str, workers: int = 1):
        self.folder = folder
        self.size_name = size_name
        # spawned: the parent holds a CUDA context; a multiprocessing pool, which close() can terminate
        # (a reference still being computed at the deadline, minutes of NumPy, must not hold up the exit)
        self.pool = multiprocessing.get_context("spawn").Pool(workers) if workers else None
        self.futures: dict[str, Any] = {}

    def prefetch(self, kernel: str) -> None:
        if self.pool is not None and kernel not in self.futures:
            self.futures[kernel] = self.pool.apply_async(_save_reference, (kernel, self.size_name, str(self.folder)))

    def get(self, kernel: str) -> tuple[dict[str, np.ndarray], float]:
        """(output name -> float64 reference, seconds it took to compute)."""
        if kernel in self.futures:
            files, seconds = self.futures[kernel].get()
        else:
            files, seconds = _save_reference(kernel, self.size_name, str(self.folder))
        return {name: np.load(path, mmap_mode="r") for name, path in files.items()}, seconds

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None


def _save_reference(kernel: str, size_name: str, folder: str) -> tuple[dict[str, str], float]:
    """The kernel's float64 reference at the size as .npy files in `folder`: (output name -> path, seconds).

    A record beside the files (`<kernel>.reference.json`: size, sources' sha256, files, seconds) lets a run
    that continues the visit's work folder reuse them; it then takes 0 s.
    """
    record_path = Path(folder) / f"{kernel}.reference.json"
    key = {"kernel": kernel, "size": size_name, "source_sha256": source_hash(kernel)}
    if record_path.is_file():
        try:
            record = json.loads(record_path.read_text())
        except json.JSONDecodeError:
            record = {}
        files = record.get("files") or {}
        if {k: record.get(k) for k in key} == key and files and all(Path(f).is_file() for f in files.values()):
            log.info("%s: float64 reference reused from %s (computed in %.1f s)", kernel, record_path,
                     record.get("seconds", float("nan")))
            return dict(files), 0.0
    start = time.perf_counter()
    ref = harness.reference_outputs(kernel, size_name)
    seconds = time.perf_counter() - start
    out = {}
    for name, arr in ref.items():
        path = Path(folder) / f"{kernel}.{name}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, np.ascontiguousarray(arr, dtype=np.float64))
        out[name] = str(path)
    write_json({**key, "files": out, "seconds": round(seconds, 3)}, record_path)
    return out, seconds


class KTCupyMeasurer:
    """Measures batches with Kernel Tuner's CuPy backend on the GPU (needs cupy and a CUDA device).

    `xp`, `loader` and `backend` replace cupy, cupy.RawModule and Kernel Tuner's CupyFunctions in tests.
    """

    def __init__(self, *, size_name: str = SIZE, iterations: int = 7, energy_window: float | None = ENERGY_WINDOW_S,
                 xp=None, loader: Callable[[str], Any] | None = None, backend: type | None = None,
                 device: Mapping[str, Any] | None = None, energy: Mapping[str, Any] | None = None,
                 gate: Callable[..., dict[str, float]] | None = None):
        if xp is None:
            try:
                import cupy as xp  # noqa: N813

                xp.cuda.runtime.getDeviceCount()
            except Exception as exc:  # ImportError, or CuPy's CUDARuntimeError where there is no device
                raise LeaseError(None, f"a lease measures on a GPU through CuPy, and here {type(exc).__name__}: {exc} "
                                       "(--plan and --compile-only need no GPU)") from None
        self.xp = xp
        self.loader = loader or (lambda path: xp.RawModule(path=path))
        self.backend = backend
        self.size_name = size_name
        self.iterations = iterations
        self.energy_window = energy_window
        self.device = dict(device) if device is not None else self._device()
        self.energy = dict(energy) if energy is not None else self._energy_status()
        self.gate = gate
        self.ctx: dict[str, Any] = {}

    # -- the device -----------------------------------------------------------------------------------------------
    def _device(self) -> dict[str, Any]:
        xp = self.xp
        props = xp.cuda.runtime.getDeviceProperties(0)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        cc = f"{props['major']}{props['minor']}"
        return {"name": name, "compute_capability": cc, "arch": f"sm_{cc}",
                "cuda_driver_version": xp.cuda.runtime.driverGetVersion(),
                "cuda_runtime_version": xp.cuda.runtime.runtimeGetVersion(),
                "memory_bytes": int(props.get("totalGlobalMem", 0))}

    def _energy_status(self) -> dict[str, Any]:
        if not self.energy_window:
            return {"recorded": False, "reason": "not asked for (--energy-window 0, the default): Kernel Tuner 1.5.0's "
                                                 "NVML energy benchmarks each configuration for at least 1 s"}
        try:
            from kernel_tuner.observers.nvml import nvml

            probe = nvml(device_id=0)
            probe.pwr_limit_default = None  # never write the GPU's settings back
            energy, power = probe.energy_usage(), probe.pwr_usage()
            if not energy or not power:
                return {"recorded": False, "reason": f"NVML answers 0 (energy {energy} mJ, power {power} mW)"}
        except Exception as exc:  # pynvml missing, no NVML, not supported on this GPU
            return {"recorded": False, "reason": f"NVML does not answer: {type(exc).__name__}: {exc}"}
        return {"recorded": True, "observer": "kernel_tuner.observers.nvml.NVMLObserver(['nvml_energy'])",
                "window_s": self.energy_window,
                "definition": "median NVML instant power over the window times the configuration's mean time "
                              "(Kernel Tuner's nvml_energy, J per kernel run)"}

    @property
    def arch(self) -> str:
        return self.device["arch"]

    def environment(self) -> dict[str, Any]:
        return {**self.device, "nvidia_smi": nvidia_smi()}

    # -- one kernel -----------------------------------------------------------------------------------------------
    def prepare(self, spec: KernelSpec, configs: Sequence[Mapping[str, Any]], chunks: Sequence[cuda_modules.Chunk],
                builder: cuda_modules.ModuleBuilder, reference: Mapping[str, np.ndarray], guard: Guard
                ) -> dict[str, float]:
        """Run the correctness gate and put the kernel's arguments and references on the device."""
        from kernel_tuner.accuracy import Tunable


        if self.gate is not None:
            gate = self.gate(spec, "cuda", self.size_name, reference=reference)
        else:  # Kernel Tuner's run_kernel on the CuPy backend, its kernel string compiled by nvcc alone
            folder = Path(getattr(builder, "folder", tempfile.gettempdir())) / "gate" / spec.name
            gate = reference_check(spec, "cuda", self.size_name, reference=reference, lang="CUPY",
                                   compilation=cuda_modules.nvcc_compilation(spec, folder, self.arch, self.loader,
                                                                             self.backend))
        xp = self.xp
        inputs = harness.make_inputs(spec.name, self.size_name)
        types = {p: sorted({c[p] for c in configs}, key=spec.precision[p].index) for p in spec.precision}
        args: list[Any] = []
        outputs: dict[int, Any] = {}
        refs: dict[int, dm.DeviceReference] = {}
        answer: list[Any] = []
        for i, a in enumerate(spec.arguments):
            if a.role == "scalar":
                args.append(harness.NP_SCALARS[a.type](spec.scalar_value(a, self.size_name)))
                answer.append(None)
                continue
            shape = spec.shape(a, self.size_name)
            n = int(np.prod(shape))
            typed = a.type in spec.precision
            values = np.asarray(inputs[a.name]).reshape(shape).ravel() if a.role == "input" else None
            if a.role == "input":
                arrays = {t: xp.asarray(dm.storage(values, t)) for t in (types[a.type] if typed else [a.type])}
                answer.append(None)
            else:
                arrays = {t: xp.empty(n, dtype=dm.STORAGE.get(t, t)) for t in (types[a.type] if typed else [a.type])}
                outputs[i] = arrays
                refs[i] = dm.DeviceReference(xp, reference[a.name])
                answer.append(np.zeros(1))  # marks an output; the observer compares with the device reference
            args.append(Tunable(a.type, arrays) if typed else arrays[a.type])

        def poison(params: Mapping[str, Any]) -> None:
            dm.poison(xp, [arrays[spec.arg_type(spec.arguments[i], params)] if spec.arguments[i].type in spec.precision
                           else arrays[spec.arguments[i].type] for i, arrays in outputs.items()])

        modules = cuda_modules.PrecompiledModules(spec, chunks, builder, self.loader, names=cache_names(spec),
                                                  before_check=poison, wait_timeout=lambda: max(guard.left(), 0.001))
        self.ctx = {"spec": spec, "args": args, "answer": answer, "outputs": outputs, "refs": refs,
                    "modules": modules, "observer": dm.make_observer(refs)}
        return gate

    def measure(self, spec: KernelSpec, batch: Batch, cache: Path, guard: Guard,
                tracker: progress.Progress | None = None) -> None:
        """One tune_kernel call over the batch's configurations into the (new) Kernel Tuner cache `cache`."""
        from kernel_tuner import tune_kernel


        ctx = self.ctx
        names = cache_names(spec)
        keys = {config_key(c, names) for c in batch.configs}

        def restriction(p):
            return config_key(p, names) in keys

        restriction.__code__ = restriction.__code__.replace(co_filename="<gpu lease restriction>")
        modules: cuda_modules.PrecompiledModules = ctx["modules"]
        observers: list[Any] = [ctx["observer"]]
        if tracker is not None:
            observers.append(progress.observer(tracker))
        metrics: dict[str, Any] = {"memory": lambda p: spec.memory_bytes(p, self.size_name),
                                   "library_build_time": modules.build_time_ms,
                                   "library_variants": modules.variant_count}
        opts = cuda_options(spec)
        opts["lang"] = "CUPY"

        def tune(observers: list[Any], metrics: dict[str, Any]) -> None:
            with cachefile.atomic_rewrites(), warnings.catch_warnings(), kernel_tuner_scratch(cache), \
                    cuda_modules.precompiled_compilation(modules, self.backend), deadline_budget(guard):
                warnings.filterwarnings("ignore", message="Argument at position", category=UserWarning)
                tune_kernel(spec.function, str(spec.folder / "kernel.cu"), spec.problem_size(self.size_name),
                            ctx["args"], narrowed_params(spec, batch.configs), restrictions=[restriction],
                            answer=ctx["answer"], observers=observers, metrics=metrics, cache=str(cache.resolve()),
                            iterations=self.iterations, strategy="brute_force", quiet=True, verbose=False, **opts)

        if not self.energy.get("recorded"):
            tune(observers, metrics)
            return
        try:
            tune([*observers, energy_observer(self.energy_window)],
                 {**metrics, "energy": lambda p: p.get("nvml_energy", float("nan"))})
        except (DeadlineReached, TimeoutError):
            raise
        except Exception as exc:  # NVML answered the probe but its observer fails: measure on, without energy
            log.exception("%s: Kernel Tuner's NVML observer failed; measuring without energy from here on", spec.name)
            why = (f"Kernel Tuner's NVML observer failed in a batch of {spec.name} ({type(exc).__name__}: {exc}); no "
                   "energy from then on (entries measured before keep theirs)")
            self.energy = {"recorded": False, "reason": why}
            cache.unlink(missing_ok=True)
            guard.new_batch()
            tune(observers, metrics)

    def metrics_seconds(self) -> tuple[float, int, int]:
        obs = self.ctx.get("observer")
        return (obs.seconds, obs.count, obs.host_outputs) if obs is not None else (0.0, 0, 0)

    def finish(self, spec: KernelSpec, chunks: Sequence[cuda_modules.Chunk]) -> None:
        """Free the kernel's device memory and modules."""
        modules = self.ctx.get("modules")
        if modules is not None:
            modules.release(chunks)
        self.ctx = {}
        pool = getattr(self.xp, "get_default_memory_pool", None)
        if pool is not None:
            pool().free_all_blocks()


def energy_observer(window: float):
    """Kernel Tuner's NVML observer of `nvml_energy` over `window` seconds, never writing the GPU's settings back."""
    from kernel_tuner.observers.nvml import NVMLObserver

    class EnergyObserver(NVMLObserver):
        def register_device(self, dev):
            super().register_device(dev)
            self.nvml.pwr_limit_default = None  # the lease changes no setting, so it restores none

    return EnergyObserver(["nvml_energy"], continuous_duration=window)


def exit_watchdog(seconds: float = EXIT_WATCHDOG_S) -> None:
    """After a lease has packed: if the process has not exited `seconds` later (a worker, a thread or a device
    library holding it up), print every thread's stack to stderr and end it (faulthandler), so that a visit's
    next steps run and what held it up is in the visit's log."""
    import faulthandler
    import sys

    faulthandler.dump_traceback_later(seconds, exit=True, file=sys.stderr)


def _stamp(now: _dt.datetime | None = None) -> str:
    return (now or _dt.datetime.now(_dt.UTC)).strftime("%Y%m%dT%H%M%SZ")


def default_work() -> Path:
    return Path(tempfile.gettempdir()) / f"tsb-gpu-lease-{os.getuid()}"


def lease(out: str | Path, deadline_min: float, *, kernels: Iterable[str] | None = None,
          resume_paths: Iterable[str | Path] = (), work: str | Path | None = None, size_name: str = SIZE,
          iterations: int = 7, chunk: int = cuda_modules.DEFAULT_CHUNK, jobs: int | None = None,
          batch_min: int = BATCH_MIN, energy_window: float | None = ENERGY_WINDOW_S, reserve_s: float = RESERVE_S,
          clock: Callable[[], float] = time.monotonic, measurer: Any = None,
          builder_factory: Callable[[Path, str], Any] | None = None, reference_workers: int = 1,
          files: int = PACK_FILES, limit: int = PACK_BYTES, max_configs: int | None = None) -> dict[str, Any]:
    """One visit: gate, sweep smallest spaces first, stop before the deadline, pack; returns the provenance."""
    start = clock()
    started_at = _dt.datetime.now(_dt.UTC)
    stop_at = start + deadline_min * 60.0 - reserve_s
    work = Path(work) if work else default_work()
    (work / "shards").mkdir(parents=True, exist_ok=True)
    log_handler = logging.FileHandler(work / "lease.log")
    log_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger("analysis").addHandler(log_handler)
    try:
        return _lease(out, deadline_min, kernels, resume_paths, work, size_name, iterations, chunk, jobs, batch_min,
                      energy_window, reserve_s, clock, measurer, builder_factory, reference_workers, files, limit,
                      max_configs, start, started_at, stop_at)
    finally:
        logging.getLogger("analysis").removeHandler(log_handler)
        log_handler.close()


def visit_summary(provenance: Mapping[str, Any]) -> str:
    """What `gpu-lease` prints after a visit: why it stopped, the pack files written and, per kernel, the
    configurations measured now, done after the visit and in all, and whether its space is complete (JSON)."""
    fields = ("measured_now", "done_after", "configurations", "complete")
    return json.dumps({"stop": provenance["visit"]["stop"], "written": provenance["written"],
                       "kernels": {k: {f: r.get(f) for f in fields} for k, r in provenance["kernels"].items()}},
                      indent=1)


def _lease(out, deadline_min, kernels, resume_paths, work: Path, size_name, iterations, chunk, jobs, batch_min,
           energy_window, reserve_s, clock, measurer, builder_factory, reference_workers, files, limit,
           max_configs, start, started_at, stop_at) -> dict[str, Any]:
    visit_file = work / "visit.json"
    visit = json.loads(visit_file.read_text()) if visit_file.exists() else {"id": _stamp(started_at)}
    visit_file.write_text(json.dumps(visit))
    guard = Guard(clock, stop_at)
    measurer = measurer or KTCupyMeasurer(size_name=size_name, iterations=iterations, energy_window=energy_window)
    gpu = measurer.device["name"]
    gpu_at_start = measurer.environment()
    order = ordered_kernels(kernels)
    shard_files = sorted((work / "shards").glob("*.json"))
    for f in shard_files:  # a crash of an earlier run of this visit may have cut a line
        cachefile.repair(f)
    shard_files = [f for f in shard_files if f.exists()]
    earlier = resume(resume_paths, size_name=size_name, gpu=gpu, kernels=order)
    this_visit = resume(shard_files, size_name=size_name, gpu=gpu, kernels=order) if shard_files else Resumed()
    for note in earlier.refused + this_visit.refused:
        log.warning("resume: left out %s", note)
    kernels_rec: dict[str, dict[str, Any]] = {}
    specs = {k: harness.load_spec(k) for k in order}
    pending: dict[str, list[dict[str, Any]]] = {}
    for k in order:
        names = cache_names(specs[k])
        done = earlier.done(k) | this_visit.done(k)
        valid = specs[k].valid_configs("cuda")
        pending[k] = [c for c in valid if config_key(c, names) not in done][:max_configs]  # max_configs: samples
        valid_keys = {config_key(c, names) for c in valid}
        kernels_rec[k] = {"configurations": len(valid), "done_before": len(done & valid_keys),
                          "done_in_earlier_visits": len(earlier.done(k)), "measured_now": 0,
                          "source_sha256": source_hash(k)}
    log.info("lease %s on %s: %s", visit["id"], gpu, ", ".join(f"{k} {len(pending[k])} pending" for k in order))
    builder = (builder_factory or (lambda folder, arch: cuda_modules.ModuleBuilder(folder, arch, jobs=jobs)))(
        work / "modules", measurer.arch)
    refs = ReferencePool(work / "refs", size_name, workers=reference_workers)
    chunks: dict[str, list[cuda_modules.Chunk]] = {}
    stop_reason = "every requested space is complete"
    try:
        for k in order:  # compile ahead, in lease order
            if pending[k]:
                t0 = time.perf_counter()
                chunks[k] = cuda_modules.make_chunks(specs[k], pending[k], size_name, chunk=chunk,
                                                     strings=cuda_modules.KernelStrings(specs[k], size_name))
                kernels_rec[k]["modules"] = len(chunks[k])
                kernels_rec[k]["module_generation_s"] = round(time.perf_counter() - t0, 3)
                for ch in chunks[k]:
                    builder.submit(specs[k], ch)
                refs.prefetch(k)
        for k in order:
            if not pending[k]:
                continue
            spec, rec = specs[k], kernels_rec[k]
            try:
                guard.begin_kernel()
            except DeadlineReached as exc:
                stop_reason = f"deadline: {exc}"
                break
            reference, rec["reference_s"] = refs.get(k)
            t0 = clock()
            try:
                rec["gate"] = measurer.prepare(spec, pending[k], chunks[k], builder, reference, guard)
            except InputError as exc:  # the correctness gate failed: record, go on with the next kernel
                rec["gate"] = {"failed": str(exc)}
                log.error("%s: %s", k, exc)
                continue
            except Exception as exc:  # the kernel could not be set up on the device: the same
                rec["gate"] = {"failed": f"{type(exc).__name__}: {exc}"}
                log.exception("%s: set-up failed; going on with the next kernel", k)
                measurer.finish(spec, chunks[k])
                continue
            rec["prepare_s"] = round(clock() - t0, 3)
            writer = ShardWriter(work / "shards" / f"{k}.json", cache_header(spec, gpu, size_name))
            tracker = progress.Progress(f"{k}/cuda lease", rec["configurations"], rec["done_before"])
            measure_s, batches_done = 0.0, 0
            deadline = False
            for batch in batches(spec, chunks[k], batch_min):
                scratch = work / "scratch" / f"{k}.json"
                scratch.parent.mkdir(parents=True, exist_ok=True)
                scratch.unlink(missing_ok=True)
                t0 = clock()
                try:
                    guard.begin_batch()
                    measurer.measure(spec, batch, scratch, guard, tracker)
                except DeadlineReached as exc:
                    stop_reason, deadline = f"deadline: {exc}", True
                except TimeoutError:  # a module was not built before the deadline (PrecompiledModules' wait)
                    stop_reason, deadline = "deadline: waiting for a module", True
                except Exception as exc:  # an unexpected failure ends this kernel, not the visit
                    rec["error"] = f"{type(exc).__name__}: {exc}"
                    log.exception("%s: batch failed; going on with the next kernel", k)
                finally:
                    guard.end_batch()
                    measure_s += clock() - t0
                    if scratch.exists():
                        rec["measured_now"] += writer.append(cachefile.read(scratch)["cache"])
                        scratch.unlink()
                    batches_done += 1
                if deadline or "error" in rec:
                    break
            metrics_s, metrics_n, host_outputs = measurer.metrics_seconds()
            measurer.finish(spec, chunks[k])
            rec["batches"] = batches_done
            rec["done_after"] = len(writer.keys | earlier.done(k))
            rec["complete"] = rec["done_after"] == rec["configurations"]
            done_mods = [builder.results.get((k, ch.index)) for ch in chunks[k]]
            nvcc_s = sum(r["seconds"] for r in done_mods if r)
            built = sum(len(ch.configs) for ch, r in zip(chunks[k], done_mods) if r and r["ok"])
            rec["throughput"] = {
                "measure_s": round(measure_s, 3),
                "measure_configurations_per_s": round(rec["measured_now"] / measure_s, 3) if measure_s else None,
                "compile_nvcc_s": round(nvcc_s, 3), "compiled_configurations": built,
                "compile_configurations_per_nvcc_s": round(built / nvcc_s, 3) if nvcc_s else None,
                "metrics_s": round(metrics_s, 4), "metrics_checks": metrics_n,
                "metrics_ms_per_check": round(1000 * metrics_s / metrics_n, 4) if metrics_n else None,
                "outputs_copied_to_host": host_outputs}
            failed = [r for r in done_mods if r and not r["ok"]]
            if failed:
                rec["failed_modules"] = [r["error"][-500:] for r in failed[:5]]
            log.info("%s: %d measured now, %d of %d done, %.2f configurations/s", k, rec["measured_now"],
                     rec["done_after"], rec["configurations"],
                     rec["measured_now"] / measure_s if measure_s else float("nan"))
            if deadline:
                break
    except Exception as exc:  # whatever happened, what was measured is packed
        stop_reason = f"error: {type(exc).__name__}: {exc}"
        log.exception("lease stopped by an error")
    finally:
        builder.close()
        refs.close()
    caches = {}
    for f in sorted((work / "shards").glob("*.json")):
        doc = cachefile.read(f)
        kernel = f.name[:-len(".json")]
        caches[kernel] = ({k: v for k, v in doc.items() if k != "cache"}, doc["cache"])
    ended = clock()
    provenance = {
        "kind": "gpu-lease visit", "visit": {"id": visit["id"], "started": started_at.isoformat(timespec="seconds"),
                                             "deadline_min": deadline_min, "reserve_s": reserve_s,
                                             "seconds": round(ended - start, 1), "stop": stop_reason,
                                             "stop_rule": guard.record()},
        "size": size_name, "iterations": iterations, "target": "cuda",
        "gpu": gpu_at_start, "gpu_at_end": measurer.environment(), "energy": measurer.energy, "host": host_record(),
        "software": {**software_record(), "nvcc": cuda_modules.nvcc_version()},
        "compile": {"mode": "one module per chunk of a precision combination (analysis.sweep.cuda_modules)",
                    "chunk": chunk, "arch": measurer.arch, "jobs": getattr(builder, "jobs", None),
                    "compiler_options": "Kernel Tuner's: -std=c++17 -I<workflow/kernels/common> -I<kernel folder>"},
        "order": order, "kernels": kernels_rec,
        "resumed_from": sorted({p["visit"]["id"] for p in earlier.provenance}),
    }
    log_text = (work / "lease.log").read_bytes()[-(1 << 20):] if (work / "lease.log").exists() else b""
    written = pack(out, visit["id"], caches, provenance, files=files, limit=limit, extra={"lease.log": log_text})
    provenance["written"] = [str(p) for p in written]
    log.info("lease %s: %s; %d file(s) in %s", visit["id"], stop_reason, len(written), out)
    return provenance


# ---- merge of every visit ------------------------------------------------------------------------------------

PARTIAL_OBJECTIVES = ("energy",)  # optional objectives a visit may record and another not (--energy-window)


def _without_partial_objectives(entries: Mapping[str, dict]) -> tuple[dict[str, dict], list[str]]:
    """Entries without an optional objective field that only some of them hold, and a note saying so.

    A space's objective must be measured for every configuration (analysis.spaces.importers refuses an
    entry that lacks it), so a merged cache keeps `energy` only where every visit recorded it; Kernel
    Tuner's own `nvml_energy` stays in the entries that have it, and the packs keep everything.
    """
    notes = []
    out = dict(entries)
    for name in PARTIAL_OBJECTIVES:
        have = sum(1 for e in entries.values() if name in e)
        if 0 < have < len(entries):
            out = {k: {f: v for f, v in e.items() if f != name} for k, e in out.items()}
            notes.append(f"'{name}' was recorded for {have} of {len(entries)} configurations only (not every visit "
                         f"measured it); it is left out of this cache, so the space has no '{name}' objective "
                         "(Kernel Tuner's nvml_energy stays in the entries that have it; the packs hold everything)")
    return out, notes


def merge_packs(paths: Iterable[str | Path], out: str | Path, *, gpu: str | None = None,
                size_name: str = SIZE, data_dir: str | Path = "data") -> dict[str, Any]:
    """Join all visits' packs (of one GPU): per kernel a merged cache, definition and provenance in `out`.

    A complete space goes through analysis.sweep.merge.merge (`<kernel>.json.gz`, `.yaml`,
    `.provenance.json`); a partial one is written as `<kernel>.partial.json.gz`, its definition
    `<kernel>.partial.yaml` (so that it imports as a space listed with its coverage) and a provenance
    saying how many of its configurations it holds.
    """
    res = resume(paths, size_name=size_name, gpu=gpu)
    gpus = {(p.get("gpu") or {}).get("name") for p in res.provenance}
    if len(gpus) > 1:
        raise LeaseError(None, f"packs of several GPUs {sorted(map(str, gpus))}: name one with --gpu", field="--gpu")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summary = {}
    with tempfile.TemporaryDirectory() as tmp:
        runs: dict[str, list[Path]] = {}  # kernel -> records of the runs that measured it, by start (stable)
        for i, prov in enumerate(sorted(res.provenance, key=lambda p: p["visit"]["started"])):
            rec = {k: prov.get(k) for k in ("size", "iterations", "gpu", "energy", "host", "software", "compile")}
            rec["date"] = prov["visit"]["started"]
            rec["visit"] = prov["visit"]
            path = Path(tmp) / f"run{i}.json"
            path.write_text(json.dumps(rec))
            for kernel in measured_kernels(prov):
                runs.setdefault(kernel, []).append(path)
        for kernel, entries in sorted(res.entries.items()):
            visits = runs.get(kernel, [])
            spec = harness.load_spec(kernel)
            header = res.headers[kernel]
            names = cache_names(spec)
            valid = [config_key(c, names) for c in spec.valid_configs("cuda")]
            if set(valid) <= set(entries):
                entries, notes = _without_partial_objectives(entries)
                shard = Path(tmp) / f"{kernel}.json"
                shard.write_text(json.dumps(closed_cache(header, entries)))
                merge(kernel, "cuda", size_name, [shard], out / f"{kernel}.json.gz", out / f"{kernel}.yaml",
                          out / f"{kernel}.provenance.json", shard_provenance=visits, notes=notes)
                summary[kernel] = {"complete": True, "configurations": len(valid)}
            else:
                ordered = {k: entries[k] for k in valid if k in entries}
                (out / f"{kernel}.partial.json.gz").write_bytes(_gz(closed_cache(header, ordered)))
                write_definition(kernel, "cuda", size_name, out / f"{kernel}.partial.yaml")
                write_json({"kernel": kernel, "target": "cuda", "size": size_name, "partial": True,
                            "configurations": len(valid), "measured": len(ordered),
                            "note": "partial sweep: a space of these configurations is not the kernel's space",
                            "visits": [json.loads(v.read_text()) for v in visits]},
                           out / f"{kernel}.partial.provenance.json")
                summary[kernel] = {"complete": False, "configurations": len(valid), "measured": len(ordered)}

    # published under data/: refresh the manifest for the packs and the merged files (compile/ has its own)
    manifest.record_measured(data_dir, out, "measured by this suite (analysis.sweep.gpu_lease, `python -m "
                                            "analysis.cli gpu-lease` / `gpu-lease-merge`)", keep=("compile",))
    return summary
