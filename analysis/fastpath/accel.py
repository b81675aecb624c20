"""Speed-ups that leave Kernel Tuner's results bit-identical.

Memoised neighbour queries, hashed duplicate checks, a vectorised nearest-valid-neighbour repair,
skipped formatting of discarded console and debug lines, no snapping of proposals the runner skips,
and the simulation runner with its options read once per call. Each replaces a function by an
equivalent one with the same results and effects; none draws random numbers, so the strategy
code sees exactly the values (and consumes exactly the random draws) it would see unpatched.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import logging
import math
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from kernel_tuner import util as kt_util
from kernel_tuner.runners.simulation import SimulationRunner
from kernel_tuner.searchspace import Searchspace
from kernel_tuner.strategies import common as kt_common

from analysis.fastpath.patching import swapped
from analysis.simulate.budget import SimulatedTimeBudget
from analysis.simulate.kt_space import gc_paused

logger = logging.getLogger(__name__)

# Neighbour methods whose answer depends only on the search space and the configuration.
MEMOISED_METHODS = frozenset({"Hamming", "adjacent", "strictly-adjacent", "closest-param-indices"})


class HammingIndex:
    """Configurations grouped by all-but-one parameter: Hamming-distance-1 neighbours by dictionary look-ups.

    Gives exactly what Searchspace.get_neighbors_indices_no_cache(config, "Hamming") gives (the
    ascending positions of the valid configurations whose parameter indices match in all but one
    place), in about a tenth of the time on spaces of ~10^4 configurations.

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


def flag_duplicates(keys: list[tuple], other: list[tuple] | None, is_duplicate: np.ndarray,
                     keep: str) -> np.ndarray:
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


def quiet_config_output() -> contextlib.AbstractContextManager:
    """Skip SimulationRunner's per-configuration console line when quiet (it is formatted, then dropped)."""
    original = kt_util.print_config_output

    def print_config_output(tune_params, params, quiet, metrics, units):
        if not quiet:
            original(tune_params, params, quiet, metrics, units)

    return swapped(kt_util, print_config_output=print_config_output)


# Relative slack within which vectorised distances pick the candidates for Kernel Tuner's own
# distance function: rounding differs by ~1e-16 relative, so the nearest neighbour is always one.
_CANDIDATE_SLACK = 1e-9
# The neighbour methods Kernel Tuner's get_neighbors tries, in its order (strategies/common.py).
REPAIR_METHODS = ("strictly-adjacent", "adjacent", "Hamming")


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


# sha256 of the source of Kernel Tuner 1.5.0's CostFunc._run_configs, which `_run_configs` below replicates
# (a test compares it with the installed one, so an upgrade that changes the method is looked at again)
KT_RUN_CONFIGS_SHA256 = "5e382f8ebd7172d622671cfb652c71cd57dbf88465f5923284242ab227cb92b9"


def _run_configs(self: kt_common.CostFunc, xs: Any, check_restrictions: bool = True) -> list:
    """kernel_tuner.strategies.common.CostFunc._run_configs (Kernel Tuner 1.5.0), building its per-proposal debug
    line only when the root logger would emit it.

    Kernel Tuner formats `str(x)` and `str(config)` for a `logging.debug` call on every proposal, whether or not
    debug logging is on; for a NumPy position (PSO, DE, Firefly) that is numpy's array printer, about half of a
    simulated run's time. Everything else is done in Kernel Tuner's order with Kernel Tuner's objects: the
    strategy-time hand-over, the budget checks before and after, snapping and validation by the CostFunc's own
    method, one batch to the runner, the InvalidConfig results, `unique_results` and `results`, the spent
    fraction, the stop when the runner left a result out, and the strategy timer's reset.
    """
    self.runner.add_strategy_time(self.strategy_timer.get())
    logging.debug("_cost_func called")
    budget = self.tuning_options.budget
    budget.raise_exception_if_done()
    debug = logging.getLogger().isEnabledFor(logging.DEBUG)
    if not check_restrictions and not debug and isinstance(budget, SimulatedTimeBudget) \
            and type(self.runner) is SimulationRunner:
        configs, measured = _run_unchecked(self, xs, budget)
        batch, final = list(enumerate(configs)), list(measured)
    else:
        names = self.searchspace.tune_params.keys()
        final = []
        batch = []  # (position in `final`, config) of the legal proposals, in order
        for x in xs:
            config, is_legal = self._normalize_and_validate_config(x, check_restrictions=check_restrictions)
            if debug:
                logging.debug("normalize config: %s -> %s (legal: %s)", str(x), str(config), is_legal)
            if is_legal:
                batch.append((len(final), config))
                final.append(None)
            else:
                invalid = dict(zip(names, config))
                invalid["__error__"] = kt_util.InvalidConfig()
                final.append(invalid)
        measured = self.runner.run([config for _, config in batch], self.tuning_options)
    for (position, config), result in zip(batch, measured):
        if result is None:  # the runner stopped at the budget
            continue
        final[position] = result
        self.unique_results.setdefault(",".join([str(value) for value in config]), result)
        self.results.append(result)
    budget.raise_exception_if_done()
    self.budget_spent_fraction = budget.get_fraction_consumed()
    if not all(final):
        raise kt_util.StopCriterionReached("runner did not evaluate all given configurations")
    self.strategy_timer.reset()
    return final


