"""Kernel Tuner's pymoo operators for NSGA-II/III (neighbourhood mutation, repair) replayed on lists.

Kernel Tuner's `TuningParamConfigNeighborhoodMutation._do` visits every offspring row: it looks up
the row's Hamming neighbours, draws one with `np.random.choice(n)` from NumPy's global generator and
writes it into the row. pymoo's `Mutation.do` then keeps each mutated row only with probability
`mutation_prob` (10 % by default), drawn from pymoo's own generator. `TuningParamConfigRepair._do`
visits every row as well and replaces the invalid ones by a random strictly-adjacent, adjacent or
Hamming neighbour. In a simulated run these two per-row loops over an object array (a row view, a
tuple of NumPy elements, a `choice` call, a new row array) are a large share of NSGA-II's time.

`mutations` and `repairs` make the same choices, looping over the rows as Python lists: every draw
Kernel Tuner makes, in the same order, from the same global generator (`np.random.choice(n)` on an
integer draws `randint(0, n)`: a test compares picks and generator state), and the same neighbour
queries to the search space. They answer which rows become which configuration; the mutation's
answer holds only the rows pymoo keeps (the two generators are independent, so pymoo's keep-draw
may come first). `neighbourhood_mutation` and `neighbour_repair` write those rows into object arrays
as Kernel Tuner writes them (ArrayMating's array path), `mating._KernelTunerRowMating` into lists.
Both are used for exactly these two Kernel Tuner classes. The replicated methods are pinned in
`analysis.fastpath.pins`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from kernel_tuner.strategies import pymoo_minimize as kt_pymoo

from analysis.fastpath.neighbours import REPAIR_METHODS  # Kernel Tuner's order of neighbour methods

__all__ = ["mutations", "neighbour_repair", "neighbourhood_mutation", "repairs"]



def neighbourhood_mutation(mutation: kt_pymoo.TuningParamConfigNeighborhoodMutation, X: np.ndarray,
                           keep: np.ndarray) -> np.ndarray:
    """X with the rows where `keep` is true set as `mutation._do(problem, X)` sets them.

    Every row with a Hamming neighbour draws one, kept or not, so the global generator ends where
    Kernel Tuner's loop leaves it. Returns a new array; X is not changed.
    """
    out = X.copy()
    for i, config in mutations(mutation.searchspace, X.tolist(), keep):
        out[i] = np.array(config, dtype=object)
    return out


def neighbour_repair(problem: kt_pymoo.TuningProblem, X: np.ndarray) -> np.ndarray:
    """`TuningParamConfigRepair()._do(problem, X)`: X (changed in place, as Kernel Tuner changes it) with each
    invalid row replaced by a random neighbour of the first method that has one."""
    for i, config in repairs(problem.searchspace, X.tolist()):
        X[i] = np.array(config, dtype=object)
    return X


def mutations(searchspace: Any, rows: Sequence[Sequence], keep: Sequence[bool] | np.ndarray) -> list[tuple[int, tuple]]:
    """The neighbourhood mutation's draws for `rows`, in Kernel Tuner's order: (row, configuration it becomes)
    for the rows where `keep` is true."""
    neighbours = searchspace.get_neighbors_indices_no_cache
    draw = kt_pymoo.np.random.randint  # np.random.choice(n) draws randint(0, n)
    configs = searchspace.list
    changed = []
    for i, row in enumerate(rows):
        found = neighbours(tuple(row), neighbor_method="Hamming")
        if len(found) > 0:
            pick = found[draw(len(found))]
            if keep[i]:
                changed.append((i, configs[pick]))
    return changed


def repairs(searchspace: Any, rows: Sequence[Sequence]) -> list[tuple[int, tuple]]:
    """The repair's draws for `rows`, in Kernel Tuner's order: (row, configuration it becomes) for each invalid row
    that some neighbour method finds a neighbour for."""
    is_valid = searchspace.is_param_config_valid
    draw = kt_pymoo.np.random.randint
    changed = []
    for i, row in enumerate(rows):
        config = tuple(row)
        if is_valid(config):
            continue
        for method in REPAIR_METHODS:
            found = searchspace.get_neighbors_indices_no_cache(config, method)
            if len(found) > 0:
                changed.append((i, searchspace.get_param_configs_at_indices([found[draw(len(found))]])[0]))
                break
    return changed


def replays(operator: Any) -> str | None:
    """Which replica replays `operator` ("mutation" or "repair"), or None: only Kernel Tuner's own classes."""
    if type(operator) is kt_pymoo.TuningParamConfigNeighborhoodMutation:
        return "mutation"
    if type(operator) is kt_pymoo.TuningParamConfigRepair:
        return "repair"
    return None
