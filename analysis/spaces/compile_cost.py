"""A host-CPU configuration's compile cost when Kernel Tuner compiles it alone: measured, else imputed.

A grouped sweep (analysis.sweep.variants) builds one library per precision combination, so its
cache holds no per-configuration compile cost: Kernel Tuner's `compile_time` there is the
look-up of an entry point, except for the configurations whose timed compile happened to build
the library (then it holds the whole build), and `library_build_time` is a shared build. A real
tuning run compiles every configuration on its own. The suite therefore measures that with
Kernel Tuner itself (analysis.sweep.compile_cost: `tune_kernel` per configuration, in a seeded
stratified order) and charges a simulated evaluation

    compile (Kernel Tuner's own, configuration alone) + verification + benchmark (the sweep's)

with nothing added. Configurations not in the measured sample get an imputed compile time from
an additive model of log compile time in the parameters' values (one effect per value of every
parameter, least squares on the measured configurations), whose error is estimated by K-fold
cross-validation on the measured ones and recorded in the space's metadata.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from analysis.errors import SpaceError
from analysis.io import sha256, write_csv, write_text
from analysis.markdown import to_markdown
from analysis.spaces.jsonfile import read_json

FOLDS = 5
CV_SEED = 20261125
IMPUTED_DECIMALS = 3  # imputed times are rounded to 1 us: last-bit differences of LAPACK between CPUs vanish


@dataclass
class CompileCosts:
    """Per-configuration compile cost (ms) of a space, and how it was obtained."""

    ms: dict[str, float]  # cache key -> compile time (ms)
    measured: set[str]
    summary: dict[str, Any] = field(default_factory=dict)
    entries: dict[str, dict] = field(default_factory=dict)  # the measured configurations' Kernel Tuner entries


def read_measurements(paths: Sequence[str | Path], keys: Sequence[str]) -> tuple[dict[str, dict], list[dict]]:
    """Entries of the per-configuration Kernel Tuner caches `paths`, keyed by cache key.

    Every file must be a Kernel Tuner cache with the tune_params_keys `keys` (the space's own, in
    its order); a configuration measured twice is an error naming both files.
    """
    entries: dict[str, dict] = {}
    where: dict[str, Path] = {}
    sources = []
    for p in map(Path, paths):
        try:
            opener = gzip.open if p.suffix == ".gz" else open
            with opener(p, "rt") as fh:
                doc = json.load(fh)
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise SpaceError(p, f"not a readable Kernel Tuner cache ({exc})", field="compile_times") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("cache"), dict):
            raise SpaceError(p, "not a Kernel Tuner cache (no 'cache' object)", field="cache")
        if doc.get("tune_params_keys") != list(keys):
            raise SpaceError(p, f"tune_params_keys {doc.get('tune_params_keys')} differ from the space's {list(keys)}",
                             field="tune_params_keys")
        for key, entry in doc["cache"].items():
            if key in entries:
                raise SpaceError(p, f"configuration '{key}' is also measured in {where[key]}", field=f"cache.{key}")
            entries[key] = entry
            where[key] = p
        sources.append({"path": str(p), "sha256": sha256(p), "configurations": len(doc["cache"])})
    return entries, sources


def _compile_ms(entry: Mapping[str, Any], path: str, key: str) -> float | None:
    """Kernel Tuner's compile_time of a measured entry (ms); None for a configuration that failed to compile."""
    value = entry.get("compile_time")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        if isinstance(entry.get("time"), str):  # Kernel Tuner's failure markers: nothing to learn from
            return None
        raise SpaceError(path, f"configuration '{key}' has compile_time {value!r}; it must be a finite number >= 0",
                         field="compile_time")
    return float(value)


