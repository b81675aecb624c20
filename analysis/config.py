"""Validation of the study configuration against workflow/schemas/config.schema.yaml."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Iterable

import jsonschema
import yaml

from analysis.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_PATH = ROOT / "workflow" / "schemas" / "config.schema.yaml"


def load_schema() -> dict[str, Any]:
    """The config schema as a dict."""
    return yaml.safe_load(SCHEMA_PATH.read_text())


def _fill_defaults(instance: Any, schema: dict[str, Any]) -> None:
    """Insert the schema's defaults for absent keys, recursively through objects and arrays."""
    if isinstance(instance, dict):
        for key, sub in schema.get("properties", {}).items():
            if key not in instance and "default" in sub:
                instance[key] = copy.deepcopy(sub["default"])
            if key in instance:
                _fill_defaults(instance[key], sub)
    elif isinstance(instance, list) and isinstance(schema.get("items"), dict):
        for item in instance:
            _fill_defaults(item, schema["items"])


def _where(path: Iterable[Any]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<top level>"


def _message(error: jsonschema.ValidationError, schema: dict[str, Any]) -> tuple[str, str]:
    where = _where(error.absolute_path)
    if error.validator == "additionalProperties" and error.validator_value is False:
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        return f"{where}.{extra[0]}" if error.absolute_path else extra[0], (
            f"unknown key '{extra[0]}' (allowed here: {', '.join(allowed)})")
    if error.validator == "required":
        missing = error.message.split("'")[1]
        return (f"{where}.{missing}" if error.absolute_path else missing), "required key is missing"
    if error.validator == "type":
        return where, f"expected {error.validator_value}, found {type(error.instance).__name__} {error.instance!r}"
    return where, error.message


def validate(config: dict[str, Any], source: str = "config") -> dict[str, Any]:
    """Validate `config` in place (defaults filled in) and return it; errors name the key."""
    schema = load_schema()
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(config),
                    key=lambda e: (len(list(e.absolute_path)), str(list(e.absolute_path))))
    if errors:
        field, message = _message(errors[0], schema)
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise ConfigError(source, message + more, field=field)
    _fill_defaults(config, schema)
    seen: set[tuple[str, str]] = set()
    for i, s in enumerate(config["spaces"]):
        key = (s["device"], s["kernel"])
        if key in seen:
            raise ConfigError(source, f"space {s['device']}/{s['kernel']} is listed twice", field=f"spaces[{i}]")
        seen.add(key)
    _check_simulation(config, source)
    _check_sweeps(config, source)
    _check_constraint_aware(config, source)
    return config


def _check_constraint_aware(config: dict[str, Any], source: str) -> None:
    """Study spaces exist; strategy options are known and leave constraint_aware to the study."""
    from analysis.simulate.registry import resolve_options

    ca = config["constraint_aware"]
    known = {f"{s['device']}/{s['kernel']}" for s in config["spaces"]}
    known |= {f"{s['device']}/{s['kernel']}" for s in config["sweeps"] if s.get("space", True)}
    for i, name in enumerate(ca["spaces"] or []):
        if name not in known:
            raise ConfigError(source, f"unknown space '{name}' (defined: {', '.join(sorted(known))})",
                              field=f"constraint_aware.spaces[{i}]")
    for name, strategy in ca["strategies"].items():
        strategy.setdefault("options", {})
        if "constraint_aware" in strategy["options"]:
            raise ConfigError(source, "constraint_aware is set by the study (every strategy runs both ways)",
                              field=f"constraint_aware.strategies.{name}.options.constraint_aware")
        try:
            resolve_options(strategy["algorithm"], strategy["options"])
        except (KeyError, ValueError) as exc:
            raise ConfigError(source, str(exc.args[0] if exc.args else exc),
                              field=f"constraint_aware.strategies.{name}.options") from None
    for kernel, threshold in ca["thresholds"].items():
        threshold.setdefault("error", "mre")
        threshold.setdefault("beta", 1.0)


