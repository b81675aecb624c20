"""The `indicators` stage: the indicators of `analysis.indicators.registry` (anytime IGD+, final hypervolume)
of every run in one run file.

Objectives are normalised with the true front Z of the run's objective set:
(y - ideal) / (nadir - ideal), signs flipped for higher-is-better objectives, and a range
of 1 where nadir equals ideal (docs/study.md, "Objectives and fronts"). The anytime curve is indexed by k, the number
of distinct configurations evaluated (the budget's unit): the value at k covers every
evaluation up to and including the k-th distinct one. A configuration that failed, or
whose value is NaN or infinite in any objective of the set, yields no point. A run that
stopped before its budget (Kernel Tuner's GA can) keeps its last value for the
remaining k, marked by `evaluated` < k.

Where the space's table is given, the simulated clock is split into what it charged for compiling,
verifying and benchmarking the configurations (`PART_COLUMNS`): each first visit of a configuration
is charged the three times of its row in the space table (nothing for a proposal that is not in the
table: an infeasible one, which the clock charges nothing either). The parts must add up to the
clock (`sim_time_ms`) at every step, to rounding, or the run file is refused.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.errors import InputError
from analysis.indicators.registry import INDICATORS
from analysis.io import write_parquet
from analysis.objectives import EVALUATION_TIME_COLUMNS
from analysis.spaces.pareto import Front

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NormalisedFront:
    """Z of one space and objective set: the stored front (which defines the normalisation) and
    its points normalised."""

    front: Front
    points: np.ndarray  # normalised, unique

    @property
    def objectives(self) -> tuple[str, ...]:
        return self.front.objectives

    def normalise(self, values: np.ndarray) -> np.ndarray:
        """Minimisation-form normalised values; rows stay as given (NaN stays NaN)."""
        return self.front.normalise(values)


def load_front(space_meta: str | Path, fronts_parquet: str | Path, fronts_json: str | Path,
               objective_set: str) -> NormalisedFront:
    """Read Z of `objective_set` as written by the `fronts` stage."""
    summary = json.loads(Path(fronts_json).read_text())
    sets = summary.get("sets", {})
    if objective_set not in sets:
        raise InputError(fronts_json, f"no front for objective set '{objective_set}' (it has {sorted(sets)})",
                         field="sets")
    s = sets[objective_set]
    meta = json.loads(Path(space_meta).read_text())
    columns = {o["name"]: o["column"] for o in meta["objectives"]}
    objectives = tuple(s["objectives"])
    table = pd.read_parquet(fronts_parquet)
    rows = table[table["objective_set"] == objective_set]
    values = rows[[columns[o] for o in objectives]].to_numpy(dtype=float)
    front = Front(objective_set, objectives, np.unique(values, axis=0), np.array(s["ideal"], dtype=float),
                  np.array(s["nadir"], dtype=float), tuple(s["directions"]), rows["row"].to_numpy(),
                  excluded_failed=s["excluded"]["failed"], excluded_nonfinite=s["excluded"]["nonfinite"])
    points = np.unique(front.normalise(values), axis=0)
    if len(points) != s["size"]:
        raise InputError(fronts_parquet, f"{len(points)} distinct front vectors for '{objective_set}', "
                         f"but {fronts_json} says {s['size']}", field="objective_set")
    return NormalisedFront(front, points)


def run_indicators(trace: pd.DataFrame, front: NormalisedFront, budget: int) -> tuple[pd.DataFrame, dict]:
    """Curve (k = 1..budget) and final values of one run's trace (rows of one repetition)."""
    trace = trace.sort_values("step")
    first = trace["first_visit"].to_numpy(dtype=bool)
    curve, final = _run_curve(trace[_objective_columns(trace, front)].to_numpy(dtype=float)[first],
                              trace["valid"].to_numpy(dtype=bool)[first],
                              trace["sim_time_ms"].to_numpy(dtype=float)[first], front, budget)
    return pd.DataFrame(curve), final


def _objective_columns(runs: pd.DataFrame, front: NormalisedFront) -> list[str]:
    """The trace columns of the front's objectives; KeyError naming those the runs lack."""
    cols = [f"objective.{o}" for o in front.objectives]
    missing = [c for c in cols if c not in runs.columns]
    if missing:
        raise KeyError(f"trace lacks columns {missing}")
    return cols


