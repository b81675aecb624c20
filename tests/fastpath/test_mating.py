"""ArrayMating against pymoo's own Mating: same offspring, same generator state, same whole runs."""

from __future__ import annotations

import copy
import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from pymoo.core.mating import Mating
from pymoo.core.problem import ElementwiseProblem
from pymoo.core.termination import NoTermination

from analysis.fastpath.mating import LIST_PATHS, ArrayMating, array_mating_in_genetic_algorithms
from analysis.simulate import unaware
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
        _no_list_paths(monkeypatch)
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
    """Record each mating taken by a list path (its `offspring`) and by the array path (_offspring)."""
    taken: dict[str, list] = {"lists": [], "arrays": []}
    arrays = ArrayMating._offspring
    for path in LIST_PATHS:
        monkeypatch.setattr(path, "offspring", lambda self, *a, _lists=path.offspring, **k:
                            taken["lists"].append(1) or _lists(self, *a, **k))
    monkeypatch.setattr(ArrayMating, "_offspring",
                        lambda self, *a, **k: taken["arrays"].append(1) or arrays(self, *a, **k))
    return taken


def _no_list_paths(monkeypatch) -> None:
    for list_path in LIST_PATHS:
        monkeypatch.setattr(list_path, "plan", classmethod(lambda cls, *args: None))


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
    """The vectorised tournament picks equal pymoo's `random_state.choice([a, b])` per pair, generator state
    included."""
    from analysis.fastpath.mating import _random_picks

    for seed, n in itertools.product(range(20), (1, 2, 7, 40)):
        one, many = np.random.default_rng(seed), np.random.default_rng(seed)
        a, b = np.arange(n), np.arange(n) + 100
        expected = np.array([one.choice([x, y]) for x, y in zip(a, b)])
        np.testing.assert_array_equal(_random_picks(many, a, b), expected)
        assert many.bit_generator.state == one.bit_generator.state


@pytest.mark.parametrize("names,budget,options,path", [
    # converged unaware runs: many retries, on lists
    (["nsga2_unaware", "nsga3_unaware"], 30, {"max_proposals": 250}, "lists"),
    (["nsga2", "nsga3"], 25, {}, "lists"),  # Kernel Tuner's constraint-aware NSGA-II/III
    (["nsga2", "nsga3"], 25, {}, "arrays"),  # the same with the list paths off
])
def test_whole_runs_mate_on_arrays_with_the_same_traces(monkeypatch, names, budget, options, path) -> None:
    """During a simulated run NSGA-II/III take a list path (the unaware ones' and Kernel Tuner's), or with those
    off the array path, and their traces equal those with pymoo's Mating."""
    import contextlib

    from analysis.fastpath import mating as mating_module
    from analysis.simulate import simulate_run
    from helpers import tiny_space

    taken = _count_paths(monkeypatch)
    if path == "arrays":
        _no_list_paths(monkeypatch)

    def traces():
        return [simulate_run(tiny_space(n_obj), name, {"popsize": 8, "mutation_prob": p}, budget, seed,
                             **options).comparable()
                for name, n_obj, p, seed in itertools.product(names, [1, 2], [0.1, 0.5], [0, 1])]

    fast = traces()
    assert taken[path] and not taken["arrays" if path == "lists" else "lists"]
    # the engine imports it from the mating module when a run starts
    monkeypatch.setattr(mating_module, "array_mating_in_genetic_algorithms", contextlib.nullcontext)
    taken["lists"].clear(), taken["arrays"].clear()
    assert traces() == fast and not taken["lists"] and not taken["arrays"]


# ---------------------------------------------------------------------------------------------------------
# The list path's steps against pymoo's operators and the array path, on many random inputs
# ---------------------------------------------------------------------------------------------------------

def _random_bounds(g: np.random.Generator, n_var: int, integer: bool) -> tuple[np.ndarray, np.ndarray]:
    """Bounds with some xl == xu variables: integer ones (as the unaware problems'), or float64 ones."""
    if integer:
        xl = g.integers(-6, 6, n_var)
        return xl, xl + g.choice([0, 0, 1, 2, 5, 40], n_var)
    xl = g.uniform(-3.0, 3.0, n_var)
    return xl, xl + g.choice([0.0, 1e-3, 0.5, 1.0, 7.25], n_var)


