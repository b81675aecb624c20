"""ArrayMating against pymoo's own Mating: same offspring, same generator state, same whole runs."""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest
from pymoo.core.mating import Mating
from pymoo.core.problem import ElementwiseProblem
from pymoo.core.termination import NoTermination

from analysis.simulate import unaware
from analysis.simulate.mating import ArrayMating, _RowMating, array_mating_in_genetic_algorithms
from analysis.simulate.refdirs import compute as reference_directions  # the mating, not the directions, is under test


class CoarseProblem(ElementwiseProblem):
    """Integer variables with few values and coarse objectives: ties in domination and crowding, many duplicates."""

    def __init__(self, n_obj: int, with_constraint: bool = False) -> None:
        super().__init__(n_var=4, n_obj=n_obj, n_ieq_constr=1 if with_constraint else 0,
                         xl=np.zeros(4, dtype=int), xu=np.array([3, 5, 2, 6]), vtype=int)
        self.with_constraint = with_constraint

    def _evaluate(self, x, out, *args, **kwargs):
        a, b, c, d = (int(v) for v in x)
        f = [abs(a - 2) + c, (b % 3) + d // 3, (a + b) % 2, abs(d - 3), c * b % 4][: self.n_obj]
        out["F"] = np.array(f, dtype=float)
        if self.with_constraint:
            out["G"] = np.array([float(a + b - 6)])  # some individuals infeasible


def algorithm(name: str, n_obj: int, popsize: int, mutation_prob: float, crossover: str = "two-point-crossover"):
    """The unaware strategies' pymoo algorithm, built as during a simulated run (with ArrayMating)."""
    ref_dirs = reference_directions(n_obj, popsize) if name == "nsga3" else None
    with array_mating_in_genetic_algorithms():
        return unaware.build_algorithm(name, popsize, crossover, 1.0, mutation_prob, 20, ref_dirs)


def plain_mating(mating: ArrayMating) -> Mating:
    return Mating(mating.selection, mating.crossover, mating.mutation, repair=mating.repair,
                  eliminate_duplicates=mating.eliminate_duplicates, n_max_iterations=mating.n_max_iterations)


CASES = [
    ("nsga2", 2, 8, 0.1, "two-point-crossover"),
    ("nsga2", 3, 12, 0.5, "single-point-crossover"),
    ("nsga2", 2, 10, 0.2, "uniform-crossover"),
    ("nsga3", 3, 12, 0.1, "two-point-crossover"),
    ("nsga3", 5, 10, 0.3, "uniform-crossover"),
]


@pytest.mark.parametrize("path", ["lists", "arrays"])
@pytest.mark.parametrize("name,n_obj,popsize,mutation_prob,crossover", CASES)
def test_array_mating_matches_pymoo_generation_by_generation(monkeypatch, name, n_obj, popsize, mutation_prob,
                                                             crossover, path) -> None:
    """At every generation of real runs, both matings give the same offspring and leave the generator alike,
    on the unaware strategies' list path and, with that path switched off, on the array path."""
    taken = _count_paths(monkeypatch)
    if path == "arrays":
        monkeypatch.setattr(_RowMating, "plan", classmethod(lambda cls, *args: None))
    retries = 0
    for seed in range(3):
        algo = algorithm(name, n_obj, popsize, mutation_prob, crossover)
        assert isinstance(algo.mating, ArrayMating)
        algo.setup(CoarseProblem(n_obj), termination=NoTermination(), seed=seed)
        algo.next()  # initial population
        for _ in range(15):
            for n_offsprings in (algo.n_offsprings, 3):
                expected_rs, got_rs = copy.deepcopy(algo.random_state), copy.deepcopy(algo.random_state)
                expected = plain_mating(algo.mating).do(algo.problem, algo.pop, n_offsprings,
                                                        algorithm=_with_rs(algo, expected_rs), random_state=expected_rs)
                got = algo.mating.do(algo.problem, algo.pop, n_offsprings, algorithm=_with_rs(algo, got_rs),
                                     random_state=got_rs)
                np.testing.assert_array_equal(got.get("X"), expected.get("X"))
                assert got_rs.bit_generator.state == expected_rs.bit_generator.state
                retries += len(got) < n_offsprings
            algo.next()
    assert retries > 0  # the converged case, where pymoo gives up after 100 matings, was exercised
    assert taken[path] and not taken["arrays" if path == "lists" else "lists"]


def _count_paths(monkeypatch) -> dict[str, list]:
    """Record each mating taken by the list path (_RowMating.offspring) and by the array path (_offspring)."""
    taken: dict[str, list] = {"lists": [], "arrays": []}
    lists, arrays = _RowMating.offspring, ArrayMating._offspring
    monkeypatch.setattr(_RowMating, "offspring", lambda self, *a, **k: taken["lists"].append(1) or lists(self, *a, **k))
    monkeypatch.setattr(ArrayMating, "_offspring",
                        lambda self, *a, **k: taken["arrays"].append(1) or arrays(self, *a, **k))
    return taken


def _with_rs(algo, random_state):
    """A shallow stand-in for the algorithm whose random_state is `random_state` (binary_tournament draws from it)."""
    clone = copy.copy(algo)
    clone.random_state = random_state
    return clone


def test_array_mating_falls_back_to_pymoo_with_constraint_violations() -> None:
    """A population with violated constraints goes through pymoo's own mating (and gives what it gives)."""
    algo = algorithm("nsga2", 2, 10, 0.2)
    algo.setup(CoarseProblem(2, with_constraint=True), termination=NoTermination(), seed=3)
    algo.next()
    assert (algo.pop.get("CV") > 0).any()
    assert algo.mating._fast_path(algo.pop, algo, algo.random_state) is None
    expected_rs, got_rs = copy.deepcopy(algo.random_state), copy.deepcopy(algo.random_state)
    expected = plain_mating(algo.mating).do(algo.problem, algo.pop, 10, algorithm=_with_rs(algo, expected_rs),
                                            random_state=expected_rs)
    got = algo.mating.do(algo.problem, algo.pop, 10, algorithm=_with_rs(algo, got_rs), random_state=got_rs)
    np.testing.assert_array_equal(got.get("X"), expected.get("X"))


def test_random_picks_draw_what_one_choice_per_pair_draws() -> None:
    """The vectorised tournament picks equal pymoo's `random_state.choice([a, b])` per pair, generator state included."""
    from analysis.simulate.mating import _random_picks

    for seed, n in itertools.product(range(20), (1, 2, 7, 40)):
        one, many = np.random.default_rng(seed), np.random.default_rng(seed)
        a, b = np.arange(n), np.arange(n) + 100
        expected = np.array([one.choice([x, y]) for x, y in zip(a, b)])
        np.testing.assert_array_equal(_random_picks(many, a, b), expected)
        assert many.bit_generator.state == one.bit_generator.state


@pytest.mark.parametrize("names,budget,options,path", [
    # converged unaware runs: many retries, on lists
    (["nsga2_unaware", "nsga3_unaware"], 30, {"max_proposals": 250}, "lists"),
    (["nsga2", "nsga3"], 25, {}, "arrays"),  # Kernel Tuner's constraint-aware NSGA-II/III
])
def test_whole_runs_mate_on_arrays_with_the_same_traces(monkeypatch, names, budget, options, path) -> None:
    """During a simulated run NSGA-II/III take the fast path (the unaware ones on lists, Kernel Tuner's on
    arrays), and their traces equal those with pymoo's Mating."""
    import contextlib

    from test_simulate import tiny_space

    from analysis.simulate import run as run_module
    from analysis.simulate import simulate_run

    taken = _count_paths(monkeypatch)

    def traces():
        return [simulate_run(tiny_space(n_obj), name, {"popsize": 8, "mutation_prob": p}, budget, seed,
                             **options).comparable()
                for name, n_obj, p, seed in itertools.product(names, [1, 2], [0.1, 0.5], [0, 1])]

    fast = traces()
    assert taken[path] and not taken["arrays" if path == "lists" else "lists"]
    monkeypatch.setattr(run_module, "array_mating_in_genetic_algorithms", contextlib.nullcontext)
    taken["lists"].clear(), taken["arrays"].clear()
    assert traces() == fast and not taken["lists"] and not taken["arrays"]
