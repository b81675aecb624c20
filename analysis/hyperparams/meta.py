"""Meta-strategies over a tuned grid (seed 003 §3; docs/hyperparameters-so.md, "Meta-strategies").

Seed 003 makes hyperparameter tuning affordable by letting Kernel Tuner's own optimisers search a grid instead of
scoring every configuration (`kernel_tuner.hyper`: each configuration a meta-strategy proposes is scored through
the methodology). Every configuration of our grids is scored already, so a meta-strategy's search is simulated the
way Kernel Tuner simulates a kernel's: the grid becomes a search space whose parameters are the hyperparameters
and whose objective is the configuration's training score (maximised), and the suite's engine runs the
meta-strategy on it in simulation mode (each evaluation charged the same). What a meta-strategy costs is the
number of distinct configurations it scores before it first scores one within `tolerance` of the grid's best
training score; the grid's own cost is all of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from analysis.io import write_csv, write_parquet, write_text
from analysis.markdown import to_markdown
from analysis.objectives import Objective
from analysis.simulate.engine import simulate_run
from analysis.simulate.jobs import space_data
from analysis.simulate.registry import resolve_options
from analysis.simulate.seeding import derive_seed
from analysis.spaces.space import STATUS_OK, Space

SCORE = Objective("score", "objective.score", "", "max", "a configuration's training score (the meta-objective)")
# every evaluation of the meta-space charges the same time, so a time limit would count evaluations
EVALUATION_MS = 1.0
PROPOSAL_CAP = 10  # proposals per grid configuration before a stalled meta-run is stopped

COLUMNS = ["algorithm", "meta_strategy", "meta_algorithm", "seed_index", "grid_size", "scored_configurations",
           "evaluations_to_reach", "reached", "best_score", "best_found", "stop_reason"]


def meta_space(algorithm: str, grid: Mapping[str, Sequence[Any]], scores: pd.DataFrame) -> Space:
    """The grid of `algorithm` as a search space: a configuration per grid row of `scores` (configuration, options
    as JSON, training_score), the training score its one objective; configurations without a score are failed."""
    rows = scores[scores["in_grid"]]
    options = [json.loads(text) for text in rows["options"]]
    table = pd.DataFrame({name: [o[name] for o in options] for name in grid})
    values = rows["training_score"].to_numpy(dtype=float)
    table[SCORE.column] = values
    table["status"] = np.where(np.isfinite(values), STATUS_OK, "error")
    for column in ("compile_time_ms", "verification_time_ms"):
        table[column] = 0.0
    table["benchmark_time_ms"] = EVALUATION_MS
    return Space(kernel="hyperparameters", device=algorithm, parameters={k: list(v) for k, v in grid.items()},
                 constraints=[], objectives=[SCORE], table=table.reset_index(drop=True))


def evaluations_to_reach(found: Sequence[float], target: float) -> int | None:
    """How many distinct configurations a meta-run scored until the first one at or above `target` (None: never)."""
    for i, value in enumerate(found):
        if np.isfinite(value) and value >= target:
            return i + 1
    return None


def search(algorithm: str, grid: Mapping[str, Sequence[Any]], scores: pd.DataFrame,
           meta: Mapping[str, Mapping[str, Any]], seeds: int, tolerance: float) -> pd.DataFrame:
    """Each meta-strategy (name -> {algorithm, options}) run `seeds` times on the grid of `algorithm`, with a budget
    of the whole grid: per run, the distinct configurations it scored until one within `tolerance` of the grid's
    best (COLUMNS)."""
    space = meta_space(algorithm, grid, scores)
    data = space_data(space, [SCORE.name])
    size = len(space.table)
    best = float(np.nanmax(space.table[SCORE.column]))
    rows = []
    for name, spec in meta.items():
        options = resolve_options(spec["algorithm"], dict(spec.get("options") or {}))
        for index in range(seeds):
            seed = derive_seed(purpose="meta-strategy", algorithm=algorithm, grid=dict(grid),
                               meta_algorithm=spec["algorithm"], options=options, repetition=index)
            trace = simulate_run(data, spec["algorithm"], options, size, seed, max_proposals=PROPOSAL_CAP * size)
            columns = trace.columns()
            first = np.asarray(columns["first_visit"], dtype=bool)
            found = np.asarray(columns[f"objective.{SCORE.name}"], dtype=float)[first]
            reach = evaluations_to_reach(found, best - tolerance)
            rows.append({"algorithm": algorithm, "meta_strategy": name, "meta_algorithm": spec["algorithm"],
                         "seed_index": index, "grid_size": size, "scored_configurations": int(first.sum()),
                         "evaluations_to_reach": reach if reach is not None else np.nan,
                         "reached": reach is not None, "best_score": best,
                         "best_found": float(np.nanmax(found)) if np.isfinite(found).any() else np.nan,
                         "stop_reason": trace.meta["stop_reason"]})
    return pd.DataFrame(rows, columns=COLUMNS)


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm and meta-strategy: how many of its runs reached the target, and the evaluations they needed
    (median, mean, most; a run that never reached counts as the grid's size in `mean_or_grid`), beside the grid."""
    rows = []
    for (algorithm, name), mine in runs.groupby(["algorithm", "meta_strategy"], sort=False):
        needed = mine["evaluations_to_reach"].to_numpy(dtype=float)
        size = int(mine["grid_size"].iloc[0])
        reached = np.isfinite(needed)
        rows.append({"algorithm": algorithm, "meta_strategy": name, "meta_algorithm": mine["meta_algorithm"].iloc[0],
                     "grid_size": size, "runs": len(mine), "reached": int(reached.sum()),
                     "median_evaluations": float(np.median(needed[reached])) if reached.any() else np.nan,
                     "max_evaluations": float(needed[reached].max()) if reached.any() else np.nan,
                     "mean_or_grid": float(np.where(reached, needed, size).mean()),
                     "share_of_grid": float(np.where(reached, needed, size).mean() / size)})
    return pd.DataFrame(rows)