def _random_rows(g: np.random.Generator, n: int, xl: np.ndarray, xu: np.ndarray, integer: bool) -> np.ndarray:
    """Rows within the bounds, about a third of the values on a bound."""
    if integer:
        X = g.integers(xl, xu + 1, (n, len(xl)))
    else:
        X = xl + g.random((n, len(xl))) * (xu - xl)
    at = g.integers(0, 3, X.shape)
    return np.where(at == 0, xl, np.where(at == 1, xu, X))


def test_polynomial_mutation_on_lists_equals_pymoo_mut_pm() -> None:
    """mut_pm's draws and values on lists equal pymoo's mut_pm (and the array replay) bit for bit, generator
    state included: integer and float bounds, xl == xu variables, values on the bounds, eta from 0 to 100,
    1 to 6 rows; and values computed for a subset of the entries (the rows that take the mutation) are
    those at the same entries."""
    from pymoo.operators.mutation.pm import mut_pm

    from analysis.fastpath.mating import (
        _Bounds,
        _polynomial_mutation,
        _polynomial_mutation_draws,
        _polynomial_mutation_values,
    )

    n_entries = 0
    for seed in range(3000):
        g = np.random.default_rng(seed)
        integer = seed % 2 == 0
        n, n_var = int(g.integers(1, 7)), int(g.integers(1, 9))
        xl, xu = _random_bounds(g, n_var, integer)
        X = _random_rows(g, n, xl, xu, integer)
        eta = g.choice([0.0, 0.5, 1.0, 3.0, 20.0, 30.0, 100.0], n) if seed % 3 else np.full(n, 20.0)
        prob_var = np.full(n, g.choice([0.1, 1.0 / n_var, 0.5, 1.0]))
        expected_rs, array_rs, got_rs = (np.random.default_rng(10**6 + seed) for _ in range(3))

        expected = mut_pm(X.astype(float), xl, xu, eta, prob_var, at_least_once=False, random_state=expected_rs)
        array = _polynomial_mutation(X, xl, xu, eta, prob_var, array_rs)
        bounds = _Bounds(xl, xu)
        rows = X.tolist()
        entries, rand = _polynomial_mutation_draws(n, bounds, prob_var.tolist(), got_rs)
        values = _polynomial_mutation_values(rows, entries, rand, bounds, eta.tolist())
        got = X.astype(float)
        for (i, j), y in zip(entries, values):
            got[i, j] = y

        assert got.tobytes() == expected.tobytes() == array.tobytes()  # bit for bit, -0.0 and 0.0 apart
        assert got_rs.bit_generator.state == expected_rs.bit_generator.state == array_rs.bit_generator.state
        # a subset of the entries, as offspring() computes only the rows that take the mutation
        subset = [k for k in range(len(entries)) if g.random() < 0.5]
        part = _polynomial_mutation_values(rows, [entries[k] for k in subset], [rand[k] for k in subset], bounds,
                                           eta.tolist())
        assert np.array(part, dtype=float).tobytes() == np.array([values[k] for k in subset], dtype=float).tobytes()
        n_entries += len(entries)
    assert n_entries > 10000


def test_round_is_rounding_repair() -> None:
    """Python's round of a float is RoundingRepair's np.around(X).astype(int): halves to even, negatives, bounds."""
    from pymoo.operators.repair.rounding import RoundingRepair

    g = np.random.default_rng(0)
    halves = np.arange(-20, 21) + 0.5
    values = np.concatenate([halves, np.nextafter(halves, np.inf), np.nextafter(halves, -np.inf),
                             g.uniform(-50.0, 50.0, 20000), np.arange(-20.0, 21.0), [-0.0, 0.0, 2.0**52 - 0.5]])
    expected = RoundingRepair()._do(None, values.reshape(-1, 1)).ravel().tolist()
    assert [round(v) for v in values.tolist()] == expected


