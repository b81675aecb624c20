"""tables/spaces.csv: per space the sizes, density, failures, |Z| per objective set, objective ranges, what an
evaluation's time is spent on, and why a space is kept out of the studies."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.errors import InputError
from analysis.io import write_csv, write_text
from analysis.markdown import to_markdown

COLUMN_DOCS = {
    "space": "device/kernel",
    "dimensions": "number of tunable parameters",
    "constraints": "number of constraint expressions",
    "values_per_parameter": "fewest - most values of a parameter",
    "cartesian_size": "size of the Cartesian product of the value lists",
    "constrained_size": "configurations satisfying the constraints",
    "density_pct": "constrained size / Cartesian size, in %",
    "rows": "configurations in the source file (measured, including failed)",
    "missing": "configurations satisfying the constraints that the source lacks",
    "failed_compile": "configurations that failed to compile",
    "failed_runtime": "configurations that failed at run time",
    "invalid_output": "configurations that ran but whose output holds NaN or infinity (excluded, seed 002 §IV)",
    "removed": "entries removed on import (with reasons in the space's metadata)",
    "iterations": "benchmark runs per configuration (median over the space; Kernel Tuner's `times`)",
    "time_cv_median": "timing noise: median over the measured configurations of the coefficient of variation "
                      "(sample standard deviation / mean) of their benchmark runs",
    "budget_share_pct": "the study's largest budget as a share of the constrained size, in %",
    "compile_share_pct / verification_share_pct / benchmark_share_pct": (
        "the share of the space's evaluation time that is compile, verification and benchmark time (Kernel Tuner's "
        "`compile_time`, `verification_time`, `benchmark_time`), in %: each summed over every configuration in the "
        "source, failed ones included, over the sum of all three, which is what the simulation charges for "
        "evaluating them all, and on average what random search is charged per evaluation; empty when the space "
        "has no evaluation times"),
    "Z_<set>": "|Z|: distinct objective vectors on the true Pareto front of that objective set",
    "excluded_<set>": "configurations excluded from that objective set (failed or non-finite)",
    "<objective>_<unit>_min / _max": "range of the objective over measured, finite configurations",
    "excluded": "why the space is kept out of both studies (its config `excluded`, e.g. an incomplete sweep: see "
                "`missing`): imported and tabulated, but no run is simulated on it; empty for a space in the studies",
}


EVAL_TIME_PARTS = {"compile": "compile_time_ms", "verification": "verification_time_ms",
                   "benchmark": "benchmark_time_ms"}


def eval_time_shares(times: pd.DataFrame | None) -> dict[str, float | None]:
    """Compile, verification and benchmark time's shares, in %, of a space's summed evaluation time.

    `times` holds a space's evaluation-time columns (`space.parquet`), one row per configuration; a missing
    value counts as 0. Without times, or when they sum to 0, every share is None.
    """
    sums = {part: (float(times[col].fillna(0).sum()) if times is not None and col in times else 0.0)
            for part, col in EVAL_TIME_PARTS.items()}
    total = sum(sums.values())
    return {f"{part}_share_pct": (round(100.0 * v / total, 3) if total > 0 else None) for part, v in sums.items()}


def space_row(meta: dict[str, Any], fronts: dict[str, Any], largest_budget: int | None = None,
              times: pd.DataFrame | None = None) -> dict[str, Any]:
    """One table row from a space's metadata, its fronts summary and (optionally) its evaluation times."""
    counts = meta["counts"]
    sizes = [len(v) for v in meta["parameters"].values()]
    failed = dict(counts["failed"])
    row: dict[str, Any] = {
        "space": f"{meta['device']}/{meta['kernel']}",
        "device": meta["device"],
        "kernel": meta["kernel"],
        "dimensions": len(sizes),
        "constraints": len(meta["constraints"]),
        "values_per_parameter": f"{min(sizes)} - {max(sizes)}",
        "cartesian_size": counts["cartesian"],
        "constrained_size": counts["constrained"],
        "density_pct": round(100.0 * counts["constrained"] / counts["cartesian"], 3),
        "rows": counts["rows"],
        "missing": counts["missing"],
        "failed_compile": failed.pop("compile", 0),
        "failed_runtime": failed.pop("runtime", 0),
        "invalid_output": failed.pop("invalid_output", 0),
        "failed_other": sum(failed.values()),
        "removed": sum(counts["removed"].values()),
    }
    noise = meta.get("timing_noise") or {}
    row["iterations"] = noise.get("iterations_median")
    row["time_cv_median"] = noise.get("cv_median")
    row["budget_share_pct"] = round(100.0 * largest_budget / counts["constrained"], 3) if largest_budget else None
    row.update(eval_time_shares(times))
    for name, f in fronts["sets"].items():
        row[f"Z_{name}"] = f["size"]
        row[f"excluded_{name}"] = f["excluded"]["failed"] + f["excluded"]["nonfinite"]
    for o in meta["objectives"]:
        r = fronts["ranges"][o["name"]]
        row[f"{o['column']}_min"] = r["min"]
        row[f"{o['column']}_max"] = r["max"]
    return row


def _eval_times(path: str | Path) -> pd.DataFrame:
    """The evaluation-time columns of a `space.parquet` (those it has)."""
    import pyarrow.parquet as pq

    present = set(pq.read_schema(path).names)
    return pd.read_parquet(path, columns=[c for c in EVAL_TIME_PARTS.values() if c in present])


def spaces_table(meta_paths: Sequence[str | Path], front_paths: Sequence[str | Path],
                 largest_budget: int | None = None, excluded: Mapping[str, str] | None = None,
                 space_paths: Sequence[str | Path] | None = None) -> pd.DataFrame:
    """The spaces table, one row per space, in the order given.

    `excluded` maps "device/kernel" to the reason the space is kept out of the studies (column
    `excluded`, empty for the others); a reason for a space not in the table is an error.
    `space_paths` are the spaces' `space.parquet` files, in the same order (columns `*_share_pct`;
    without them those columns are empty).
    """
    excluded = dict(excluded or {})
    if space_paths is not None and len(space_paths) != len(meta_paths):
        raise InputError(None, f"{len(space_paths)} space files for {len(meta_paths)} spaces", field="--space-parquets")
    rows = [space_row(json.loads(Path(m).read_text()), json.loads(Path(f).read_text()), largest_budget,
                      _eval_times(space_paths[i]) if space_paths is not None else None)
            for i, (m, f) in enumerate(zip(meta_paths, front_paths))]
    unknown = sorted(set(excluded) - {r["space"] for r in rows})
    if unknown:
        raise InputError(None, f"reasons given for spaces not in the table: {', '.join(unknown)}", field="--excluded")
    for row in rows:
        row["excluded"] = excluded.get(row["space"], "")
    return pd.DataFrame(rows)


def write_table(meta_paths: Sequence[str | Path], front_paths: Sequence[str | Path], largest_budget: int,
                excluded: Mapping[str, str] | None, space_parquets: Sequence[str | Path] | None,
                csv: str | Path, md: str | Path) -> pd.DataFrame:
    """`spaces_table` written as tables/spaces.csv and its Markdown page (atomically)."""
    df = spaces_table(meta_paths, front_paths, largest_budget, excluded, space_parquets)
    write_csv(df, csv)
    write_text(to_markdown(df, "Search spaces", COLUMN_DOCS), md)
    return df
