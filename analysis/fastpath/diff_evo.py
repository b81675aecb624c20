"""An exact, faster replica of Kernel Tuner's differential evolution loop for simulated runs.

Kernel Tuner 1.5.0's `kernel_tuner.strategies.diff_evo.differential_evolution` spends most of a simulated
run outside the cost function: `np.random.choice` on a fresh Python list of the other population indices
for every trial vector, `list.index` lookups to turn configurations back into index vectors, NumPy
arithmetic on arrays of a dozen elements, and linear scans of the trial population for duplicates.
`differential_evolution` below does the same with precomputed value-to-index maps, Python floats,
one random draw on an integer and hashed membership, and makes every `np.random` and `random` call
Kernel Tuner makes, in the same order with the same arguments, so runs are unchanged draw for draw.

`fast_differential_evolution()` swaps it in for the module's own function while a run is active. The
Kernel Tuner functions replicated here are pinned in `analysis.fastpath.pins`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np
from kernel_tuner.strategies import diff_evo as kt_de

from analysis.fastpath.patching import swapped

__all__ = ["differential_evolution", "fast_differential_evolution"]


# element types whose hash agrees with `==` among themselves and with the NumPy scalars a search space may
# hold instead (np.int64, np.float64, np.str_, np.bool_): configurations made of them can be compared as
# hashed tuples with the result of comparing them as lists
_HASH_SAFE = (int, float, str, bool)


class _IndexMaps:
    """`values_to_indices` and `indices_to_values` of Kernel Tuner's diff_evo over one `tune_params`.

    Kernel Tuner finds each value with `list.index`, the first position whose value is `==` to it (or is
    it). A dict built from the first occurrence of each value answers the same for hashable values
    whose hash agrees with `==`; anything else (an unhashable value, one not in the dict) falls back to
    `list.index`, which also raises Kernel Tuner's ValueError for a value that is not there.
    Index vectors are lists of Python ints rather than float arrays: the mutations below use them only
    in exact integer-valued float64 arithmetic, where both give the same numbers.
    """

    def __init__(self, tune_params: dict) -> None:
        self.values = [list(v) for v in tune_params.values()]
        self.maps: list[dict] = []
        for values in self.values:
            first: dict = {}
            for position, value in enumerate(values):
                try:
                    first.setdefault(value, position)
                except TypeError:  # unhashable: this dimension is looked up with list.index
                    first = {}
                    break
            self.maps.append(first)

    def to_indices(self, individual: Any) -> list[int]:
        """kt values_to_indices: the index of each value in its parameter's list (one value per parameter)."""
        indices = []
        for values, first, value in zip(self.values, self.maps, individual):
            try:
                indices.append(first[value])
            except (KeyError, TypeError):
                indices.append(values.index(value))
        return indices

    def to_values(self, indices: list[int]) -> list:
        """kt indices_to_values: the value at each index."""
        return [values[index] for values, index in zip(self.values, indices)]


# The mutations below compute Kernel Tuner's formula per element in the same float64 operations and order
# (integer-valued operands are exact either way), then kt round_and_clip inline: np.round is round-half-to-even,
# as Python's round() of a float; np.clip(x, 0, high) is minimum(maximum(x, 0), high); astype(int) of the
# integral result is the integer.


def _mutate_de_1(best_idx: list, randos_idx: list, F: Any, max_idx: list, best: bool) -> list[int]:
    """kt mutate_de_1 and round_and_clip: a + F * (b - c), elementwise."""
    if best:
        a_idx = best_idx
        b_idx, c_idx = randos_idx
    else:
        a_idx, b_idx, c_idx = randos_idx
    return [min(max(round(a + F * (b - c)), 0), high) for a, b, c, high in zip(a_idx, b_idx, c_idx, max_idx)]


def _mutate_de_2(best_idx: list, randos_idx: list, F: Any, max_idx: list, best: bool) -> list[int]:
    """kt mutate_de_2 and round_and_clip: a + F * (b + c - d - e), elementwise."""
    if best:
        a_idx = best_idx
        b_idx, c_idx, d_idx, e_idx = randos_idx
    else:
        a_idx, b_idx, c_idx, d_idx, e_idx = randos_idx
    return [min(max(round(a + F * (b + c - d - e)), 0), high)
            for a, b, c, d, e, high in zip(a_idx, b_idx, c_idx, d_idx, e_idx, max_idx)]