def design(configs: Sequence[Mapping[str, Any]], parameters: Mapping[str, list]) -> np.ndarray:
    """One-hot design matrix: an intercept and one column per (parameter, value) but each parameter's first."""
    cols = [np.ones(len(configs))]
    for p, values in parameters.items():
        for v in values[1:]:
            cols.append(np.array([1.0 if c[p] == v else 0.0 for c in configs]))
    return np.column_stack(cols)


def _fit_predict(x_train: np.ndarray, y_train: np.ndarray, x: np.ndarray) -> np.ndarray:
    coef, *_ = np.linalg.lstsq(x_train, y_train, rcond=None)
    return x @ coef


def cross_validate(x: np.ndarray, log_ms: np.ndarray, folds: int = FOLDS, seed: int = CV_SEED) -> dict[str, float]:
    """K-fold error of the model on measured configurations: relative errors of each held-out prediction.

    Returns the median and 90th percentile of |predicted / measured - 1| and the relative error of
    the held-out mean (sum of predictions / sum of measurements - 1), the figure that matters for a
    run's clock, which adds many configurations' costs.
    """
    n = len(log_ms)
    if n < 2 * folds:
        return {"folds": 0}
    order = np.random.default_rng(seed).permutation(n)
    pred = np.empty(n)
    for k in range(folds):
        test = order[k::folds]
        train = np.setdiff1d(order, test)
        pred[test] = _fit_predict(x[train], log_ms[train], x[test])
    rel = np.exp(pred - log_ms) - 1.0
    return {"folds": folds, "median_abs_rel_error": float(np.median(np.abs(rel))),
            "p90_abs_rel_error": float(np.quantile(np.abs(rel), 0.9)),
            "mean_rel_error": float(np.exp(pred).sum() / np.exp(log_ms).sum() - 1.0)}


def compile_costs(configs: Mapping[str, Mapping[str, Any]], parameters: Mapping[str, list],
                  paths: Sequence[str | Path],
                  admissible: Callable[[list[dict[str, Any]]], np.ndarray] | None = None) -> CompileCosts:
    """Compile cost (ms) of every configuration in `configs` (cache key -> parameter values).

    Measured configurations keep Kernel Tuner's own compile_time; the others are imputed (see the
    module's docstring). A measured configuration that is not in `configs` is an error, unless
    `admissible` (a list of configurations -> boolean array: values and constraints of the space's
    definition) admits it: a partial sweep lacks configurations the compile measurement, which needs no
    GPU, may hold. Those inform the model (`measured_outside_sweep`) and are charged to no one.
    """
    entries, sources = read_measurements(paths, list(parameters))
    unknown = sorted(set(entries) - set(configs))
    outside: dict[str, dict[str, Any]] = {}
    if unknown and admissible is not None:
        cand = {k: {p: entries[k].get(p) for p in parameters} for k in unknown}
        ok = np.asarray(admissible(list(cand.values())), dtype=bool)
        outside = {k: c for (k, c), good in zip(cand.items(), ok) if good}
        unknown = [k for k in unknown if k not in outside]
    if unknown:
        raise SpaceError(paths[0], f"{len(unknown)} measured configuration(s) are not in the space"
                                   f"{' nor admitted by its definition' if admissible is not None else ''}, e.g. "
                                   f"'{unknown[0]}'", field="compile_times")
    measured = {}
    for key, entry in entries.items():
        ms = _compile_ms(entry, str(paths[0]), key)
        if ms is not None and ms > 0:
            measured[key] = ms
    if not measured:
        raise SpaceError(paths[0], "holds no successfully compiled configuration to learn compile times from",
                         field="compile_times")
    in_space = {k: v for k, v in measured.items() if k in configs}
    keys = list(configs)
    out = dict(in_space)
    summary: dict[str, Any] = {"files": sources, "configurations": len(keys), "measured": len(in_space),
                               "imputed": len(keys) - len(in_space),
                               "model": "log compile time additive in every parameter's value (least squares)",
                               # over the space's own measurements, as `measured` counts them (all of them
                               # unless the sweep is partial and lacks every measured configuration)
                               "measured_mean_ms": float(np.mean(list((in_space or measured).values())))}
    if len(measured) > len(in_space):
        summary["measured_outside_sweep"] = len(measured) - len(in_space)
    mkeys = list(measured)
    x_measured = design([configs[k] if k in configs else outside[k] for k in mkeys], parameters)
    y = np.log(np.array([measured[k] for k in mkeys]))
    summary["cross_validation"] = cross_validate(x_measured, y)
    todo = [k for k in keys if k not in in_space]
    if todo:
        pred = _fit_predict(x_measured, y, design([configs[k] for k in todo], parameters))
        for k, v in zip(todo, np.exp(pred)):
            out[k] = round(float(v), IMPUTED_DECIMALS)
    summary["mean_ms"] = float(np.mean([out[k] for k in keys]))
    return CompileCosts(out, set(in_space), summary, {k: e for k, e in entries.items() if k in configs})


