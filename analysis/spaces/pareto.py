"""True Pareto fronts of a space per objective set, with ideal and nadir, and normalisation."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import moocore
import numpy as np
import pandas as pd

from analysis.spaces.space import STATUS_OK, Space, plain

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Front:
    """The non-dominated set Z of one space for one objective set (minimisation form)."""

    objective_set: str
    objectives: tuple[str, ...]
    points: np.ndarray  # |Z| x m, unique vectors, original units
    ideal: np.ndarray
    nadir: np.ndarray
    directions: tuple[str, ...]
    rows: np.ndarray  # table rows of every configuration whose vector lies on Z
    excluded_failed: int
    excluded_nonfinite: int

    @property
    def scale(self) -> np.ndarray:
        """Per-objective range nadir - ideal in minimisation form; 1 where nadir equals ideal."""
        span = np.abs(self.nadir - self.ideal)
        return np.where(span > 0, span, 1.0)

    def normalise(self, values: np.ndarray) -> np.ndarray:
        """(y - ideal) / (nadir - ideal) per objective, signs flipped for higher-is-better ones."""
        sign = np.array([1.0 if d == "min" else -1.0 for d in self.directions])
        return sign * (np.asarray(values, dtype=float) - self.ideal) / self.scale

    def summary(self) -> dict[str, Any]:
        """JSON-ready description (without the points)."""
        span = np.abs(self.nadir - self.ideal)
        return {
            "objectives": list(self.objectives),
            "directions": list(self.directions),
            "size": int(len(self.points)),
            "configurations_on_front": int(len(self.rows)),
            "ideal": self.ideal.tolist(),
            "nadir": self.nadir.tolist(),
            "range_set_to_1": [o for o, s in zip(self.objectives, span) if s == 0],
            "excluded": {"failed": self.excluded_failed, "nonfinite": self.excluded_nonfinite},
        }


def minimisation_form(values: np.ndarray, directions: Sequence[str]) -> np.ndarray:
    """Negate higher-is-better columns so that every objective is minimised."""
    sign = np.array([1.0 if d == "min" else -1.0 for d in directions])
    return np.asarray(values, dtype=float) * sign


def true_front(space: Space, name: str, objectives: Sequence[str]) -> Front:
    """Z for `objectives`: rows failed or non-finite in any of them are excluded and counted."""
    objs = [space.objective(o) for o in objectives]
    values = space.table[[o.column for o in objs]].to_numpy(dtype=float)
    measured = (space.table["status"] == STATUS_OK).to_numpy()
    finite = np.isfinite(values).all(axis=1)
    usable = measured & finite
    if not usable.any():
        raise ValueError(f"space {space.device}/{space.kernel}: no configuration has finite {list(objectives)}")
    directions = tuple(o.direction for o in objs)
    mini = minimisation_form(values[usable], directions)
    on_front = moocore.is_nondominated(mini, keep_weakly=True)
    rows = np.flatnonzero(usable)[on_front]
    unique = np.unique(mini[on_front], axis=0)
    sign = np.array([1.0 if d == "min" else -1.0 for d in directions])
    points = unique * sign
    ideal = unique.min(axis=0) * sign
    nadir = unique.max(axis=0) * sign
    front = Front(name, tuple(objectives), points, ideal, nadir, directions, rows,
                  excluded_failed=int((~measured).sum()), excluded_nonfinite=int((measured & ~finite).sum()))
    log.info("%s/%s %s: |Z| = %d (%d configurations), %d failed and %d non-finite excluded",
             space.device, space.kernel, name, len(points), len(rows), front.excluded_failed,
             front.excluded_nonfinite)
    return front


def applicable_sets(space: Space, objective_sets: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """The objective sets all of whose objectives the space has."""
    have = {o.name for o in space.objectives}
    return {name: list(objs) for name, objs in objective_sets.items() if set(objs) <= have}


def fronts_table(space: Space, fronts: Sequence[Front]) -> pd.DataFrame:
    """Long table of every Pareto-optimal configuration: objective set, table row, parameters, objectives."""
    parts = []
    for f in fronts:
        part = space.table.iloc[f.rows].copy()
        part.insert(0, "row", f.rows)
        part.insert(0, "objective_set", f.objective_set)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def optimum(space: Space, name: str) -> dict[str, Any]:
    """The single-objective optimum of `name`: value and configuration (first row on ties)."""
    o = space.objective(name)
    col = space.table[o.column].where(space.table["status"] == STATUS_OK)
    col = col.where(np.isfinite(col))
    row = int(col.idxmin() if o.direction == "min" else col.idxmax())
    config = {p: space.table.at[row, p] for p in space.parameters}
    return {"value": float(col[row]), "row": row, "configuration": {k: plain(v) for k, v in config.items()}}