def _run_unchecked(self: kt_common.CostFunc, xs: Any, budget: SimulatedTimeBudget) -> tuple[list, list]:
    """The runner's results for a batch without restriction checks (random sampling, constraint-aware GA), and
    the snapped configurations of those it ran, in order, snapping a proposal only when Kernel Tuner's
    SimulationRunner will run it.

    Unchecked, every proposal is legal and its snapping is a pure function of the proposal, so all go to the
    runner in one batch, as in Kernel Tuner. The runner answers None, without reading the configuration,
    for every proposal after the budget is done (it asks `is_done()` first, which counts the proposal); in a
    time-limited run that is most of a random sample. Here the batch is a generator that snaps a proposal
    only if `budget.next_is_done()` says the runner will run it, and hands the runner None otherwise: the same
    runner calls, budget counts, results and stop, without the snapping nobody reads.
    """
    configs: list = []

    def proposals() -> Iterator[Any]:
        for x in xs:
            if budget.next_is_done():
                yield None
                continue
            config, _ = self._normalize_and_validate_config(x, check_restrictions=False)
            configs.append(config)
            yield config

    measured = self.runner.run(proposals(), self.tuning_options)
    return configs, measured


# sha256 of the source of Kernel Tuner 1.5.0's SimulationRunner.run, which `simulation_runner_run` below replicates
KT_SIMULATION_RUN_SHA256 = "b88226cc60297e113017ade6f6f30d57db45b24a6cbaaedceca16df1f03342ed"


def simulation_runner_run(self: SimulationRunner, parameter_space: Any, tuning_options: Any) -> list:
    """kernel_tuner.runners.simulation.SimulationRunner.run (Kernel Tuner 1.5.0) with the tuning options' entries
    read once per call rather than once or more per configuration.

    Kernel Tuner's Options answers each attribute read through a Python `__getattr__`; the method reads
    the budget, cache, metrics and parameters up to nine times per configuration, and NSGA-II/III
    send one configuration per call. Nothing it calls changes those entries, so reading them once
    gives the same objects. Everything else is Kernel Tuner's, in its order: the debug line, the
    budget question per configuration (None once done), the copied cache entry, metrics, the
    zeroed timings of a revisit, the console line, evaluation count and simulated time of a first
    visit, the time-limit charges, the InvalidConfig or error for a configuration not in the cache,
    and the strategy and framework time spread over the valid results.
    """
    logging.debug("simulation runner started for " + self.kernel_options.kernel_name)
    results = []
    budget, cache, metrics = tuning_options.budget, tuning_options.cache, tuning_options.metrics
    for element in parameter_space:
        if budget.is_done():
            results.append(None)
            continue
        key = ",".join([str(i) for i in element])
        if key in cache:
            result = dict(cache[key])
            if metrics and "__error__" not in result:
                result = kt_util.process_metrics(result, metrics)
            if key in self.visited_results:
                result = kt_util.copy_without_benchmark_timings(result)
            else:
                kt_util.print_config_output(tuning_options.tune_params, result, self.quiet, metrics, self.units)
                self.visited_results.add(key)
                budget.add_evaluations(1)
            try:
                self.total_simulated_time += (result["compile_time"] + result["verification_time"]
                                              + result["benchmark_time"])
            except KeyError:
                pass
            if budget.time_limit:
                try:
                    budget.add_time(milliseconds=result["compile_time"])
                    budget.add_time(milliseconds=result["verification_time"])
                    budget.add_time(milliseconds=result["benchmark_time"])
                except KeyError:
                    raise RuntimeError(  # noqa: B904 - raised within the KeyError, as Kernel Tuner raises it
                        "Cannot use simulation mode with a time limit on a cache file that does not have full "
                        "compile, verification, and benchmark timings on all configurations"
                    )
            results.append(result)
            continue
        # if the configuration is not in the cache and not within restrictions, simulate an InvalidConfig
        params_dict = dict(zip(tuning_options["tune_params"].keys(), element))
        check = kt_util.check_restrictions(tuning_options.restrictions, params_dict, True)
        if not check:
            result = kt_util.copy_without_benchmark_timings(params_dict)
            result["__error__"] = kt_util.InvalidConfig()
            results.append(result)
            warnings.warn(f"Configuration {element} not in cache, does not pass restrictions. Will be treated as an "
                          "InvalidConfig, but make sure you are evaluating the correct cache file.",
                          stacklevel=1)  # the default, as Kernel Tuner warns
            continue
        err_string = (f"kernel configuration {element} not in cache, does {'' if check else 'not '}pass extra "
                      f"restriction check ({check})")
        logging.debug(err_string)
        raise ValueError(f"{err_string} - in simulation mode, all configurations must be present in the cache")

    num_valid_results = sum(bool(r) for r in results)
    if num_valid_results:
        total_time = self.timer.get_and_reset()
        strategy_time = self.accumulated_strategy_time
        self.accumulated_strategy_time = 0
        framework_time = max(total_time - strategy_time, 0)
        for result in results:  # amortise the time over all the results, in ms
            if result:
                result["strategy_time"] = 1000 * strategy_time / num_valid_results
                result["framework_time"] = 1000 * framework_time / num_valid_results
    return results


@contextlib.contextmanager
def lean_cost_function() -> Iterator[None]:
    """Let Kernel Tuner's CostFunc evaluate proposals with `_run_configs` above, and its SimulationRunner run them
    with `simulation_runner_run`, while active."""
    with swapped(kt_common.CostFunc, _run_configs=_run_configs), swapped(SimulationRunner, run=simulation_runner_run):
        yield


def vectorised_snapping(memo: dict | None = None) -> contextlib.AbstractContextManager:
    """Let Kernel Tuner's CostFunc snap and repair proposals with the equivalents above while active.

    `memo` (the space's, shared by its runs) keeps the scaled configuration coordinates between runs.
    """
    return swapped(kt_common, unscale_and_snap_to_nearest=unscale_and_snap_to_nearest,
                   unscale_and_snap_to_nearest_valid=functools.partial(unscale_and_snap_to_nearest_valid, memo=memo))
