"""The performance score of the auto-tuning methodology, computed by `autotuning_methodology` 1.1.0.

The package (van Werkhoven, Willemsen et al.) defines the score used by seed 001: a calculated
random-search baseline, a time budget (the time that baseline needs to get 95 % of the way from
the space's median to its optimum), and a score averaged over sampling times (0 = baseline,
1 = optimum at once). This module only feeds the package: it writes a stored space as the T4
file the package's `SearchspaceStatistics` reads, turns simulated traces into the T4 evaluation
records the package's `write_results` turns into its arrays, and calls the package's baseline,
curve and aggregation code. One step is done on arrays instead of by the package: the arrays
`write_results` makes of those records (a Python loop over every evaluation, most of a score's
time), made by `results_arrays` and tested equal to the package's; nothing else of the score is
re-implemented here. One option departs
from the package: `ScoreSettings.baseline = "expected_rank"` moves its calculated baseline one
rank back, to where random search really is (`calculated_baseline`); the default keeps it as is.

The time axis. The package's own runner sums the T4 `times` of every evaluation returned by
Kernel Tuner, including wall-clock framework and strategy time. Here the time of an evaluation
is what Kernel Tuner's SimulationRunner charges: compile + verification + benchmark time on a
configuration's first visit, nothing for a repeat. The space statistics (median time per
evaluation, hence the budget and the baseline's time axis) use the same three times, so the
baseline and the strategies share one clock, and every run is exactly reproducible.

Units: the package converts the T4 file's milliseconds to seconds when it reads a space, and
takes evaluation records as given, so records carry seconds; budgets are reported in ms.

The package's curves are bagged isotonic regressions whose bootstrap draws come from NumPy's
global generator; `score_space` seeds it, so a score is a pure function of its inputs.
"""

from __future__ import annotations

import contextlib
import math
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.fastpath.patching import ModuleWith, swapped
from analysis.spaces.methodology import (
    T4_INVALIDITY,
    T4_TIME_KEYS,
    ScoreSettings,
    budget,
    space_statistics,
    write_space_t4,
)
from analysis.spaces.space import STATUS_OK, Space


@dataclass(frozen=True)
class SpaceIndex:
    """What `trace_records` looks up per evaluation, built once per space and objective."""

    rows: dict[str, int]  # Kernel Tuner cache key -> table row
    times_ms: np.ndarray  # rows x (compile, verification, benchmark)
    status: np.ndarray
    values: np.ndarray  # the objective per row

    @classmethod
    def of(cls, space: Space, objective: str) -> SpaceIndex:
        """Index the space's configurations by their cache key."""
        table = space.table
        keys = [_key(r) for r in table[list(space.parameters)].itertuples(index=False)]
        return cls(dict(zip(keys, range(len(keys)))), table[list(T4_TIME_KEYS)].to_numpy(dtype=float),
                   table["status"].to_numpy(), table[space.objective(objective).column].to_numpy(dtype=float))


def _key(config: tuple) -> str:
    """Kernel Tuner's cache key of a configuration: its values joined by commas."""
    return ",".join(str(v) for v in config)


def trace_records(trace: pd.DataFrame, index: SpaceIndex, param_names: list[str],
                  objective: str) -> list[dict[str, Any]]:
    """One run's evaluations as the T4 records the package's `write_results` reads.

    A first visit carries the configuration's stored compile/verification/benchmark time (in
    seconds, the package's unit), a repeat none; their running sum is checked against the
    trace's own simulated clock (ms).
    """
    records = []
    elapsed = 0.0
    params = trace[[f"param.{n}" for n in param_names]].itertuples(index=False)
    for config, first, charged in zip(params, trace["first_visit"], trace["sim_time_ms"]):
        key = _key(tuple(config))
        row = index.rows.get(key)
        if row is None:  # a constraint-violating proposal (constraint-unaware pymoo variants)
            records.append({"invalidity": "constraints", "times": {}, "measurements": []})
            continue
        t = index.times_ms[row] if first else np.zeros(len(T4_TIME_KEYS))
        elapsed += float(t.sum())
        if not math.isclose(elapsed, float(charged), rel_tol=1e-9, abs_tol=1e-9):
            raise ValueError(f"trace clock {charged} ms disagrees with the space's times ({elapsed} ms) at {key}")
        ok = index.status[row] == STATUS_OK
        records.append({
            "invalidity": T4_INVALIDITY[str(index.status[row])],
            "times": dict(zip(T4_TIME_KEYS.values(), map(float, t / 1e3))),
            "measurements": [{"name": objective, "value": float(index.values[row]) if ok else math.nan}],
        })
    return records


