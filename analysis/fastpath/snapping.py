"""Kernel Tuner's snapping of continuous proposals to configurations (PSO, DE, Firefly), vectorised.

`unscale_and_snap_to_nearest` and `unscale_and_snap_to_nearest_valid` return what the functions of
the same names in `kernel_tuner.strategies.common` return (the nearest value per parameter; the
nearest valid configuration by Kernel Tuner's distance, ties as there), computed from grids and
precomputed scaled coordinates instead of per-proposal loops. `vectorised_snapping` swaps them in.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
from typing import Any

import numpy as np
from kernel_tuner.searchspace import Searchspace
from kernel_tuner.strategies import common as kt_common

from analysis.fastpath.neighbours import REPAIR_METHODS
from analysis.fastpath.patching import swapped

# Relative slack within which vectorised distances pick the candidates for Kernel Tuner's own
# distance function: rounding differs by ~1e-16 relative, so the nearest neighbour is always one.
_CANDIDATE_SLACK = 1e-9


def scaled_positions(searchspace: Searchspace, eps: float, memo: dict | None = None) -> np.ndarray:
    """Every valid configuration's scaled coordinates, as Kernel Tuner's scale_from_params gives them.

    scale_from_params maps value v of a parameter to 0.5 * eps + values.index(v) * eps (the first
    position of v in the parameter's value list); the same float operations run here on arrays.
    Built once per `memo` (the engine passes its per-KernelTunerSpace memo, as to `memoise_neighbours`:
    every run on a space shares one configuration list), or once per searchspace object without one.
    """
    if memo is None:
        memo = searchspace.__dict__.setdefault("_tsb_scaled_positions", {})
    key = ("scaled_positions", eps)
    if key not in memo:
        lookups = []
        for values in searchspace.tune_params.values():
            first: dict = {}
            for position, value in enumerate(values):
                first.setdefault(value, position)
            lookups.append(first)
        indices = np.array([[lookup[value] for lookup, value in zip(lookups, config)] for config in searchspace.list],
                           dtype=np.float64).reshape(len(searchspace.list), len(lookups))
        positions = 0.5 * eps + indices * eps
        positions.setflags(write=False)
        memo[key] = positions
    return memo[key]


def unscale_and_snap_to_nearest_valid(x: Any, params: Any, searchspace: Searchspace, eps: float,
                                      memo: dict | None = None) -> Any:
    """What kernel_tuner.strategies.common.unscale_and_snap_to_nearest_valid returns, without sorting every neighbour.

    Kernel Tuner takes the neighbours of the first method in REPAIR_METHODS that has any, sorts
    them by scipy's Euclidean distance to `x` and returns the first: the earliest neighbour at the
    smallest distance (the sort is stable). Here the same neighbours (same calls, so the same
    neighbour caches) get their distances on arrays; those within a relative 1e-9 of the smallest
    are measured again with Kernel Tuner's own scaling and scipy's distance, and the earliest at
    the smallest of those is returned: the same configuration (a single candidate is returned as it is).
    """
    from scipy.spatial import distance

    config = tuple(params)
    indices: Any = []
    for method in REPAIR_METHODS:
        indices = searchspace.get_neighbors_indices(config, neighbor_method=method)
        if len(indices) > 0:
            break
    else:
        return []
    indices = np.asarray(indices, dtype=np.intp)
    point = np.asarray(x, dtype=np.float64)
    approx = np.sqrt(np.square(scaled_positions(searchspace, eps, memo)[indices] - point).sum(axis=1))
    candidates = np.flatnonzero(approx <= approx.min() * (1.0 + _CANDIDATE_SLACK))
    if len(candidates) == 1:  # the nearest is always a candidate: no re-measuring needed
        return searchspace.list[indices[candidates[0]]]
    neighbours = [searchspace.list[indices[c]] for c in candidates]
    exact = [distance.euclidean(x, kt_common.scale_from_params(n, searchspace.tune_params, eps)) for n in neighbours]
    return neighbours[int(np.argmin(exact))]


@functools.lru_cache(maxsize=256)
def _snap_grid(count: int, eps: float) -> np.ndarray:
    """The grid unscale_and_snap_to_nearest builds for a parameter of `count` values (read-only)."""
    pad = 0.5 * eps
    grid = np.linspace(pad, (eps * count) - pad, count)
    grid.setflags(write=False)
    return grid


@functools.lru_cache(maxsize=256)
def _ascending_grid(count: int, eps: float) -> list[float] | None:
    """The snap grid as Python floats, or None unless strictly ascending (then `_nearest` does not apply)."""
    grid = _snap_grid(count, eps).tolist()
    return grid if grid and all(a < b for a, b in zip(grid, grid[1:])) else None


def _nearest(grid: list[float], v: float) -> int:
    """What np.abs(np.array(grid) - v).argmin() gives for a strictly ascending grid: the first index of the
    smallest distance, found by bisection.

    The distances are the same IEEE subtractions NumPy makes, and on either side of v they are monotonic
    (rounding is monotonic), so the smallest is next to v's insertion point; equal distances further left
    (rounding ties) are walked to, as argmin returns the first. NaN gives 0, as argmin of all-NaN does.
    """
    if v != v:
        return 0
    j = bisect.bisect_left(grid, v)
    if j == 0:  # v at or below the first point: distances grow to the right
        return 0
    best = abs(grid[j - 1] - v)
    if j < len(grid) and abs(grid[j] - v) < best:
        return j
    k = j - 1
    while k > 0 and abs(grid[k - 1] - v) == best:
        k -= 1
    return k


def unscale_and_snap_to_nearest(x: Any, tune_params: dict, eps: float) -> list:
    """kernel_tuner.strategies.common.unscale_and_snap_to_nearest with each parameter's grid built once and the
    nearest grid point found by bisection (`_nearest`) instead of a pass of NumPy calls per parameter.

    The same grid (np.linspace of the same arguments) and the same arg-min per parameter: the same values.
    A coordinate that is not a real number, or a grid that is not ascending, takes NumPy's arg-min.
    """
    snapped = list(x)
    for i, values in enumerate(tune_params.values()):
        grid = _ascending_grid(len(values), eps)
        try:
            index = _nearest(grid, float(x[i])) if grid is not None else None
        except (TypeError, ValueError, OverflowError):
            index = None
        if index is None:
            index = np.abs(_snap_grid(len(values), eps) - x[i]).argmin()
        snapped[i] = values[min(max(index, 0), len(values) - 1)]
    return snapped



def vectorised_snapping(memo: dict | None = None) -> contextlib.AbstractContextManager:
    """Let Kernel Tuner's CostFunc snap and repair proposals with the equivalents above while active.

    `memo` (the space's, shared by its runs) keeps the scaled configuration coordinates between runs.
    """
    return swapped(kt_common, unscale_and_snap_to_nearest=unscale_and_snap_to_nearest,
                   unscale_and_snap_to_nearest_valid=functools.partial(unscale_and_snap_to_nearest_valid, memo=memo))
