"""Validation of the study configuration against workflow/schemas/config.schema.yaml.

The schema checks every key's type and range; each section's own rules are its stage's (`spaces`:
analysis.spaces.study; `simulation`, `constraint_aware`: analysis.simulate.checks; `hyperparameters`,
`hyperparameters_so`: analysis.hyperparams.checks; `sweeps`: analysis.sweep.checks), called here in that order;
what spans sections (output_root, the objectives a space must have, the files) is checked here."""

from __future__ import annotations

import copy
import functools
import logging
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from analysis import paths
from analysis.errors import ConfigError, InputError
from analysis.hyperparams.checks import check_hyperparameters, check_hyperparameters_so
from analysis.objectives import OBJECTIVES
from analysis.simulate.checks import check_constraint_aware, check_simulation
from analysis.spaces.importers import import_space
from analysis.spaces.peek import default_objectives
from analysis.spaces.space import Space
from analysis.spaces.study import (  # noqa: F401  (the last three: analysis.config's names, which callers use)
    RESERVED_GROUPS,
    check_spaces_section,
    excluded_spaces,
    studied_space_keys,
    time_space_keys,
)
from analysis.sweep.checks import check_sweeps
from analysis.sweep.merge import OBJECTIVE_FIELDS

log = logging.getLogger(__name__)
ROOT = paths.REPO
SCHEMA_PATH = ROOT / "workflow" / "schemas" / "config.schema.yaml"
FULL_STUDY = ROOT / "config" / "config.yaml"
# Overlays of the full study that publish a study of their own into the same tree (docs/hyperparameters-so.md)
STUDY_EXTENSIONS = (ROOT / "config" / "seed003.yaml",)
# Folders of the repository that hold the published study (and its committed inputs).
PUBLISHED = ("tables", "figures", "data")


@functools.lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    """The config schema, parsed once per process (read-only: callers copy what they change)."""
    return yaml.safe_load(SCHEMA_PATH.read_text())


# JSON Schema counts 3.0 as an integer; a config's integers (repetitions, budgets, seeds) are written as
# integers, and a float would reach range() or a file name, so only int (never bool) is one here.
_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda checker, instance: isinstance(instance, int) and not isinstance(instance, bool))
_Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=_TYPES)


def load_schema() -> dict[str, Any]:
    """The config schema as a dict (a copy of its own)."""
    return copy.deepcopy(_schema())


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
    if error.validator in ("minProperties", "minItems") and error.validator_value == 1:
        return where, f"must not be empty, found {error.instance!r}"
    if error.validator == "type":
        return where, f"expected {error.validator_value}, found {type(error.instance).__name__} {error.instance!r}"
    return where, error.message


def validate(config: Any, source: str = "config", files: Sequence[str | Path] | None = None,
             workdir: str | Path | None = None) -> dict[str, Any]:
    """Validate `config` in place (defaults filled in) and return it; errors name the key.

    `files` are the config files it was read from and `workdir` the working directory its
    output_root is relative to (default: the current one). Given the files, output_root is
    checked against the published tree (see `_check_output_root`).
    """
    if not isinstance(config, dict):
        raise ConfigError(source, f"must be a mapping of keys to values at top level, found "
                                  f"{type(config).__name__} {config!r}")
    explicit_root = "output_root" in config
    schema = _schema()
    errors = sorted(_Validator(schema).iter_errors(config),
                    key=lambda e: (len(list(e.absolute_path)), str(list(e.absolute_path))))
    if errors:
        field, message = _message(errors[0], schema)
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise ConfigError(source, message + more, field=field)
    _check_finite(config, source)
    # typos in training kernels are errors; the default list only names the kernels it can find
    explicit_kernels = "kernels" in config.get("hyperparameters", {})
    _fill_defaults(config, schema)
    _check_output_root(config, source, explicit_root, files, workdir)
    # each section's own rules, checked by its stage; the checks across sections follow (check_space_objectives)
    check_spaces_section(config, source)
    check_simulation(config, source)
    check_hyperparameters(config, source, explicit_kernels)
    check_sweeps(config, source)
    check_constraint_aware(config, source)
    check_hyperparameters_so(config, source)
    return config


