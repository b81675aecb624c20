"""The leaderboard's scores (docs/leaderboard.md): one entry's methodology score on each of its spaces.

Each entry is scored alone on each space (`score_with_resamples` with only its runs), with the package's
bagging seeded from the space alone, so that an entry's score never depends on which other entries the
leaderboard has (a new strategy adds rows and changes none) and the same runs get the same score under
any name. The interval of a score is the percentile interval of its score on bootstrap resamples of its
runs, drawn from a seed of the space and the entry (the constraint-aware study's rule). A space where any
run of the entry failed gets no score: the reason (the first failure's last line and the count) says why.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.indicators.methodology import score_with_resamples
from analysis.io import write_parquet
from analysis.simulate import derive_seed
from analysis.simulate.constraint_aware import tuned_space
from analysis.spaces.methodology import ScoreSettings
from analysis.spaces.space import Space

log = logging.getLogger(__name__)

SCORE_COLUMNS = ["entry", "space", "runs", "failed_runs", "score", "score_ci_low", "score_ci_high",
                 "score_resamples", "missing_reason", "budget_evaluations", "stopped_early", "stop_reasons",
                 "mean_distinct_evaluations", "rejected_attempts"]


SOURCES = ("runs", "constraint_aware", "hyperparameters_so")  # lb-score's --source


def entry_runs(source: str, run_files: Sequence[str | Path], spaces: Sequence[str], repetitions: int) -> pd.DataFrame:
    """One entry's runs on all its spaces, with the columns of `analysis.simulate.leaderboard.run`: its own runs
    file (`source` runs); the constraint-aware study's runs of the strategy, one file per space in `spaces`'
    order, cut to the first `repetitions` (`source` constraint_aware); or the final runs of one configuration of
    seed 003's tuning (rule so_final_run, one file of every final space), cut to the first `repetitions` on each
    of `spaces` (`source` hyperparameters_so: a run's seed depends on its repetition, so these are the runs a
    leaderboard job of that many repetitions would make)."""
    if source not in SOURCES:
        raise ValueError(f"unknown runs source {source!r}; valid: {', '.join(SOURCES)}")
    if source == "runs":
        (path,) = run_files
        return pd.read_parquet(path)
    if source == "hyperparameters_so":
        (path,) = run_files
        frame = pd.read_parquet(path)
        if frame["configuration"].nunique() != 1:
            raise ValueError(f"{path}: the final runs of one configuration expected, found "
                             f"{frame['configuration'].nunique()} configurations")
        frame = frame[(frame["repetition"] < repetitions) & frame["space"].isin(list(spaces))]
        return frame.drop(columns="configuration").reset_index(drop=True)
    frames = []
    for label, path in zip(spaces, run_files, strict=True):
        frame = pd.read_parquet(path)
        frame = frame[frame["repetition"] < repetitions]
        frames.append(frame.assign(space=label, failed=""))
    return pd.concat(frames, ignore_index=True)


def space_rows(rows: pd.DataFrame, space: Space) -> pd.DataFrame:
    """One space's rows of an entry's runs as that space's own runs file has them: the other spaces' parameter
    columns (all missing here) dropped, and each parameter column in the space's own type (a file of several
    spaces holds the union of their columns, where a missing value turned integer columns into floats, and a
    configuration is looked up by its values as text: 1.0 is not 1)."""
    rows = rows.drop(columns=[c for c in ("space", "failed", "skipped") if c in rows])
    if rows.empty:
        return rows
    rows = rows.dropna(axis=1, how="all")
    # a column that misses values (repeats an archive does not name, `methodology.unnamed_repeats`) stays as it is:
    # `methodology.record_rows` looks its named rows up in the table's types
    casts = {f"param.{p}": space.table[p].dtype for p in space.parameters
             if f"param.{p}" in rows and not rows[f"param.{p}"].isna().any()}
    return rows.astype(casts)


def score_on_space(entry: str, space: Space, objective: str, limits: Mapping[str, Any], mine: pd.DataFrame,
                   repetitions: int, settings: ScoreSettings, resamples: int,
                   prepared: tuple[Any, Any] | None = None) -> tuple[dict[str, Any], pd.DataFrame | None, np.ndarray]:
    """One entry's score on one space from its rows there (`mine`, the runs file's rows of that space): the row
    (SCORE_COLUMNS), the score curve over the space's time range (None without a score) and the scores of the
    bootstrap resamples of its runs. `prepared`: methodology.space_scoring's result for the space."""
    label = f"{space.device}/{space.kernel}"
    skipped = mine["skipped"].fillna("") if "skipped" in mine else pd.Series("", index=mine.index)
    failed = mine[mine["failed"].fillna("") != ""].drop_duplicates("repetition")
    ok = space_rows(mine[(mine["failed"].fillna("") == "") & (skipped == "")], space)
    row: dict[str, Any] = {"entry": entry, "space": label, "runs": int(ok["repetition"].nunique()),
                           "failed_runs": len(failed), "score": np.nan, "score_ci_low": np.nan,
                           "score_ci_high": np.nan, "score_resamples": 0, "missing_reason": "",
                           "budget_evaluations": limits["fevals_end"]}
    # the package's bagging is seeded by the space alone, so that the same runs get the same score whatever the
    # entry is called (random_sample's runs are the constraint-aware study's rs runs); the resamples by the entry
    seed = derive_seed(space=label, objective=objective, purpose="leaderboard score")
    resample_seed = derive_seed(space=label, objective=objective, strategy=entry, purpose="leaderboard resamples")
    if (skipped != "").any():
        row["missing_reason"] = skipped[skipped != ""].iloc[0]
    elif len(failed):
        row["missing_reason"] = f"{len(failed)} of {repetitions} runs failed: {failed['failed'].iloc[0]}"
    elif ok.empty:
        row["missing_reason"] = "no runs"
    if not ok.empty:
        per_run = ok.groupby("repetition").agg(stopped=("stopped_early", "first"), reason=("stop_reason", "first"),
                                               distinct=("first_visit", "sum"), attempts=("attempts", "first"))
        row.update(stopped_early=int(per_run["stopped"].sum()),
                   stop_reasons=";".join(f"{k}:{v}" for k, v in sorted(per_run["reason"].value_counts().items())),
                   mean_distinct_evaluations=float(per_run["distinct"].mean()),
                   rejected_attempts=int(per_run["attempts"].sum() - len(per_run)))
    curve, boot = None, np.array([])
    if not row["missing_reason"]:
        result, boot = score_with_resamples(space, objective, entry, ok, settings, seed, resample_seed, resamples,
                                            prepared=prepared)
        scored = result["strategies"][entry]
        row["score"] = scored["score"]
        span = result["time_range_s"]
        curve = pd.DataFrame({"entry": entry, "space": label, "time_fraction": np.linspace(0.0, 1.0, len(span)),
                              "time_s": span, "score": scored["curve"]})
        if len(boot):
            low, high = np.percentile(boot, [2.5, 97.5])
            row.update(score_ci_low=float(low), score_ci_high=float(high), score_resamples=len(boot))
    log.info("%s on %s: score %s %s", entry, label, row["score"], row["missing_reason"])
    return row, curve, boot


