"""A search space in its normalised form: a configurations table plus metadata, on disk as Parquet + JSON."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.errors import SpaceError
from analysis.io import write_json, write_parquet
from analysis.objectives import EVALUATION_TIME_COLUMNS, Objective
from analysis.spaces import constraints as cons
from analysis.spaces.jsonfile import read_json, require

log = logging.getLogger(__name__)

STATUS_OK = "ok"
# Kernel Tuner's error markers -> the status stored per configuration (None: row removed).
KT_ERRORS: dict[str, str | None] = {
    "CompilationFailedConfig": "compile",
    "RuntimeFailedConfig": "runtime",
    "ErrorConfig": "error",
    "InvalidConfig": None,
}
# A configuration that ran but whose output holds NaN or infinity (a sweep's `nonfinite_values`
# field > 0): excluded from every objective set, as seed 002 §IV excludes invalid outputs.
STATUS_INVALID_OUTPUT = "invalid_output"
# the field of a sweep's cache entries that counts the non-finite output values
NONFINITE_FIELD = "nonfinite_values"
FORMAT_VERSION = 1


@dataclass
class Record:
    """One configuration as read from a source file, before validation."""

    key: str  # where it sits in the source file, for error messages
    config: dict[str, Any]
    objectives: dict[str, float]
    eval_times: dict[str, float]
    status: str


@dataclass
class Space:
    """One kernel on one device: every configuration measured, with its objectives and evaluation times."""

    kernel: str
    device: str
    parameters: dict[str, list]
    constraints: list[str]
    objectives: list[Objective]
    table: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)
    origin: str | None = field(default=None, compare=False)  # the metadata file it was loaded from

    @property
    def objective_columns(self) -> dict[str, str]:
        """Objective name -> table column."""
        return {o.name: o.column for o in self.objectives}

    def objective(self, name: str) -> Objective:
        """The space's objective called `name`; an error names the space and the known ones."""
        for o in self.objectives:
            if o.name == name:
                return o
        known = ", ".join(o.name for o in self.objectives)
        raise KeyError(f"space {self.device}/{self.kernel} has no objective '{name}' (it has: {known})")

    def save(self, parquet_path: str | Path, meta_path: str | Path) -> None:
        """Write the table (Parquet) and the metadata (JSON), each atomically.

        The metadata keeps its keys in their own order, not sorted: the order of `parameters` is the
        source's (a cache's `tune_params_keys`, a T1 file's or kernel spec's order), which Kernel
        Tuner's strategies see as gene positions and neighbour order, so `load` must give it back.
        """
        write_parquet(self.table, parquet_path)
        write_json(self.metadata(), meta_path, sort_keys=False)

    def metadata(self) -> dict[str, Any]:
        """Everything but the table, JSON-ready."""
        return {
            "format_version": FORMAT_VERSION,
            "kernel": self.kernel,
            "device": self.device,
            "parameters": {k: [plain(v) for v in vs] for k, vs in self.parameters.items()},
            "constraints": list(self.constraints),
            "objectives": [
                {"name": o.name, "column": o.column, "unit": o.unit, "direction": o.direction,
                 "description": o.description}
                for o in self.objectives
            ],
            "evaluation_time_columns": dict(EVALUATION_TIME_COLUMNS),
            **self.meta,
        }

    @classmethod
    def load(cls, parquet_path: str | Path, meta_path: str | Path) -> Space:
        """Read a space written by `save`.

        The metadata's constraints are checked by the restricted parser (analysis.spaces.constraints)
        here, before anything (Kernel Tuner's Searchspace in particular) sees them: a
        tampered expression is an error naming the file and the constraint.
        """
        meta = read_json(meta_path)
        if not isinstance(meta, dict):
            raise SpaceError(meta_path, "must be a JSON object")
        if meta.get("format_version") != FORMAT_VERSION:
            raise SpaceError(meta_path, f"unsupported format version {meta.get('format_version')}",
                             field="format_version")
        parameters = require(meta, "parameters", dict, meta_path)
        for p, values in parameters.items():
            if not isinstance(values, list) or not values:
                raise SpaceError(meta_path, "must be a non-empty list", field=f"parameters.{p}")
        constraints = require(meta, "constraints", list, meta_path)
        check_constraints(constraints, list(parameters), meta_path, "constraints")
        table = pd.read_parquet(parquet_path)
        _check_parameter_order(list(parameters), list(table.columns), meta_path)
        try:
            objectives = [Objective(**o) for o in require(meta, "objectives", list, meta_path)]
        except TypeError as exc:
            raise SpaceError(meta_path, f"bad objective entry ({exc})", field="objectives") from None
        for k in ("kernel", "device"):
            require(meta, k, str, meta_path)
        core = {k: meta.pop(k) for k in ("kernel", "device", "parameters", "constraints")}
        meta.pop("objectives")
        meta.pop("format_version")
        meta.pop("evaluation_time_columns", None)
        return cls(objectives=objectives, table=table, meta=meta, origin=str(meta_path), **core)