def record_rows(runs: pd.DataFrame, index: SpaceIndex, param_names: list[str]) -> np.ndarray:
    """Each evaluation's row in the space (-1: a constraint-violating proposal), looked up by its cache key.

    The key is `_key` of the evaluation's parameter values, as in `trace_records`; it is built once
    per distinct configuration of `runs`, not once per evaluation.
    """
    params = runs[[f"param.{n}" for n in param_names]]
    codes = params.groupby(list(params.columns), sort=False, dropna=False).ngroup().to_numpy()
    distinct = params.drop_duplicates()
    rows = np.array([index.rows.get(_key(tuple(c)), -1) for c in distinct.itertuples(index=False)], dtype=np.intp)
    return rows[codes]


def results_arrays(runs: pd.DataFrame, index: SpaceIndex, param_names: list[str]) -> dict[str, np.ndarray] | None:
    """The arrays the package's `runner.write_results` makes of `trace_records` of every repetition, made on arrays.

    Same shapes, values and NaNs (tested against `write_results` on real runs): per evaluation the
    count from 1; nothing else for a constraint-violating proposal; the three times (s) of a first
    visit and zeros for a repeat, their sum accumulated over the run; the objective value of a
    valid configuration and its running minimum. The package cuts every run to twice the mean
    length when the longest is longer, as here. None when the package would choose another
    dtype (more than 10^8 entries): then its own function must run.
    """
    from autotuning_methodology.validators import kernel_tuner_error_value

    rows_of = record_rows(runs, index, param_names) if len(runs) else np.zeros(0, dtype=np.intp)
    reps = [frame for _, frame in runs.assign(_row=rows_of).groupby("repetition", sort=True)]
    lengths = [len(f) for f in reps]
    longest = max(lengths) if lengths else 0
    mean = np.mean(lengths) if lengths else 0
    if longest > mean * 2:
        longest = int(mean * 2)
    if longest > 1e8 or longest * len(reps) > 1e8:
        return None
    shape = (longest, len(reps))
    out = {name: np.full(shape, np.nan) for name in ("fevals_results", "objective_time_results",
                                                     "objective_performance_results",
                                                     "objective_performance_best_results",
                                                     "objective_performance_stds")}
    keys = len(T4_TIME_KEYS)
    out["objective_time_results_per_key"] = np.full((keys, *shape), np.nan)
    out["objective_performance_results_per_key"] = np.full((keys, *shape), np.nan)  # sic: the package's shape
    for r, frame in enumerate(reps):
        n = min(len(frame), longest)
        rows = frame["_row"].to_numpy()[:n]
        first = frame["first_visit"].to_numpy(dtype=bool)[:n]
        charged = frame["sim_time_ms"].to_numpy(dtype=float)[:n]
        known = rows >= 0
        out["fevals_results"][:n, r] = np.arange(1, n + 1)
        safe = np.where(known, rows, 0)
        times_ms = np.where((known & first)[:, None], index.times_ms[safe], 0.0)
        elapsed = np.cumsum(times_ms.sum(axis=1))
        tolerance = np.maximum(1e-9 * np.maximum(np.abs(elapsed), np.abs(charged)), 1e-9)
        bad = known & (np.abs(elapsed - charged) > tolerance)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"trace clock {charged[i]} ms disagrees with the space's times ({elapsed[i]} ms) "
                             f"at row {rows[i]}")
        times_s = times_ms / 1e3
        per_key = out["objective_time_results_per_key"]
        for k in range(keys):
            per_key[k, :n, r] = np.where(known, times_s[:, k], np.nan)
        step = times_s[:, 0]
        for k in range(1, keys):
            step = step + times_s[:, k]  # the package's sum of the keys, left to right
        clock = np.cumsum(np.where(known, step, 0.0))
        out["objective_time_results"][:n, r] = np.where(known, clock, np.nan)
        value = np.where(known & (index.status[safe] == STATUS_OK), index.values[safe], np.nan)
        value = np.where(value == kernel_tuner_error_value, np.nan, value)
        out["objective_performance_results_per_key"][0, :n, r] = value
        performance = 0 + value  # the package's sum of one key
        out["objective_performance_results"][:n, r] = performance
        # a constraint-violating proposal records no best (the package skips it); others carry it on
        out["objective_performance_best_results"][:n, r] = np.where(known, np.fmin.accumulate(performance), np.nan)
    return out


def strategy_curve(name: str, runs: pd.DataFrame, space: Space, objective: str, workdir: str | Path,
                   index: SpaceIndex | None = None):
    """The package's StochasticOptimizationAlgorithm curve of all repetitions in `runs`.

    The package's result arrays come from `results_arrays` (the package's `write_results` when
    that declines, or when TSB_STOCK turns the fast path's `scoring` group off; both pinned in
    `analysis.fastpath.pins`).
    """
    from autotuning_methodology.caching import ResultsDescription
    from autotuning_methodology.curves import StochasticOptimizationAlgorithm
    from autotuning_methodology.runner import write_results

    description = ResultsDescription(
        run_folder=Path(workdir) / name, application_name=space.kernel, device_name=space.device,
        group_name=name, group_display_name=name, stochastic=True,
        objective_time_keys=list(T4_TIME_KEYS.values()), objective_performance_keys=[objective],
        minimization=True,
    )
    index = index or SpaceIndex.of(space, objective)
    names = list(space.parameters)
    from analysis import fastpath

    fast = fastpath.enabled("scoring")
    arrays = results_arrays(runs, index, names) if fast else None
    with uncompressed_result_files() if fast else contextlib.nullcontext():
        if arrays is None:
            repeated = [trace_records(frame, index, names, objective)
                        for _, frame in runs.groupby("repetition", sort=True)]
            write_results(repeated, description)
        else:
            description.set_results(arrays)
    return StochasticOptimizationAlgorithm(description)


