"""Importers: Kernel Tuner cache files (also the suite's own sweep output) and T4 output files."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from analysis.errors import SpaceError
from analysis.io import sha256
from analysis.objectives import EVALUATION_TIME_COLUMNS, OBJECTIVES, Objective, custom_objective, objective
from analysis.spaces import constraints as cons
from analysis.spaces.compile_cost import compile_costs, run_alone_ratio
from analysis.spaces.definition import Definition, read_definition
from analysis.spaces.jsonfile import read_json, require
from analysis.spaces.space import KT_ERRORS, NONFINITE_FIELD, STATUS_INVALID_OUTPUT, STATUS_OK, Record, Space, build

log = logging.getLogger(__name__)

FORMATS = ("kt_cache", "t4")
# T4 `times` fields -> the suite's evaluation-time columns.
T4_TIMES = {"compilation": "compile_time_ms", "validation": "verification_time_ms", "benchmark": "benchmark_time_ms"}
T4_INVALIDITY = {"correct": STATUS_OK, "compile": "compile", "runtime": "runtime", "constraints": None}
# Study objectives whose unit forbids negative values (docs/study.md, "Objectives and fronts"): all of them.
NONNEGATIVE_OBJECTIVES = frozenset(OBJECTIVES)
TIME_UNITS_TO_MS = {"milliseconds": 1.0, "ms": 1.0, "seconds": 1000.0, "s": 1000.0, "microseconds": 1e-3}


def import_space(
    source: str | Path,
    *,
    kernel: str,
    device: str,
    fmt: str = "auto",
    definition: str | Path | None = None,
    objectives: Mapping[str, Any] | None = None,
    compile_times: Sequence[str | Path] | None = None,
) -> Space:
    """Read `source` (a Kernel Tuner cache or T4 file) into a validated Space.

    `definition` is a T1 input file or sweep spec giving the parameter lists and constraints;
    `objectives` maps a field of the source to a study objective name (or to a dict with
    name/unit/direction for an objective outside the study's list); by default every field
    named like a study objective is taken. `compile_times` are Kernel Tuner caches of the same
    configurations compiled one by one (analysis.spaces.compile_cost): a configuration's compile
    time is then the one measured there, or imputed from them, instead of the source's. A
    grouped host-CPU sweep's cache needs them: it holds no per-configuration compile cost.
    """
    source = Path(source)
    fmt = detect_format(source) if fmt == "auto" else fmt
    if fmt not in FORMATS:
        raise SpaceError(source, f"unknown format '{fmt}' (known: {', '.join(FORMATS)})", field="format")
    doc = read_json(source)
    defn = read_definition(definition) if definition is not None else None
    reader = _read_kt_cache if fmt == "kt_cache" else _read_t4
    records, parameters, fields, removed, extra = reader(doc, source, defn, objectives)
    if compile_times:
        if fmt != "kt_cache":
            raise SpaceError(source, "compile_times apply to a Kernel Tuner cache, not a T4 file",
                             field="compile_times")
        extra["compile_cost"] = _charge_compile_times(records, parameters, compile_times,
                                                      admissible=None if defn is None else _admissible(defn))
    elif fmt == "kt_cache":
        _refuse_grouped(doc, source)
    if defn is not None and parameters is not defn.parameters:
        _check_same_parameters(parameters, defn, source)
    objs = [_objective_for(f, spec, source) for f, spec in fields.items()]
    meta = {
        "source": {"path": str(source), "sha256": sha256(source), "format": fmt,
                   "definition": None if defn is None else defn.source,
                   "definition_sha256": None if definition is None else sha256(definition),
                   "fields": {f: o.name for f, o in zip(fields, objs)}},
        **extra,
    }
    return build(records, path=source, kernel=kernel, device=device, parameters=parameters,
                 constraint_exprs=[] if defn is None else defn.constraints, objectives=objs,
                 removed=removed, meta=meta, constraints_path=None if defn is None else defn.source)


def detect_format(path: Path) -> str:
    """Guess the format from the file's top-level keys."""
    doc = read_json(path)
    if isinstance(doc, dict) and "cache" in doc:
        return "kt_cache"
    if isinstance(doc, dict) and "results" in doc:
        return "t4"
    raise SpaceError(path, "neither a Kernel Tuner cache ('cache' key) nor a T4 file ('results' key)")


def _objective_for(fld: str, spec: Any, path: Path) -> Objective:
    if isinstance(spec, str):
        try:
            return objective(spec)
        except KeyError as exc:
            raise SpaceError(path, str(exc.args[0]), field=fld) from None
    try:
        return custom_objective(spec["name"], spec.get("unit", ""), spec.get("direction", "min"))
    except (KeyError, TypeError, ValueError) as exc:
        raise SpaceError(path, f"bad objective mapping {spec!r} ({exc})", field=fld) from None


def _default_fields(samples: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Every field named like a study objective in any of the (measured) samples."""
    return {name: name for name in OBJECTIVES if any(name in s for s in samples)}


def _number(value: Any, path: Path, key: str, fld: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpaceError(path, f"configuration '{key}' has non-numeric value {value!r}", field=fld)
    return float(value)


def _objective_value(value: Any, path: Path, key: str, fld: str, name: str) -> float:
    """A measured objective value (docs/study.md, "Objectives and fronts"): NaN and infinities are kept
    (then excluded from the objective sets and counted); a negative value of a study objective (time,
    memory, error metrics, energy: none can be negative) is an error naming the file, the entry and the
    field."""
    v = _number(value, path, key, fld)
    if name in NONNEGATIVE_OBJECTIVES and math.isfinite(v) and v < 0:
        o = OBJECTIVES[name]
        raise SpaceError(path, f"configuration '{key}' has negative {name} {value!r} ({o.unit}); "
                               f"{name} cannot be negative", field=fld)
    return v


def _eval_time(entry: Mapping[str, Any], name: str, path: Path, key: str, fld: str, scale: float = 1.0) -> float:
    """An evaluation time (ms): present, numeric, finite and >= 0, else an error naming the file, the entry and
    the field. Kernel Tuner records all three times for every configuration it evaluates, failed ones too,
    and simulated runs add them up: one NaN, negative or missing value would corrupt a run's clock.
    """
    if name not in entry:
        raise SpaceError(path, f"configuration '{key}' lacks its evaluation time (Kernel Tuner records it for "
                               "every configuration it evaluates, failed ones too)", field=fld)
    v = _number(entry[name], path, key, fld)
    if not math.isfinite(v) or v < 0:
        raise SpaceError(path, f"configuration '{key}' has evaluation time {entry[name]!r}; "
                               "it must be finite and non-negative", field=fld)
    return scale * v


def _kt_cache_header(doc: Any, path: Path) -> tuple[list, dict, dict]:
    """A Kernel Tuner cache's tune_params_keys, tune_params and cache, checked: the keys name the parameters in
    order, each parameter has a non-empty list of values."""
    keys = require(doc, "tune_params_keys", list, path)
    tune_params = require(doc, "tune_params", dict, path)
    cache = require(doc, "cache", dict, path)
    if list(tune_params) != keys:
        raise SpaceError(path, f"tune_params_keys {keys} disagree with tune_params {list(tune_params)}",
                         field="tune_params_keys")
    for p, values in tune_params.items():
        if not isinstance(values, list) or not values:
            raise SpaceError(path, "must be a non-empty list", field=f"tune_params.{p}")
    return keys, tune_params, cache


def _check_kt_entry(key: str, entry: Any, keys: list, path: Path) -> None:
    """A cache entry is an object with every parameter, and its key is its values joined (Kernel Tuner's key)."""
    if not isinstance(entry, dict):
        raise SpaceError(path, f"entry is a {type(entry).__name__}, not an object", field=f"cache.{key}")
    for p in keys:
        if p not in entry:
            raise SpaceError(path, f"entry '{key}' lacks parameter", field=p)
    expected = ",".join(str(entry[p]) for p in keys)
    if key != expected:
        raise SpaceError(path, f"cache key '{key}' disagrees with the entry's values '{expected}'",
                         field=f"cache.{key}")


def _kt_objectives(entry: Mapping[str, Any], fields: Mapping[str, Any], path: Path, key: str) -> dict[str, float]:
    """Objective name -> value of a cache entry that ran, from the mapped fields (each one present)."""
    objs = {}
    for fld, spec in fields.items():
        if fld not in entry:
            raise SpaceError(path, f"entry '{key}' lacks objective", field=fld)
        name = spec if isinstance(spec, str) else spec["name"]
        objs[name] = _objective_value(entry[fld], path, key, fld, name)
    return objs


def _read_kt_cache(doc: Any, path: Path, defn: Definition | None, mapping: Mapping[str, Any] | None):
    keys, tune_params, cache = _kt_cache_header(doc, path)
    entries = list(cache.items())
    ok_samples = [e for _, e in entries if isinstance(e, dict) and not _kt_error(e.get("time"))]
    fields = dict(mapping) if mapping else _default_fields(ok_samples)
    if not fields:
        raise SpaceError(path, "no field named like a study objective; map fields in the config", field="objectives")
    first_field = next(iter(fields))
    records: list[Record] = []
    removed: dict[str, int] = {}  # reason -> configurations removed for it
    spreads: list[float] = []
    runs: list[int] = []
    for key, entry in entries:
        _check_kt_entry(key, entry, keys, path)
        marker = _kt_error(entry.get(first_field))
        if marker is not None:
            status = KT_ERRORS[marker]
            if status is None:
                removed["marked InvalidConfig in source"] = removed.get("marked InvalidConfig in source", 0) + 1
                continue
            objs: dict[str, float] = {}
        else:
            status = STATUS_OK
            if NONFINITE_FIELD in entry and _number(entry[NONFINITE_FIELD], path, key, NONFINITE_FIELD) > 0:
                status = STATUS_INVALID_OUTPUT  # ran, but its output holds NaN or infinity
            objs = _kt_objectives(entry, fields, path, key)
        times = {col: _eval_time(entry, name, path, key, name) for name, col in EVALUATION_TIME_COLUMNS.items()}
        records.append(Record(key, {p: entry[p] for p in keys}, objs, times, status))
        if status == STATUS_OK and "times" in entry:
            spread = _spread(entry["times"], path, key)
            if spread is not None:
                spreads.append(spread)
                runs.append(len(entry["times"]))
    extra = {k: doc[k] for k in ("device_name", "kernel_name", "problem_size", "objective") if k in doc}
    timing = {"configurations": len(spreads), "iterations_median": float(np.median(runs)) if runs else None,
              "cv_median": float(np.median(spreads)) if spreads else None}
    return records, tune_params, fields, removed, {"source_info": extra, "timing_noise": timing}


def _refuse_grouped(doc: Mapping[str, Any], path: Path) -> None:
    """A grouped sweep's cache (host CPU or the GPU lease's CUDA modules) without per-configuration compile
    times is an error naming the file.

    Its `compile_time` is an entry point's look-up (or, for the configuration whose timed compile
    built the library, the whole shared build) and `library_build_time` a build shared by
    `library_variants` configurations: neither is what Kernel Tuner pays to compile one
    configuration, so a simulated run's clock would be wrong.
    """
    for key, entry in doc["cache"].items():
        if isinstance(entry, dict) and "library_build_time" in entry:
            raise SpaceError(path, f"configuration '{key}' comes from a grouped sweep (library_build_time: a host-CPU "
                                   "library or CUDA module shared by several configurations): its compile_time is not "
                                   "what compiling it alone costs; give the space `compile_times:` (Kernel Tuner "
                                   "caches of configurations compiled one by one: `python -m analysis.cli "
                                   "compile-cost-measure` on the host CPU, `python -m gpuvisit cuda-compile-cost` "
                                   "for CUDA)",
                             field="library_build_time")


def _admissible(defn: Definition):
    """Configurations -> boolean array: each value in the definition's lists and every constraint satisfied."""
    parsed = defn.parsed_constraints()

    def check(configs: list[dict[str, Any]]) -> np.ndarray:
        values = np.array([all(c[p] in vals for p, vals in defn.parameters.items()) for c in configs], dtype=bool)
        columns = {p: np.array([c[p] for c in configs]) for p in defn.parameters}
        try:
            return values & cons.satisfied(parsed, columns, len(configs))
        except cons.ConstraintEvaluationError as exc:
            raise SpaceError(defn.source, str(exc), field="constraints") from None

    return check


def _charge_compile_times(records: list[Record], parameters: Mapping[str, list],
                          paths: Sequence[str | Path], admissible=None) -> dict[str, Any]:
    """Set every record's compile time to its own measured (or imputed) compile cost; return the summary.

    `admissible`: the definition's check of a configuration, for measurements of configurations a partial
    sweep lacks (analysis.spaces.compile_cost.compile_costs)."""
    costs = compile_costs({r.key: r.config for r in records}, parameters, paths, admissible=admissible)
    column = EVALUATION_TIME_COLUMNS["compile_time"]
    ver, bench = EVALUATION_TIME_COLUMNS["verification_time"], EVALUATION_TIME_COLUMNS["benchmark_time"]
    sweep_times = {r.key: (r.eval_times[ver], r.eval_times[bench]) for r in records}
    for r in records:
        r.eval_times[column] = costs.ms[r.key]
    return {**costs.summary, "verification_benchmark_alone_over_sweep": run_alone_ratio(costs, sweep_times)}


def _spread(times: Any, path: Path, key: str) -> float | None:
    """Coefficient of variation (sample standard deviation / mean) of a configuration's benchmark runs.

    Kernel Tuner's `times` lists every run's time; fewer than two runs, or a zero mean, give None.
    """
    if not isinstance(times, list) or not all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in times):
        raise SpaceError(path, f"configuration '{key}' has `times` {str(times)[:60]}, not a list of numbers",
                         field=f"cache.{key}.times")
    t = np.asarray(times, dtype=float)
    if t.size < 2 or not np.isfinite(t).all() or t.mean() <= 0:
        return None
    return float(t.std(ddof=1) / t.mean())


def _kt_error(value: Any) -> str | None:
    if isinstance(value, str) and value in KT_ERRORS:
        return value
    return None


def _t4_rows(results: list, path: Path) -> list[tuple[int, dict, str, dict, Any]]:
    """(index, configuration, invalidity, measurement name -> (value, unit), times) of each T4 result, checked:
    a known invalidity, each measurement named once."""
    rows = []
    for i, r in enumerate(results):
        where = f"results[{i}]."
        config = require(r, "configuration", dict, path, where)
        invalidity = r.get("invalidity", "correct")
        if invalidity not in T4_INVALIDITY:
            raise SpaceError(path, f"unknown invalidity '{invalidity}'", field=f"{where}invalidity")
        measurements = {}
        for j, m in enumerate(r.get("measurements", [])):
            name = require(m, "name", str, path, f"{where}measurements[{j}].")
            if name in measurements:
                raise SpaceError(path, "measurement appears twice", field=f"{where}measurements.{name}")
            measurements[name] = (m.get("value"), m.get("unit", ""))
        rows.append((i, config, invalidity, measurements, r.get("times") or {}))
    return rows


def _t4_parameters(rows: list[tuple[int, dict, str, dict, Any]], path: Path) -> dict[str, list]:
    """A T4 file's parameters without a definition: in the order the file first names them (as Kernel Tuner
    wrote its tune_params); their values, which a T4 file does not list, sorted."""
    parameters: dict[str, list] = {}
    for _, config, *_ in rows:
        for p, v in config.items():
            parameters.setdefault(p, [])
            if v not in parameters[p]:
                parameters[p].append(v)
    parameters = {p: sorted(v, key=lambda x: (str(type(x)), x)) for p, v in parameters.items()}
    log.warning("%s: no definition given; parameter value lists inferred from the data", path)
    return parameters


def _t4_objectives(measurements: Mapping[str, Any], fields: Mapping[str, Any], path: Path, key: str,
                   scale: float) -> dict[str, float]:
    """Objective name -> value of a correct T4 result, from the mapped measurements (each one present; a missing
    value is NaN; time in ms)."""
    objs = {}
    for fld, spec in fields.items():
        if fld not in measurements:
            raise SpaceError(path, f"{key} lacks measurement", field=fld)
        name = spec if isinstance(spec, str) else spec["name"]
        value = measurements[fld][0]
        objs[name] = math.nan if value is None else _objective_value(value, path, key, fld, name)
        if name == "time":
            objs[name] *= scale
    return objs


def _read_t4(doc: Any, path: Path, defn: Definition | None, mapping: Mapping[str, Any] | None):
    results = require(doc, "results", list, path)
    unit = (doc.get("metadata") or {}).get("timeunit", "milliseconds")
    if unit not in TIME_UNITS_TO_MS:
        raise SpaceError(path, f"unknown time unit '{unit}'", field="metadata.timeunit")
    scale = TIME_UNITS_TO_MS[unit]
    rows = _t4_rows(results, path)
    if not rows:
        raise SpaceError(path, "holds no results", field="results")
    parameters = defn.parameters if defn is not None else _t4_parameters(rows, path)
    samples = [m for _, _, inv, m, _ in rows if inv == "correct"]
    fields = dict(mapping) if mapping else _default_fields(samples)
    if not fields:
        raise SpaceError(path, "no measurement named like a study objective; map them in the config",
                         field="objectives")
    records: list[Record] = []
    removed: dict[str, int] = {}  # reason -> configurations removed for it
    for i, config, invalidity, measurements, times in rows:
        key = f"results[{i}]"
        status = T4_INVALIDITY[invalidity]
        if status is None:
            reason = "marked invalid (constraints) in source"
            removed[reason] = removed.get(reason, 0) + 1
            continue
        objs = _t4_objectives(measurements, fields, path, key, scale) if status == STATUS_OK else {}
        if not isinstance(times, dict):
            raise SpaceError(path, f"expected an object, found {type(times).__name__}", field=f"{key}.times")
        t = {col: _eval_time(times, name, path, key, f"{key}.times.{name}", scale=scale)
             for name, col in T4_TIMES.items()}
        records.append(Record(key, dict(config), objs, t, status))
    if defn is not None:
        for r in records:
            extra_params = set(r.config) - set(parameters)
            if extra_params:
                raise SpaceError(path, f"{r.key} has parameters not in the definition", field=sorted(extra_params)[0])
    return records, parameters, fields, removed, {"source_info": {"schema_version": doc.get("schema_version")}}


def _check_same_parameters(parameters: dict[str, list], defn: Definition, path: Path) -> None:
    if list(parameters) != list(defn.parameters):
        raise SpaceError(path, f"parameters {list(parameters)} differ from {defn.source}'s {list(defn.parameters)}",
                         field="tune_params")
    for p, values in parameters.items():
        if list(values) != list(defn.parameters[p]):
            raise SpaceError(path, f"values {values} differ from {defn.source}'s {defn.parameters[p]}",
                             field=f"tune_params.{p}")
