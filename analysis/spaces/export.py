"""Export a stored space for other tools: a Kernel Tuner cache, a T4 results file, or an experiment folder
for the auto-tuning methodology.

`python -m analysis.cli export-space --space DEVICE/KERNEL --format kernel-tuner|t4|methodology --out PATH`
imports the space from its entry in the config (default config/config.yaml) exactly as the
workflow's import job does (source, definition, objective mapping, per-configuration compile
times), and writes it with its parameters in the kernel's own order (the source's), atomically,
readable by everyone (mode 0644).

Nothing the source recorded per configuration is lost: the fields the suite does not use (Kernel
Tuner's per-iteration `times`, `framework_time`, `strategy_time`, `timestamp`, `GB/s`, ...) are
read again from the source file and carried beside the space's own objectives and evaluation
times, which take precedence (a grouped sweep's compile time is the one measured alone, and its
shared-build fields `library_build_time`/`library_variants` are left out, as that compile time
replaces them). The T4 file holds the time keys Kernel Tuner's own T4 writer emits
(`kernel_tuner.file_utils.get_t4_results`), so the methodology's default `objective_time_keys`
("all") load it.
"""

from __future__ import annotations

import json
import logging
import math
import re
from pathlib import Path
from typing import Any

from analysis.errors import InputError
from analysis.io import atomic_path, write_text
from analysis.objectives import EVALUATION_TIME_COLUMNS
from analysis.spaces import constraints as cons
from analysis.spaces.jsonfile import read_json
from analysis.spaces.space import KT_ERRORS, STATUS_INVALID_OUTPUT, STATUS_OK, Space, plain

log = logging.getLogger(__name__)

_STATUS_TO_KT = {status: marker for marker, status in KT_ERRORS.items() if status is not None}
# a tuner meets a configuration with NaN/inf output as one that failed when run
_STATUS_TO_KT[STATUS_INVALID_OUTPUT] = "RuntimeFailedConfig"
# Stored status -> T4 `invalidity`; an output holding NaN or infinity is a run that failed, as in the cache.
_STATUS_TO_T4 = {STATUS_OK: "correct", "compile": "compile", "runtime": "runtime", "error": "runtime",
                 STATUS_INVALID_OUTPUT: "runtime"}
# Kernel Tuner's timing fields of a cache entry -> T4 `times` keys, in the order and naming of Kernel Tuner's
# T4 writer (file_utils.get_t4_results); its per-iteration `times` become `runtimes`.
_KT_TO_T4_TIMES = {"compile_time": "compilation", "benchmark_time": "benchmark", "framework_time": "framework",
                   "strategy_time": "search_algorithm", "verification_time": "validation"}
# fields a Kernel Tuner cache entry holds that its T4 writer does not list as measurements
_NOT_MEASUREMENTS = set(_KT_TO_T4_TIMES) | {"times", "timestamp"}
# a grouped sweep's shared-build fields: the exported compile_time (measured alone) replaces them
GROUPED_FIELDS = ("library_build_time", "library_variants")
FORMATS = {"kernel-tuner": "a Kernel Tuner cache (tune_kernel(..., simulation_mode=True, cache=FILE)) and its "
                           "restrictions beside it (FILE minus .json plus .restrictions.json)",
           "t4": "a T4 results file (the auto-tuning methodology's and BAT's format)",
           "methodology": "an experiment folder for the auto-tuning methodology (autotuning_experiment "
                          "experiments.json)"}


def device_label(space: Space) -> str:
    """The device name both exports write: the one the source recorded, else the config's (a source's
    empty `device_name`, as benchmark_hub's MI250X and the host-CPU sweeps have, is not a name)."""
    name = space.meta.get("source_info", {}).get("device_name")
    return name if isinstance(name, str) and name.strip() else space.device


def kernel_label(space: Space) -> str:
    """The kernel name both exports write: the one the source recorded (Kernel Tuner checks a cache's against
    the kernel it tunes), else the config's."""
    name = space.meta.get("source_info", {}).get("kernel_name")
    return name if isinstance(name, str) and name.strip() else space.kernel