def _check_parameter_order(names: list[str], columns: list[str], meta_path: str | Path) -> None:
    """The metadata's parameters are the table's parameter columns, in the same order; else a SpaceError.

    `build` writes the parameter columns in the source's order. A metadata file whose parameters
    come in another order (one written before that order was kept, with sorted keys) would make
    every run see the parameters in its order: an error naming the file, not silently other runs.
    """
    wanted = set(names)
    in_table = [c for c in columns if c in wanted]
    if in_table != names:
        raise SpaceError(meta_path, f"parameters {names} are not the table's parameter columns in that order "
                                    f"({in_table}); a space stored before its parameter order was kept must be "
                                    "imported again", field="parameters")


def check_constraints(exprs: Any, names: list[str], path: str | Path, field_name: str) -> list[cons.Constraint]:
    """Parse every constraint with the restricted parser; a bad one is an error naming the file and its index."""
    if not isinstance(exprs, list):
        raise SpaceError(path, "must be a list of expression strings", field=field_name)
    parsed = []
    for i, e in enumerate(exprs):
        if not isinstance(e, str):
            raise SpaceError(path, f"expected an expression string, found {type(e).__name__}",
                             field=f"{field_name}[{i}]")
        try:
            parsed.append(cons.parse(e, names))
        except cons.ConstraintSyntaxError as exc:
            raise SpaceError(path, str(exc), field=f"{field_name}[{i}]") from None
    return parsed


