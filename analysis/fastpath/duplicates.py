"""pymoo duplicate eliminations that mark exactly what pymoo's mark, with hash sets instead of pairwise comparisons.

Kept apart from `accel` because they subclass pymoo's classes: only the NSGA-II/III runs import them
(and pymoo).
"""

from __future__ import annotations

import contextlib
from typing import Any, TypeVar

import numpy as np
from kernel_tuner.strategies import pymoo_minimize as kt_pymoo
from pymoo.core.duplicate import DefaultDuplicateElimination

from analysis.fastpath.patching import swapped


class HashedDuplicateElimination(kt_pymoo.TuningParamConfigDuplicateElimination):
    """Kernel Tuner's element-wise duplicate elimination with set look-ups instead of pairwise is_equal.

    Marks exactly what pymoo's ElementwiseDuplicateElimination marks with is_equal(a, b) =
    all(a.X == b.X): within a population, an individual that equals a later one; against other
    populations, an individual that equals any of their members. Parameter values are hashable
    scalars, for which tuple equality and element-wise == agree.
    """

    def _do(self, pop: Any, other: Any, is_duplicate: np.ndarray) -> np.ndarray:
        """Flag duplicates in `pop`, within itself (other None) or against `other`."""
        def keys(p: Any) -> list[tuple]:
            return [tuple(ind.X.tolist()) for ind in p]

        return flag_duplicates(keys(pop), None if other is None else keys(other), is_duplicate, keep="last")


class ExactDuplicateElimination(DefaultDuplicateElimination):
    """pymoo's DefaultDuplicateElimination for vectors of integral values, with set look-ups instead of cdist.

    The default marks an individual whose Euclidean distance to another is at most epsilon (1e-16):
    within a population, one that equals an earlier individual; against other populations, one that
    equals any of their members. For finite vectors (the constraint-unaware strategies' parameter
    indices) that is exact equality, which a hash set decides in one pass instead of |pop|^2 distances.
    """

    def _do(self, pop: Any, other: Any, is_duplicate: np.ndarray) -> np.ndarray:
        """Flag duplicates in `pop`, within itself (other None) or against `other`."""
        def keys(p: Any) -> list[tuple]:
            return [tuple(row) for row in np.asarray(self.func(p), dtype=float).tolist()]

        return flag_duplicates(keys(pop), None if other is None else keys(other), is_duplicate, keep="first")


def hashed_duplicate_elimination() -> contextlib.AbstractContextManager:
    """Let Kernel Tuner's pymoo strategy construct HashedDuplicateElimination while active."""
    return swapped(kt_pymoo, TuningParamConfigDuplicateElimination=HashedDuplicateElimination)


# the flags flag_duplicates sets and returns: pymoo's boolean array, or a list of them
_Flags = TypeVar("_Flags", np.ndarray, list[bool])


def flag_duplicates(keys: list[tuple], other: list[tuple] | None, is_duplicate: _Flags, keep: str) -> _Flags:
    """Set is_duplicate[i] where keys[i] is in `other`, or, with `other` None, where it repeats a key
    of the same list: all but the first occurrence (keep="first") or all but the last (keep="last")."""
    if other is not None:
        others = set(other)
        for i, key in enumerate(keys):
            if key in others:
                is_duplicate[i] = True
        return is_duplicate
    seen: set[tuple] = set()
    order = range(len(keys)) if keep == "first" else range(len(keys) - 1, -1, -1)
    for i in order:
        if keys[i] in seen:
            is_duplicate[i] = True
        seen.add(keys[i])
    return is_duplicate