def _mutate_to_best(best_idx: list, randos_idx: list, F: Any, max_idx: list, best: bool) -> list[int]:
    """kt mutate_currenttobest1 and mutate_randtobest1 (the same formula; the caller puts the current
    individual first for currenttobest) and round_and_clip: a + F * (best - a + b - c), elementwise."""
    a_idx, b_idx, c_idx = randos_idx
    return [min(max(round(a + F * (s - a + b - c)), 0), high)
            for s, a, b, c, high in zip(best_idx, a_idx, b_idx, c_idx, max_idx)]


_MUTATIONS = {
    kt_de.mutate_de_1: _mutate_de_1,
    kt_de.mutate_de_2: _mutate_de_2,
    kt_de.mutate_currenttobest1: _mutate_to_best,
    kt_de.mutate_randtobest1: _mutate_to_best,
}


def _random_draw(popsize: int, i: int, mutation: int, best: bool) -> list[int]:
    """kt random_draw(idxs, mutation, best) for idxs = [idx for idx in range(popsize) if idx != i].

    NumPy's legacy `RandomState.choice(a, k, replace=False)` draws `permutation(len(a))[:k]` and returns
    `a[those]`; with replacement it draws `randint(0, len(a), size=k)`. The same draws on the count
    alone, mapped to the index they pick from `idxs` (skip `i`), give the same individuals and leave
    the generator in the same state. The empty draw (popsize 1) goes to Kernel Tuner for its error.
    """
    draw = 2 * mutation + 1 - int(best)
    n = popsize - (i < popsize)
    if n == 0:
        return kt_de.random_draw([], mutation, best)
    if draw >= n:
        picks = np.random.randint(0, n, size=draw)
    else:
        picks = np.random.permutation(n)[:draw]
    return [j + (j >= i) for j in picks.tolist()]


def _binomial_crossover(donor_vector: list, target: list, CR: Any) -> list:
    """kt binomial_crossover with the random array compared and applied element by element in Python."""
    trial_vector = target.copy()
    dimensions = len(donor_vector)
    crossover_points = [r < CR for r in np.random.rand(dimensions).tolist()]
    if not any(crossover_points):
        crossover_points[np.random.randint(0, dimensions)] = True
    for i, take in enumerate(crossover_points):
        if take:
            trial_vector[i] = donor_vector[i]
    return trial_vector


class _Members:
    """The configurations of a trial population, for Kernel Tuner's `list(v) not in trial_population`.

    With hash-safe values (`_HASH_SAFE`) membership is a set lookup of the tuple, which agrees with
    the list scan (equal lists are equal tuples with equal hashes; NaN values compare by identity in
    both); otherwise it is Kernel Tuner's scan.
    """

    def __init__(self, members: list, hashed: bool) -> None:
        self.members = members
        self.keys = {tuple(member) for member in members} if hashed else None

    def __contains__(self, vector: list) -> bool:
        if self.keys is None:
            return vector in self.members
        return tuple(vector) in self.keys

    def append(self, vector: list) -> None:
        self.members.append(vector)
        if self.keys is not None:
            self.keys.add(tuple(vector))


