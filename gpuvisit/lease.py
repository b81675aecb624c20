"""One visit of a lent GPU (`lease`): the nine kernels' CUDA spaces in as few short GPU visits as possible.

    python -m gpuvisit gpu-lease --deadline-min 25 --out OUT [--resume PACKS ...]   # on the GPU machine
    python -m gpuvisit gpu-lease --plan [--resume PACKS ...]                       # anywhere
    python -m gpuvisit gpu-lease --compile-only --kernels bessel --arch sm_90 --out DIR

A visit (a lent GPU machine: bare, about 25 usable minutes, at most 8 result files of 16 MiB)
runs, in the order of the kernels' CUDA space sizes, smallest first, so that each visit
completes whole spaces:

1. resume: every configuration already in the shard caches that earlier visits brought back
   (`--resume`: their pack files) or that this visit measured before a crash (the work folder)
   is skipped; packs of another GPU, size or source version of a kernel are refused (gpuvisit.resume);
2. compile ahead: every pending configuration's module is built by nvcc in a pool of processes
   on all cores but one (gpuvisit.cuda_modules: one module per chunk of a precision
   combination's optimisation variants, each variant its own code from Kernel Tuner's own
   kernel string), alongside the measurement; the float64 references of the next kernels are
   computed in another worker meanwhile;
3. per kernel: the correctness gate (analysis.sweep.shard.reference_check on the GPU, the
   reference configuration against the float64 reference at the sweep's size; a kernel that
   fails it is skipped and the failure recorded); then `tune_kernel` calls (Kernel Tuner's
   brute force, CuPy backend, its own benchmarking: `iterations` timed runs with CUDA events)
   of batches of precision combinations, each into a scratch cache appended to the kernel's
   shard cache; the error metrics on the device (analysis.sweep.device_metrics); energy per
   configuration through Kernel Tuner's NVML observer where NVML answers (gpuvisit.measure);
4. a clean stop before the deadline: before each configuration Kernel Tuner asks its budget
   whether to go on, and here the budget answers no once the next configuration (twice the
   longest of the recent ones) would end after the deadline less `reserve_s` (gpuvisit.guard);
5. packing: the visit's shard caches (gzipped Kernel Tuner caches, split where large) and the
   provenance (GPU, driver, CUDA, clocks, Kernel Tuner and CuPy versions, energy status,
   per-kernel counts, gates and throughput per stage) into at most 8 tar files of at most
   16 MiB each (gpuvisit.pack).

`gpuvisit.merge.merge_packs` (`gpu-lease-merge`) joins every visit's packs of one GPU: a complete space into
the merged cache, definition and provenance of analysis.sweep.merge.merge; a partial one into a
cache named `<kernel>.partial.json.gz` whose provenance says how much of the space it holds.

The plan (gpuvisit.plan: `--plan`, and the generated section of docs/kernels.md) estimates each
kernel's time from a measure rate and a compile rate: the measure rate measured by an earlier
visit on that GPU (from the packs' provenance) where there is one, else the issue's target of
20 configurations/s, an assumption; the compile rate is nvcc's per-core rate measured by
`benchmarks/bench_gpu_lease.py` (on the machine named in its report) times the GPU machine's
compile workers, an assumed scaling.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.errors import InputError
from analysis.sweep import cachefile, harness, progress
from analysis.sweep.spec import KernelSpec
from gpuvisit import cuda_modules
from gpuvisit.cache import SIZE, ShardWriter, cache_header, cache_names, config_key, ordered_kernels, source_hash
from gpuvisit.guard import RESERVE_S, DeadlineReached, Guard
from gpuvisit.measure import BATCH_MIN, ENERGY_WINDOW_S, KTCupyMeasurer, ReferencePool, batches
from gpuvisit.pack import PACK_BYTES, PACK_FILES, pack
from gpuvisit.records import host_record, software_record
from gpuvisit.resume import Resumed, resume

log = logging.getLogger(__name__)
# how a visit compiles, in its provenance: worded as the published visits' packs have it (data/sweeps/cuda/<gpu>/
# packs/, merged into <kernel>.provenance.json), naming the module as it was then (now gpuvisit.cuda_modules), so
# that every visit's record of one space reads the same
COMPILE_MODE = "one module per chunk of a precision combination (analysis.sweep.cuda_modules)"
LOGGED = ("analysis", "gpuvisit")  # the loggers whose records go into the work folder's lease.log


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
    loggers = [logging.getLogger(name) for name in LOGGED]
    for logger in loggers:
        logger.addHandler(log_handler)
    try:
        return _lease(out, deadline_min, kernels, resume_paths, work, size_name, iterations, chunk, jobs, batch_min,
                      energy_window, reserve_s, clock, measurer, builder_factory, reference_workers, files, limit,
                      max_configs, start, started_at, stop_at)
    finally:
        for logger in loggers:
            logger.removeHandler(log_handler)
        log_handler.close()


def visit_summary(provenance: Mapping[str, Any]) -> str:
    """What `gpu-lease` prints after a visit: why it stopped, the pack files written and, per kernel, the
    configurations measured now, done after the visit and in all, and whether its space is complete (JSON)."""
    fields = ("measured_now", "done_after", "configurations", "complete")
    return json.dumps({"stop": provenance["visit"]["stop"], "written": provenance["written"],
                       "kernels": {k: {f: r.get(f) for f in fields} for k, r in provenance["kernels"].items()}},
                      indent=1)


@dataclass
class _Visit:
    """What one lease run works with while it measures kernel after kernel."""

    work: Path
    size_name: str
    batch_min: int
    clock: Callable[[], float]
    guard: Guard
    measurer: Any
    builder: Any
    refs: ReferencePool
    gpu: str
    earlier: Resumed


def _pending(order: Sequence[str], specs: Mapping[str, KernelSpec], earlier: Resumed, this_visit: Resumed,
             max_configs: int | None) -> tuple[dict[str, list[dict[str, Any]]], dict[str, dict[str, Any]]]:
    """Per kernel, the configurations left to measure (the first `max_configs`: samples) and its record so far."""
    pending: dict[str, list[dict[str, Any]]] = {}
    kernels_rec: dict[str, dict[str, Any]] = {}
    for k in order:
        names = cache_names(specs[k])
        done = earlier.done(k) | this_visit.done(k)
        valid = specs[k].valid_configs("cuda")
        pending[k] = [c for c in valid if config_key(c, names) not in done][:max_configs]  # max_configs: samples
        valid_keys = {config_key(c, names) for c in valid}
        kernels_rec[k] = {"configurations": len(valid), "done_before": len(done & valid_keys),
                          "done_in_earlier_visits": len(earlier.done(k)), "measured_now": 0,
                          "source_sha256": source_hash(k)}
    return pending, kernels_rec


def _compile_ahead(v: _Visit, order: Sequence[str], specs: Mapping[str, KernelSpec],
                   pending: Mapping[str, list[dict[str, Any]]], kernels_rec: Mapping[str, dict[str, Any]],
                   chunk: int, chunks: dict[str, list[cuda_modules.Chunk]]) -> None:
    """Every pending configuration's module submitted to the builder, and each reference prefetched, in lease
    order; `chunks` receives each kernel's chunks as they are made."""
    for k in order:
        if pending[k]:
            t0 = time.perf_counter()
            chunks[k] = cuda_modules.make_chunks(specs[k], pending[k], v.size_name, chunk=chunk,
                                                 strings=cuda_modules.KernelStrings(specs[k], v.size_name))
            kernels_rec[k]["modules"] = len(chunks[k])
            kernels_rec[k]["module_generation_s"] = round(time.perf_counter() - t0, 3)
            for ch in chunks[k]:
                v.builder.submit(specs[k], ch)
            v.refs.prefetch(k)