def _check_finite(instance: Any, source: str, path: tuple[Any, ...] = ()) -> None:
    """No NaN or infinity anywhere (YAML's .nan and .inf pass every comparison the schema makes)."""
    if isinstance(instance, float) and not math.isfinite(instance):
        raise ConfigError(source, f"expected a finite number, found {instance!r}", field=_where(path))
    if isinstance(instance, dict):
        for key, value in instance.items():
            _check_finite(value, source, (*path, key))
    elif isinstance(instance, list):
        for i, value in enumerate(instance):
            _check_finite(value, source, (*path, i))


def output_prefix(output_root: str) -> str:
    """The prefix of every output path: "" for the working directory itself, else the folder and "/"."""
    root = os.path.normpath(output_root)
    return "" if root == "." else root.rstrip("/") + "/"


def is_full_study(files: Sequence[str | Path]) -> bool:
    """Whether the config is the published study's: config/config.yaml, alone or followed by the published
    extensions of it (STUDY_EXTENSIONS, which add a study of their own to it)."""
    resolved = [Path(f).resolve() for f in files]
    extensions = {p.resolve() for p in STUDY_EXTENSIONS}
    return bool(resolved) and resolved[0] == FULL_STUDY.resolve() and all(p in extensions for p in resolved[1:])


def _check_output_root(config: dict[str, Any], source: str, explicit: bool,
                       files: Sequence[str | Path] | None, workdir: str | Path | None) -> None:
    """output_root is never the filesystem root; only the full study writes into the published tree.

    The published tree is the repository itself (results/, logs/, tables/, figures/ at its top)
    and its tables/, figures/ and data/ folders: an output_root that resolves (against the working
    directory) to the repository or into one of those folders is accepted only for
    config/config.yaml, so that no other config overwrites the published study.
    """
    raw = config["output_root"]
    if os.path.normpath(raw) in ("/", "//") or Path(raw).resolve() == Path(Path(raw).resolve().anchor):
        raise ConfigError(source, f"'{raw}' is the filesystem root; name a folder for results/, logs/, "
                                  "tables/ and figures/", field="output_root")
    if files is None or is_full_study(files):
        return
    out = (Path(workdir or os.getcwd()) / raw).resolve()
    repo = ROOT.resolve()
    if out == repo:
        what = f"'{raw}'" if explicit else f"not set, so it is '{raw}' (the default), which"
        raise ConfigError(source, f"{what} is the repository ({repo}), where the published tables/ and "
                                  "figures/ of the full study live; only config/config.yaml writes there. Set "
                                  "output_root to a folder outside them (config/test.yaml uses .test-output)",
                          field="output_root")
    for folder in PUBLISHED:
        if out == repo / folder or (repo / folder) in out.parents:
            raise ConfigError(source, f"'{raw}' lies in the published {folder}/ of the repository ({repo / folder});"
                                      " set output_root to a folder outside tables/, figures/ and data/",
                              field="output_root")








































