"""The performance score of the auto-tuning methodology, computed by `autotuning_methodology` 1.1.0.

The package (van Werkhoven, Willemsen et al.) defines the score used by seed 001: a calculated
random-search baseline, a time budget (the time that baseline needs to get 95 % of the way from
the space's median to its optimum), and a score averaged over sampling times (0 = baseline,
1 = optimum at once). This module only feeds the package: it writes a stored space as the T4
file the package's `SearchspaceStatistics` reads, turns simulated traces into the T4 evaluation
records the package's `write_results` turns into its arrays, and calls the package's baseline,
curve and aggregation code. One step is done on arrays instead of by the package: the arrays
`write_results` makes of those records (a Python loop over every evaluation, most of a score's
time), made by `results_arrays` and tested equal to the package's; and the curves' isotonic fits and
bagged interval run through the fast path's exact replicas (`analysis.fastpath.bagging`, which sort the
points once where scikit-learn sorts them per fit; TSB_STOCK=bagging turns them off). Nothing else of the
score is re-implemented here. One option departs
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
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis import fastpath
from analysis.fastpath.patching import ModuleWith, swapped
from analysis.fastpath.pins import check_once
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
    dtypes: dict[str, Any]  # each parameter column's type in the table ("param.<name>" -> dtype)

    @classmethod
    def of(cls, space: Space, objective: str) -> SpaceIndex:
        """Index the space's configurations by their cache key."""
        table = space.table
        keys = [_key(r) for r in table[list(space.parameters)].itertuples(index=False)]
        return cls(dict(zip(keys, range(len(keys)))), table[list(T4_TIME_KEYS)].to_numpy(dtype=float),
                   table["status"].to_numpy(), table[space.objective(objective).column].to_numpy(dtype=float),
                   {f"param.{p}": table[p].dtype for p in space.parameters})


# The row `record_rows` gives a repeat of a configuration of the table that the run file does not name: every
# parameter missing, not a first visit (how a baseline archive gives such a repeat back,
# `analysis.simulate.archive.archived_form`). It charges nothing and carries the best on; its own value is unknown.
UNNAMED_REPEAT = -2


def unnamed_repeats(runs: pd.DataFrame, param_names: Sequence[str]) -> np.ndarray:
    """Which rows of `runs` are repeats of a configuration of the table that they do not name (every parameter
    missing, first_visit False; a placeholder row of a run that did not run has first_visit missing too)."""
    if not len(param_names):
        return np.zeros(len(runs), dtype=bool)
    missing = runs[[f"param.{n}" for n in param_names]].isna().all(axis=1).to_numpy()
    return missing & (runs["first_visit"] == False).to_numpy()  # noqa: E712 (a missing value is not False)


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
    records: list[dict[str, Any]] = []
    elapsed = 0.0
    rows = record_rows(trace, index, param_names)
    # an unnamed repeat's validity is in the run file's `valid` (the others' is the table's)
    validity = trace["valid"] if (rows == UNNAMED_REPEAT).any() else np.zeros(len(trace), dtype=bool)
    for row, valid, first, charged in zip(rows, validity, trace["first_visit"], trace["sim_time_ms"]):
        if row == UNNAMED_REPEAT:
            # served from the cache: no time, no value of its own; which failure an invalid one had is not kept,
            # and every invalidity but "constraints" makes the package record the same (nothing but the count)
            records.append({"invalidity": "correct" if valid else "runtime",
                            "times": dict.fromkeys(T4_TIME_KEYS.values(), 0.0),
                            "measurements": [{"name": objective, "value": math.nan}]})
            continue
        if row < 0:  # a constraint-violating proposal (constraint-unaware pymoo variants)
            records.append({"invalidity": "constraints", "times": {}, "measurements": []})
            continue
        t = index.times_ms[row] if first else np.zeros(len(T4_TIME_KEYS))
        elapsed += float(t.sum())
        if not math.isclose(elapsed, float(charged), rel_tol=1e-9, abs_tol=1e-9):
            raise ValueError(f"trace clock {charged} ms disagrees with the space's times ({elapsed} ms) at row {row}")
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
    named = distinct.notna().all(axis=1).to_numpy()
    rows = np.full(len(distinct), -1, dtype=np.intp)
    # in the table's types: a run file whose rows miss some configurations reads integer parameters as floats
    typed = distinct[named].astype({c: index.dtypes[c] for c in distinct.columns if c in index.dtypes})
    rows[named] = [index.rows.get(_key(tuple(c)), -1) for c in typed.itertuples(index=False)]
    rows = rows[codes]
    rows[unnamed_repeats(runs, param_names)] = UNNAMED_REPEAT
    return rows