def build(
    records: list[Record],
    *,
    path: str | Path,
    kernel: str,
    device: str,
    parameters: dict[str, list],
    constraint_exprs: list[str],
    objectives: list[Objective],
    removed: dict[str, int],
    meta: dict[str, Any],
    constraints_path: str | Path | None = None,
) -> Space:
    """Validate records against the declared parameters and constraints and assemble a Space.

    `constraints_path` is the file the constraint expressions come from (default `path`): a
    constraint that cannot be parsed or evaluated is an error naming it.
    """
    names = list(parameters)
    clash = set(names) & ({o.column for o in objectives} | set(EVALUATION_TIME_COLUMNS.values()) | {"status"})
    if clash:
        raise SpaceError(path, f"parameter name clashes with a stored column: {sorted(clash)}")
    allowed = {p: set(_hashable(v) for v in vs) for p, vs in parameters.items()}
    for r in records:
        for p in names:
            if p not in r.config:
                raise SpaceError(path, f"configuration '{r.key}' lacks parameter", field=p)
            if _hashable(r.config[p]) not in allowed[p]:
                raise SpaceError(
                    path, f"configuration '{r.key}' has value {r.config[p]!r}, not in the declared list "
                    f"{parameters[p]}", field=p,
                )
    if not records:
        raise SpaceError(path, "holds no configurations")
    table = pd.DataFrame({p: [r.config[p] for r in records] for p in names})
    for o in objectives:
        table[o.column] = np.array([r.objectives.get(o.name, math.nan) for r in records], dtype=float)
    for col in EVALUATION_TIME_COLUMNS.values():
        table[col] = np.array([r.eval_times.get(col, 0.0) for r in records], dtype=float)
    table["status"] = pd.Series([r.status for r in records], dtype="string")

    dup = table.duplicated(subset=names, keep=False)
    if dup.any():
        keys = [r.key for r, d in zip(records, dup) if d][:4]
        raise SpaceError(path, f"{int(dup.sum())} rows repeat a configuration, e.g. {keys}", field="configuration")

    try:
        parsed = cons.parse_all(constraint_exprs, names) if constraint_exprs else []
        columns = {p: table[p].to_numpy() for p in names}
        ok = cons.satisfied(parsed, columns, len(table))
        failing = [c.expression for c in parsed if not c.evaluate(columns).all()] if not ok.all() else []
        constrained = count_constrained(parameters, parsed)
    except (cons.ConstraintSyntaxError, cons.ConstraintEvaluationError) as exc:
        raise SpaceError(constraints_path or path, str(exc), field="constraints") from None
    if not ok.all():
        bad = [r.key for r, good in zip(records, ok) if not good][:4]
        raise SpaceError(
            path, f"{int((~ok).sum())} configurations violate the constraints, e.g. {bad}; "
            f"violated: {failing}", field="constraints",
        )

    measured = table["status"] == STATUS_OK
    for o in objectives:
        if not np.isfinite(table.loc[measured, o.column]).any():
            raise SpaceError(path, "no finite value in any measured configuration", field=o.name)

    cartesian = math.prod(len(v) for v in parameters.values())
    missing = constrained - len(table)
    if missing:
        log.warning("%s: %d configurations satisfy the constraints but are absent (space not exhaustive)",
                    path, missing)
    table = table.sort_values(names, kind="stable", ignore_index=True)
    # again after sorting: the mask taken before is indexed by the source's entry order, and pandas
    # would align it with the sorted table by index (a cache not written in sorted order, like
    # benchmark_hub_more's pnpoly/RTX_Titan, then counted 306 finite times as non-finite)
    measured = table["status"] == STATUS_OK
    status_counts = table["status"].value_counts()
    meta = {
        **meta,
        "counts": {
            "cartesian": cartesian,
            "constrained": constrained,
            "rows": len(table),
            "missing": missing,
            "failed": {s: int(n) for s, n in status_counts.items() if s != STATUS_OK},
            "removed": removed,
            "nonfinite": {o.name: int((measured & ~np.isfinite(table[o.column])).sum()) for o in objectives},
        },
    }
    log.info("%s/%s: %d configurations (%d failed), Cartesian %d, constrained %d",
             device, kernel, len(table), int((~measured).sum()), cartesian, constrained)
    return Space(kernel, device, dict(parameters), list(constraint_exprs), objectives, table, meta)


def count_constrained(parameters: dict[str, list], parsed: list[cons.Constraint], chunk: int = 1 << 20) -> int:
    """Size of the Cartesian product of the value lists that satisfies every constraint."""
    lists = [np.asarray(v) for v in parameters.values()]
    shape = tuple(len(v) for v in lists)
    total = math.prod(shape)
    if not parsed:
        return total
    count = 0
    for start in range(0, total, chunk):
        flat = np.arange(start, min(total, start + chunk))
        idx = np.unravel_index(flat, shape)
        columns = {p: v[i] for p, v, i in zip(parameters, lists, idx)}
        count += int(cons.satisfied(parsed, columns, len(flat)).sum())
    return count


def _hashable(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


def plain(v: Any) -> Any:
    """A NumPy scalar as the Python value (for JSON and cache keys)."""
    return v.item() if isinstance(v, np.generic) else v