def test_crossover_masks_on_lists_equal_pymoo() -> None:
    """The point crossovers' cut points and the uniform crossover's mask, applied as the list path applies them
    (slices swapped, entries picked), give pymoo's offspring for 1 to 6 matings of 1 to 9 variables."""
    from pymoo.operators.crossover.pntx import PointCrossover
    from pymoo.operators.crossover.ux import UniformCrossover

    from analysis.fastpath.mating import _point_crossover, _point_crossover_cuts, _uniform_crossover_masks

    for seed in range(1500):
        g = np.random.default_rng(seed)
        n_matings, n_var, n_points = int(g.integers(1, 7)), int(g.integers(1, 10)), int(g.integers(1, 4))
        X = g.integers(0, 100, (2, n_matings, n_var))
        expected_rs, array_rs, got_rs = (np.random.default_rng(10**6 + seed) for _ in range(3))

        if seed % 3:
            expected = PointCrossover(n_points)._do(None, X, random_state=expected_rs)
            array = _point_crossover(X, n_points, array_rs)
            got = []
            for m, r in enumerate(_point_crossover_cuts(n_matings, n_var, n_points, got_rs)):
                a, b = X[0, m].tolist(), X[1, m].tolist()
                x, y = a[:], b[:]
                for start, end in zip(r[0::2], r[1::2]):
                    x[start:end], y[start:end] = b[start:end], a[start:end]
                got.append((x, y))
            np.testing.assert_array_equal(array, expected)
            assert array_rs.bit_generator.state == expected_rs.bit_generator.state
        else:
            expected = UniformCrossover()._do(None, X, random_state=expected_rs)
            got = [([v if s else u for u, v, s in zip(X[0, m].tolist(), X[1, m].tolist(), mask)],
                    [u if s else v for u, v, s in zip(X[0, m].tolist(), X[1, m].tolist(), mask)])
                   for m, mask in enumerate(_uniform_crossover_masks(n_matings, n_var, got_rs))]
        assert [x for x, _ in got] == expected[0].tolist() and [y for _, y in got] == expected[1].tolist()
        assert got_rs.bit_generator.state == expected_rs.bit_generator.state


def _mating_for(g: np.random.Generator, crossover: str, n_var: int):
    """An unaware strategy's ArrayMating with random crossover and mutation settings, set up for one call."""
    from analysis.simulate.unaware import build_algorithm

    with array_mating_in_genetic_algorithms():
        algo = build_algorithm("nsga2", 10, crossover, float(g.choice([1.0, 0.5])), float(g.choice([0.1, 0.5, 1.0])),
                               float(g.choice([0.0, 3.0, 20.0, 100.0])), None)
    mating = algo.mating
    if g.random() < 0.5:  # more mutated variables than the default 1 / n_var
        mating.mutation.prob_var = float(g.choice([0.5, 1.0]))
    if g.random() < 0.3:  # a NumPy parameter: the list path takes pymoo's np.full for it, not [value] * n
        mating.mutation.eta.value = np.float64(mating.mutation.eta.value)
    mating._sized = {}
    return mating


def test_list_offspring_equal_array_offspring() -> None:
    """`_RowMating.offspring` equals the array path's `_offspring` (the NumPy replay of pymoo's operators) on
    random unaware matings: the same offspring and the same generator state, for 1 to 13 offspring."""

    from analysis.fastpath.mating import _RowMating, _Tournament

    crossovers = ["single-point-crossover", "two-point-crossover", "uniform-crossover"]
    for seed in range(600):
        g = np.random.default_rng(seed)
        n_var, popsize = int(g.integers(1, 9)), int(g.integers(2, 13))
        xl, xu = _random_bounds(g, n_var, integer=True)
        problem = SimpleNamespace(n_var=n_var, xl=xl, xu=xu)
        X_pop = _random_rows(g, popsize, xl, xu, integer=True)
        mating = _mating_for(g, crossovers[seed % 3], n_var)
        rows = _RowMating.plan(mating, problem, X_pop, X_pop.tolist(), None)
        assert rows is not None
        for n_offsprings in (1, 2, int(g.integers(3, 14))):
            array_rs, list_rs = (np.random.default_rng(10**6 + seed + n_offsprings) for _ in range(2))
            rows.random_state = list_rs
            expected = mating._offspring(problem, X_pop, _Tournament("nsga3", range(popsize), array_rs),
                                         n_offsprings, array_rs, {})
            got = rows.offspring(_Tournament("nsga3", range(popsize), list_rs), n_offsprings)
            assert expected.dtype == int and got == expected.tolist()
            assert list_rs.bit_generator.state == array_rs.bit_generator.state