def results_arrays(runs: pd.DataFrame, index: SpaceIndex, param_names: list[str]) -> dict[str, np.ndarray] | None:
    """The arrays the package's `runner.write_results` makes of `trace_records` of every repetition, made on arrays.

    Same shapes, values and NaNs (tested against `write_results` on real runs): per evaluation the
    count from 1; nothing else for a constraint-violating proposal; the three times (s) of a first
    visit and zeros for a repeat, their sum accumulated over the run; the objective value of a
    valid configuration and its running minimum. The package cuts every run to twice the mean
    length when the longest is longer, as here. None when the package would choose another
    dtype (more than 10^8 entries): then its own function must run.
    """
    return stack_repetitions(repetition_arrays(runs, index, param_names))


def repetition_arrays(runs: pd.DataFrame, index: SpaceIndex, param_names: list[str]) -> list[dict[str, np.ndarray]]:
    """Each repetition's columns of `results_arrays` (in repetition order), full length, before the package's cut.

    `stack_repetitions` of any list of them is `results_arrays` of the runs those repetitions are, in that
    order, so a resample of runs is stacked without looking its evaluations up again (`resampled_scores`).
    """
    from autotuning_methodology.validators import kernel_tuner_error_value

    rows_of = record_rows(runs, index, param_names) if len(runs) else np.zeros(0, dtype=np.intp)
    keys = len(T4_TIME_KEYS)
    out = []
    for _, frame in runs.assign(_row=rows_of).groupby("repetition", sort=True):
        rows = frame["_row"].to_numpy()
        first = frame["first_visit"].to_numpy(dtype=bool)
        charged = frame["sim_time_ms"].to_numpy(dtype=float)
        named = rows >= 0
        known = named | (rows == UNNAMED_REPEAT)  # in the table: charged (nothing, for a repeat), best carried on
        safe = np.where(named, rows, 0)
        times_ms = np.where((named & first)[:, None], index.times_ms[safe], 0.0)
        elapsed = np.cumsum(times_ms.sum(axis=1))
        tolerance = np.maximum(1e-9 * np.maximum(np.abs(elapsed), np.abs(charged)), 1e-9)
        bad = known & (np.abs(elapsed - charged) > tolerance)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"trace clock {charged[i]} ms disagrees with the space's times ({elapsed[i]} ms) "
                             f"at row {rows[i]}")
        times_s = times_ms / 1e3
        step = times_s[:, 0]
        for k in range(1, keys):
            step = step + times_s[:, k]  # the package's sum of the keys, left to right
        clock = np.cumsum(np.where(known, step, 0.0))
        value = np.where(named & (index.status[safe] == STATUS_OK), index.values[safe], np.nan)
        value = np.where(value == kernel_tuner_error_value, np.nan, value)
        performance = 0 + value  # the package's sum of one key
        out.append({
            "fevals_results": np.arange(1, len(rows) + 1, dtype=float),
            "objective_time_results_per_key": np.where(known[None, :], times_s.T, np.nan),
            "objective_time_results": np.where(known, clock, np.nan),
            "objective_performance_results_per_key": value,
            "objective_performance_results": performance,
            # a constraint-violating proposal records no best (the package skips it); others carry it on
            "objective_performance_best_results": np.where(known, np.fmin.accumulate(performance), np.nan),
        })
    return out


