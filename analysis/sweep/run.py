"""Exhaustive Kernel Tuner sweeps of one kernel: shards, merge, definition and provenance.

A sweep measures every valid configuration of a kernel's target (`cpu`: Kernel Tuner's C
backend on the host, `cuda`: a CUDA GPU) with Kernel Tuner's brute-force strategy and
records, per configuration, Kernel Tuner's `time` (ms, mean over `iterations` runs) plus
`memory` (bytes, the spec's formula, as a Kernel Tuner metric), `mre`, `nrmse`, `nmae`
(analysis.sweep.metrics, through an AccuracyObserver) and on CUDA, where NVML is
available, `energy` (J). Kernel Tuner's own `compile_time`, `verification_time` and
`benchmark_time` (ms) stay in every entry.

The valid configurations, in Kernel Tuner's order, are split into `n` contiguous shards;
shard i measures configurations [i*N/n, (i+1)*N/n). Each shard writes its own Kernel Tuner
cache, which is resumable: rerunning a shard after a crash repairs an interrupted last
write and Kernel Tuner skips every configuration already in the cache. `merge` checks
that the shards hold every configuration exactly once and writes one cache (gzipped
JSON, Kernel Tuner's format), a definition file (tune_params + constraints) and a
provenance JSON.

Kernel Tuner's C backend refuses float16 arrays and takes one fixed argument list per
`tune_kernel` call, so on the cpu target the configurations are grouped by the types of
the array arguments; each group is one `tune_kernel` call with the arguments encoded
once (16-bit types as uint16 views) and a restriction selecting that group's
configurations. All groups share the shard's cache (same tune_params, same keys).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import gzip
import json
import logging
import os
import platform
import subprocess
import warnings
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from analysis.errors import InputError
from analysis.io import atomic_path, write_json, write_text
from analysis.spaces.space import NONFINITE_FIELD
from analysis.sweep import cachefile, harness, progress, variants
from analysis.sweep.metrics import METRICS, error_metrics, worst
from analysis.sweep.precision import decode
from analysis.sweep.spec import KernelSpec

log = logging.getLogger(__name__)
TARGETS = ("cpu", "cuda")
# cache field -> study objective, for the importer's `objectives` mapping
OBJECTIVE_FIELDS = {"time": "time", "memory": "memory", "mre": "mre", "nrmse": "nrmse", "nmae": "nmae"}


class SweepError(InputError):
    """A sweep's inputs or shard files are inconsistent."""


def _kt():
    from kernel_tuner.accuracy import AccuracyObserver

    return AccuracyObserver


def _decoded(answers, outputs, output_types: Sequence[str] | None):
    """(reference, float64 output) of every output argument (those with an answer), in order.

    With `output_types` (C backend, where 16-bit outputs come back as uint16) outputs are
    decoded by position among the outputs, otherwise from their NumPy dtype.
    """
    k = 0
    for answer, output in zip(answers, outputs):
        if answer is None:
            continue
        yield answer, decode(output, output_types[k]) if output_types else np.asarray(output).astype(np.float64)
        k += 1


class OutputMemo:
    """The decoded error metrics and non-finite count of one kernel output, computed once.

    Kernel Tuner hands the same list of outputs to every output observer of a check; the
    first observer computes every metric and the count, the others read them. The memo keeps
    a reference to that list, so `is` cannot match a later list at a reused address.
    """

    def __init__(self, output_types: Sequence[str] | None):
        self.output_types = output_types
        self.outputs: Any = None
        self.metrics: dict[str, float] = {}
        self.nonfinite = 0

    def of(self, answers, outputs) -> OutputMemo:
        if self.outputs is not outputs:
            decoded = list(_decoded(answers, outputs, self.output_types))
            self.metrics = worst([error_metrics(values, answer) for answer, values in decoded])
            self.nonfinite = sum(int(np.size(values) - np.count_nonzero(np.isfinite(values))) for _, values in decoded)
            self.outputs = outputs
        return self