def config_key(config: dict[str, Any], names: list[str]) -> str:
    """Kernel Tuner's cache key of a configuration (its values in the kernel's parameter order)."""
    return ",".join(str(config[p]) for p in names)


def source_entries(space: Space) -> dict[str, dict[str, Any]]:
    """Every configuration the space's source file holds, as Kernel Tuner cache entries by cache key.

    A Kernel Tuner cache's entries are returned as they are (configurations the import removed, such
    as ones marked InvalidConfig, included); a T4 file's results are given Kernel Tuner's field names
    (`times` for `runtimes`, `framework_time`, `strategy_time`, `timestamp`, one field per
    measurement). A space without a readable source (built in memory) has none: {}.
    """
    source = space.meta.get("source") or {}
    path = source.get("path")
    if not path or not Path(path).is_file():
        return {}
    doc = read_json(path)
    names = list(space.parameters)
    if source.get("format") == "kt_cache":
        return dict(doc["cache"])
    t4_to_kt = {v: k for k, v in _KT_TO_T4_TIMES.items()}
    entries = {}
    for r in doc.get("results", []):
        config = r.get("configuration") or {}
        if not all(p in config for p in names):
            continue
        entry: dict[str, Any] = {p: config[p] for p in names}
        if "timestamp" in r:
            entry["timestamp"] = r["timestamp"]
        for m in r.get("measurements", []):
            entry[m.get("name")] = m.get("value")
        for key, value in (r.get("times") or {}).items():
            entry["times" if key == "runtimes" else t4_to_kt.get(key, key)] = value
        entries[config_key(entry, names)] = entry
    return entries


def _json_safe(v: Any) -> Any:
    """A recorded value as strict JSON can hold it: a non-finite float as its string ("nan", "inf")."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, list):
        return [_json_safe(x) for x in v]
    if isinstance(v, dict):
        return {k: _json_safe(x) for k, x in v.items()}
    return v


def to_kt_cache(space: Space, raw: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A cache dict as `tune_kernel(cache=…)` writes it: objective fields under their objective names.

    Failed configurations carry Kernel Tuner's error marker in every objective field; the
    evaluation-time fields keep what was recorded, so simulation charges them as measured. `raw`
    (`source_entries`) adds every other field the source recorded, in the source's field order; its
    configurations the space does not hold (marked InvalidConfig) are written as they were.
    """
    raw = raw or {}
    names = list(space.parameters)
    table = space.table
    params = {p: [plain(v) for v in table[p].to_numpy()] for p in names}
    objectives = {o.name: table[o.column].to_numpy(dtype=float) for o in space.objectives}
    times = {kt: table[col].to_numpy(dtype=float) for kt, col in EVALUATION_TIME_COLUMNS.items()}
    status = table["status"].to_numpy()
    cache: dict[str, dict[str, Any]] = {}
    for i in range(len(table)):
        entry: dict[str, Any] = {p: params[p][i] for p in names}
        key = config_key(entry, names)
        entry.update({k: _json_safe(v) for k, v in raw.get(key, {}).items()
                      if k not in entry and k not in GROUPED_FIELDS})
        if status[i] == STATUS_OK:
            entry.update({name: _number(v[i]) for name, v in objectives.items()})
        else:
            marker = _STATUS_TO_KT[str(status[i])]
            entry.update({name: marker for name in objectives})
        entry.update({kt: float(v[i]) for kt, v in times.items()})
        cache[key] = entry
    for key, entry in raw.items():
        if key not in cache:
            cache[key] = {k: _json_safe(v) for k, v in entry.items() if k not in GROUPED_FIELDS}
    info = space.meta.get("source_info", {})
    return {
        "device_name": device_label(space),
        "kernel_name": kernel_label(space),
        "problem_size": info.get("problem_size", []),
        "tune_params_keys": names,
        "tune_params": {p: list(v) for p, v in space.parameters.items()},
        "objective": space.objectives[0].name,
        "cache": cache,
    }


def _number(v: float) -> float | str:
    return float(v) if math.isfinite(v) else str(v)