def _check_simulation(config: dict[str, Any], source: str) -> None:
    """Objective sets exist; algorithm names and options are known to the registry."""
    from analysis.simulate.registry import resolve_options

    sim = config["simulation"]
    for i, name in enumerate(sim["objective_sets"]):
        if name not in config["objective_sets"]:
            raise ConfigError(source, f"unknown objective set '{name}' (defined: {', '.join(config['objective_sets'])})",
                              field=f"simulation.objective_sets[{i}]")
    for i, s in enumerate(config["spaces"]):
        for j, name in enumerate(s["objective_sets"] or []):
            if name not in config["objective_sets"]:
                raise ConfigError(source, f"unknown objective set '{name}' (defined: "
                                  f"{', '.join(config['objective_sets'])})", field=f"spaces[{i}].objective_sets[{j}]")
    hp = config["hyperparameters"]
    grids = hp["grids"]
    for label, setting in sim["algorithms"].items():
        setting.setdefault("options", {})
        try:
            resolve_options(setting["algorithm"], setting["options"])
        except (KeyError, ValueError) as exc:
            raise ConfigError(source, str(exc.args[0] if exc.args else exc), field=f"simulation.algorithms.{label}") from None
        tuned = setting.get("tuned")
        if tuned is not None:
            if tuned not in grids:
                raise ConfigError(source, f"unknown hyperparameter grid '{tuned}' (defined: {', '.join(grids)})",
                                  field=f"simulation.algorithms.{label}.tuned")
            # A constraint-unaware twin may take its aware algorithm's picks (same options).
            grid_algorithm = grids[tuned]["algorithm"]
            if setting["algorithm"] not in (grid_algorithm, f"{grid_algorithm}_unaware"):
                raise ConfigError(source, f"grid '{tuned}' tunes {grid_algorithm}, not "
                                  f"{setting['algorithm']} (nor its constraint-unaware twin)",
                                  field=f"simulation.algorithms.{label}.tuned")
            missing = sorted(set(sim["budgets"]) - set(hp["budgets"] or sim["budgets"]))
            if missing:
                raise ConfigError(source, f"grid '{tuned}' has no runs at budgets {missing}",
                                  field="hyperparameters.budgets")
    for name, grid in grids.items():
        grid.setdefault("fixed", {})
        if grid["objective_set"] not in config["objective_sets"]:
            raise ConfigError(source, f"unknown objective set '{grid['objective_set']}'",
                              field=f"hyperparameters.grids.{name}.objective_set")
        for option, values in grid["options"].items():
            for value in values:
                try:
                    resolve_options(grid["algorithm"], {**grid["fixed"], option: value})
                except (KeyError, ValueError) as exc:
                    raise ConfigError(source, str(exc.args[0] if exc.args else exc),
                                      field=f"hyperparameters.grids.{name}.options.{option}") from None


def load(path: str | Path) -> dict[str, Any]:
    """Read and validate a YAML config file."""
    try:
        config = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(path, f"cannot be read as YAML ({exc})") from None
    return validate(config, str(path))


def check_files(config: dict[str, Any], base: str | Path, source: str = "config") -> None:
    """Every space's source and definition file must exist (paths relative to `base`)."""
    for i, s in enumerate(config["spaces"]):
        for key in ("source", "definition"):
            if s.get(key) and not (Path(base) / s[key]).is_file():
                raise ConfigError(source, f"file not found: {s[key]}", field=f"spaces[{i}].{key}")


def _check_sweeps(config: dict[str, Any], source: str) -> None:
    """Sweeps name existing kernels, valid slices, and no (target, device, kernel) or space twice."""
    from analysis.errors import InputError
    from analysis.sweep.run import resolve_tune_params
    from analysis.sweep.spec import load_spec, list_kernels

    seen: set[tuple[str, str, str]] = set()
    spaces = {(s["device"], s["kernel"]) for s in config["spaces"]}
    for i, sw in enumerate(config["sweeps"]):
        where = f"sweeps[{i}]"
        if sw["kernel"] not in list_kernels():
            raise ConfigError(source, f"unknown kernel '{sw['kernel']}' (known: {', '.join(list_kernels())})",
                              field=f"{where}.kernel")
        key = (sw["target"], sw["device"], sw["kernel"])
        if key in seen:
            raise ConfigError(source, f"sweep {'/'.join(key)} is listed twice", field=where)
        seen.add(key)
        if sw["space"] and (sw["device"], sw["kernel"]) in spaces:
            raise ConfigError(source, f"space {sw['device']}/{sw['kernel']} is also listed under spaces", field=where)
        spaces.add((sw["device"], sw["kernel"]))
        sw["size"] = sw["size"] or ("cpu" if sw["target"] == "cpu" else "gpu")
        try:
            spec = load_spec(sw["kernel"])
            spec.size(sw["size"])
            resolve_tune_params(spec, sw["target"], sw["tune_params"])
        except InputError as exc:
            raise ConfigError(source, exc.detail, field=f"{where}.{'size' if exc.field == 'sizes' else 'tune_params'}") \
                from None


def sweep_space(sweep: dict[str, Any], folder: str) -> dict[str, Any]:
    """The space entry of a sweep whose merged output lies in `folder` (paths relative to the working directory)."""
    from analysis.sweep.run import OBJECTIVE_FIELDS

    entry = {"kernel": sweep["kernel"], "device": sweep["device"], "source": f"{folder}/cache.json.gz",
             "format": "kt_cache", "definition": f"{folder}/definition.yaml", "objectives": dict(OBJECTIVE_FIELDS)}
    _fill_defaults(entry, load_schema()["properties"]["spaces"]["items"])
    entry["from_sweep"] = True
    return entry