class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader that rejects a key given twice in one mapping (PyYAML keeps the last silently)."""


def _strict_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, Any] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=deep)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key; construct_mapping reports it
            continue
        if first is not None:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} is given twice (first on line {first.line + 1}); YAML would keep "
                "only the last", key_node.start_mark)
        seen[key] = key_node.start_mark
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _strict_mapping)


def read_yaml(path: str | Path, label: str | None = None) -> Any:
    """The YAML document in `path`; ConfigError naming the file (as `label`, default the path), line and
    column on a syntax error or a key given twice."""
    path = Path(path)
    name = label or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(name, f"cannot be read ({exc})") from None
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = exc.problem or ""
        if exc.context:
            start = exc.context_mark
            problem += f" ({exc.context}" + (f" at line {start.line + 1}, column {start.column + 1})"
                                             if start is not None and start is not mark else ")")
        raise ConfigError(name, f"{where}not valid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(name, f"not valid YAML: {exc}") from None


def config_label(files: Sequence[str | Path], workdir: str | Path | None = None) -> str:
    """How errors name the config files: relative to the working directory where inside it."""
    base = Path(workdir or os.getcwd()).resolve()
    names = []
    for f in files:
        p = Path(f).resolve()
        names.append(str(p.relative_to(base)) if p.is_relative_to(base) else str(f))
    return ", ".join(names) or "config"


def merge_files(files: Sequence[str | Path]) -> dict[str, Any]:
    """The config of several files as Snakemake merges `--configfile A B ...`: in order, each file's mappings
    updating the earlier ones' key by key, with Snakemake's own `update_config`."""
    from snakemake.utils import update_config

    merged: dict[str, Any] = {}
    for f in files:
        document = read_yaml(f)
        if document is None:
            continue
        if not isinstance(document, dict):
            raise ConfigError(str(f), f"must be a mapping of settings, found {type(document).__name__}")
        update_config(merged, document)
    return merged


def field_labels(files: Sequence[str | Path], fields: Sequence[str],
                 workdir: str | Path | None = None) -> dict[str, str]:
    """How errors name the config file of each of `fields` (dotted, e.g. "simulation.budgets"): the last of
    `files` that sets it (later files override earlier ones), else the first (the field has its schema default).

    A job's command names this file rather than every config file, so that a config overlay that does not
    touch the field leaves the command, and so the job, as it was: adding a setting reruns only its jobs.
    """
    documents = [read_yaml(f) for f in files]
    labels = {}
    for field in fields:
        setting = []
        for f, node in zip(files, documents):
            for key in field.split("."):
                node = node.get(key) if isinstance(node, dict) else None
            if node is not None:
                setting.append(f)
        labels[field] = config_label(setting[-1:] or list(files)[:1], workdir)
    return labels


def check_workflow_config(config: dict[str, Any], files: Sequence[str | Path], base: str | Path,
                          workdir: str | Path | None = None) -> None:
    """What the workflow checks before it plans: each config file reads as strict YAML (Snakemake's
    loader keeps the last of a repeated key), then the merged config validates, its files exist and its
    spaces have the objectives their runs optimise."""
    label = config_label(files, workdir)
    for f in files:
        read_yaml(f, config_label([f], workdir))
    validate(config, label, files=files, workdir=workdir)
    check_files(config, base, label)
    check_space_objectives(config, base, label)


def load(path: str | Path, workdir: str | Path | None = None) -> dict[str, Any]:
    """Read and validate a YAML config file (output_root relative to `workdir`, default the current one)."""
    config = read_yaml(path)
    return validate({} if config is None else config, str(path), files=[path], workdir=workdir)


def check_files(config: dict[str, Any], base: str | Path, source: str | Path = "config") -> None:
    """Every space's source, definition and compile-times files must exist (paths relative to `base`)."""
    for i, s in enumerate(config["spaces"]):
        for key in ("source", "definition"):
            if s.get(key) and not (Path(base) / s[key]).is_file():
                raise ConfigError(source, f"file not found: {s[key]}", field=f"spaces[{i}].{key}")
        for j, path in enumerate(s.get("compile_times") or []):
            if not (Path(base) / path).is_file():
                raise ConfigError(source, f"file not found: {path}", field=f"spaces[{i}].compile_times[{j}]")