def _set_up(v: _Visit, k: str, spec: KernelSpec, rec: dict[str, Any], pending: Sequence[Mapping[str, Any]],
            chunks: Sequence[cuda_modules.Chunk]) -> bool:
    """The kernel's reference, gate and inputs on the device; False (recorded) where the gate or set-up failed."""
    reference, rec["reference_s"] = v.refs.get(k)
    t0 = v.clock()
    try:
        rec["gate"] = v.measurer.prepare(spec, pending, chunks, v.builder, reference, v.guard)
    except InputError as exc:  # the correctness gate failed: record, go on with the next kernel
        rec["gate"] = {"failed": str(exc)}
        log.error("%s: %s", k, exc)
        return False
    except Exception as exc:  # the kernel could not be set up on the device: the same
        rec["gate"] = {"failed": f"{type(exc).__name__}: {exc}"}
        log.exception("%s: set-up failed; going on with the next kernel", k)
        v.measurer.finish(spec, chunks)
        return False
    rec["prepare_s"] = round(v.clock() - t0, 3)
    return True


def _measure_batches(v: _Visit, k: str, spec: KernelSpec, rec: dict[str, Any], chunks: Sequence[cuda_modules.Chunk],
                     writer: ShardWriter) -> tuple[float, int, str | None]:
    """The kernel's batches, one tune_kernel call each, appended to its shard cache: (measuring seconds, batches,
    the deadline's stop reason or None). An unexpected failure ends the kernel (recorded in `rec["error"]`)."""
    tracker = progress.Progress(f"{k}/cuda lease", rec["configurations"], rec["done_before"])
    measure_s, batches_done = 0.0, 0
    stop = None
    for batch in batches(spec, chunks, v.batch_min):
        scratch = v.work / "scratch" / f"{k}.json"
        scratch.parent.mkdir(parents=True, exist_ok=True)
        scratch.unlink(missing_ok=True)
        t0 = v.clock()
        try:
            v.guard.begin_batch()
            v.measurer.measure(spec, batch, scratch, v.guard, tracker)
        except DeadlineReached as exc:
            stop = f"deadline: {exc}"
        except TimeoutError:  # a module was not built before the deadline (PrecompiledModules' wait)
            stop = "deadline: waiting for a module"
        except Exception as exc:  # an unexpected failure ends this kernel, not the visit
            rec["error"] = f"{type(exc).__name__}: {exc}"
            log.exception("%s: batch failed; going on with the next kernel", k)
        finally:
            v.guard.end_batch()
            measure_s += v.clock() - t0
            if scratch.exists():
                rec["measured_now"] += writer.append(cachefile.read(scratch)["cache"])
                scratch.unlink()
            batches_done += 1
        if stop or "error" in rec:
            break
    return measure_s, batches_done, stop