def differential_evolution(searchspace, cost_func, bounds, popsize, maxiter, F, CR, method, constraint_aware,
                           verbose):
    """kernel_tuner.strategies.diff_evo.differential_evolution (Kernel Tuner 1.5.0), exactly, faster.

    Kernel Tuner's steps in its order: the population from its `generate_population` and the start
    position, its `eval_all` batches, the regenerated population after two stable generations, per
    trial vector the draw of the other individuals (`_random_draw`), the mutation on index vectors,
    the crossover (binomial here, exponential by Kernel Tuner's own function), its `repair`, the
    duplicate check, the random sample after 20 duplicates in a row, then selection and the verbose
    prints. Index vectors of population members are remembered until the member is replaced.
    """
    tune_params = cost_func.tuning_options.tune_params
    maps = _IndexMaps(tune_params)
    max_idx = [len(v) - 1 for v in tune_params.values()]

    best, mutation, mutation_method, crossover_method = kt_de.parse_method(method)
    mutate = _MUTATIONS[mutation_method]
    current_first = mutation_method == kt_de.mutate_currenttobest1
    if crossover_method == kt_de.binomial_crossover:
        crossover_method = _binomial_crossover
    hashed = all(type(v) in _HASH_SAFE for values in tune_params.values() for v in values)

    population = kt_de.generate_population(tune_params, max_idx, popsize, searchspace, constraint_aware)
    population[0] = cost_func.get_start_pos()
    population_idx: list[list[int] | None] = [None] * len(population)

    def member_indices(k: int) -> list[int]:
        indices = population_idx[k]
        if indices is None:
            indices = population_idx[k] = maps.to_indices(population[k])
        return indices

    def trial(i: int) -> list:
        """Kernel Tuner's trial vector for member i: the draw, the mutation, the crossover, the repair."""
        randos = _random_draw(popsize, i, mutation, best)
        if current_first:
            randos[0] = i
        randos_idx = [member_indices(rando) for rando in randos]

        donor_vector_idx = mutate(best_solution_idx, randos_idx, F, max_idx, best)
        donor_vector = maps.to_values(donor_vector_idx)

        trial_vector = crossover_method(donor_vector, population[i], CR)
        if constraint_aware:
            trial_vector = kt_de.repair(trial_vector, searchspace)
        return trial_vector

    population_cost = np.array(cost_func.eval_all(population))

    best_idx = np.argmin(population_cost)
    best_solution = population[best_idx]
    best_solution_idx = maps.to_indices(best_solution)
    best_cost = population_cost[best_idx]

    stabilized = 0
    for generation in range(maxiter):
        trial_population = []
        if stabilized > 2:
            trial_population = list(kt_de.generate_population(tune_params, max_idx, popsize, searchspace,
                                                              constraint_aware))
        _fill_trials(_Members(trial_population, hashed), popsize, trial, searchspace, verbose)

        trial_population_cost = np.array(cost_func.eval_all(trial_population))

        no_change, leader = _select(population, population_idx, population_cost, trial_population,
                                    trial_population_cost, popsize, (best_cost, best_solution, best_solution_idx),
                                    maps)
        best_cost, best_solution, best_solution_idx = leader

        if no_change:
            stabilized += 1

        if verbose:
            print(f"Generation {generation + 1}, Best Cost: {best_cost:.6f}")

    if verbose:
        print(f"Differential Evolution completed fevals={cost_func.get_num_unique_results()}")

    return {"solution": best_solution, "cost": best_cost}


def _select(population: list, population_idx: list[list[int] | None], population_cost: np.ndarray,
            trial_population: list, trial_population_cost: np.ndarray, popsize: int,
            leader: tuple[Any, Any, list[int]], maps: _IndexMaps) -> tuple[bool, tuple[Any, Any, list[int]]]:
    """Kernel Tuner's selection, in place: each trial vector that costs no more than its member replaces it
    (unless already in the population); `leader` (best cost, solution, index vector) follows each improvement.
    Returns whether no member was replaced, and the leader."""
    best_cost, best_solution, best_solution_idx = leader
    no_change = True
    for i in range(popsize):
        trial_vector = trial_population[i]
        trial_cost = trial_population_cost[i]
        if trial_cost <= population_cost[i]:
            if population.count(trial_vector) == 0:
                population[i] = trial_vector
                population_idx[i] = None
                population_cost[i] = trial_cost
                no_change = False
            if trial_cost < best_cost:
                best_cost = trial_cost
                best_solution = trial_vector
                best_solution_idx = maps.to_indices(best_solution)
    return no_change, (best_cost, best_solution, best_solution_idx)


def _fill_trials(trials: _Members, popsize: int, trial: Callable[[int], list], searchspace: Any,
                 verbose: bool) -> None:
    """Kernel Tuner's loop that fills the trial population to `popsize`: trial vector `trial(i)` of each
    member i in turn, a duplicate tried again, a random sample of the space after 20 duplicates in a row."""
    i = 0
    stuck = 0
    while len(trials.members) < popsize:
        trial_vector = trial(i)

        if list(trial_vector) not in trials:
            trials.append(list(trial_vector))
            i += 1
            stuck = 0
        else:
            stuck += 1

        if stuck >= 20:
            if verbose:
                print("Differential Evolution got stuck generating new individuals, insert random sample")
            trials.append(list(searchspace.get_random_sample(1)[0]))
            i += 1
            stuck = 0


def fast_differential_evolution() -> contextlib.AbstractContextManager:
    """Let Kernel Tuner's diff_evo strategy run `differential_evolution` above while active."""
    return swapped(kt_de, differential_evolution=differential_evolution)
