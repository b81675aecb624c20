"""One shard of an exhaustive Kernel Tuner sweep of a kernel: the correctness gate, then every valid
configuration of the shard measured into the shard's own (resumable) Kernel Tuner cache.

A sweep measures every valid configuration of a kernel's target (`cpu`: Kernel Tuner's C
backend on the host, `cuda`: a CUDA GPU) with Kernel Tuner's brute-force strategy and
records, per configuration, Kernel Tuner's `time` (ms, mean over `iterations` runs) plus
`memory` (bytes, the spec's formula, as a Kernel Tuner metric), `mre`, `nrmse`, `nmae`
(analysis.sweep.metrics, through the observers of analysis.sweep.observers) and on CUDA,
where NVML is available, `energy` (J). Kernel Tuner's own `compile_time`,
`verification_time` and `benchmark_time` (ms) stay in every entry.

The valid configurations, in Kernel Tuner's order, are split into `n` contiguous shards
(analysis.sweep.configs). Each shard writes its own Kernel Tuner cache, which is resumable:
rerunning a shard after a crash repairs an interrupted last write and Kernel Tuner skips
every configuration already in the cache. analysis.sweep.merge joins the shards' caches;
analysis.sweep.publish copies the merged sweep into data/.

Kernel Tuner's C backend refuses float16 arrays and takes one fixed argument list per
`tune_kernel` call, so on the cpu target the configurations are grouped by the types of
the array arguments; each group is one `tune_kernel` call with the arguments encoded
once (16-bit types as uint16 views) and a restriction selecting that group's
configurations. All groups share the shard's cache (same tune_params, same keys).
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from analysis.errors import SweepError
from analysis.io import write_json
from analysis.spaces.space import NONFINITE_FIELD
from analysis.sweep import cachefile, harness, progress, variants
from analysis.sweep.configs import config_key, resolve_tune_params, shard_configs
from analysis.sweep.kt_setup import (
    cuda_options,
    kernel_tuner_scratch,
    pin_openmp_runtime,
    problem_size,
    timed_cpu_source,
)
from analysis.sweep.metrics import error_metrics, worst
from analysis.sweep.observers import shard_observers
from analysis.sweep.precision import DTYPES
from analysis.sweep.provenance import provenance_record
from analysis.sweep.spec import KernelSpec

log = logging.getLogger(__name__)
TARGETS = ("cpu", "cuda")
COMPILE_MODES = ("grouped", "per-configuration")


def reference_check(spec: KernelSpec, target: str, size_name: str,
                    reference: Mapping[str, np.ndarray] | None = None, lang: str = "CUDA",
                    compilation: Any = None) -> dict[str, float]:
    """The correctness gate: run the reference configuration (every type double, policy accurate) once
    and compare each output with the float64 reference; a SweepError names the kernel, the target, the
    output and the error when the worst of MRE, NRMSE and NMAE exceeds the spec's `tolerance`.

    Returns the worst metrics over the outputs. On cpu the port is compiled with g++ as the sweep
    compiles it; on cuda Kernel Tuner's run_kernel runs kernel.cu on the GPU. `reference` (output name
    -> float64 array) is the float64 reference when the caller already has it (the GPU lease computes
    the `gpu` size's references in worker processes); by default it is computed here. `lang` is
    Kernel Tuner's CUDA backend of the cuda target ("CUDA": PyCUDA; the GPU lease uses "CUPY"), and
    `compilation`, when given, a context manager active around run_kernel (the lease's: nvcc compiles
    Kernel Tuner's kernel string, as its modules are built, instead of the backend's own compiler).
    """
    config = harness.all_double_config(spec.name, target)
    if target == "cpu":
        outputs = harness.run_cpu(spec.name, config, size_name)
    else:
        with compilation if compilation is not None else contextlib.nullcontext():
            outputs = _run_cuda_once(spec, config, size_name, lang)
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


def _run_cuda_once(spec: KernelSpec, config: Mapping[str, Any], size_name: str,
                   lang: str = "CUDA") -> dict[str, np.ndarray]:
    from kernel_tuner import run_kernel

    inputs = harness.make_inputs(spec.name, size_name)
    args = harness.kernel_arguments(spec, config, inputs, size_name, for_c=False)
    results = run_kernel(spec.function, str(spec.folder / "kernel.cu"), problem_size(spec, "cuda", size_name),
                         [a.ravel() if isinstance(a, np.ndarray) else a for a in args], dict(config),
                         **{**cuda_options(spec), "lang": lang})
    return {a.name: np.asarray(r, dtype=np.float64) for a, r in zip(spec.arguments, results) if a.role == "output"}


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
        groups: OrderedDict[tuple, list[Mapping[str, Any]]] = OrderedDict()
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


    args: list = []
    for a in spec.arguments:
        if a.role == "scalar":
            args.append(harness.NP_SCALARS[a.type](spec.scalar_value(a, size_name)))
            continue
        shape = spec.shape(a, size_name)
        data = np.asarray(inputs[a.name]).reshape(shape).ravel() if a.role == "input" else np.zeros(int(np.prod(shape)))
        if a.type in spec.precision:
            args.append(TunablePrecision(a.type, data, {t: DTYPES[t] for t in spec.precision[a.type]}))
        else:
            args.append(data.astype(DTYPES[a.type]))
    return args


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

    observers = shard_observers(target, out_types)
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
        pin_openmp_runtime()
        source, name = timed_cpu_source(spec), f"tsb_timed_{spec.function}"
        opts.update(lang="C", compiler=harness.CXX, compiler_options=harness.port_compiler_options(spec))
    else:
        source, name = str(spec.folder / "kernel.cu"), spec.function
        opts.update(cuda_options(spec))
    compiling = variants.grouped_compilation(grouped) if grouped is not None else contextlib.nullcontext()
    with cachefile.atomic_rewrites(), warnings.catch_warnings(), kernel_tuner_scratch(cache), compiling:
        # expected: encoded 16-bit arguments never match the C declarations; the C backend has no blocks
        warnings.filterwarnings("ignore", message="Argument at position", category=UserWarning)
        warnings.filterwarnings("ignore", message="None of the tunable parameters specify thread block",
                                category=UserWarning)
        _, env = tune_kernel(name, source, problem_size(spec, target, size_name), args, params, **opts)
    return env