def _throughput(v: _Visit, k: str, rec: Mapping[str, Any], chunks: Sequence[cuda_modules.Chunk],
                measure_s: float) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The kernel's rates per stage (measure, compile, metrics), and the modules that failed to build."""
    metrics_s, metrics_n, host_outputs = v.measurer.metrics_seconds()
    done_mods = [v.builder.results.get((k, ch.index)) for ch in chunks]
    nvcc_s = sum(r["seconds"] for r in done_mods if r)
    built = sum(len(ch.configs) for ch, r in zip(chunks, done_mods) if r and r["ok"])
    throughput = {
        "measure_s": round(measure_s, 3),
        "measure_configurations_per_s": round(rec["measured_now"] / measure_s, 3) if measure_s else None,
        "compile_nvcc_s": round(nvcc_s, 3), "compiled_configurations": built,
        "compile_configurations_per_nvcc_s": round(built / nvcc_s, 3) if nvcc_s else None,
        "metrics_s": round(metrics_s, 4), "metrics_checks": metrics_n,
        "metrics_ms_per_check": round(1000 * metrics_s / metrics_n, 4) if metrics_n else None,
        "outputs_copied_to_host": host_outputs}
    return throughput, [r for r in done_mods if r and not r["ok"]]


def _measure_kernel(v: _Visit, k: str, spec: KernelSpec, rec: dict[str, Any], pending: Sequence[Mapping[str, Any]],
                    chunks: Sequence[cuda_modules.Chunk]) -> str | None:
    """One kernel: set-up, its batches, its record; the deadline's stop reason where the visit must stop."""
    try:
        v.guard.begin_kernel()
    except DeadlineReached as exc:
        return f"deadline: {exc}"
    if not _set_up(v, k, spec, rec, pending, chunks):
        return None
    writer = ShardWriter(v.work / "shards" / f"{k}.json", cache_header(spec, v.gpu, v.size_name))
    measure_s, batches_done, stop = _measure_batches(v, k, spec, rec, chunks, writer)
    throughput, failed = _throughput(v, k, rec, chunks, measure_s)
    v.measurer.finish(spec, chunks)
    rec["batches"] = batches_done
    rec["done_after"] = len(writer.keys | v.earlier.done(k))
    rec["complete"] = rec["done_after"] == rec["configurations"]
    rec["throughput"] = throughput
    if failed:
        rec["failed_modules"] = [r["error"][-500:] for r in failed[:5]]
    log.info("%s: %d measured now, %d of %d done, %.2f configurations/s", k, rec["measured_now"],
             rec["done_after"], rec["configurations"],
             rec["measured_now"] / measure_s if measure_s else float("nan"))
    return stop


