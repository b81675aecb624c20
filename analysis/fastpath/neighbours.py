"""Kernel Tuner's neighbour queries answered from an index of the space, memoised across the runs on a space.

`HammingIndex` and the adjacency bitsets give, for a configuration, the same neighbour indices in the
same order as Kernel Tuner's per-method passes over the whole space (`Searchspace.__get_neighbors_indices_*`);
`memoise_neighbours` serves `get_neighbors_indices_no_cache` from them and keeps every answer, read-only,
for the later runs on the same space. No random draw is involved, so a strategy sees the values it would
see without them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from kernel_tuner.searchspace import Searchspace

from analysis.kt.space import gc_paused

# Neighbour methods whose answer depends only on the search space and the configuration.
MEMOISED_METHODS = frozenset({"Hamming", "adjacent", "strictly-adjacent", "closest-param-indices"})


class HammingIndex:
    """Configurations grouped by all-but-one parameter: Hamming-distance-1 neighbours by dictionary look-ups.

    Gives exactly what Searchspace.get_neighbors_indices_no_cache(config, "Hamming") gives (the
    ascending positions of the valid configurations whose parameter indices match in all but one
    place), without Kernel Tuner's pass over the whole space per query.

    A configuration's parameter indices are read as one mixed-radix number (parameter p's digit
    is its index, its radix the length of its value list), so "all but parameter p" is that number
    minus p's digit times its place value: group p maps it to the ascending positions sharing it.
    The groups are built from Kernel Tuner's own index array (the rows its Hamming method
    compares), sorted by key with NumPy.
    """

    def __init__(self, searchspace: Searchspace) -> None:
        self.searchspace = searchspace
        radices = [len(values) for values in searchspace.params_values]
        self.place = [math.prod(radices[p + 1 :]) for p in range(len(radices))]
        indices = searchspace.get_list_param_indices_numpy()
        if math.prod(radices) < _INT64_KEYS_BELOW:
            place = np.array(self.place, dtype=np.int64)
            numbers = indices.astype(np.int64) @ place
            partial_keys = [numbers - indices[:, p].astype(np.int64) * place[p] for p in range(len(radices))]
        else:  # beyond int64: the same keys as Python integers
            rows = indices.tolist()
            numbers = [self._number(row) for row in rows]
            partial_keys = [np.array([n - row[p] * self.place[p] for n, row in zip(numbers, rows)], dtype=object)
                            for p in range(len(radices))]
        self.groups = [_group_positions(keys) for keys in partial_keys]

    def _number(self, row: Sequence[int]) -> int:
        return sum(index * place for index, place in zip(row, self.place))

    def neighbours(self, param_config: tuple) -> np.ndarray:
        """Positions of the Hamming neighbours of `param_config` (which need not be valid), ascending."""
        row = self.searchspace.get_param_indices(param_config)
        number = self._number(row)
        found: set[int] = set()
        for p, group in enumerate(self.groups):
            found.update(group.get(number - row[p] * self.place[p], ()))
        own = self.searchspace.get_param_config_index(tuple(param_config))
        found.discard(own)
        return np.array(sorted(found), dtype=np.intp)


_INT64_KEYS_BELOW = 2**63  # mixed-radix keys below this are computed in int64, others as Python integers


def _group_positions(keys: np.ndarray) -> dict[int, list[int]]:
    """{key: the ascending positions holding it} for a non-empty array of keys."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    ends = np.append(starts[1:], len(keys)).tolist()
    positions = order.tolist()
    return {key: positions[start:end] for key, start, end in zip(ordered[starts].tolist(), starts.tolist(), ends)}


class AdjacencyBitsets:
    """Neighbours whose every parameter index passes a per-parameter test, as an AND of precomputed bitsets.

    Kernel Tuner's "strictly-adjacent" and "adjacent" methods compare the configuration's parameter
    indices with every row of `params_values_indices` (its n x d array of the valid configurations'
    indices) and keep the rows that pass a test in every column. The test of column p depends only on
    the column and on the configuration's index c there, so for every p and every index c of p's
    value list (present in the space or not) the rows passing it are stored once as a bitset (bit i
    is position i); a query ANDs d of them, drops the configuration's own position when it is in the
    space (Kernel Tuner's setdiff1d), and returns the set bits ascending as intp (nonzero()[0]).

    The column tests take the difference row - c in int64, as Kernel Tuner does for a configuration
    outside the space (its indices, a tuple of Python ints, become an int64 array), with the index
    array's dtype where Kernel Tuner applies it. For a configuration in the space Kernel Tuner
    subtracts in the index array's own dtype instead, which it chooses wide enough for twice the
    largest index, so the difference of two valid indices never wraps and the tests agree.
    Parameter values are looked up with Kernel Tuner's get_param_indices, so a value outside a
    parameter's list raises the same error.
    """

    def __init__(self, searchspace: Searchspace) -> None:
        self.searchspace = searchspace
        indices = searchspace.get_list_param_indices_numpy()  # Kernel Tuner's params_values_indices
        self.size, dtype = indices.shape[0], indices.dtype
        self.bitsets: list[list[int]] = []
        for column, values in zip(indices.T, searchspace.params_values):
            differences = column.astype(np.int64)
            self.bitsets.append([_bitset(self.passes(differences - c, dtype)) for c in range(len(values))])

    @staticmethod
    def passes(differences: np.ndarray, dtype: np.dtype) -> np.ndarray:
        """Which rows pass the column test, given their index minus the configuration's (int64)."""
        raise NotImplementedError

    def neighbours(self, param_config: tuple) -> np.ndarray:
        """Positions of the neighbours of `param_config` (which need not be valid), ascending."""
        row = self.searchspace.get_param_indices(param_config)
        found = -1  # all bits set
        for bitsets, c in zip(self.bitsets, row):
            found &= bitsets[c]
        own = self.searchspace.get_param_config_index(tuple(param_config))
        if own is not None:
            found &= ~(1 << own)
        return _positions(found, self.size)


