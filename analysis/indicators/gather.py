"""The `summary` stage: every run's indicators in three study-wide Parquet files.

- runs.parquet: one row per (run, k): the anytime curves of every repetition;
- final.parquet: one row per run: IGD+, hypervolume, evaluation time at the budget;
- curves.parquet: one row per (space, objective set, setting, budget, k): median and
  quartiles of IGD+ over repetitions, median cumulative evaluation time (the figures' input).

Identity columns everywhere: device, kernel, objective_set, setting, algorithm, budget.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.errors import InputError
from analysis.io import write_parquet

log = logging.getLogger(__name__)

IDENTITY = ["device", "kernel", "objective_set", "setting", "algorithm", "budget"]


def gather(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Indicator tables (per space and objective set) concatenated; each must carry the identity columns."""
    frames = []
    for p in paths:
        frame = pd.read_parquet(p)
        missing = [c for c in IDENTITY if c not in frame.columns]
        if missing:
            raise InputError(p, f"lacks identity columns {missing}", field=missing[0])
        frames.append(frame)
    if not frames:
        raise ValueError("no indicator files given")
    out = pd.concat(frames, ignore_index=True)
    for col in IDENTITY[:-1]:
        out[col] = out[col].astype("string")
    return out


def median_curves(runs: pd.DataFrame) -> pd.DataFrame:
    """Median, first and third quartile of IGD+ per (identity, k), and the median evaluation time."""
    g = runs.groupby(IDENTITY + ["k"], sort=True, observed=True)
    out = g["igd_plus"].quantile([0.25, 0.5, 0.75]).unstack()
    out.columns = ["igd_q1", "igd_median", "igd_q3"]
    out["eval_time_median_ms"] = g["eval_time_ms"].median()
    out["n_runs"] = g.size()
    return out.reset_index()[IDENTITY + ["k", "igd_median", "igd_q1", "igd_q3", "eval_time_median_ms", "n_runs"]]


def summarise(curve_paths: Sequence[str | Path], final_paths: Sequence[str | Path]
              ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(runs, final, curves) frames from the per-space indicator files."""
    runs = gather(curve_paths)
    final = gather(final_paths)
    bad = final[~np.isfinite(final["hv"])]
    if len(bad):
        raise ValueError(f"non-finite hypervolume in {len(bad)} runs")
    return runs, final, median_curves(runs)


def run(curve_paths: Sequence[str | Path], final_paths: Sequence[str | Path], out_runs: str | Path,
        out_final: str | Path, out_curves: str | Path) -> None:
    """Write the three summary files atomically."""
    runs, final, curves = summarise(curve_paths, final_paths)
    write_parquet(runs, out_runs)
    write_parquet(final, out_final)
    write_parquet(curves, out_curves)
    log.info("summary: %d runs from %d files, %d curve points", len(final), len(final_paths), len(curves))