def make_error_observer(output_types: Sequence[str] | None, metric: str, memo: OutputMemo | None = None):
    """An AccuracyObserver recording `metric` (mre, nrmse or nmae) of the worst output.

    Outputs are decoded to float64 first: with `output_types` (C backend, where 16-bit
    outputs come back as uint16) by position, otherwise from their NumPy dtype. Observers
    sharing `memo` compute the metrics once per check.
    """
    AccuracyObserver = _kt()
    memo = memo or OutputMemo(output_types)

    class ErrorObserver(AccuracyObserver):
        def process_output(self, answers, outputs):
            self.result = memo.of(answers, outputs).metrics[metric]

    return ErrorObserver(metric=lambda a, b: 0.0, key=metric)


def make_nonfinite_observer(output_types: Sequence[str] | None, memo: OutputMemo | None = None):
    """An observer recording `nonfinite_values`: how many output values are NaN or infinite.

    The importer marks a configuration with a positive count as `invalid_output` (kept in the
    space and counted, excluded from every objective set, as seed 002 §IV excludes them).
    """
    AccuracyObserver = _kt()
    memo = memo or OutputMemo(output_types)

    class NonfiniteObserver(AccuracyObserver):
        def process_output(self, answers, outputs):
            self.result = memo.of(answers, outputs).nonfinite

    return NonfiniteObserver(metric=lambda a, b: 0.0, key=NONFINITE_FIELD)


def reference_check(spec: KernelSpec, target: str, size_name: str,
                    reference: Mapping[str, np.ndarray] | None = None) -> dict[str, float]:
    """The correctness gate: run the reference configuration (every type double, policy accurate) once
    and compare each output with the float64 reference; a SweepError names the kernel, the target, the
    output and the error when the worst of MRE, NRMSE and NMAE exceeds the spec's `tolerance`.

    Returns the worst metrics over the outputs. On cpu the port is compiled with g++ as the sweep
    compiles it; on cuda Kernel Tuner's run_kernel runs kernel.cu on the GPU. `reference` (output name
    -> float64 array) is the float64 reference when the caller already has it (the GPU lease computes
    the `gpu` size's references in worker processes); by default it is computed here.
    """
    config = harness.all_double_config(spec.name, target)
    if target == "cpu":
        outputs = harness.run_cpu(spec.name, config, size_name)
    else:
        outputs = _run_cuda_once(spec, config, size_name)
    ref = reference if reference is not None else harness.reference_outputs(spec.name, size_name)
    per_output = {}
    for name, values in outputs.items():
        metrics = error_metrics(values, ref[name])
        per_output[name] = metrics
        bad = {m: v for m, v in metrics.items() if not v <= spec.tolerance}  # NaN fails too
        if bad:
            m, v = max(bad.items(), key=lambda kv: (np.isnan(kv[1]), kv[1]))
            raise SweepError(spec.path, f"correctness gate failed: kernel {spec.name}, target {target}, output "
                                        f"'{name}' of the reference configuration {config} has {m} {v:.3e} against "
                                        f"the float64 reference (tolerance {spec.tolerance:g}); nothing was measured",
                             field="tolerance")
    worst_metrics = worst(list(per_output.values()))
    log.info("%s/%s correctness gate passed: reference configuration within %g (%s)", spec.name, target,
             spec.tolerance, ", ".join(f"{m} {v:.2e}" for m, v in worst_metrics.items()))
    return worst_metrics


def _run_cuda_once(spec: KernelSpec, config: Mapping[str, Any], size_name: str) -> dict[str, np.ndarray]:
    from kernel_tuner import run_kernel

    inputs = harness.make_inputs(spec.name, size_name)
    args = harness.kernel_arguments(spec, config, inputs, size_name, for_c=False)
    results = run_kernel(spec.function, str(spec.folder / "kernel.cu"), _problem_size(spec, "cuda", size_name),
                         [a.ravel() if isinstance(a, np.ndarray) else a for a in args], dict(config),
                         **_cuda_options(spec))
    return {a.name: np.asarray(r, dtype=np.float64) for a, r in zip(spec.arguments, results) if a.role == "output"}