def test_list_path_only_where_it_replays_exactly() -> None:
    """The list path is planned for integer populations within integer or float64 bounds, with the unaware
    strategies' operators; anything else takes the array path."""

    from pymoo.core.repair import Repair
    from pymoo.core.variable import Real

    from analysis.fastpath.mating import _RowMating

    g = np.random.default_rng(0)
    xl, xu = np.zeros(3, dtype=int), np.array([4, 0, 9])
    problem = SimpleNamespace(n_var=3, xl=xl, xu=xu)
    X_pop = np.array([[0, 0, 9], [4, 0, 3]])

    def plan(X=X_pop, problem=problem, change=None):
        mating = _mating_for(g, "two-point-crossover", 3)
        if change:
            change(mating)
        return _RowMating.plan(mating, problem, X, X.tolist(), None)

    assert plan() is not None
    assert plan(problem=SimpleNamespace(n_var=3, xl=xl.astype(float), xu=xu.astype(float))) is not None
    assert plan(X=X_pop.astype(float)) is None  # float population
    assert plan(X=np.array([[0, 0, 10], [4, 0, 3]])) is None  # outside the bounds
    assert plan(problem=SimpleNamespace(n_var=3, xl=xl.astype(np.float32), xu=xu.astype(np.float32))) is None
    assert plan(problem=SimpleNamespace(n_var=3, xl=xl, xu=np.array([4.0, 0.0, np.inf]))) is None
    assert plan(change=lambda m: setattr(m.mutation, "at_least_once", True)) is None
    assert plan(change=lambda m: setattr(m.mutation, "vtype", None)) is None
    assert plan(change=lambda m: setattr(m.mutation, "repair", None)) is None
    assert plan(change=lambda m: setattr(m.mutation, "eta", Real(-1.0))) is None
    assert plan(change=lambda m: setattr(m, "repair", type("Shift", (Repair,), {"_do": lambda s, p, X, **k: X})())) \
        is None


def test_nsga2_tournaments_on_lists_equal_pymoo() -> None:
    """The list tournaments equal pymoo's TournamentSelection with binary_tournament on feasible populations with
    dominated, equal and incomparable objectives and equal, infinite or NaN crowding distances."""
    from pymoo.algorithms.moo.nsga2 import binary_tournament
    from pymoo.core.population import Population
    from pymoo.operators.selection.tournament import TournamentSelection

    from analysis.fastpath.mating import _Tournament

    for seed in range(400):
        g = np.random.default_rng(seed)
        n, n_obj = int(g.integers(2, 15)), int(g.integers(1, 4))
        F = g.integers(0, 3, (n, n_obj)).astype(float)
        crowding = g.choice([0.0, 0.5, 1.0, np.inf, np.nan], n)
        pop = Population.new("X", np.zeros((n, 1)), "F", F, "CV", np.zeros((n, 1)), "rank", np.zeros(n),
                             "crowding", crowding)
        n_select = int(g.integers(1, 2 * n))
        expected_rs, got_rs = (np.random.default_rng(10**6 + seed) for _ in range(2))
        stand_in = SimpleNamespace(tournament_type="comp_by_dom_and_crowding", random_state=expected_rs)
        expected = TournamentSelection(func_comp=binary_tournament)._do(None, pop, n_select, 2,
                                                                        random_state=expected_rs, algorithm=stand_in)
        assert _Tournament("nsga2", pop, got_rs).select(n_select, 2) == expected.tolist()
        assert got_rs.bit_generator.state == expected_rs.bit_generator.state


# ---------------------------------------------------------------------------------------------------------
# Kernel Tuner's NSGA-II/III mating on lists against the array path (itself tested against pymoo)
# ---------------------------------------------------------------------------------------------------------

def _kernel_tuner_mating(g: np.random.Generator, crossover: str, memoised: bool):
    """Kernel Tuner's NSGA-II ArrayMating (its operators, random crossover and mutation probabilities) on the
    mixed-type test space of test_kt_operators, and the problem stand-in its repair reads the space from."""
    from kernel_tuner.strategies import pymoo_minimize as kt_pymoo
    from pymoo.algorithms.moo.nsga2 import NSGA2

    from helpers import searchspace

    space = searchspace(memoised)
    with array_mating_in_genetic_algorithms():
        algo = NSGA2(pop_size=10, crossover=kt_pymoo.crossover_oper_dict[crossover](prob=float(g.choice([1.0, 0.5]))),
                     mutation=kt_pymoo.TuningParamConfigNeighborhoodMutation(prob=float(g.choice([0.1, 0.5, 1.0])),
                                                                             searchspace=space),
                     repair=kt_pymoo.TuningParamConfigRepair(),
                     eliminate_duplicates=kt_pymoo.TuningParamConfigDuplicateElimination())
    mating = algo.mating
    if g.random() < 0.3:  # a NumPy probability: the list path takes pymoo's np.full for it, not [p] * n
        mating.mutation.prob.value = np.float64(mating.mutation.prob.value)
    mating._sized = {}
    return mating, SimpleNamespace(n_var=space.num_params, searchspace=space)


