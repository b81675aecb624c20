"""Input contracts of the figures: the columns each input table must have, checked with the file named."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from analysis.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

GRID_COLUMNS = ("algorithm", "budget", "setting", "popsize", "mutation_prob", "y1", "y2", "on_front", "picked")
CURVES_COLUMNS = ("device", "kernel", "objective_set", "setting", "algorithm", "budget", "k",
                  "igd_median", "igd_q1", "igd_q3", "n_runs")
# The constraint-aware study: standardised score curves (the package's bagged curve and its 95 %
# prediction interval) per space, and the per-space scores of tables/constraint_aware_scores.csv.
SCORES_COLUMNS = ("space", "algorithm", "constraint_aware", "time_fraction", "score", "score_lower", "score_upper")
SPACE_SCORES_COLUMNS = ("space", "algorithm", "density", "score_aware", "score_unaware", "gain")


def require(df: pd.DataFrame, columns: Iterable[str], source: str | None = None) -> pd.DataFrame:
    """`df` itself if it has every column; otherwise an InputError naming the source and the first missing column."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(source, f"missing column(s) {missing}; it has {list(df.columns)}", field=missing[0])
    if df.empty:
        raise InputError(source, "holds no rows")
    return df


def as_bool(series: pd.Series, source: str | None, column: str) -> pd.Series:
    """A boolean column read from CSV (True/False, true/false, 1/0); anything else is an InputError."""
    if series.dtype == bool:
        return series
    mapping = {"true": True, "false": False, "1": True, "0": False, "1.0": True, "0.0": False}
    text = series.astype("string").str.strip().str.lower()
    bad = text[~text.isin(list(mapping))]
    if len(bad):
        raise InputError(source, f"not a boolean: {bad.iloc[0]!r} (row {bad.index[0]})", field=column)
    return text.map(mapping).astype(bool)