def uncompressed_result_files() -> contextlib.AbstractContextManager:
    """Let the package store a ResultsDescription's arrays uncompressed while active.

    The package keeps each strategy's result arrays in an .npz file (in `score_runs`' temporary folder) with
    `np.savez_compressed` and reads them back with `np.load` when the curve is built; compressing files that
    live only as long as that folder costs a score time and saves nothing. `np.savez` writes the same .npy
    members without compression, and `np.load` returns the same dtypes, shapes and bytes from either (tests
    compare scores and curves with compression on).
    """
    from autotuning_methodology import caching

    return swapped(caching, np=ModuleWith(np, savez_compressed=np.savez))


BASELINES = ("package", "expected_rank")


def calculated_baseline(stats: Any, kind: str = "package") -> Any:
    """The package's calculated random-search baseline on `stats`, as it is or at the exact rank.

    The package takes the best of M uniform draws without replacement from N configurations to
    sit at round(M (N + 1) / (M + 1)) in its worst-first list, 0-based. That expression is the
    expected 1-based position, so the package's baseline stands one rank nearer the optimum than
    random search gets, which scores a sound random search below 0 late in the budget, where only
    a few configurations beat it. "expected_rank" subtracts the one.
    """
    from autotuning_methodology.baseline import RandomSearchCalculatedBaseline

    if kind not in BASELINES:
        raise ValueError(f"unknown baseline {kind!r}; valid: {', '.join(BASELINES)}")
    if kind == "package":
        return RandomSearchCalculatedBaseline(stats)
    from analysis.fastpath.pins import check_once

    check_once("baseline")  # the package's method overridden below is the pinned one

    class ExpectedRankBaseline(RandomSearchCalculatedBaseline):
        """The package's calculated baseline with the expected rank turned into a 0-based index."""

        def _redwhite_index(self, M: int, N: int) -> int:
            return min(N - 1, max(0, round(M * (N + 1) / (M + 1)) - 1))

    return ExpectedRankBaseline(stats)


def score_space(stats: Any, curves: Mapping[str, Any], settings: ScoreSettings, seed: int) -> dict[str, Any]:
    """Score each strategy's curve on one space with the package's aggregation code.

    Returns the time range (s, the package's unit), the baseline's absolute curve, and per strategy the
    standardised curve over that range, its score (mean over the range) and the fraction of
    the range backed by at least half of the runs (the package's real-stopping-point fraction).
    """
    from autotuning_methodology.report_experiments import get_strategies_aggregated_performance

    # the x-axis exactly as the package's get_aggregation_data builds it
    fevals_start, fevals_end, time_start, time_end = stats.cutoff_point_fevals_time_start_end(
        settings.cutoff_percentile_start, settings.cutoff_percentile)
    time_range = np.linspace(start=time_start, stop=time_end, num=int(settings.time_resolution))
    fevals_range = np.arange(start=fevals_start, stop=fevals_end + 1)
    baseline = calculated_baseline(stats, settings.baseline)
    names = list(curves)
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        performance, lower, upper, real_fraction = get_strategies_aggregated_performance(
            [(baseline, [curves[n] for n in names], stats, time_range, fevals_range)], settings.confidence_level)
    finally:
        np.random.set_state(state)
    return {
        "time_range_s": time_range,
        "baseline": baseline.get_curve(time_range, "time"),
        "strategies": {
            n: {"curve": performance[i], "lower": lower[i], "upper": upper[i], "score": float(np.mean(performance[i])),
                "real_fraction": float(real_fraction[i])}
            for i, n in enumerate(names)
        },
    }


def score_runs(space: Space, objective: str, runs: Mapping[str, pd.DataFrame], settings: ScoreSettings,
               seed: int) -> tuple[dict[str, Any], dict[str, float]]:
    """Score every strategy's runs on one space: (score_space's result, the budget)."""
    with tempfile.TemporaryDirectory(prefix="tsb-score-") as tmp:
        t4 = write_space_t4(space, objective, Path(tmp) / "space_T4.json")
        stats = space_statistics(t4, space.kernel, space.device, objective)
        index = SpaceIndex.of(space, objective)
        curves = {name: strategy_curve(name, frame, space, objective, tmp, index) for name, frame in runs.items()}
        return score_space(stats, curves, settings, seed), budget(stats, settings)
