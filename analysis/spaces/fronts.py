"""The `fronts` stage: true fronts of one stored space for every applicable objective set."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from analysis.io import write_json, write_parquet
from analysis.spaces.pareto import applicable_sets, fronts_table, optimum, true_front
from analysis.spaces.space import STATUS_OK, Space


def compute_fronts(space: Space, objective_sets: Mapping[str, Sequence[str]]) -> tuple[Any, dict[str, Any]]:
    """Fronts table (Pareto-optimal configurations) and a JSON summary for every applicable set."""
    sets = applicable_sets(space, objective_sets)
    if not sets:
        raise ValueError(f"space {space.device}/{space.kernel}: no objective set applies "
                         f"(it has {[o.name for o in space.objectives]}, sets: {dict(objective_sets)})")
    fronts = [true_front(space, name, objs) for name, objs in sets.items()]
    measured = space.table["status"] == STATUS_OK
    ranges = {}
    for o in space.objectives:
        col = space.table.loc[measured, o.column]
        col = col[np.isfinite(col)]
        ranges[o.name] = {"min": float(col.min()), "max": float(col.max()), "unit": o.unit}
    summary = {
        "space": f"{space.device}/{space.kernel}",
        "sets": {f.objective_set: f.summary() for f in fronts},
        "optimum": {o.name: optimum(space, o.name) for o in space.objectives},
        "ranges": ranges,
    }
    return fronts_table(space, fronts), summary


def run(space_parquet: str | Path, space_meta: str | Path, objective_sets: Mapping[str, Sequence[str]],
        out_parquet: str | Path, out_json: str | Path) -> None:
    """Read a stored space, compute its fronts and write both outputs atomically."""
    space = Space.load(space_parquet, space_meta)
    table, summary = compute_fronts(space, objective_sets)
    write_parquet(table, out_parquet)
    write_json(summary, out_json)