def to_t4(space: Space, raw: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The space as a T4 results document, as Kernel Tuner's T4 writer lays a result out.

    Per configuration (parameters in the space's order): `timestamp` where the source has one;
    `times` in milliseconds with Kernel Tuner's keys (compilation, benchmark, framework,
    search_algorithm, validation, and the per-iteration `runtimes`, [] where none were recorded);
    `invalidity`; one measurement per objective ("NaN" where it failed or is not finite) and one
    per other field the source recorded (`raw`, `source_entries`). A framework or search-algorithm
    time the source did not record is 0: the suite charges none.
    """
    raw = raw or {}
    names = list(space.parameters)
    table = space.table
    params = {p: [plain(v) for v in table[p].to_numpy()] for p in names}
    values = {o.name: table[o.column].to_numpy(dtype=float) for o in space.objectives}
    units = {o.name: o.unit for o in space.objectives}
    times = {kt: table[col].to_numpy(dtype=float) for kt, col in EVALUATION_TIME_COLUMNS.items()}
    status = table["status"].to_numpy()
    results = []
    for i in range(len(table)):
        ok = status[i] == STATUS_OK
        config = {p: params[p][i] for p in names}
        source = raw.get(config_key(config, names), {})
        recorded = {kt: float(t[i]) for kt, t in times.items()}
        result: dict[str, Any] = {}
        if isinstance(source.get("timestamp"), str) and source["timestamp"]:
            result["timestamp"] = source["timestamp"]
        result["configuration"] = config
        result["times"] = {t4: recorded[kt] if kt in recorded else _t4_time(source.get(kt, 0))
                           for kt, t4 in _KT_TO_T4_TIMES.items()}
        runs = source.get("times")
        result["times"]["runtimes"] = [_t4_number(x) for x in runs] if isinstance(runs, list) else []
        result["invalidity"] = _STATUS_TO_T4[str(status[i])]
        result["correctness"] = 1  # as Kernel Tuner writes it: a failed run is told by `invalidity`
        measurements = [{"name": name, "value": _t4_number(v[i]) if ok else "NaN", "unit": units[name]}
                        for name, v in values.items()]
        measurements += [{"name": k, "value": _t4_number(v) if ok else "NaN",
                          "unit": "ms" if k.startswith("time") else ""}
                         for k, v in source.items()
                         if k not in config and k not in values and k not in _NOT_MEASUREMENTS
                         and k not in GROUPED_FIELDS]
        result["measurements"] = measurements
        result["objectives"] = list(values)
        results.append(result)
    if results and not any(r["times"]["runtimes"] for r in results):
        log.warning("%s/%s: the source records no per-iteration times; the methodology's default time keys "
                    "('all', which include 'runtimes') will not load this file", space.device, space.kernel)
    return {"schema_version": "1.0.0",
            "metadata": {"timeunit": "milliseconds", "kernel_name": kernel_label(space),
                         "device_name": device_label(space), "tune_params_keys": names},
            "results": results}


def _t4_time(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else 0.0


def _t4_number(v: Any) -> float | str:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return "NaN"
    return float(v) if math.isfinite(v) else "NaN"


def write_document(doc: dict[str, Any] | list[Any], path: str | Path) -> Path:
    """Write `doc` as JSON with its keys in their own order (the parameters' order is the kernel's),
    atomically, readable by everyone (0644, analysis.io.atomic_path)."""
    path = Path(path)
    with atomic_path(path) as tmp:
        # Kernel Tuner reads a cache as complete only when it ends in "}\n}" or "}}}" (util.correct_open_cache)
        tmp.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    return path


def restrictions_path(cache: str | Path) -> Path:
    """Where the restrictions of an exported cache go: beside it, its name minus .json plus .restrictions.json."""
    cache = Path(cache)
    stem = cache.name[:-len(".json")] if cache.name.endswith(".json") else cache.name
    return cache.with_name(f"{stem}.restrictions.json")


def tune_kernel_call(space: Space, cache: str | Path, restrictions: str | Path) -> str:
    """Python that runs Kernel Tuner on an exported cache in simulation mode, as written (paths as given).

    The kernel name, problem size and tune_params are the cache's own (Kernel Tuner refuses a cache of
    another kernel, problem size or parameter order); the restrictions are the space's constraints,
    without which Kernel Tuner meets configurations outside them that the cache does not hold ("not in
    cache"). The strategy and its options are an example to change.
    """
    first = space.objectives[0]
    return (
        "import json\n"
        "from kernel_tuner import tune_kernel\n"
        f"with open({str(cache)!r}) as f:\n"
        "    cache = json.load(f)\n"
        f"with open({str(restrictions)!r}) as f:\n"
        "    restrictions = json.load(f)\n"
        "results, env = tune_kernel(cache['kernel_name'], '', cache['problem_size'], [], cache['tune_params'],\n"
        f"                           restrictions=restrictions, cache={str(cache)!r}, simulation_mode=True,\n"
        f"                           objective={first.name!r}, objective_higher_is_better={first.direction == 'max'},\n"
        "                           strategy='random_sample', strategy_options={'max_fevals': 100})\n"
    )


def write_kernel_tuner(space: Space, out: str | Path, raw: dict[str, dict[str, Any]] | None = None) -> str:
    """Write the cache to `out` and the space's constraints beside it (`restrictions_path`), a JSON list of
    Kernel Tuner restriction strings; return `tune_kernel_call` for them."""
    out = Path(out)
    if not out.name.endswith(".json"):
        log.warning("%s: Kernel Tuner 1.5 reads a cache whose name ends in .json (it appends .json otherwise)", out)
    write_document(to_kt_cache(space, raw), out)
    restrictions = write_document(list(space.constraints), restrictions_path(out))
    return tune_kernel_call(space, out, restrictions)


def _t1_type(values: list[Any]) -> str:
    """A T1 parameter type for a value list (Kernel Tuner's T1 runner evaluates `Values` as a Python list)."""
    if all(isinstance(v, (bool, int)) for v in values):
        return "int"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "float"
    return "string"


def to_t1(space: Space, kernel_file: str) -> dict[str, Any]:
    """A T1 input file for running the space's cache in simulation mode with Kernel Tuner's T1 runner
    (`tune_kernel_T1`, which the methodology calls): its parameters (in the kernel's order) and constraints,
    the cache's kernel name and problem size, no arguments, and `kernel_file`, which the runner requires to
    exist although simulation never reads it. Sizes are "1": the runner does not read them either."""
    names = list(space.parameters)
    parsed = cons.parse_all(space.constraints, names)
    info = space.meta.get("source_info", {})
    return {
        "General": {"BenchmarkName": space.kernel, "OutputFormat": "JSON"},
        "ConfigurationSpace": {
            "TuningParameters": [{"Name": p, "Type": _t1_type(v), "Values": repr([plain(x) for x in v])}
                                 for p, v in space.parameters.items()],
            "Conditions": [{"Expression": c.expression, "Parameters": [p for p in names if p in c.names]}
                           for c in parsed],
        },
        "KernelSpecification": {
            "Language": "CUDA", "BenchmarkName": space.kernel, "KernelName": kernel_label(space),
            "KernelFile": kernel_file, "ProblemSize": info.get("problem_size", []),
            "LocalSize": {"X": "1"}, "GlobalSize": {"X": "1"}, "Arguments": [],
        },
    }


def _safe_name(name: str) -> str:
    """A name usable as a file name and in the methodology's path patterns."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def experiment_document(space: Space, objective: str) -> dict[str, Any]:
    """The methodology's experiments file for one space: the package's own defaults
    (`autotuning_methodology/experiments_defaults.json`: search strategy, repeats, samples, statistics
    and visualisation settings, `objective_time_keys` "all") with this space as its one application and
    GPU, paths relative to the experiment folder. Validated with the package's schema."""
    import autotuning_methodology
    from autotuning_methodology.validators import validate_experimentsfile

    obj = space.objective(objective)
    app, gpu = _safe_name(space.kernel), _safe_name(space.device)
    doc = json.loads((Path(autotuning_methodology.__file__).parent / "experiments_defaults.json").read_text())
    doc["name"] = f"{gpu}_{app}"
    doc["parent_folder"] = "."
    groups = doc["experimental_groups_defaults"]
    groups["applications"] = [{"name": app, "folder": "kernels", "input_file": f"{app}.json",
                               "objective_performance_keys": [obj.name], "minimization": obj.direction == "min"}]
    groups["gpus"] = [gpu]
    groups["pattern_for_full_search_space_filenames"] = {"regex": "cachefiles/${applications}/${gpus}_T4.json"}
    validate_experimentsfile(doc)
    return doc


EXPERIMENTS_FILE = "experiments.json"


def write_experiment(space: Space, folder: str | Path, objective: str | None = None,
                     raw: dict[str, dict[str, Any]] | None = None) -> Path:
    """Write a ready experiment folder for the auto-tuning methodology and return its experiments file.

    `folder`/experiments.json (`experiment_document`), kernels/KERNEL.json (the T1 file, `to_t1`) and the
    kernel-file placeholder it names, cachefiles/KERNEL/DEVICE_T4.json (the T4 file the methodology's
    statistics read) and cachefiles/KERNEL/DEVICE.json (the Kernel Tuner cache its runner simulates on:
    the methodology names it by the T4 file's name minus "_T4") with its restrictions beside it. Run it
    from the folder: `autotuning_experiment experiments.json`. `objective` is the one the methodology
    tunes and scores (default: the space's first).
    """
    folder = Path(folder)
    obj = space.objective(objective or space.objectives[0].name)
    app, gpu = _safe_name(space.kernel), _safe_name(space.device)
    raw = source_entries(space) if raw is None else raw
    placeholder = f"{app}.kernel-placeholder"
    write_document(to_t1(space, placeholder), folder / "kernels" / f"{app}.json")
    write_text("Kernel Tuner's T1 runner requires this file to exist; a simulated run never reads it.\n",
               folder / "kernels" / placeholder)
    write_kernel_tuner(space, folder / "cachefiles" / app / f"{gpu}.json", raw)
    write_document(to_t4(space, raw), folder / "cachefiles" / app / f"{gpu}_T4.json")
    return write_document(experiment_document(space, obj.name), folder / EXPERIMENTS_FILE)


def export(space: Space, fmt: str, out: str | Path, objective: str | None = None,
           source: str | Path | None = None) -> str | None:
    """Write `space` (imported from its config entry, `analysis.config.import_config_space`) to `out` in format
    `fmt` (a key of FORMATS); return what to run on it (kernel-tuner: `tune_kernel_call`; methodology: the
    command; t4: None). `source` (the config file) names the file in an error about `objective`."""
    if fmt not in FORMATS:
        raise InputError(None, f"unknown format '{fmt}' (known: {', '.join(FORMATS)})", field="--format")
    name = f"{space.device}/{space.kernel}"
    if objective is not None and objective not in [o.name for o in space.objectives]:
        raise InputError(source, f"space '{name}' has no objective '{objective}' (it has: "
                                 f"{', '.join(o.name for o in space.objectives)})", field="--objective")
    missing = space.meta.get("counts", {}).get("missing", 0)
    if missing:
        log.warning("%s: %d configurations satisfy the constraints but the source lacks them; Kernel Tuner stops "
                    "with 'not in cache' if a strategy proposes one", name, missing)
    raw = source_entries(space)
    if fmt == "kernel-tuner":
        run = write_kernel_tuner(space, out, raw)
    elif fmt == "t4":
        write_document(to_t4(space, raw), out)
        run = None
    else:
        write_experiment(space, out, objective, raw)
        run = f"cd {out} && autotuning_experiment {EXPERIMENTS_FILE}\n"
    log.info("%s: %d configurations, parameters %s, objectives %s -> %s (%s)", name, len(space.table),
             list(space.parameters), [o.name for o in space.objectives], out, fmt)
    if space.constraints:
        log.info("its constraints (Kernel Tuner restrictions): %s", space.constraints)
    return run
