"""The constraint-aware single-objective study, its budget and scores (docs/constraint-aware.md; seed 001 §V).

Every strategy's runs on a space (`analysis.simulate.constraint_aware.run`) are scored with the auto-tuning
methodology's performance score (`analysis.indicators.methodology`, through `autotuning_methodology`), on the
objective the runs tuned (`analysis.simulate.constraint_aware.objective_values`). Two calls from the rules:
`space_budget` (rule ca_budget: the methodology's time budget of a space, written once for all its strategies'
runs), `score` (rule ca_score: every strategy on one space) and `resample` (rule ca_resample: one strategy's
score on bootstrap resamples of its runs and on each half of them, for the intervals of the tables). The
tables over all spaces are `analysis.tables.constraint_aware`.

Each space belongs to a group (config `spaces[].group`; by default `time` or `accuracy threshold`
by what it is tuned on, `space_group`), a column of the scores the tables summarise by.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.indicators.methodology import resampled_scores, score_runs
from analysis.io import write_json, write_parquet
from analysis.simulate import derive_seed
from analysis.simulate.constraint_aware import budget_identity, tuned_space
from analysis.spaces.methodology import ScoreSettings, budget_for_space
from analysis.spaces.space import STATUS_OK, Space

log = logging.getLogger(__name__)

# Default groups of a space (config spaces[].group null): by what it is tuned on.
TIME_GROUP, THRESHOLD_GROUP = "time", "accuracy threshold"


def space_group(group: str | None, threshold: Mapping[str, Any] | None) -> str:
    """The group of a space in the study tables: the configured one, else `accuracy threshold` for a space
    with a threshold (tuned on time_decay) and `time` for one tuned on time."""
    if group:
        return group
    return THRESHOLD_GROUP if threshold else TIME_GROUP


def feasible_fraction(space: Space, threshold: Mapping[str, Any] | None) -> float:
    """Share of measured configurations whose error is below the threshold (1 without one)."""
    measured = space.table["status"] == STATUS_OK
    if not threshold:
        return 1.0
    error = space.table.loc[measured, space.objective(threshold["error"]).column].to_numpy(dtype=float)
    with np.errstate(divide="ignore"):
        return float(np.mean(np.log10(error) < float(threshold["tau"])))


def space_budget(space_parquet: str | Path, space_meta: str | Path, threshold: Mapping[str, Any] | None,
                 settings: ScoreSettings, out: str | Path) -> None:
    """The methodology's time budget of one space (`budget_for_space`), written once for all its strategies
    with the identity a run checks (`analysis.simulate.constraint_aware.read_budget`)."""
    space, objective = tuned_space(space_parquet, space_meta, threshold)
    limits = budget_for_space(space, objective, settings)
    write_json({**limits, **budget_identity(objective, threshold, settings)}, out)


def score(space_parquet: str | Path, space_meta: str | Path, threshold: Mapping[str, Any] | None,
          strategies: Mapping[str, Mapping[str, Any]], run_files: Mapping[str, str | Path],
          settings: ScoreSettings, out_scores: str | Path, out_curves: str | Path, group: str | None = None) -> None:
    """Score every strategy's runs on one space; write per-strategy scores and curves.

    `group` is the space's configured group (None: the default of `space_group`), a column of the scores.
    """
    space, objective = tuned_space(space_parquet, space_meta, threshold)
    runs = {name: pd.read_parquet(path) for name, path in run_files.items()}
    label = f"{space.device}/{space.kernel}"
    seed = derive_seed(space=label, objective=objective, purpose="methodology score")
    result, limits = score_runs(space, objective, runs, settings, seed)
    counts = space.meta.get("counts", {})
    density = counts.get("constrained", len(space.table)) / counts.get("cartesian", len(space.table))
    group = space_group(group, threshold)
    rows, curves = [], []
    span = result["time_range_s"]
    fraction = np.linspace(0.0, 1.0, len(span))  # the time range is a linspace: the same grid on every space
    for name, scored in result["strategies"].items():
        spec = strategies[name]
        frame = runs[name]
        per_run = frame.groupby("repetition").agg(stopped=("stopped_early", "first"), reason=("stop_reason", "first"),
                                                  distinct=("first_visit", "sum"), attempts=("attempts", "first"))
        rows.append({
            "space": label, "kernel": space.kernel, "device": space.device, "objective": objective,
            "threshold": threshold.get("tau") if threshold else math.nan,
            "feasible_fraction": feasible_fraction(space, threshold), "density": density,
            "strategy": name, "algorithm": spec["algorithm"], "constraint_aware": bool(spec["constraint_aware"]),
            "score": scored["score"], "real_fraction": scored["real_fraction"], "runs": len(per_run),
            "stopped_early": int(per_run["stopped"].sum()),
            "stop_reasons": ";".join(f"{k}:{v}" for k, v in sorted(per_run["reason"].value_counts().items())),
            "mean_distinct_evaluations": float(per_run["distinct"].mean()),
            "rejected_attempts": int(per_run["attempts"].sum() - len(per_run)),
            "time_limit_s": limits["time_limit_ms"] / 1e3, "cutoff_fevals": limits["fevals_end"],
            "group": group,
        })
        curves.append(pd.DataFrame({
            "space": label, "algorithm": spec["algorithm"], "constraint_aware": bool(spec["constraint_aware"]),
            "time_fraction": fraction, "time_s": span, "score": scored["curve"],
            "score_lower": scored["lower"], "score_upper": scored["upper"],
        }))
    write_parquet(pd.DataFrame(rows), out_scores)
    write_parquet(pd.concat(curves, ignore_index=True), out_curves)
    log.info("%s: %s", label, {r["strategy"]: round(r["score"], 3) for r in rows})


def resample_seed(label: str, objective: str, strategy: str) -> int:
    """The seed of a strategy's score resamples on a space ("device/kernel") tuned on `objective`."""
    return derive_seed(space=label, objective=objective, strategy=strategy, purpose="methodology score resamples")


def resample(space_parquet: str | Path, space_meta: str | Path, threshold: Mapping[str, Any] | None, strategy: str,
             run_file: str | Path, settings: ScoreSettings, resamples: int, out: str | Path) -> None:
    """One strategy's score on `resamples` bootstrap resamples of its runs on one space, and on each half of them
    (`analysis.indicators.methodology.resampled_scores`), seeded from the space and the strategy: the rows the
    tables' score and gain intervals and the run-count example come from."""
    space, objective = tuned_space(space_parquet, space_meta, threshold)
    label = f"{space.device}/{space.kernel}"
    seed = resample_seed(label, objective, strategy)
    rows = resampled_scores(space, objective, {strategy: pd.read_parquet(run_file)}, settings, {strategy: seed},
                            resamples)
    rows.insert(0, "space", label)
    write_parquet(rows, out)
    boot = rows[rows["sample"] == "bootstrap"]["score"]
    log.info("%s %s: %d resamples, 95 %% range %s", label, strategy, len(boot),
             np.round(np.percentile(boot, [2.5, 97.5]), 3) if len(boot) else "-")
