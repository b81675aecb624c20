"""Where a space's parameters and constraints come from: a T1 input file or a kernel sweep spec."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from analysis.errors import SpaceError
from analysis.spaces import constraints as cons
from analysis.spaces.jsonfile import read_json, require


@dataclass(frozen=True)
class Definition:
    """Tunable parameters (ordered name -> value list) and constraint expressions of a kernel."""

    parameters: dict[str, list]
    constraints: list[str]
    source: str

    def parsed_constraints(self) -> list[cons.Constraint]:
        """Constraints parsed against this definition's parameter names."""
        try:
            return cons.parse_all(self.constraints, list(self.parameters))
        except cons.ConstraintSyntaxError as exc:
            raise SpaceError(self.source, str(exc), field="constraints") from None


def read_definition(path: str | Path) -> Definition:
    """Read a T1 input file (.json) or a sweep spec (.yaml with `tune_params` and `constraints`)."""
    path = Path(path)
    if path.suffix in (".yaml", ".yml"):
        return _read_spec(path)
    return _read_t1(path)


def _read_t1(path: Path) -> Definition:
    doc = read_json(path)
    space = require(doc, "ConfigurationSpace", dict, path)
    params: dict[str, list] = {}
    for i, p in enumerate(require(space, "TuningParameters", list, path, "ConfigurationSpace.")):
        where = f"ConfigurationSpace.TuningParameters[{i}]."
        name = require(p, "Name", str, path, where)
        values = require(p, "Values", (str, list), path, where)
        if isinstance(values, str):
            try:
                values = ast.literal_eval(values)
            except (ValueError, SyntaxError):
                raise SpaceError(path, f"not a literal list: {values!r}", field=f"{where}Values") from None
        if not isinstance(values, (list, tuple)) or not values:
            raise SpaceError(path, "must be a non-empty list", field=f"{where}Values")
        params[name] = list(values)
    exprs = []
    conditions = space.get("Conditions", [])
    if not isinstance(conditions, list):
        raise SpaceError(path, "must be a list", field="ConfigurationSpace.Conditions")
    for i, c in enumerate(conditions):
        where = f"ConfigurationSpace.Conditions[{i}]."
        exprs.append(require(c, "Expression", str, path, where))
        _check_constraint(exprs[-1], params, path, f"{where}Expression")
    definition = Definition(params, exprs, str(path))
    definition.parsed_constraints()
    return definition


def _check_constraint(expression: str, params: dict[str, list], path: Path, field: str) -> None:
    """The restricted parser (analysis.spaces.constraints) accepts it; else an error naming the file and field."""
    try:
        cons.parse(expression, list(params))
    except cons.ConstraintSyntaxError as exc:
        raise SpaceError(path, str(exc), field=field) from None


def _read_spec(path: Path) -> Definition:
    try:
        doc: Any = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise SpaceError(path, f"cannot be read as YAML ({exc})") from None
    params = require(doc, "tune_params", dict, path)
    for name, values in params.items():
        if not isinstance(values, list) or not values:
            raise SpaceError(path, "must be a non-empty list", field=f"tune_params.{name}")
    exprs = doc.get("constraints", []) or []
    if not isinstance(exprs, list) or not all(isinstance(e, str) for e in exprs):
        raise SpaceError(path, "must be a list of expression strings", field="constraints")
    for i, e in enumerate(exprs):
        _check_constraint(e, params, path, f"constraints[{i}]")
    definition = Definition({k: list(v) for k, v in params.items()}, list(exprs), str(path))
    definition.parsed_constraints()
    return definition