def _run_curve(values: np.ndarray, valid: np.ndarray, times: np.ndarray, front: NormalisedFront,
               budget: int) -> tuple[dict[str, np.ndarray], dict]:
    """Curve columns (k, evaluated, each anytime indicator, eval_time_ms) and final values (evaluations,
    valid_evaluations, each indicator, eval_time_ms) of one run, from the objective values, validity and
    simulated clock of its first visits in step order. Indicators come in the order of `INDICATORS`."""
    usable = valid & np.isfinite(values).all(axis=1)
    points = np.where(usable[:, None], front.normalise(values), np.nan)
    n = min(len(points), budget)
    points, usable = points[:n], usable[:n]
    times = times[:n]
    k = np.arange(1, budget + 1)

    def pad(a: np.ndarray, empty: float) -> np.ndarray:
        """`a` (n values) to the budget: its last value repeated, or `empty` throughout when n is 0."""
        return np.concatenate([a, np.full(budget - n, a[-1] if n else empty)])

    columns = {"k": k, "evaluated": np.minimum(k, n)}
    final: dict[str, float] = {"evaluations": int(n), "valid_evaluations": int(usable.sum())}
    for name, indicator in INDICATORS.items():
        if indicator.anytime:  # an anytime indicator's curve is an array (asarray returns it as it is)
            columns[name] = pad(np.asarray(indicator.function(points, front.points)) if n else np.empty(0),
                                indicator.empty)
            final[name] = float(columns[name][-1])
        else:
            final[name] = float(indicator.function(points, front.points))
    columns["eval_time_ms"] = pad(times, np.nan)
    final["eval_time_ms"] = float(columns["eval_time_ms"][-1])
    return columns, final


# The parts of a run's evaluation time (eval_time_ms) in the finals, by the space table's column they sum;
# the curves carry the compile part per k (CURVE_COMPILE), the one a compile-cost sensitivity rescales.
PART_COLUMNS = {"eval_compile_ms": EVALUATION_TIME_COLUMNS["compile_time"],
                "eval_verification_ms": EVALUATION_TIME_COLUMNS["verification_time"],
                "eval_benchmark_ms": EVALUATION_TIME_COLUMNS["benchmark_time"]}
CURVE_COMPILE = "eval_compile_ms"
# |sum of the parts - clock| allowed at a step: the clock adds the three per step, the parts each add one
CLOCK_RTOL, CLOCK_ATOL_MS = 1e-9, 1e-6


def charged_parts(runs: pd.DataFrame, space_table: pd.DataFrame, parameters: Sequence[str]) -> np.ndarray:
    """Per row of a run file, the compile, verification and benchmark time (ms, `PART_COLUMNS` order) of the
    row's configuration in the space table; 0 for a configuration the table lacks (an infeasible proposal).
    A parameter column the run file lacks is a KeyError naming it."""
    missing = [f"param.{p}" for p in parameters if f"param.{p}" not in runs.columns]
    if missing:
        raise KeyError(f"run file lacks parameter columns {missing}")
    table_keys = pd.MultiIndex.from_frame(space_table[list(parameters)])
    run_params = runs[[f"param.{p}" for p in parameters]].set_axis(list(parameters), axis=1)
    # a row without parameters (a repeat an archive does not name) is a repeat: it charges nothing; the others in
    # the table's types (a column that misses values reads integers as floats)
    named = run_params.notna().all(axis=1).to_numpy()
    row = np.full(len(runs), -1, dtype=np.intp)
    row[named] = table_keys.get_indexer(pd.MultiIndex.from_frame(
        run_params[named].astype(space_table[list(parameters)].dtypes.to_dict())))
    times = space_table[list(PART_COLUMNS.values())].to_numpy(dtype=float)
    return np.where((row >= 0)[:, None], times[np.maximum(row, 0)], 0.0)


def _parts_of_run(parts: np.ndarray, times: np.ndarray, n: int, budget: int, rep) -> tuple[np.ndarray, dict]:
    """The cumulative compile part per k (padded to the budget like the clock) and the three parts at the run's
    last counted evaluation, from the per-first-visit `parts` of one run in step order; ValueError where their
    sum leaves the clock `times`."""
    cumulative = np.cumsum(parts, axis=0)
    total = cumulative.sum(axis=1)
    off = ~np.isclose(total, times, rtol=CLOCK_RTOL, atol=CLOCK_ATOL_MS)
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise ValueError(f"repetition {rep}: compile + verification + benchmark of the space's table sum to "
                         f"{total[i]!r} ms at its distinct evaluation {i + 1}, but sim_time_ms is {times[i]!r}")
    compile_curve = np.concatenate([cumulative[:n, 0], np.full(budget - n, cumulative[n - 1, 0] if n else np.nan)])
    final = {name: float(cumulative[n - 1, j]) if n else float("nan") for j, name in enumerate(PART_COLUMNS)}
    return compile_curve, final