@pytest.mark.parametrize("memoised", [False, True], ids=["Kernel Tuner's queries", "memoised queries"])
def test_kernel_tuner_list_offspring_equal_array_offspring(memoised) -> None:
    """`_KernelTunerRowMating.offspring` equals the array path's `_offspring` with Kernel Tuner's operators:
    the same values of the same types, pymoo's and NumPy's global generators left alike, for 1 to 13 offspring
    of random valid and invalid populations (the repair at work)."""
    from analysis.fastpath.mating import _KernelTunerRowMating, _Tournament
    from helpers import random_rows

    crossovers = ["single-point-crossover", "two-point-crossover", "uniform-crossover"]
    mutated = repaired = 0
    for seed in range(150):
        g = np.random.default_rng(seed)
        mating, problem = _kernel_tuner_mating(g, crossovers[seed % 3], memoised)
        X_pop = random_rows(seed, int(g.integers(2, 13)), valid_share=float(g.choice([1.0, 0.6])))
        rows = _KernelTunerRowMating.plan(mating, problem, X_pop, X_pop.tolist(), None)
        assert rows is not None
        for n_offsprings in (1, 2, int(g.integers(3, 14))):
            array_rs, list_rs = (np.random.default_rng(10**6 + seed + n_offsprings) for _ in range(2))
            rows.random_state = list_rs
            np.random.seed(seed)
            expected = mating._offspring(problem, X_pop, _Tournament("nsga3", range(len(X_pop)), array_rs),
                                         n_offsprings, array_rs, {})
            expected_global = np.random.get_state()
            np.random.seed(seed)
            got = rows.offspring(_Tournament("nsga3", range(len(X_pop)), list_rs), n_offsprings)
            got_global = np.random.get_state()
            assert expected.dtype == object and got == expected.tolist()
            assert [type(v) for row in got for v in row] == [type(v) for v in expected.ravel()]
            assert list_rs.bit_generator.state == array_rs.bit_generator.state
            assert got_global[1].tolist() == expected_global[1].tolist() and got_global[2:] == expected_global[2:]
            mutated += sum(tuple(row) not in set(map(tuple, X_pop.tolist())) for row in got)
            repaired += not all(problem.searchspace.is_param_config_valid(tuple(row)) for row in X_pop.tolist())
    assert mutated and repaired


def test_kernel_tuner_list_path_only_where_it_replays_exactly() -> None:
    """Planned for Kernel Tuner's operators on an object population of scalar values; else the array path."""
    from kernel_tuner.strategies import pymoo_minimize as kt_pymoo
    from pymoo.operators.crossover.sbx import SBX

    from analysis.fastpath.mating import _KernelTunerRowMating
    from helpers import random_rows

    g = np.random.default_rng(1)
    X_pop = random_rows(1, 6, valid_share=1.0)

    def plan(X=X_pop, change=None):
        mating, problem = _kernel_tuner_mating(g, "two-point-crossover", False)
        if change:
            change(mating)
        return _KernelTunerRowMating.plan(mating, problem, X, X.tolist(), None)

    class OwnRepair(kt_pymoo.TuningParamConfigRepair):
        pass

    assert plan() is not None
    assert plan(X=X_pop[:, :0]) is None  # no variables
    assert plan(X=np.array([[1, 2], [3, 4]])) is None  # not an object population
    nested = X_pop.copy()
    nested[0, 0] = (1, 2)
    assert plan(X=nested) is None  # a sequence value
    assert plan(change=lambda m: setattr(m, "repair", OwnRepair())) is None
    assert plan(change=lambda m: setattr(m.mutation, "vtype", int)) is None
    assert plan(change=lambda m: setattr(m.mutation, "repair", kt_pymoo.TuningParamConfigRepair())) is None
    assert plan(change=lambda m: setattr(m.crossover, "n_offsprings", 1)) is None
    assert plan(change=lambda m: setattr(m, "crossover", SBX())) is None
