"""Export a stored space for other tools: a Kernel Tuner cache (simulation mode) or a T4 results file.

`python -m analysis.cli export-space --space DEVICE/KERNEL --format kernel-tuner|t4 --out FILE`
imports the space from its entry in the config (default config/config.yaml) exactly as the
workflow's import job does (source, definition, objective mapping, per-configuration compile
times), and writes it with its parameters in the kernel's own order (the source's), atomically,
readable by everyone (mode 0644).
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

from analysis.errors import InputError
from analysis.objectives import EVALUATION_TIME_COLUMNS
from analysis.spaces.space import KT_ERRORS, STATUS_INVALID_OUTPUT, STATUS_OK, Space, plain

log = logging.getLogger(__name__)

_STATUS_TO_KT = {status: marker for marker, status in KT_ERRORS.items() if status is not None}
# a tuner meets a configuration with NaN/inf output as one that failed when run
_STATUS_TO_KT[STATUS_INVALID_OUTPUT] = "RuntimeFailedConfig"
# Stored status -> T4 `invalidity`; an output holding NaN or infinity is a run that failed, as in the cache.
_STATUS_TO_T4 = {STATUS_OK: "correct", "compile": "compile", "runtime": "runtime", "error": "runtime",
                 STATUS_INVALID_OUTPUT: "runtime"}
# Stored evaluation-time columns (ms) -> T4 `times` keys (what Kernel Tuner's T4 output and our importer use).
_T4_TIMES = {"compile_time_ms": "compilation", "verification_time_ms": "validation",
             "benchmark_time_ms": "benchmark"}
FORMATS = {"kernel-tuner": "a Kernel Tuner cache (tune_kernel(..., simulation_mode=True, cache=FILE))",
           "t4": "a T4 results file (the auto-tuning methodology's and BAT's format)"}


def to_kt_cache(space: Space) -> dict[str, Any]:
    """A cache dict as `tune_kernel(cache=…)` writes it: objective fields under their objective names.

    Failed configurations carry Kernel Tuner's error marker in every objective field; the
    evaluation-time fields keep what was recorded, so simulation charges them as measured.
    """
    names = list(space.parameters)
    table = space.table
    params = {p: [plain(v) for v in table[p].to_numpy()] for p in names}
    objectives = {o.name: table[o.column].to_numpy(dtype=float) for o in space.objectives}
    times = {kt: table[col].to_numpy(dtype=float) for kt, col in EVALUATION_TIME_COLUMNS.items()}
    status = table["status"].to_numpy()
    cache: dict[str, dict[str, Any]] = {}
    for i in range(len(table)):
        entry: dict[str, Any] = {p: params[p][i] for p in names}
        if status[i] == STATUS_OK:
            entry.update({name: _number(v[i]) for name, v in objectives.items()})
        else:
            marker = _STATUS_TO_KT[str(status[i])]
            entry.update({name: marker for name in objectives})
        entry.update({kt: float(v[i]) for kt, v in times.items()})
        entry.update(strategy_time=0, framework_time=0, timestamp="")
        cache[",".join(str(entry[p]) for p in names)] = entry
    info = space.meta.get("source_info", {})
    return {
        "device_name": info.get("device_name", space.device),
        "kernel_name": info.get("kernel_name", space.kernel),
        "problem_size": info.get("problem_size", []),
        "tune_params_keys": names,
        "tune_params": {p: list(v) for p, v in space.parameters.items()},
        "objective": space.objectives[0].name,
        "cache": cache,
    }


def _number(v: float) -> float | str:
    return float(v) if math.isfinite(v) else str(v)


def to_t4(space: Space) -> dict[str, Any]:
    """The space as a T4 results document: every configuration (parameters in the space's order) with its
    evaluation times (ms) and one measurement per objective ("NaN" where it failed or is not finite)."""
    names = list(space.parameters)
    table = space.table
    params = {p: [plain(v) for v in table[p].to_numpy()] for p in names}
    values = {o.name: table[o.column].to_numpy(dtype=float) for o in space.objectives}
    units = {o.name: o.unit for o in space.objectives}
    times = {key: table[col].to_numpy(dtype=float) for col, key in _T4_TIMES.items()}
    status = table["status"].to_numpy()
    results = []
    for i in range(len(table)):
        ok = status[i] == STATUS_OK
        results.append({
            "configuration": {p: params[p][i] for p in names},
            "times": {key: float(t[i]) for key, t in times.items()},
            "invalidity": _STATUS_TO_T4[str(status[i])],
            "correctness": 1,  # as Kernel Tuner writes it: a failed run is told by `invalidity`
            "measurements": [{"name": name, "value": _t4_number(v[i]) if ok else "NaN", "unit": units[name]}
                             for name, v in values.items()],
            "objectives": list(values),
        })
    return {"schema_version": "1.0.0",
            "metadata": {"timeunit": "milliseconds", "kernel_name": space.kernel, "device_name": space.device,
                         "tune_params_keys": names},
            "results": results}


def _t4_number(v: float) -> float | str:
    return float(v) if math.isfinite(v) else "NaN"


def write_document(doc: dict[str, Any], path: str | Path) -> Path:
    """Write `doc` as JSON with its keys in their own order (the parameters' order is the kernel's),
    atomically, readable by everyone (0644, analysis.io.atomic_path)."""
    from analysis.io import atomic_path

    path = Path(path)
    with atomic_path(path) as tmp:
        # Kernel Tuner reads a cache as complete only when it ends in "}\n}" or "}}}" (util.correct_open_cache)
        tmp.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    return path


def config_space(config: dict[str, Any], config_path: str | Path, name: str) -> dict[str, Any]:
    """The space entry `name` ("device/kernel") of a validated config: a listed space, or a sweep's space read
    from the sweep's merged output under the config's output_root (relative to the working directory)."""
    from analysis import config as study_config

    device, _, kernel = name.partition("/")
    for entry in config["spaces"]:
        if (entry["device"], entry["kernel"]) == (device, kernel):
            return entry
    for sweep in config["sweeps"]:
        if sweep["space"] and (sweep["device"], sweep["kernel"]) == (device, kernel):
            folder = (f"{study_config.output_prefix(config['output_root'])}results/sweeps/"
                      f"{sweep['target']}/{device}/{kernel}")
            entry = study_config.sweep_space(sweep, folder)
            if not Path(entry["source"]).is_file():
                raise InputError(config_path, f"space '{name}' is made by a sweep whose merged cache "
                                              f"{entry['source']} does not exist yet; run `snakemake --cores all "
                                              f"{entry['source']} --configfile {config_path}` first", field="sweeps")
            return entry
    known = [f"{s['device']}/{s['kernel']}" for s in config["spaces"]]
    known += [f"{s['device']}/{s['kernel']}" for s in config["sweeps"] if s["space"]]
    raise InputError(config_path, f"has no space '{name}' (its spaces: {', '.join(known)})", field="--space")


def import_config_space(config_path: str | Path, name: str, base: str | Path | None = None) -> Space:
    """Import the space `name` from its entry in the config file, as the workflow's import job does (paths of
    listed spaces relative to `base`, the repository)."""
    from analysis import config as study_config
    from analysis.spaces.importers import import_space

    base = Path(base or study_config.ROOT)
    config = study_config.load(config_path)
    entry = config_space(config, config_path, name)
    where = (lambda p: Path(p)) if entry.get("from_sweep") else (lambda p: base / p)
    if entry.get("excluded"):
        log.warning("space %s is excluded from the studies (%s); exported all the same", name, entry["excluded"])
    return import_space(where(entry["source"]), kernel=entry["kernel"], device=entry["device"], fmt=entry["format"],
                        definition=where(entry["definition"]) if entry["definition"] else None,
                        objectives=entry["objectives"],
                        compile_times=[base / c for c in entry.get("compile_times") or []])


def export(config_path: str | Path, name: str, fmt: str, out: str | Path) -> Path:
    """Import `name` from the config and write it to `out` in format `fmt` (a key of FORMATS)."""
    if fmt not in FORMATS:
        raise InputError(None, f"unknown format '{fmt}' (known: {', '.join(FORMATS)})", field="--format")
    space = import_config_space(config_path, name)
    doc = to_kt_cache(space) if fmt == "kernel-tuner" else to_t4(space)
    path = write_document(doc, out)
    log.info("%s: %d configurations, parameters %s, objectives %s -> %s (%s)", name, len(space.table),
             list(space.parameters), [o.name for o in space.objectives], path, fmt)
    if space.constraints:
        log.info("its constraints (Kernel Tuner restrictions): %s", space.constraints)
    return path