def _cuda_options(spec: KernelSpec) -> dict[str, Any]:
    """Kernel Tuner options of the cuda target: language, nvcc flags, grid divisors, block size names."""
    t = spec.target("cuda")
    opts: dict[str, Any] = dict(lang="CUDA", compiler_options=["-std=c++17", f"-I{harness.COMMON_DIR}",
                                                               f"-I{spec.folder}"], **t.grid_div)
    if t.block_size_names:
        opts["block_size_names"] = list(t.block_size_names)
    return opts


def resolve_tune_params(spec: KernelSpec, target: str, override: Mapping[str, list] | None) -> dict[str, list]:
    """The target's tune_params, optionally narrowed (same names, values from the spec's lists, spec order)."""
    full = spec.tune_params(target)
    if not override:
        return full
    out = {}
    for p, values in override.items():
        if p not in full:
            raise SweepError(spec.path, f"override names unknown parameter (known: {', '.join(full)})",
                             field=f"tune_params.{p}")
        if not isinstance(values, list) or not values or any(v not in full[p] for v in values):
            raise SweepError(spec.path, f"override {values!r} must be a non-empty sub-list of {full[p]}",
                             field=f"tune_params.{p}")
    for p, values in full.items():
        out[p] = [v for v in values if v in override[p]] if p in override else values
    return out


def config_key(config: Mapping[str, Any], names: Sequence[str]) -> str:
    """Kernel Tuner's cache key of a configuration."""
    return ",".join(str(config[p]) for p in names)