def _shard_caches(work: Path) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """kernel -> (header, entries) of every shard cache in the work folder."""
    caches = {}
    for f in sorted((work / "shards").glob("*.json")):
        doc = cachefile.read(f)
        kernel = f.name[:-len(".json")]
        caches[kernel] = ({k: v for k, v in doc.items() if k != "cache"}, doc["cache"])
    return caches


def _resumed(work: Path, resume_paths: Iterable[str | Path], size_name: str, gpu: str, order: Sequence[str]
             ) -> tuple[Resumed, Resumed]:
    """What the earlier visits' packs and this visit's work folder (an earlier run of it) hold."""
    shard_files = sorted((work / "shards").glob("*.json"))
    for f in shard_files:  # a crash of an earlier run of this visit may have cut a line
        cachefile.repair(f)
    shard_files = [f for f in shard_files if f.exists()]
    earlier = resume(resume_paths, size_name=size_name, gpu=gpu, kernels=order)
    this_visit = resume(shard_files, size_name=size_name, gpu=gpu, kernels=order) if shard_files else Resumed()
    for note in earlier.refused + this_visit.refused:
        log.warning("resume: left out %s", note)
    return earlier, this_visit


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
    earlier, this_visit = _resumed(work, resume_paths, size_name, gpu, order)
    specs = {k: harness.load_spec(k) for k in order}
    pending, kernels_rec = _pending(order, specs, earlier, this_visit, max_configs)
    log.info("lease %s on %s: %s", visit["id"], gpu, ", ".join(f"{k} {len(pending[k])} pending" for k in order))
    builder = (builder_factory or (lambda folder, arch: cuda_modules.ModuleBuilder(folder, arch, jobs=jobs)))(
        work / "modules", measurer.arch)
    v = _Visit(work, size_name, batch_min, clock, guard, measurer, builder,
               ReferencePool(work / "refs", size_name, workers=reference_workers), gpu, earlier)
    chunks: dict[str, list[cuda_modules.Chunk]] = {}
    stop_reason = "every requested space is complete"
    try:
        _compile_ahead(v, order, specs, pending, kernels_rec, chunk, chunks)
        for k in (k for k in order if pending[k]):
            stop = _measure_kernel(v, k, specs[k], kernels_rec[k], pending[k], chunks[k])
            if stop:
                stop_reason = stop
                break
    except Exception as exc:  # whatever happened, what was measured is packed
        stop_reason = f"error: {type(exc).__name__}: {exc}"
        log.exception("lease stopped by an error")
    finally:
        builder.close()
        v.refs.close()
    caches = _shard_caches(work)
    ended = clock()
    provenance = {
        "kind": "gpu-lease visit", "visit": {"id": visit["id"], "started": started_at.isoformat(timespec="seconds"),
                                             "deadline_min": deadline_min, "reserve_s": reserve_s,
                                             "seconds": round(ended - start, 1), "stop": stop_reason,
                                             "stop_rule": guard.record()},
        "size": size_name, "iterations": iterations, "target": "cuda",
        "gpu": gpu_at_start, "gpu_at_end": measurer.environment(), "energy": measurer.energy, "host": host_record(),
        "software": {**software_record(), "nvcc": cuda_modules.nvcc_version()},
        "compile": {"mode": COMPILE_MODE,
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