def stack_repetitions(reps: Sequence[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray] | None:
    """`results_arrays` of the repetitions `repetition_arrays` made, one column each in the order given: every run
    cut to twice the mean length when the longest is longer (the package's rule); None above 10^8 entries."""
    lengths = [len(r["fevals_results"]) for r in reps]
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
    for r, rep in enumerate(reps):
        n = min(lengths[r], longest)
        for name in ("fevals_results", "objective_time_results", "objective_performance_results",
                     "objective_performance_best_results"):
            out[name][:n, r] = rep[name][:n]
        out["objective_time_results_per_key"][:, :n, r] = rep["objective_time_results_per_key"][:, :n]
        out["objective_performance_results_per_key"][0, :n, r] = rep["objective_performance_results_per_key"][:n]
    return out


def strategy_curve(name: str, runs: pd.DataFrame, space: Space, objective: str, workdir: str | Path,
                   index: SpaceIndex | None = None):
    """The package's StochasticOptimizationAlgorithm curve of all repetitions in `runs`.

    The package's result arrays come from `results_arrays` (the package's `write_results` when
    that declines, or when TSB_STOCK turns the fast path's `scoring` group off; both pinned in
    `analysis.fastpath.pins`).
    """
    from autotuning_methodology.runner import write_results

    index = index or SpaceIndex.of(space, objective)
    names = list(space.parameters)
    fast = fastpath.enabled("scoring")
    arrays = results_arrays(runs, index, names) if fast else None
    if arrays is not None:
        return arrays_curve(name, arrays, space, objective, workdir)
    description = _description(name, space, objective, workdir)
    repeated = [trace_records(frame, index, names, objective) for _, frame in runs.groupby("repetition", sort=True)]
    with uncompressed_result_files() if fast else contextlib.nullcontext():
        write_results(repeated, description)
    return _curve(description)


def arrays_curve(name: str, arrays: Mapping[str, np.ndarray], space: Space, objective: str, workdir: str | Path):
    """The package's StochasticOptimizationAlgorithm curve of result arrays made by `results_arrays` or
    `stack_repetitions` (stored in `workdir`/`name`, uncompressed)."""
    description = _description(name, space, objective, workdir)
    with uncompressed_result_files():
        description.set_results(dict(arrays))
    return _curve(description)


def _description(name: str, space: Space, objective: str, workdir: str | Path):
    """The package's ResultsDescription of a strategy's runs on `space`, stored under `workdir`/`name`."""
    from autotuning_methodology.caching import ResultsDescription

    return ResultsDescription(
        run_folder=Path(workdir) / name, application_name=space.kernel, device_name=space.device,
        group_name=name, group_display_name=name, stochastic=True,
        objective_time_keys=list(T4_TIME_KEYS.values()), objective_performance_keys=[objective],
        minimization=True,
    )


def _curve(description: Any):
    from autotuning_methodology.curves import StochasticOptimizationAlgorithm

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
    fevals_range = np.arange(fevals_start, fevals_end + 1)
    baseline = calculated_baseline(stats, settings.baseline)
    names = list(curves)
    fast: contextlib.AbstractContextManager = contextlib.nullcontext()
    if fastpath.enabled("bagging"):
        # lazy: the replicas import scikit-learn (with the package, about 2.7 s), which only a score needs, and
        # the Snakefile imports this module (through hyperparams.single_objective)
        from analysis.fastpath import bagging

        fast = bagging.patched()
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        with fast:
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


# `sample` of a row of `resampled_scores`
BOOTSTRAP, HALF = "bootstrap", "half"


def resampled_scores(space: Space, objective: str, runs: Mapping[str, pd.DataFrame], settings: ScoreSettings,
                     seeds: Mapping[str, int], resamples: int, prepared: tuple[Any, SpaceIndex, Any] | None = None
                     ) -> pd.DataFrame:
    """Each strategy's score on resamples of its runs, and on each half of them, by the package's scoring.

    The independent unit is a run: a bootstrap resample draws as many runs as the strategy has, with
    replacement, and is scored as `score_runs` scores the runs (the same settings, baseline, and the
    package's rule that a curve stops where fewer than half of the runs go on), with the package's
    bagging seeded per resample. Each strategy draws from its own generator (`seeds`), so two
    strategies' resamples are independent and resample b of one can be paired with resample b of
    another (the interval of a gain). The halves are the first and the second half of the runs in
    repetition order (n // 2 runs each): the score on fewer runs, the same rule.

    Rows: strategy, sample (`BOOTSTRAP` or `HALF`), resample (0.. within the sample), runs (runs scored,
    distinct or not) and score. `prepared` (the space's statistics, its index and, for a single strategy, its
    `repetition_arrays` or None) skips computing them again (`score_with_resamples`).
    """
    rows = []
    with tempfile.TemporaryDirectory(prefix="tsb-resample-") as tmp:
        if prepared is None:
            t4 = write_space_t4(space, objective, Path(tmp) / "space_T4.json")
            stats = space_statistics(t4, space.kernel, space.device, objective)
            index = SpaceIndex.of(space, objective)
        else:
            stats, index, _ = prepared
        names = list(space.parameters)
        for name, frame in runs.items():
            rng = np.random.default_rng(seeds[name])
            groups = dict(list(frame.groupby("repetition", sort=True)))
            labels = list(groups)
            if prepared is not None and len(runs) == 1:
                reps = prepared[2]
            else:
                reps = repetition_arrays(frame, index, names) if fastpath.enabled("scoring") else None
            n = len(labels)
            draws = [(BOOTSTRAP, b, rng.integers(0, n, size=n)) for b in range(resamples)]
            draws += [(HALF, h, np.arange(h * (n // 2), (h + 1) * (n // 2))) for h in range(2) if n // 2]
            for sample, number, picked in draws:
                folder = Path(tmp) / f"{sample}{number}"
                arrays = stack_repetitions([reps[i] for i in picked]) if reps is not None else None
                if arrays is None:  # the package's own write_results, on the runs relabelled in draw order
                    chosen = pd.concat([groups[labels[i]].assign(repetition=k) for k, i in enumerate(picked)],
                                       ignore_index=True)
                    curve = strategy_curve(name, chosen, space, objective, folder, index)
                else:
                    curve = arrays_curve(name, arrays, space, objective, folder)
                shutil.rmtree(folder)
                scored = score_space(stats, {name: curve}, settings, int(rng.integers(2**32)))
                rows.append({"strategy": name, "sample": sample, "resample": number, "runs": len(picked),
                             "score": scored["strategies"][name]["score"]})
    return pd.DataFrame(rows, columns=["strategy", "sample", "resample", "runs", "score"])


def space_scoring(space: Space, objective: str, folder: str | Path) -> tuple[Any, SpaceIndex]:
    """A space's statistics (from its T4 file, written in `folder`) and index: what scoring any runs on it needs,
    made once for many strategies (`score_with_resamples`' `prepared`)."""
    t4 = write_space_t4(space, objective, Path(folder) / "space_T4.json")
    return space_statistics(t4, space.kernel, space.device, objective), SpaceIndex.of(space, objective)


def score_with_resamples(space: Space, objective: str, name: str, runs: pd.DataFrame, settings: ScoreSettings,
                         seed: int, resample_seed: int, resamples: int,
                         prepared: tuple[Any, SpaceIndex] | None = None) -> tuple[dict[str, Any], np.ndarray]:
    """One strategy's `score_runs` result on its runs, and its scores on `resamples` bootstrap resamples of them
    (`resampled_scores`' bootstrap rows, drawn from `resample_seed`), sharing the space's statistics and the
    runs' result arrays between them: the leaderboard's per-space score and interval in one pass. `prepared`:
    `space_scoring`'s result for this space and objective (else made here)."""
    with tempfile.TemporaryDirectory(prefix="tsb-score-") as tmp:
        stats, index = prepared if prepared is not None else space_scoring(space, objective, tmp)
        reps = repetition_arrays(runs, index, list(space.parameters)) if fastpath.enabled("scoring") else None
        arrays = stack_repetitions(reps) if reps is not None else None
        if arrays is None:
            curve = strategy_curve(name, runs, space, objective, tmp, index)
        else:
            curve = arrays_curve(name, arrays, space, objective, tmp)
        result = score_space(stats, {name: curve}, settings, seed)
        boot = np.array([])
        if resamples:
            frame = resampled_scores(space, objective, {name: runs}, settings, {name: resample_seed}, resamples,
                                     prepared=(stats, index, reps))
            boot = frame.loc[frame["sample"] == BOOTSTRAP, "score"].to_numpy(dtype=float)
        return result, boot