def space_objectives(entry: dict[str, Any], base: str | Path) -> tuple[set[str] | None, str]:
    """The objective names a listed space will have once imported, and where they come from.

    With an `objectives:` mapping, its objectives; without one, the importer takes every field named like a
    study objective, read here from the head of the source (analysis.spaces.peek: its first measured
    configuration: the start of the file, not the whole of a large gzipped cache). None where the head does
    not say (the import job then reports the file).
    """
    if entry["objectives"]:
        names = {spec if isinstance(spec, str) else spec.get("name") for spec in entry["objectives"].values()}
        return names, "its `objectives:` mapping"

    return (default_objectives(Path(base) / entry["source"], entry["format"]),
            f"the fields of {entry['source']} named like study objectives")


def check_space_objectives(config: dict[str, Any], base: str | Path, source: str | Path = "config") -> None:
    """Every studied space has the objectives of every set it runs on; ConfigError naming the field otherwise.

    A space runs on its comparison objective sets (its `objective_sets`, else simulation.objective_sets),
    on each hyperparameter grid's set where it is a training space, on `time` in the constraint-aware study,
    plus its threshold's error objective where its kernel has one. (True fronts are computed only for the
    sets a space has: a set no run needs is no error.) Objective names of `objectives:` mappings must be
    study objectives or {name, ...} objects. Paths are relative to `base`, after `check_files`.
    """
    for i, s in enumerate(config["spaces"]):
        for fld, spec in s["objectives"].items():
            if isinstance(spec, str) and spec not in OBJECTIVES:
                raise ConfigError(source, f"unknown objective '{spec}' (study objectives: {', '.join(OBJECTIVES)}; "
                                          "another objective is an object {name, unit, direction})",
                                  field=f"spaces[{i}].objectives.{fld}")
    sim, hp, ca = config["simulation"], config["hyperparameters"], config["constraint_aware"]
    sets = config["objective_sets"]
    grid_sets = {name: grid["objective_set"] for name, grid in hp["grids"].items()}
    candidates: list[tuple[str, dict[str, Any] | None, int]] = [
        (f"{s['device']}/{s['kernel']}", s, i) for i, s in enumerate(config["spaces"]) if not s.get("excluded")]
    candidates += [(f"{s['device']}/{s['kernel']}", None, i) for i, s in enumerate(config["sweeps"])
                   if s.get("space", True)]
    sweep_objectives: set[str] | None = None
    have: set[str] | None
    for name, entry, i in candidates:
        if entry is None:
            if sweep_objectives is None:
                sweep_objectives = set(OBJECTIVE_FIELDS.values())
            have, origin = sweep_objectives, "a sweep's objectives"
        else:
            have, origin = space_objectives(entry, base)
        if have is None:
            continue
        kernel = name.split("/", 1)[1]
        own_sets: list[str] | None = entry["objective_sets"] if entry is not None else None
        own = bool(own_sets)
        needs: list[tuple[str, list[str], str, str, str]] = []  # (what, objectives, field, why, remedy)
        remap = "or map its source's fields to objectives with `objectives:`"
        for j, set_name in enumerate(own_sets if own_sets else sim["objective_sets"]):
            where = f"spaces[{i}].objective_sets[{j}]" if own else (
                f"spaces[{i}].objective_sets" if entry is not None else f"simulation.objective_sets[{j}]")
            why = ("its comparison runs optimise that set" if own else
                   "its comparison runs optimise that set (simulation.objective_sets" +
                   (", as the space lists no `objective_sets:` of its own)" if entry is not None else ")"))
            needs.append((f"objective set '{set_name}'", sets[set_name], where, why,
                          f"give the space `objective_sets:` it has (e.g. [time]), {remap}"))
        if kernel in hp["kernels"]:
            for grid, set_name in grid_sets.items():
                needs.append((f"objective set '{set_name}'", sets[set_name],
                              f"hyperparameters.grids.{grid}.objective_set",
                              f"the hyperparameter grid '{grid}' is tuned on that set, and the space is one of its "
                              "training spaces (hyperparameters.kernels)",
                              f"tune the grid on a set its training spaces have, train on other kernels, {remap}"))
        ca_spaces: list[str] | None = ca["spaces"]
        if ca_spaces is None or name in ca_spaces:
            listed = ca_spaces is not None
            where = f"constraint_aware.spaces[{ca_spaces.index(name)}]" if ca_spaces is not None else \
                "constraint_aware.spaces"
            needs.append(("objective 'time'", ["time"], where, "the constraint-aware study tunes its spaces on time"
                          + ("" if listed else " (constraint_aware.spaces: null, so every studied space)"),
                          f"list the study's spaces in constraint_aware.spaces without this one, {remap}"))
            threshold = ca["thresholds"].get(kernel)
            if threshold is not None:
                error = threshold.get("error", "mre")
                needs.append((f"objective '{error}'", [error], f"constraint_aware.thresholds.{kernel}.error",
                              "its kernel's accuracy threshold is on that objective",
                              f"put the threshold on an error objective the space has, {remap}"))
        for what, objectives, where, why, remedy in needs:
            missing = [o for o in objectives if o not in have]
            if missing:
                found = ", ".join(sorted(have)) or "none"
                raise ConfigError(source, f"space {name} lacks {', '.join(map(repr, missing))} of {what} "
                                          f"({', '.join(objectives)}): {why}; it has {found} ({origin}). "
                                          f"To fix: {remedy}", field=where)