def _finite_number(t: Any) -> TypeGuard[float]:
    """An int or float that is finite."""
    return isinstance(t, (int, float)) and math.isfinite(t)


def run_alone_ratio(costs: CompileCosts, sweep_times: Mapping[str, tuple[float, float]],
                    by: str = "threads") -> dict[str, Any]:
    """Verification + benchmark time of a configuration run alone over the sweep's, on the measured ones.

    `sweep_times` maps a cache key to the sweep's (verification_time, benchmark_time) in ms. The
    per-configuration measurement times these too, independently of the sweep: their agreement
    checks the evaluation cost's other two terms against a second measurement. Reported per value
    of the parameter `by` where the configurations have it (a host-CPU kernel's OpenMP `threads`:
    two-thread runs share the cores with whatever else runs, one-thread runs do not).
    """
    groups: dict[str, list[float]] = {}
    for key in costs.measured:
        e = costs.entries[key]
        v, b = e.get("verification_time"), e.get("benchmark_time")
        if key in sweep_times and _finite_number(v) and _finite_number(b):
            sv, sb = sweep_times[key]
            if sv + sb > 0:
                label = f"{by}={e[by]}" if by in e else "all"
                groups.setdefault(label, []).append((v + b) / (sv + sb))
    out = {}
    for label, ratios in sorted(groups.items()):
        r = np.asarray(ratios)
        out[label] = {"configurations": len(r), "median": float(np.median(r)), "p10": float(np.quantile(r, 0.1)),
                      "p90": float(np.quantile(r, 0.9))}
    return out


TABLE_DOCS = {
    "space": "device/kernel",
    "configurations": "configurations of the space (constraint-satisfying, measured by the sweep)",
    "measured": "configurations whose compile time was measured alone (Kernel Tuner, one configuration per "
                "compile; analysis.sweep.compile_cost)",
    "imputed": "configurations whose compile time is imputed from the measured ones",
    "compile_ms_mean_measured": "mean measured compile time (ms)",
    "compile_ms_mean": "mean compile time charged over the space (ms; measured and imputed)",
    "cv_median_abs_rel_error": "imputation error, 5-fold cross-validation on the measured configurations: "
                               "median |predicted / measured - 1|",
    "cv_p90_abs_rel_error": "the same, 90th percentile",
    "cv_mean_rel_error": "the same, of the held-out mean (sum predicted / sum measured - 1): the error that "
                         "a run's clock, a sum of many costs, sees",
    "alone_over_sweep_1thread": "second measurement of the other two terms: median of (verification + "
                                "benchmark time run alone) / (the sweep's), one-thread configurations",
    "alone_over_sweep_2threads": "the same, two-thread configurations (whose runs alone shared the cores with "
                                 "the other measuring process)",
}