def shard_configs(spec: KernelSpec, target: str, tune_params: Mapping[str, list], shard: int, shards: int):
    """The valid configurations of shard `shard` of `shards` (contiguous ranges in Kernel Tuner's order)."""
    if not 0 <= shard < shards:
        raise SweepError(None, f"shard {shard} is not in 0..{shards - 1}", field="shard")
    configs = spec.valid_configs(target, tune_params)
    n = len(configs)
    return configs[shard * n // shards:(shard + 1) * n // shards]


THREADS_PARAM = "threads"  # a cpu target's OpenMP thread count, by the kernels' convention


def shard_cores(kernel: str, target: str, tune_params: Mapping[str, list] | None, shard: tuple[int, int]) -> int:
    """Cores a shard's configurations use at once: the largest `threads` among them on cpu, else 1.

    The sweep rule declares it as the job's threads, so that a shard measuring two-thread
    configurations never shares the machine's cores with another shard (on a 2-core machine,
    two-thread times measured beside a second shard varied by a coefficient of variation of
    0.5-0.9 between runs, one-thread times by 0.02-0.05).
    """
    spec = harness.load_spec(kernel)
    if target != "cpu" or THREADS_PARAM not in spec.target(target).own_params:
        return 1
    configs = shard_configs(spec, target, resolve_tune_params(spec, target, tune_params), *shard)
    return max((int(c[THREADS_PARAM]) for c in configs), default=1)


def parse_shard(text: str) -> tuple[int, int]:
    """'i/n' -> (i, n)."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise SweepError(None, f"'{text}' is not of the form i/n", field="shard") from None
    if n < 1 or not 0 <= i < n:
        raise SweepError(None, f"'{text}': need 0 <= i < n", field="shard")
    return i, n


def _problem_size(spec: KernelSpec, target: str, size_name: str) -> list[int]:
    if target == "cuda":
        return spec.problem_size(size_name)
    first_out = next(a for a in spec.arguments if a.role == "output")
    return [int(np.prod(spec.shape(first_out, size_name)))]


COMPILE_MODES = ("grouped", "per-configuration")


def sweep_shard(kernel: str, target: str, size_name: str, cache: str | Path, *, shard: tuple[int, int] = (0, 1),
                iterations: int = 7, tune_params: Mapping[str, list] | None = None,
                provenance: str | Path | None = None, compile_mode: str = "per-configuration") -> dict[str, Any]:
    """Measure (or finish measuring) one shard into the Kernel Tuner cache `cache`; return a summary.

    `compile_mode` (cpu target): "per-configuration" (the default) lets Kernel Tuner's C backend
    compile every configuration on its own, as a tuning run does; "grouped" compiles the
    optimisation variants of each precision combination into one library (analysis.sweep.variants),
    faster, but its cache then records no per-configuration compile cost (a space imported from it
    needs `compile_times`, analysis.spaces.compile_cost).
    """
    if target not in TARGETS:
        raise SweepError(None, f"unknown target '{target}' (known: {', '.join(TARGETS)})", field="target")
    if compile_mode not in COMPILE_MODES:
        raise SweepError(None, f"unknown compile mode '{compile_mode}' (known: {', '.join(COMPILE_MODES)})",
                         field="compile_mode")
    spec = harness.load_spec(kernel)
    params = resolve_tune_params(spec, target, tune_params)
    names = list(params)
    todo = shard_configs(spec, target, params, *shard)
    load_start = os.getloadavg()[0]  # the machine's load: noise context, recorded in the provenance
    cache = Path(cache)
    cache.parent.mkdir(parents=True, exist_ok=True)
    kept = cachefile.repair(cache)
    done = set(cachefile.read(cache)["cache"]) if cache.exists() else set()
    extra = done - {config_key(c, names) for c in todo}
    if extra:
        raise SweepError(cache, f"holds {len(extra)} configuration(s) outside shard {shard[0]}/{shard[1]}, "
                                f"e.g. '{sorted(extra)[0]}'", field="cache")
    log.info("%s/%s shard %d/%d: %d configurations, %d already in %s", kernel, target, *shard, len(todo), kept, cache)
    pending = {config_key(c, names) for c in todo} - done
    gate = reference_check(spec, target, size_name) if pending else None  # before measuring anything
    tracker = progress.Progress(f"{kernel}/{target} shard {shard[0]}/{shard[1]}", len(todo), len(todo) - len(pending))
    env, measured, builds = measure_configs(spec, target, size_name, cache, params, todo, done, iterations=iterations,
                                            compile_mode=compile_mode, tracker=tracker)
    final = cachefile.read(cache)["cache"] if cache.exists() else {}
    missing = {config_key(c, names) for c in todo} - set(final)
    if missing:
        raise SweepError(cache, f"{len(missing)} configuration(s) of the shard were not measured, "
                                f"e.g. '{sorted(missing)[0]}'", field="cache")
    summary = {"configurations": len(todo), "resumed_with": kept, "measured_now": measured,
               "compile_mode": compile_mode if target == "cpu" else "per-configuration", "libraries_built": builds,
               "nonfinite_configurations": sum(1 for k in (config_key(c, names) for c in todo)
                                               if _positive(final[k].get(NONFINITE_FIELD))),
               "correctness_gate": gate,
               "load_average_1min": {"start": round(load_start, 2), "end": round(os.getloadavg()[0], 2)}}
    if provenance is not None:
        write_json(provenance_record(kernel, target, size_name, iterations, shard, env, summary), provenance)
    return summary


def measure_configs(spec: KernelSpec, target: str, size_name: str, cache: Path, params: Mapping[str, list],
                    todo: Sequence[Mapping[str, Any]], done: set[str], *, iterations: int = 7,
                    compile_mode: str = "grouped", tracker: progress.Progress | None = None
                    ) -> tuple[dict[str, Any], int, int]:
    """Measure the configurations `todo` not in `done` into the Kernel Tuner cache `cache`.

    `params` are the tune_params every `tune_kernel` call is given (the cache's keys follow
    them). On cpu, one call per combination of the argument types (see the module's
    docstring). Returns (Kernel Tuner's env of the last call, configurations measured,
    grouped libraries built).
    """
    names = list(params)
    inputs = harness.make_inputs(spec.name, size_name)
    ref = harness.reference_outputs(spec.name, size_name)
    answer = [ref[a.name].ravel() if a.role == "output" else None for a in spec.arguments]
    env: dict[str, Any] = {}
    measured = builds = 0
    if target == "cpu":
        groups: OrderedDict[tuple, list[dict]] = OrderedDict()
        prec = spec.argument_precision_params()
        for c in todo:
            groups.setdefault(tuple(c[p] for p in prec), []).append(c)
        for configs in groups.values():
            keys = {config_key(c, names) for c in configs}
            if keys <= done:
                continue
            sample = configs[0]
            args = [a.ravel() if isinstance(a, np.ndarray) else a
                    for a in harness.kernel_arguments(spec, sample, inputs, size_name, for_c=True)]
            out_types = [spec.arg_type(a, sample) for a in spec.arguments if a.role == "output"]
            pending_configs = [c for c in configs if config_key(c, names) not in done]
            grouped = variants.GroupedLibraries(spec, target, pending_configs) if compile_mode == "grouped" else None
            env = _tune(spec, target, size_name, cache, dict(params), args, answer, keys, iterations, out_types,
                        tracker, grouped)
            measured += len(keys - done)
            if grouped is not None:
                builds += grouped.builds
    else:
        keys = {config_key(c, names) for c in todo} - done
        env = _tune(spec, target, size_name, cache, dict(params), _tunable_arguments(spec, inputs, size_name), answer,
                    keys, iterations, None, tracker) if keys else {}
        measured = len(keys)
    return env, measured, builds


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _tunable_arguments(spec: KernelSpec, inputs: Mapping[str, np.ndarray], size_name: str) -> list:
    from kernel_tuner.accuracy import TunablePrecision

    from analysis.sweep.precision import DTYPES

    args: list = []
    for a in spec.arguments:
        if a.role == "scalar":
            args.append(harness._NP_SCALARS[a.type](spec.scalar_value(a, size_name)))
            continue
        shape = spec.shape(a, size_name)
        data = np.asarray(inputs[a.name]).reshape(shape).ravel() if a.role == "input" else np.zeros(int(np.prod(shape)))
        if a.type in spec.precision:
            args.append(TunablePrecision(a.type, data, {t: DTYPES[t] for t in spec.precision[a.type]}))
        else:
            args.append(data.astype(DTYPES[a.type]))
    return args


def _observers(target: str, out_types):
    memo = OutputMemo(out_types)
    observers = [make_error_observer(out_types, m, memo) for m in METRICS] + [make_nonfinite_observer(out_types, memo)]
    if target == "cuda":
        try:
            from kernel_tuner.observers.nvml import NVMLObserver

            observers.append(NVMLObserver(["nvml_energy"]))
        except Exception as exc:  # pynvml missing or no NVML device: energy is optional
            log.warning("no NVML energy observer (%s); energy not recorded", exc)
    return observers


def _tune(spec: KernelSpec, target: str, size_name: str, cache: Path, params: dict, args: list, answer: list,
          keys: set[str], iterations: int, out_types, tracker: progress.Progress | None = None,
          grouped: variants.GroupedLibraries | None = None) -> dict[str, Any]:
    from kernel_tuner import tune_kernel

    names = list(params)

    def restriction(p):
        return config_key(p, names) in keys

    # Kernel Tuner re-reads a restriction's source to find lambdas in it; without a source file it
    # takes the function as it is (editing this file during a sweep would otherwise confuse it)
    restriction.__code__ = restriction.__code__.replace(co_filename="<sweep restriction>")

    observers = _observers(target, out_types)
    if tracker is not None:  # done / total, rate and time left, at least once a minute
        observers.append(progress.observer(tracker))
    metrics: dict[str, Any] = {"memory": lambda p: spec.memory_bytes(p, size_name)}
    if grouped is not None:  # the build of the library this configuration's code came from, shared by its variants
        metrics["library_build_time"] = grouped.build_time_ms
        metrics["library_variants"] = grouped.variant_count
    if any(type(o).__name__ == "NVMLObserver" for o in observers):
        metrics["energy"] = lambda p: p.get("nvml_energy", float("nan"))
    opts: dict[str, Any] = dict(
        restrictions=[restriction], answer=answer, observers=observers, metrics=metrics,
        cache=str(cache.resolve()),  # absolute: Kernel Tuner runs in the scratch folder (kernel_tuner_scratch)
        iterations=iterations, strategy="brute_force", quiet=True, verbose=False,
    )
    if target == "cpu":
        _pin_openmp_runtime()
        source, name = timed_cpu_source(spec), f"tsb_timed_{spec.function}"
        opts.update(lang="C", compiler=harness.CXX, compiler_options=harness.port_compiler_options(spec))
    else:
        source, name = str(spec.folder / "kernel.cu"), spec.function
        opts.update(_cuda_options(spec))
    compiling = variants.grouped_compilation(grouped) if grouped is not None else contextlib.nullcontext()
    with cachefile.atomic_rewrites(), warnings.catch_warnings(), kernel_tuner_scratch(cache), compiling:
        # expected: encoded 16-bit arguments never match the C declarations; the C backend has no blocks
        warnings.filterwarnings("ignore", message="Argument at position", category=UserWarning)
        warnings.filterwarnings("ignore", message="None of the tunable parameters specify thread block",
                                category=UserWarning)
        _, env = tune_kernel(name, source, _problem_size(spec, target, size_name), args, params, **opts)
    return env


def scratch_dir(cache: str | Path) -> Path:
    """The folder Kernel Tuner works in for the shard whose cache is `cache` (next to it, in the results tree)."""
    cache = Path(cache).resolve()
    return cache.parent / f"{cache.name}.kt-scratch"


@contextlib.contextmanager
def kernel_tuner_scratch(cache: str | Path) -> Iterator[Path]:
    """While active, the working directory is the shard's scratch folder.

    Kernel Tuner 1.5.0 writes its temporary sources and libraries (temp_*.cc, .o, .so; the
    sources of a failed compile are kept for its error message) with tempfile.mkstemp in
    the current directory. Running it from a folder next to the shard's cache keeps them in
    the results tree, never in the checkout. The folder is removed when empty; leftovers
    (from a failed compile) stay there with a warning naming them.
    """
    folder = scratch_dir(cache)
    folder.mkdir(parents=True, exist_ok=True)
    previous = os.getcwd()
    os.chdir(folder)
    try:
        yield folder
    finally:
        os.chdir(previous)
        left = sorted(p.name for p in folder.iterdir())
        if left:
            log.warning("%s: Kernel Tuner left %d temporary file(s), e.g. %s", folder, len(left), left[0])
        else:
            folder.rmdir()


def timed_cpu_source(spec: KernelSpec) -> str:
    """Source handed to the C backend: kernel.cpp plus a wrapper returning the call's wall time in ms."""
    return "\n".join(["#include <time.h>", '#include "kernel.cpp"',
                      *variants.timed_wrapper(spec, f"tsb_timed_{spec.function}", spec.function)]) + "\n"


def _cmd_first_line(cmd: list[str]) -> str | None:
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
        rec["compiler"] = {"command": harness.CXX, "version": _cmd_first_line([harness.CXX, "--version"]),
                           "flags": ["-fPIC", *harness.CXX_FLAGS, "-I<workflow/kernels/common>"]}
    else:
        rec["compiler"] = {"command": "nvcc (through Kernel Tuner's CUDA backend)",
                           "version": _cmd_first_line(["nvcc", "--version"]) and
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
    return _cmd_first_line(["nvidia-smi", f"--query-gpu={field}", "--format=csv,noheader"])


def read_disjoint_caches(paths: Sequence[str | Path], names: Sequence[str]
                         ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(header of the first, every entry) of Kernel Tuner caches (open or closed) that hold disjoint sets of
    configurations with the tune_params_keys `names`; a SweepError names the file otherwise."""
    merged: dict[str, Any] = {}
    header: dict[str, Any] | None = None
    for path in paths:
        try:
            doc = cachefile.read(path)
        except (OSError, json.JSONDecodeError) as exc:
            raise SweepError(path, f"not a readable Kernel Tuner cache ({exc})") from None
        if doc.get("tune_params_keys") != list(names):
            raise SweepError(path, f"parameters {doc.get('tune_params_keys')} differ from {list(names)}",
                             field="tune_params_keys")
        for key, entry in doc["cache"].items():
            if key in merged:
                raise SweepError(path, f"configuration '{key}' is also in another of the files", field=f"cache.{key}")
            merged[key] = entry
        header = header or doc
    return header, merged


def merge(kernel: str, target: str, size_name: str, shard_caches: Sequence[str | Path], out_cache: str | Path,
          definition: str | Path, provenance: str | Path, *, tune_params: Mapping[str, list] | None = None,
          shard_provenance: Sequence[str | Path] = ()) -> dict[str, Any]:
    """Merge shard caches into one cache (every valid configuration exactly once), definition and provenance."""
    spec = harness.load_spec(kernel)
    params = resolve_tune_params(spec, target, tune_params)
    names = list(params)
    expected = [config_key(c, names) for c in spec.valid_configs(target, params)]
    header, merged = read_disjoint_caches(shard_caches, names)
    missing = [k for k in expected if k not in merged]
    extra = [k for k in merged if k not in set(expected)]
    if missing or extra or header is None:
        raise SweepError(shard_caches[0] if shard_caches else out_cache,
                         f"shards hold {len(merged)} configurations: {len(missing)} missing (e.g. "
                         f"{missing[:1]}), {len(extra)} not valid (e.g. {extra[:1]})", field="cache")
    doc = {k: header[k] for k in ("device_name", "kernel_name", "problem_size", "tune_params_keys", "objective")
           if k in header}
    doc["tune_params"] = params
    doc["cache"] = {k: merged[k] for k in expected}
    with atomic_path(out_cache) as tmp:
        data = json.dumps(doc, indent=0).encode()
        tmp.write_bytes(gzip.compress(data, mtime=0) if str(out_cache).endswith(".gz") else data)
    write_text(yaml.safe_dump({"kernel": kernel, "target": target, "size": size_name, "tune_params": params,
                               "constraints": spec.constraints(target)}, sort_keys=False), definition)
    shards = [json.loads(Path(p).read_text()) for p in shard_provenance]
    ok = sum(1 for e in doc["cache"].values() if not isinstance(e.get("time"), str))
    prov = {"kernel": kernel, "target": target, "size": size_name, "configurations": len(expected),
            "failed": len(expected) - ok, "objective_fields": OBJECTIVE_FIELDS,
            "evaluation_time_fields": ["compile_time", "verification_time", "benchmark_time"],
            "shards": shards}
    for k in ("iterations", "date", "host", "software", "compiler", "gpu"):
        if shards and k in shards[0]:
            prov[k] = shards[0][k]
    if len({json.dumps(s.get("host", {}).get("cpu_model")) for s in shards}) > 1:
        log.warning("shards were measured on different CPU models: %s", [s["host"]["cpu_model"] for s in shards])
    write_json(prov, provenance)
    return {"configurations": len(expected), "failed": len(expected) - ok}


def publish(cache: str | Path, definition: str | Path, provenance: str | Path, *, kernel: str, target: str,
            label: str, data_dir: str | Path = "data") -> Path:
    """Copy a merged sweep into data/sweeps/<target>/<label>/ and refresh data/MANIFEST.csv for it."""
    from analysis import manifest

    if not label or "/" in label or label.startswith("."):
        raise SweepError(None, f"bad device label '{label}'", field="label")
    dest = Path(data_dir) / "sweeps" / target / label
    for src, name in ((cache, f"{kernel}.json.gz"), (definition, f"{kernel}.yaml"),
                      (provenance, f"{kernel}.provenance.json")):
        with atomic_path(dest / name) as tmp:
            tmp.write_bytes(Path(src).read_bytes())
            tmp.chmod(0o644)
    manifest.update(data_dir, f"sweeps/{target}/{label}",
                    source="measured by this suite (analysis.sweep, `python -m analysis.cli sweep-publish`)",
                    licence="same as this repository", citation="this repository (see README, Citation)")
    return dest


def _pin_openmp_runtime() -> None:
    """Keep libgomp loaded for the life of the process.

    Kernel Tuner's C backend unloads each configuration's library after measuring it. When
    that library was the only user of libgomp, the OpenMP runtime is unmapped while its
    worker threads (started by a configuration with threads > 1) are still spinning in it,
    and the process dies with SIGSEGV at a later configuration. One process-wide reference
    keeps the runtime mapped.
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("gomp") or "libgomp.so.1"
    ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
