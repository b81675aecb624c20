"""The `summary` stage: every run's indicators in three study-wide Parquet files.

- runs.parquet: one row per (run, k): the anytime curves of every repetition;
- final.parquet: one row per run: IGD+, hypervolume, evaluation time at the budget;
- curves.parquet: one row per (space, objective set, setting, budget, k): median and
  quartiles of IGD+ over repetitions, median cumulative evaluation time (the figures' input).

Identity columns everywhere: device, kernel, objective_set, setting, algorithm, budget.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.errors import InputError
from analysis.io import write_parquet

log = logging.getLogger(__name__)

IDENTITY = ["device", "kernel", "objective_set", "setting", "algorithm", "budget"]
_PATH = re.compile(r"(?P<device>[^/]+)/(?P<kernel>[^/]+)/(?P<objective_set>[^/]+)/(?P<setting>[^/]+)/"
                   r"b(?P<budget>\d+)\.(curve|final)\.parquet$")


def identity_of(path: str | Path, algorithms: Mapping[str, str]) -> dict:
    """Identity of an indicator file from its path .../{device}/{kernel}/{set}/{setting}/b{budget}.*.parquet."""
    m = _PATH.search(Path(path).as_posix())
    if not m:
        raise InputError(path, "not an indicator file path (.../{device}/{kernel}/{set}/{setting}/b{budget}"
                         ".curve|final.parquet)")
    ident = {k: m.group(k) for k in ("device", "kernel", "objective_set", "setting")}
    if ident["setting"] not in algorithms:
        raise InputError(path, f"unknown setting '{ident['setting']}'", field="setting")
    ident["algorithm"] = algorithms[ident["setting"]]
    ident["budget"] = int(m.group("budget"))
    return ident


def gather(paths: Sequence[str | Path], algorithms: Mapping[str, str]) -> pd.DataFrame:
    """Indicator files concatenated, with identity columns taken from their paths."""
    frames = []
    for p in paths:
        frame = pd.read_parquet(p)
        for i, (col, value) in enumerate(identity_of(p, algorithms).items()):
            frame.insert(i, col, value)
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


def summarise(curve_paths: Sequence[str | Path], final_paths: Sequence[str | Path],
              algorithms: Mapping[str, str]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(runs, final, curves) frames from the per-job indicator files."""
    runs = gather(curve_paths, algorithms)
    final = gather(final_paths, algorithms)
    bad = final[~np.isfinite(final["hv"])]
    if len(bad):
        raise ValueError(f"non-finite hypervolume in {len(bad)} runs")
    return runs, final, median_curves(runs)


def run(curve_paths: Sequence[str | Path], final_paths: Sequence[str | Path], algorithms: Mapping[str, str],
        out_runs: str | Path, out_final: str | Path, out_curves: str | Path) -> None:
    """Write the three summary files atomically."""
    runs, final, curves = summarise(curve_paths, final_paths, algorithms)
    write_parquet(runs, out_runs)
    write_parquet(final, out_final)
    write_parquet(curves, out_curves)
    log.info("summary: %d runs from %d files, %d curve points", len(final), len(final_paths), len(curves))