def sweep_space(sweep: dict[str, Any], folder: str) -> dict[str, Any]:
    """The space entry of a sweep whose merged output lies in `folder` (paths relative to the working directory)."""
    entry = {"kernel": sweep["kernel"], "device": sweep["device"], "source": f"{folder}/cache.json.gz",
             "format": "kt_cache", "definition": f"{folder}/definition.yaml", "objectives": dict(OBJECTIVE_FIELDS)}
    _fill_defaults(entry, load_schema()["properties"]["spaces"]["items"])
    entry["from_sweep"] = True
    return entry


def check_config_files(paths: Sequence[str | Path], merged: bool = False) -> list[str]:
    """Check config files as the workflow does (`check-config`): each alone, or (`merged`) as Snakemake merges
    them, the later overriding the earlier. Returns what was found valid (the files, or their merged label);
    raises ConfigError naming the file and field otherwise."""
    if merged:
        check_workflow_config(merge_files(paths), paths, ROOT)
        return [config_label(paths)]
    for path in paths:
        loaded = load(path)
        check_files(loaded, ROOT, path)
        check_space_objectives(loaded, ROOT, path)
    return [str(p) for p in paths]


def config_space(config: dict[str, Any], config_path: str | Path, name: str) -> dict[str, Any]:
    """The space entry `name` ("device/kernel") of a validated config: a listed space, or a sweep's space read
    from the sweep's merged output under the config's output_root (relative to the working directory)."""
    device, _, kernel = name.partition("/")
    for entry in config["spaces"]:
        if (entry["device"], entry["kernel"]) == (device, kernel):
            return entry
    for sweep in config["sweeps"]:
        if sweep["space"] and (sweep["device"], sweep["kernel"]) == (device, kernel):
            folder = (f"{output_prefix(config['output_root'])}results/sweeps/"
                      f"{sweep['target']}/{device}/{kernel}")
            entry = sweep_space(sweep, folder)
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
    base = Path(base or ROOT)
    config = load(config_path)
    entry = config_space(config, config_path, name)
    where = (lambda p: Path(p)) if entry.get("from_sweep") else (lambda p: base / p)
    if entry.get("excluded"):
        log.warning("space %s is excluded from the studies (%s); exported all the same", name, entry["excluded"])
    return import_space(where(entry["source"]), kernel=entry["kernel"], device=entry["device"], fmt=entry["format"],
                        definition=where(entry["definition"]) if entry["definition"] else None,
                        objectives=entry["objectives"],
                        compile_times=[base / c for c in entry.get("compile_times") or []])
