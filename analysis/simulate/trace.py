"""The trace of one simulated tuning run: its evaluations in order."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

TIMING_KEYS = ("compile_time", "verification_time", "benchmark_time")


@dataclass
class Trace:
    """Ordered evaluations of one run, column-wise; `to_frame()` gives a pandas DataFrame."""

    param_names: list[str]
    objectives: list[str]
    configs: list[tuple] = field(default_factory=list)
    valid: list[bool] = field(default_factory=list)
    first_visit: list[bool] = field(default_factory=list)
    values: dict[str, list[float]] = field(default_factory=dict)
    sim_time_ms: list[float] = field(default_factory=list)
    budget: int = 0
    stopped_early: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        """Number of evaluations, repeats included."""
        return len(self.configs)

    @property
    def evaluations_spent(self) -> int:
        """Distinct configurations evaluated, which is what the budget counts."""
        return sum(self.first_visit)

    def columns(self) -> dict[str, list]:
        """Column name -> values: step, parameters, valid, first_visit, objectives, budget_used, sim_time_ms."""
        cols: dict[str, list] = {"step": list(range(len(self.configs)))}
        for i, name in enumerate(self.param_names):
            cols[f"param.{name}"] = [c[i] for c in self.configs]
        cols["valid"] = list(self.valid)
        cols["first_visit"] = list(self.first_visit)
        for name in self.objectives:
            cols[f"objective.{name}"] = list(self.values[name])
        used, budget_used = 0, []
        for first in self.first_visit:
            used += first
            budget_used.append(used)
        cols["budget_used"] = budget_used
        cols["sim_time_ms"] = list(self.sim_time_ms)
        return cols

    def to_frame(self) -> Any:
        """The trace as a pandas DataFrame (one row per evaluation); run metadata in `.attrs`."""
        import pandas as pd

        frame = pd.DataFrame(self.columns())
        frame.attrs.update(budget=self.budget, stopped_early=self.stopped_early, **self.meta)
        return frame

    def comparable(self) -> tuple:
        """Everything except metadata, NaN-safe, for exact equality checks between runs."""
        vals = tuple(tuple("nan" if math.isnan(v) else v for v in self.values[o]) for o in self.objectives)
        return (tuple(self.configs), tuple(self.valid), tuple(self.first_visit), vals, tuple(self.sim_time_ms))


def _objective_value(result: dict, objective: str) -> float:
    """The raw objective value of a result, NaN when the configuration failed or lacks it."""
    if "__error__" in result:
        return math.nan
    value = result.get(objective)
    return float(value) if isinstance(value, (int, float)) else math.nan


def trace_from_results(
    results: list[dict],
    param_names: list[str],
    objectives: list[str],
    budget: int,
) -> Trace:
    """Build a Trace from Kernel Tuner's ordered result dicts (as returned by a strategy's tune)."""
    trace = Trace(list(param_names), list(objectives), values={o: [] for o in objectives}, budget=budget)
    seen: set[tuple] = set()
    elapsed = 0.0
    for result in results:
        config = tuple(result[p] for p in param_names)
        first = config not in seen
        seen.add(config)
        if first:
            try:
                # the same sum SimulationRunner adds to total_simulated_time (repeats are charged 0)
                elapsed += result["compile_time"] + result["verification_time"] + result["benchmark_time"]
            except KeyError:
                pass
        trace.configs.append(config)
        trace.valid.append("__error__" not in result)
        trace.first_visit.append(first)
        for objective in objectives:
            trace.values[objective].append(_objective_value(result, objective))
        trace.sim_time_ms.append(elapsed)
    return trace