def table(meta_paths: Sequence[str | Path]) -> Any:
    """One row per space whose compile times were measured alone (its metadata's `compile_cost`)."""
    import pandas as pd


    rows = []
    for path in meta_paths:
        meta = read_json(path)
        cost = meta.get("compile_cost")
        if not cost:
            continue
        cv = cost.get("cross_validation", {})
        ratio = cost.get("verification_benchmark_alone_over_sweep", {})
        rows.append({
            "space": f"{meta['device']}/{meta['kernel']}", "configurations": cost["configurations"],
            "measured": cost["measured"], "imputed": cost["imputed"],
            "compile_ms_mean_measured": cost["measured_mean_ms"], "compile_ms_mean": cost["mean_ms"],
            "cv_median_abs_rel_error": cv.get("median_abs_rel_error"),
            "cv_p90_abs_rel_error": cv.get("p90_abs_rel_error"),
            "cv_mean_rel_error": cv.get("mean_rel_error"),
            "alone_over_sweep_1thread": ratio.get("threads=1", {}).get("median"),
            "alone_over_sweep_2threads": ratio.get("threads=2", {}).get("median"),
        })
    return pd.DataFrame(rows, columns=list(TABLE_DOCS))


def write_table(meta_paths: Sequence[str | Path], csv: str | Path, md: str | Path) -> Any:
    """`table` written as tables/compile_cost.csv and its Markdown page (atomically)."""
    df = table(meta_paths)
    write_csv(df, csv)
    write_text(to_markdown(df, "Compile cost of host-CPU configurations, compiled alone", TABLE_DOCS), md)
    return df


def provenance_path(path: str | Path) -> Path:
    """The provenance JSON published beside a data file: <stem>.provenance.json for <stem>.json(.gz)."""
    path = Path(path)
    stem = path.name.removesuffix(".gz").removesuffix(".json")
    return path.with_name(f"{stem}.provenance.json")


def _machine(provenance: Path, doc: Any) -> str:
    """The machine a provenance record names: its `machine` (a compile measurement's) or its host's CPU model."""
    name = doc.get("machine") if isinstance(doc, dict) else None
    if not isinstance(name, str) or name in ("", "x86_64"):
        host = doc.get("host") if isinstance(doc, dict) else None
        name = host.get("cpu_model") if isinstance(host, dict) else None
    if not isinstance(name, str) or not name:
        raise SpaceError(provenance, "names no machine (neither `machine` nor `host.cpu_model`)",
                         field="host.cpu_model")
    return name


def where_measured(meta_path: str | Path) -> dict[str, Any] | None:
    """Where a space's charged compile times were measured against where the space itself was, from the
    provenance beside its source and beside each compile measurement (`provenance_path`); None for a space
    without per-configuration compile times.

    `elsewhere` is whether a compile measurement's machine differs from the space's; `outside_check_ratio` the
    ratio that measurement's outside check found between the space's machine's compile speed and its own
    (gpuvisit.compile_cost.outside_check; None where it has none). A provenance file that is missing or names no
    machine is an error naming it.
    """
    meta = read_json(meta_path)
    cost = meta.get("compile_cost") if isinstance(meta, dict) else None
    if not cost:
        return None
    docs = {}
    for path in [meta["source"]["path"], *(f["path"] for f in cost.get("files", []))]:
        prov = provenance_path(path)
        if not prov.is_file():
            raise SpaceError(prov, f"missing: it says where {Path(path).name} was measured ({meta_path})",
                             field="host.cpu_model")
        docs[path] = (prov, read_json(prov))
    source, *measurements = docs.values()
    here = _machine(*source)
    there = [_machine(*m) for m in measurements]
    given = [(m[1].get("outside_check") or {}).get("ratio") for m in measurements]
    ratios = [float(r) for r in given if isinstance(r, (int, float)) and not isinstance(r, bool)]
    return {"space": f"{meta['device']}/{meta['kernel']}", "space_machine": here,
            "compile_machine": ", ".join(dict.fromkeys(there)), "elsewhere": any(m != here for m in there),
            "outside_check_ratio": max(ratios) if ratios else None}