SUMMARY_DOCS = {
    "algorithm": "the tuned algorithm (whose grid is searched)",
    "meta_strategy": "the meta-strategy's name (config hyperparameters_so.meta.strategies)",
    "meta_algorithm": "the algorithm it runs, with Kernel Tuner's default options unless configured",
    "grid_size": "configurations of the grid (what scoring the whole grid costs)",
    "runs": "meta-runs (hyperparameters_so.meta.seeds), each with a budget of the whole grid",
    "reached": "runs that scored a configuration within hyperparameters_so.meta.tolerance of the grid's best "
               "training score",
    "median_evaluations": "median number of distinct configurations those runs scored until the first such one",
    "max_evaluations": "the most any of them needed",
    "mean_or_grid": "mean over all runs, a run that never reached counted as the whole grid",
    "share_of_grid": "mean_or_grid / grid_size: the share of the grid's cost the meta-strategy needs",
}


def tables(grid_csv: str, grids: Mapping[str, Mapping[str, Sequence[Any]]], meta: Mapping[str, Any],
           outputs: Sequence[str]) -> None:
    """Search every grid of tables/hyperparameters_so.csv with every meta-strategy; write the summary (CSV and
    Markdown) and the runs (`outputs`: summary csv, md, runs parquet)."""
    scores = pd.read_csv(grid_csv)
    runs = pd.concat([search(algorithm, grid, scores[scores["algorithm"] == algorithm], meta["strategies"],
                             int(meta["seeds"]), float(meta["tolerance"])) for algorithm, grid in grids.items()],
                     ignore_index=True)
    table = summary(runs)
    csv, md, runs_out = outputs
    write_csv(table, csv)
    write_text(to_markdown(table, "Seed 003's meta-strategies over our grids", SUMMARY_DOCS), md)
    write_parquet(runs, runs_out)
