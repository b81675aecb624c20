"""The study's objectives (name, stored column with unit, direction) and objective sets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Objective:
    """One measured objective: its stored column name (unit in the name) and its direction."""

    name: str
    column: str
    unit: str
    direction: str  # "min" or "max"
    description: str


OBJECTIVES: dict[str, Objective] = {
    o.name: o
    for o in (
        Objective("time", "time_ms", "ms", "min", "kernel time, mean over the benchmark iterations"),
        Objective("memory", "memory_bytes", "bytes", "min", "bytes of all device input/output buffers"),
        Objective("mre", "mre", "1", "min", "mean relative error against the float64 reference"),
        Objective("nrmse", "nrmse", "1", "min", "root-mean-square error over the mean of the reference (seed 000 §5)"),
        Objective("nmae", "nmae", "1", "min", "mean absolute error over the mean absolute reference (seed 000 §5)"),
        Objective("energy", "energy_J", "J", "min", "energy of one kernel launch"),
    )
}

# Evaluation-time columns (ms) recorded per configuration, as Kernel Tuner's cache holds them.
EVALUATION_TIME_COLUMNS: dict[str, str] = {
    "compile_time": "compile_time_ms",
    "verification_time": "verification_time_ms",
    "benchmark_time": "benchmark_time_ms",
}


def objective(name: str) -> Objective:
    """Look an objective up by name; unknown names are an error listing the known ones."""
    try:
        return OBJECTIVES[name]
    except KeyError:
        raise KeyError(f"unknown objective '{name}'; known: {', '.join(OBJECTIVES)}") from None


def custom_objective(name: str, unit: str = "", direction: str = "min") -> Objective:
    """An objective outside the study's list (e.g. GFLOP/s of an imported cache)."""
    if direction not in ("min", "max"):
        raise ValueError(f"objective '{name}': direction must be 'min' or 'max', not '{direction}'")
    column = f"{name}_{unit}" if unit and unit != "1" else name
    return Objective(name, column, unit or "1", direction, "imported objective")


def headline_set(objective_sets: Mapping[str, Sequence[str]], studied: Iterable[str]) -> str | None:
    """The objective set a summary shows first (the figure of README's and the report's results at a glance): the
    first multi-objective set of `objective_sets` (the config's order) among the `studied` ones, else the first
    studied set; None when none is studied."""
    ran = set(studied)
    present = [name for name in objective_sets if name in ran]
    multi = [name for name in present if len(objective_sets[name]) > 1]
    return next(iter(multi or present), None)