def score_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Score rows as a table of SCORE_COLUMNS (a column no row has is all missing)."""
    table = pd.DataFrame(list(rows))
    for column in SCORE_COLUMNS:
        if column not in table:
            table[column] = np.nan
    return table[SCORE_COLUMNS]


CURVE_COLUMNS = ["entry", "space", "time_fraction", "time_s", "score"]


def curve_frame(curves: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Score curves as one table (CURVE_COLUMNS; empty without any)."""
    return pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(columns=CURVE_COLUMNS)


def scored_spaces(spaces: Sequence[tuple[str | Path, str | Path, str | Path]]
                  ) -> list[tuple[str, Space, str, dict[str, Any]]]:
    """Each (space parquet, space meta, budget file of rule ca_budget) as (label, the space tuned on time, its
    objective, the budget) for scoring."""
    out = []
    for parquet, meta, budget in spaces:
        space, objective = tuned_space(parquet, meta, None)
        # the budget's own settings carry no baseline (rule ca_budget), so the file is read as it is
        out.append((f"{space.device}/{space.kernel}", space, objective,
                    json.loads(Path(budget).read_text())))
    return out


def score(entry: str, source: str, run_files: Sequence[str | Path],
          spaces: Sequence[tuple[str | Path, str | Path, str | Path]], repetitions: int, settings: ScoreSettings,
          resamples: int, out_scores: str | Path, out_curves: str | Path) -> None:
    """Score one entry on each space ((space parquet, space meta, budget file of rule ca_budget) in the order of its
    runs' spaces); write a row per space (SCORE_COLUMNS) and the score curve over the space's time range."""
    targets = scored_spaces(spaces)
    runs = entry_runs(source, run_files, [label for label, *_ in targets], repetitions)
    rows, curves = [], []
    for label, space, objective, limits in targets:
        row, curve, _ = score_on_space(entry, space, objective, limits, runs[runs["space"] == label], repetitions,
                                       settings, resamples)
        rows.append(row)
        if curve is not None:
            curves.append(curve)
    write_parquet(score_frame(rows), out_scores)
    write_parquet(curve_frame(curves), out_curves)


def read_scores(paths: Sequence[str | Path], entries: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """Every entry's score rows, in `entries`' order."""
    frames = [pd.read_parquet(path) for path in paths]
    table = pd.concat(frames, ignore_index=True)
    order = {name: i for i, name in enumerate(entries)}
    return table.sort_values(["entry", "space"], key=lambda c: c.map(order) if c.name == "entry" else c,
                             kind="stable").reset_index(drop=True)