def indicators(runs: pd.DataFrame, front: NormalisedFront, budget: int, parts: np.ndarray | None = None
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Curves and finals of every repetition in a run file (repetitions ascending; each run's rows in step
    order, which `step` numbers uniquely within a run).

    `parts` (`charged_parts` of the run file's rows), where given, adds the parts of the evaluation time: the
    compile part per k to the curves (`CURVE_COMPILE`), all three to the finals (`PART_COLUMNS`); ValueError
    where they do not sum to the clock."""
    cols = _objective_columns(runs, front)
    repetition = runs["repetition"].to_numpy()
    step = runs["step"].to_numpy()
    first = runs["first_visit"].to_numpy(dtype=bool)
    values = runs[cols].to_numpy(dtype=float)
    valid = runs["valid"].to_numpy(dtype=bool)
    times = runs["sim_time_ms"].to_numpy(dtype=float)
    seeds = runs["seed"].to_numpy()
    stopped = runs["stopped_early"].to_numpy() if "stopped_early" in runs else None
    reps = np.unique(repetition)
    if len(reps) == 0:
        raise ValueError("the run file holds no runs")
    curves: dict[str, list[np.ndarray]] = {}
    finals = []
    for rep in reps:
        rows = np.flatnonzero(repetition == rep)  # the run's rows in file order
        ordered = rows[np.argsort(step[rows], kind="stable")]
        ordered = ordered[first[ordered]]
        curve, final = _run_curve(values[ordered], valid[ordered], times[ordered], front, budget)
        if parts is not None:
            curve[CURVE_COMPILE], split = _parts_of_run(parts[ordered], times[ordered], final["evaluations"],
                                                        budget, rep)
            final.update(split)
        for key, column in {"repetition": np.full(budget, rep), **curve}.items():
            curves.setdefault(key, []).append(column)
        finals.append({"repetition": rep, "seed": int(seeds[rows[0]]), **final,
                       "stopped_early": bool(stopped[rows[0]]) if stopped is not None else False})
    return pd.DataFrame({key: np.concatenate(parts) for key, parts in curves.items()}), pd.DataFrame(finals)


def run_file_identity(path: str | Path, algorithms: Mapping[str, str]) -> dict:
    """Setting, algorithm and budget of a run file .../{setting}/b{budget}.parquet."""
    path = Path(path)
    m = re.fullmatch(r"b(\d+)\.parquet", path.name)
    setting = path.parent.name
    if not m or setting not in algorithms:
        raise InputError(path, f"not a run file of a known setting (.../<setting>/b<budget>.parquet; settings: "
                         f"{', '.join(algorithms)})")
    return {"setting": setting, "algorithm": algorithms[setting], "budget": int(m.group(1))}


def run(run_files: Sequence[str | Path], algorithms: Mapping[str, str], space_parquet: str | Path,
        space_meta: str | Path, fronts_parquet: str | Path, fronts_json: str | Path, objective_set: str,
        out_curve: str | Path, out_final: str | Path) -> None:
    """Indicators of every run file of one space and objective set, with the parts of each run's evaluation
    time (from the space's table), written atomically as two tables (curves and finals) with identity columns
    device, kernel, objective_set, setting, algorithm, budget."""
    front = load_front(space_meta, fronts_parquet, fronts_json, objective_set)
    meta = json.loads(Path(space_meta).read_text())
    table = pd.read_parquet(space_parquet)
    absent = [c for c in [*meta["parameters"], *PART_COLUMNS.values()] if c not in table.columns]
    if absent:
        raise InputError(space_parquet, f"lacks columns {absent}", field=absent[0])
    curves, finals = [], []
    for path in run_files:
        ident = {"device": meta["device"], "kernel": meta["kernel"], "objective_set": objective_set,
                 **run_file_identity(path, algorithms)}
        runs = pd.read_parquet(path)
        try:
            parts = charged_parts(runs, table, meta["parameters"])
        except KeyError as exc:
            raise InputError(path, str(exc).strip("'\""), field="parameter columns") from None
        try:
            curve, final = indicators(runs, front, ident["budget"], parts)
        except KeyError as exc:
            raise InputError(path, str(exc).strip("'\""), field="objective columns") from None
        except ValueError as exc:
            raise InputError(path, f"{exc} (space table {space_parquet})", field="sim_time_ms") from None
        for frame in (curve, final):
            for i, (col, value) in enumerate(ident.items()):
                frame.insert(i, col, value)
        curves.append(curve)
        finals.append(final)
        log.info("%s: %d runs against |Z| = %d; final medians: %s", path, len(final), len(front.points),
                 ", ".join(f"{name} {final[name].median():.6g}" for name in INDICATORS))
    write_parquet(pd.concat(curves, ignore_index=True), out_curve)
    write_parquet(pd.concat(finals, ignore_index=True), out_final)

