"""A stored space as the auto-tuning methodology (`autotuning_methodology` 1.1.0) sees it, and its time budget.

The package reads a space as a T4 results file (`write_space_t4`) into its SearchspaceStatistics
(`space_statistics`); from those, `budget` is the methodology's run budget of the space (the time its
calculated random-search baseline needs to reach the cutoff, plus a margin) and `run_accepted` its
runner's rule for keeping a run. The constraint-aware study's runs (simulate stage) stop at this
budget; its scores (`analysis.indicators.methodology`) use the same statistics.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from analysis.io import write_json
from analysis.spaces.space import STATUS_OK, Space

# Stored evaluation-time columns (ms) -> T4 `times` keys (the package's objective_time_keys).
T4_TIME_KEYS = {"compile_time_ms": "compilation", "verification_time_ms": "validation",
                "benchmark_time_ms": "benchmark"}
# Stored configuration status -> T4 `invalidity`.
T4_INVALIDITY = {STATUS_OK: "correct", "compile": "compile", "runtime": "runtime", "error": "runtime"}


@dataclass(frozen=True)
class ScoreSettings:
    """The methodology's statistics settings and its runner's acceptance rule (the package's defaults)."""

    cutoff_percentile: float = 0.95
    cutoff_percentile_start: float = 0.01
    cutoff_margin: float = 0.1
    time_resolution: int = 1000
    confidence_level: float = 0.95
    # the package's runner keeps a run only with this many evaluations inside the scored time range
    minimum_fraction_of_budget_valid: float = 0.25
    minimum_number_of_valid_search_iterations: int = 25
    # "package": the package's calculated random-search baseline as it is (as seed 001 scored);
    # "expected_rank": the same baseline at the exact expected rank of the best of M draws (see
    # `calculated_baseline`)
    baseline: str = "package"

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any]) -> ScoreSettings:
        """The settings named in a config mapping; others keep their defaults."""
        return cls(**{k: cfg[k] for k in asdict(cls()) if k in cfg})


def _number(value: float) -> float | str:
    """A JSON-safe measurement: NaN becomes the string the package reads as invalid."""
    return float(value) if math.isfinite(value) else "NaN"


def space_t4(space: Space, objective: str) -> dict[str, Any]:
    """The space as a T4 results document: every configuration with its times (ms) and `objective`."""
    table = space.table
    names = list(space.parameters)
    values = table[space.objective(objective).column].to_numpy(dtype=float)
    results = []
    times = {key: table[col].to_numpy(dtype=float) for col, key in T4_TIME_KEYS.items()}
    for i, row in enumerate(table[names + ["status"]].itertuples(index=False)):
        status = str(row[-1])
        results.append({
            "configuration": {n: _plain(v) for n, v in zip(names, row[:-1])},
            "times": {key: float(t[i]) for key, t in times.items()},
            "invalidity": T4_INVALIDITY[status],
            "correctness": 1,
            "measurements": [{"name": objective, "value": _number(values[i]) if status == STATUS_OK else "NaN",
                              "unit": "ms"}],
            "objectives": [objective],
        })
    return {"schema_version": "1.0.0", "metadata": {"timeunit": "milliseconds"}, "results": results}


def _plain(v: Any) -> Any:
    """NumPy scalars as Python scalars for JSON."""
    return v.item() if hasattr(v, "item") else v


def write_space_t4(space: Space, objective: str, path: str | Path) -> Path:
    """Write `space_t4` to `path` (atomically, on one line: the file is only the package's input) and return the
    path."""
    path = Path(path)
    write_json(space_t4(space, objective), path, indent=None)
    return path


def space_statistics(t4_path: str | Path, kernel: str, device: str, objective: str):
    """The package's SearchspaceStatistics of a T4 file written by `write_space_t4` (minimised objective)."""
    from autotuning_methodology.searchspace_statistics import SearchspaceStatistics

    return SearchspaceStatistics(
        application_name=kernel, device_name=device, minimization=True,
        objective_time_keys=list(T4_TIME_KEYS.values()), objective_performance_keys=[objective],
        full_search_space_file_path=Path(t4_path), full_validate=False,
    )


def budget(stats: Any, settings: ScoreSettings) -> dict[str, float]:
    """The run budget of the methodology (the package's `calculate_budget` with cutoff_type 'time').

    `time_limit_ms` is the baseline's time to the cutoff plus the margin; the scored time range
    runs from `time_start_ms` to `time_end_ms`. `min_evaluations` is how many evaluations a run
    must have between `time_start_ms` and `time_limit_ms` (two of them valid) for the package's
    runner to keep it (`run_accepted`).
    """
    fevals_start, fevals_end, time_start, time_end = stats.cutoff_point_fevals_time_start_end(
        settings.cutoff_percentile_start, settings.cutoff_percentile)
    if settings.cutoff_percentile_start <= 0.0:
        time_start = 0.0
    time_limit = time_end * (1 + settings.cutoff_margin)
    # the package runner's minimum number of evaluations within the scored time (collect_results)
    max_fevals = max(round(time_limit / stats.get_time_per_feval("mean_per_feval")), 2)
    minimum = max(round(settings.minimum_fraction_of_budget_valid * min(max_fevals, stats.size)), 2)
    minimum = max(min(minimum, settings.minimum_number_of_valid_search_iterations), 2)
    return {  # the package works in seconds
        "fevals_start": int(fevals_start), "fevals_end": int(fevals_end),
        "time_start_ms": 1e3 * float(time_start), "time_end_ms": 1e3 * float(time_end),
        "time_limit_ms": 1e3 * float(time_limit),
        "min_evaluations": int(minimum),
        "median_time_per_evaluation_ms": 1e3 * float(stats.total_time_median()),
        "optimum": float(stats.total_performance_absolute_optimum()),
        "median": float(stats.total_performance_median()),
        "size": int(stats.size),
    }


def run_accepted(trace: Any, limits: Mapping[str, float]) -> bool:
    """Whether the package's runner would keep this run (else it tunes again, up to 20 attempts)."""
    clock = np.asarray(trace.sim_time_ms, dtype=float)
    inside = (clock >= limits["time_start_ms"]) & (clock <= limits["time_limit_ms"])
    valid = inside & np.asarray(trace.valid, dtype=bool)
    return int(inside.sum()) >= limits["min_evaluations"] and int(valid.sum()) >= 2


def budget_for_space(space: Space, objective: str, settings: ScoreSettings) -> dict[str, float]:
    """`budget` of a stored space, through a temporary T4 file."""
    with tempfile.TemporaryDirectory(prefix="tsb-budget-") as tmp:
        t4 = write_space_t4(space, objective, Path(tmp) / "space_T4.json")
        return budget(space_statistics(t4, space.kernel, space.device, objective), settings)