class StrictlyAdjacentIndex(AdjacencyBitsets):
    """Exactly Searchspace.get_neighbors_indices_no_cache(config, "strictly-adjacent")
    (__get_neighbors_indices_strictlyadjacent): rows whose index differs by at most 1 in every
    parameter, with Kernel Tuner's np.abs(difference, dtype=index dtype), which wraps a difference
    too large for the dtype as Kernel Tuner does."""

    @staticmethod
    def passes(differences: np.ndarray, dtype: np.dtype) -> np.ndarray:
        return np.abs(differences, dtype=dtype) <= 1


class AdjacentIndex(AdjacencyBitsets):
    """Exactly Searchspace.get_neighbors_indices_no_cache(config, "adjacent")
    (__get_neighbors_indices_adjacent): per parameter, rows whose index lies between the nearest
    index below and the nearest index above the configuration's among all valid rows (inclusive). As
    in Kernel Tuner, a side without any such row is bounded by the index dtype's extreme (np.min /
    np.max with initial=), and so is a side whose nearest row lies beyond that extreme."""

    @staticmethod
    def passes(differences: np.ndarray, dtype: np.dtype) -> np.ndarray:
        limits = np.iinfo(dtype)
        upper = np.min(differences[differences > 0], initial=limits.max)
        lower = np.max(differences[differences < 0], initial=limits.min)
        return (differences <= upper) & (differences >= lower)


def _bitset(mask: np.ndarray) -> int:
    """A boolean array as an int whose bit i is mask[i]."""
    return int.from_bytes(np.packbits(mask, bitorder="little").tobytes(), "little")


def _positions(bits: int, size: int) -> np.ndarray:
    """The set bits of a bitset over `size` positions, ascending, as intp (what nonzero() gives)."""
    packed = np.frombuffer(bits.to_bytes((size + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(packed, count=size, bitorder="little").nonzero()[0]


# Neighbour methods answered by an index of the space rather than by Kernel Tuner's pass over it.
NEIGHBOUR_INDEXES = {"Hamming": HammingIndex, "strictly-adjacent": StrictlyAdjacentIndex, "adjacent": AdjacentIndex}


def neighbour_index(searchspace: Searchspace, memo: dict, method: str) -> HammingIndex | AdjacencyBitsets:
    """The memo's index for neighbour `method` (a key of NEIGHBOUR_INDEXES), built from `searchspace` on first use."""
    key = f"{method} index"
    if key not in memo:
        with gc_paused():
            memo[key] = NEIGHBOUR_INDEXES[method](searchspace)
    return memo[key]


def memoise_neighbours(searchspace: Searchspace, memo: dict) -> None:
    """Serve `get_neighbors_indices_no_cache` from `memo`, shared by all runs on the same space in a process.

    The memo must only ever be used with searchspaces built from the same parameters and
    restrictions (the engine keeps one per KernelTunerSpace). Hamming, strictly-adjacent and adjacent
    queries are answered by the memo's index for the method (NEIGHBOUR_INDEXES), the other memoised
    methods by Kernel Tuner itself. Answers are stored read-only so no caller can change them for
    later runs.
    """
    compute = searchspace.get_neighbors_indices_no_cache

    def get_neighbors_indices_no_cache(param_config, neighbor_method=None, build_full_cache=False):
        method = neighbor_method if neighbor_method is not None else searchspace.neighbor_method
        if method not in MEMOISED_METHODS or build_full_cache:
            return compute(param_config, neighbor_method, build_full_cache)
        key = (method, tuple(param_config))
        found = memo.get(key)
        if found is None:
            if method in NEIGHBOUR_INDEXES:
                found = neighbour_index(searchspace, memo, method).neighbours(param_config)
            else:
                found = compute(param_config, neighbor_method, build_full_cache)
            if isinstance(found, np.ndarray):
                found.setflags(write=False)
            memo[key] = found
        return found

    searchspace.get_neighbors_indices_no_cache = get_neighbors_indices_no_cache



# The neighbour methods Kernel Tuner's get_neighbors tries, in its order (strategies/common.py).
REPAIR_METHODS = ("strictly-adjacent", "adjacent", "Hamming")
