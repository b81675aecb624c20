"""pymoo's mating loop on plain arrays, for NSGA-II/III: Kernel Tuner's and the constraint-unaware variants.

A converged population keeps producing offspring that duplicate it; pymoo's `InfillCriterion.do`
then retries the whole mating (selection, crossover, mutation, duplicate elimination) up to 100
times per generation. Each retry builds Population and Individual objects and runs the
tournaments one Python call at a time, which made the mating ~98 % of a long unaware run
(blackscholes O3, NSGA-II, budget 150: 26,208 matings in 267 generations).

`ArrayMating` does the same mating on arrays. It makes the same random draws, in the same order,
from the same generator, and calls the operators' own `_do` (pymoo's point crossover and
polynomial mutation are replayed with the same operations), so the offspring and the generator's
state afterwards are those of pymoo's `Mating`; only the object bookkeeping and the
per-tournament Python calls are gone. It handles binary tournaments of NSGA-II or NSGA-III on
feasible populations, a crossover with as many offspring as parents, a mutation and repairs that
only override `_do`, and the hashed duplicate eliminations of `accel`; anything else, e.g. a
population with a constraint violation, goes to pymoo's own `Mating.do`. `simulate_run` makes
pymoo's GeneticAlgorithm build it for the duration of a run. Tests compare both generation by
generation and on whole runs.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from pymoo.algorithms.base import genetic as pymoo_genetic
from pymoo.algorithms.moo import nsga2 as pymoo_nsga2
from pymoo.algorithms.moo import nsga3 as pymoo_nsga3
from pymoo.core.crossover import Crossover
from pymoo.core.mating import Mating
from pymoo.core.mutation import Mutation
from pymoo.core.population import Population
from pymoo.core.repair import Repair
from pymoo.core.variable import get
from pymoo.operators.crossover.pntx import PointCrossover, SinglePointCrossover, TwoPointCrossover
from pymoo.operators.mutation.pm import PM, PolynomialMutation
from pymoo.operators.selection.tournament import TournamentSelection

from analysis.simulate.accel import ExactDuplicateElimination, HashedDuplicateElimination, flag_duplicates

__all__ = ["ArrayMating", "array_mating_in_genetic_algorithms"]

# duplicate elimination -> which of equal offspring in one mating survives: pymoo's default (cdist)
# keeps the first, its element-wise one (Kernel Tuner's, hashed here) the last
_KEEP = {ExactDuplicateElimination: "first", HashedDuplicateElimination: "last"}


def _plain_repair(repair: Any) -> bool:
    """A repair whose effect is its `_do` on the X matrix (pymoo's Repair.do, no vtype)."""
    return repair is None or (isinstance(repair, Repair) and type(repair).do is Repair.do and repair.vtype is None)


class ArrayMating(Mating):
    """pymoo's Mating with the infill loop done on arrays (same draws, same offspring, same generator state)."""

    def _fast_path(self, pop: Population, algorithm: Any, random_state: Any) -> str | None:
        """The tournament this mating can replay on arrays ("nsga2" or "nsga3"), or None to use pymoo's."""
        sel, cx, mut = self.selection, self.crossover, self.mutation
        if not (type(sel) is TournamentSelection and sel.pressure == 2 and sel.vtype is None and sel.repair is None):
            return None
        if sel.func_comp is pymoo_nsga2.binary_tournament:
            if getattr(algorithm, "tournament_type", None) != "comp_by_dom_and_crowding":
                return None
            if getattr(algorithm, "random_state", None) is not random_state:
                return None  # binary_tournament draws its ties from algorithm.random_state
            kind = "nsga2"
        elif sel.func_comp is pymoo_nsga3.comp_by_cv_then_random:
            kind = "nsga3"
        else:
            return None
        if not (isinstance(cx, Crossover) and type(cx).do is Crossover.do and cx.vtype is None and cx.repair is None
                and cx.n_offsprings == cx.n_parents):
            return None
        if not (isinstance(mut, Mutation) and type(mut).do is Mutation.do and _plain_repair(mut.repair)):
            return None
        if not (_plain_repair(self.repair) and type(self.eliminate_duplicates) in _KEEP):
            return None
        if len(pop) == 0 or np.any(pop.get("CV") > 0.0):
            return None
        return kind

    def do(self, problem, pop, n_offsprings, random_state=None, n_max_iterations=None, **kwargs):
        """Create up to `n_offsprings` offspring not in `pop` nor among themselves, as pymoo's InfillCriterion.do."""
        algorithm = kwargs.get("algorithm")
        kind = self._fast_path(pop, algorithm, random_state)
        if kind is None or random_state is None or kwargs.get("parents") is not None:
            return super().do(problem, pop, n_offsprings, random_state=random_state,
                              n_max_iterations=n_max_iterations, **kwargs)
        if n_max_iterations is None:
            n_max_iterations = self.n_max_iterations

        X_pop = pop.get("X")
        self._sized: dict[tuple[str, int], Any] = {}  # operator parameters by size, fixed within one call
        keep = _KEEP[type(self.eliminate_duplicates)]
        pop_keys = {tuple(row) for row in X_pop.tolist()}
        tournament = _Tournament(kind, pop, random_state)
        off_rows: list[np.ndarray] = []
        off_keys: set[tuple] = set()
        n_infills = 0
        while len(off_rows) < n_offsprings:
            n_remaining = n_offsprings - len(off_rows)
            X = self._offspring(problem, X_pop, tournament, n_remaining, random_state, kwargs)
            keys = [tuple(row) for row in X.tolist()]
            # DuplicateElimination.do: drop repeats within the mating (as the elimination in use does),
            # then those in the population, then those already kept; truncate to what is missing
            repeated = flag_duplicates(keys, None, np.zeros(len(keys), dtype=bool), keep)
            added = 0
            for i, key in enumerate(keys):
                if not repeated[i] and key not in pop_keys and key not in off_keys:
                    if added == n_remaining:
                        break
                    off_rows.append(X[i])
                    off_keys.add(key)
                    added += 1
            n_infills += 1
            if n_infills >= n_max_iterations:
                break
        if not off_rows:
            return Population.create()
        return Population.new("X", np.array(off_rows))

    def _sized_value(self, name: str, size: int, make: Any) -> Any:
        """pymoo's `get(parameter, size=size)` for an operator parameter, computed once per size and call."""
        key = (name, size)
        if key not in self._sized:
            self._sized[key] = make(size)
        return self._sized[key]

    def _offspring(self, problem, X_pop, tournament, n_offsprings, random_state, kwargs) -> np.ndarray:
        """One mating as Mating._do plus the repairs: selection, crossover, mutation, rounding; X of the offspring."""
        cx, mut = self.crossover, self.mutation
        n_matings = math.ceil(n_offsprings / cx.n_offsprings)
        parents = tournament.select(n_matings, cx.n_parents)

        # Crossover.do: parents' X as (n_parents, n_matings, n_var); offspring of non-crossing pairs copy them
        X = np.swapaxes(X_pop[parents], 0, 1)
        Xp = np.empty((cx.n_offsprings, n_matings, problem.n_var), dtype=X.dtype)
        cross = random_state.random(n_matings) < self._sized_value("cx.prob", n_matings, lambda n: get(cx.prob, size=n))
        if np.any(cross):
            if type(cx) in _POINT_CROSSOVERS:
                Q = _point_crossover(X, cx.n_points, random_state)
            else:
                Q = cx._do(problem, X, random_state=random_state, **kwargs)
            Xp[:, cross] = Q[:, cross]
        Xp[:, ~cross] = X[:, ~cross]
        X = Xp.reshape(-1, X.shape[-1])

        # Mutation.do + Operator.__call__ (vtype, then the mutation's repair)
        if type(mut) in _POLYNOMIAL_MUTATIONS and not mut.at_least_once:
            eta = self._sized_value("mut.eta", len(X), lambda n: get(mut.eta, size=n))
            prob_var = self._sized_value("mut.prob_var", len(X), lambda n: mut.get_prob_var(problem, size=n))
            Xm = _polynomial_mutation(X, problem.xl, problem.xu, eta, prob_var, random_state)
        else:
            Xm = mut._do(problem, X.copy(), random_state=random_state, **kwargs)  # some mutate in place
        mutated = random_state.random(size=len(X)) <= self._sized_value("mut.prob", len(X),
                                                                        lambda n: get(mut.prob, size=n))
        if np.any(mutated):
            X = X.astype(np.result_type(X, Xm))  # a copy: pymoo sets the mutated rows on new individuals
            X[mutated] = Xm[mutated]
        if mut.vtype is not None:
            X = X.astype(mut.vtype)
        if mut.repair is not None:
            X = mut.repair._do(problem, X)  # Operator.__call__ runs it as repair.do(problem, out), no kwargs
        # the mating's own repair (the algorithm's; NoRepair for the unaware strategies)
        return self.repair._do(problem, X, random_state=random_state, **kwargs)


class _Tournament:
    """Binary tournaments of NSGA-II (domination, then crowding) or NSGA-III (random) on a feasible population."""

    def __init__(self, kind: str, pop: Population, random_state: np.random.Generator) -> None:
        self.kind = kind
        self.n = len(pop)
        self.random_state = random_state
        if kind == "nsga2":
            # Dominator.get_relation of every ordered pair, once per generation: 1 a dominates b, -1 b dominates a
            F = pop.get("F")
            a_better = (F[:, None, :] < F[None, :, :]).any(axis=2)
            b_better = (F[None, :, :] < F[:, None, :]).any(axis=2)
            self.relation = np.where(a_better & ~b_better, 1, np.where(b_better & ~a_better, -1, 0))
            self.crowding = pop.get("crowding").astype(float)

    def select(self, n_select: int, n_parents: int) -> np.ndarray:
        """TournamentSelection._do: permutations drawn as pymoo draws them, one winner per pair."""
        rs = self.random_state
        n_random = n_select * n_parents * 2
        n_perms = math.ceil(n_random / self.n)
        P = np.concatenate([rs.permutation(self.n) for _ in range(n_perms)])[:n_random].reshape(-1, 2)
        a, b = P[:, 0], P[:, 1]
        if self.kind == "nsga3":
            # comp_by_cv_then_random on a feasible population: rs.choice([a, b]) per tournament, in order
            winners = _random_picks(rs, a, b)
        else:
            winners = self._dominance_then_crowding(a, b)
        return winners.reshape(n_select, n_parents)

    def _dominance_then_crowding(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """nsga2.binary_tournament ("comp_by_dom_and_crowding") with all CV zero."""
        relation = self.relation[a, b]
        cd_a, cd_b = self.crowding[a], self.crowding[b]
        winners = np.where(relation == 1, a, np.where(relation == -1, b, -1))
        undecided = relation == 0
        winners = np.where(undecided & (cd_a > cd_b), a, winners)
        winners = np.where(undecided & (cd_a < cd_b), b, winners)
        ties = np.flatnonzero(winners < 0)  # equal crowding: a random pick, in tournament order
        if len(ties):
            winners[ties] = _random_picks(self.random_state, a[ties], b[ties])
        return winners


def _random_picks(random_state: np.random.Generator, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """What `[random_state.choice([x, y]) for x, y in zip(a, b)]` picks, in one draw.

    Generator.choice of a two-element list draws one integer in [0, 2) each call, and NumPy's
    bounded-integer stream is the same whether drawn one at a time or as an array (the tests
    compare the picks and the generator state after them with pymoo's per-tournament calls)."""
    return np.where(random_state.integers(0, 2, size=len(a)) == 0, a, b)


_POINT_CROSSOVERS = (PointCrossover, SinglePointCrossover, TwoPointCrossover)
_POLYNOMIAL_MUTATIONS = (PM, PolynomialMutation)


def _point_crossover(X: np.ndarray, n_points: int, random_state: np.random.Generator) -> np.ndarray:
    """PointCrossover._do: the same cut-point draws; the segment mask built without a per-mating loop."""
    _, n_matings, n_var = X.shape
    r = np.vstack([random_state.permutation(n_var - 1) + 1 for _ in range(n_matings)])[:, :n_points]
    r.sort(axis=1)
    r = np.column_stack([r, np.full(n_matings, n_var)])
    columns = np.arange(n_var)
    M = np.zeros((n_matings, n_var), dtype=bool)
    for j in range(0, r.shape[1] - 1, 2):  # segments [r_j, r_j+1), [r_j+2, r_j+3), ... swap
        M |= (columns >= r[:, j, None]) & (columns < r[:, j + 1, None])
    return np.stack([np.where(M, X[1], X[0]), np.where(M, X[0], X[1])])


def _polynomial_mutation(X: np.ndarray, xl: np.ndarray, xu: np.ndarray, eta: np.ndarray, prob_var: np.ndarray,
                         random_state: np.random.Generator) -> np.ndarray:
    """PolynomialMutation._do (pymoo's mut_pm, at_least_once off) with its eta and per-variable
    probability for len(X) rows: the same draws and the same float operations in the same order,
    on the mutated entries picked by index instead of tiled copies."""
    X = X.astype(float)
    n, n_var = X.shape
    mut = random_state.random((n, n_var)) < prob_var[:, None]  # mut_binomial (np.ones(n) * prob is prob)
    mut[:, xl == xu] = False
    rows, cols = np.nonzero(mut)  # row-major, the order of boolean indexing
    x, _xl, _xu, eta = X[rows, cols], xl[cols], xu[cols], eta[rows]

    delta1 = (x - _xl) / (_xu - _xl)
    delta2 = (_xu - x) / (_xu - _xl)
    mut_pow = 1.0 / (eta + 1.0)
    rand = random_state.random(x.shape)
    mask = rand <= 0.5
    mask_not = np.logical_not(mask)
    deltaq = np.zeros(x.shape)
    with np.errstate(invalid="ignore"):
        xy = 1.0 - delta1
        val = 2.0 * rand + (1.0 - 2.0 * rand) * (np.power(xy, (eta + 1.0)))
        d = np.power(val, mut_pow) - 1.0
        deltaq[mask] = d[mask]
        xy = 1.0 - delta2
        val = 2.0 * (1.0 - rand) + 2.0 * (rand - 0.5) * (np.power(xy, (eta + 1.0)))
        d = 1.0 - (np.power(val, mut_pow))
        deltaq[mask_not] = d[mask_not]
    y = x + deltaq * (_xu - _xl)
    y = np.where(y < _xl, _xl, y)
    y = np.where(y > _xu, _xu, y)

    Xp = X.copy()
    Xp[rows, cols] = y
    Xp = np.where(Xp < xl, xl, Xp)  # set_to_bounds_if_outside
    return np.where(Xp > xu, xu, Xp)


@contextlib.contextmanager
def array_mating_in_genetic_algorithms() -> Iterator[None]:
    """Let pymoo's genetic algorithms (Kernel Tuner's NSGA-II/III among them) build ArrayMating while active.

    GeneticAlgorithm.__init__ constructs `Mating(selection, crossover, mutation, repair=...,
    eliminate_duplicates=..., n_max_iterations=100)`; ArrayMating takes the same arguments and
    hands anything it cannot replay exactly to pymoo's own Mating.do.
    """
    original = pymoo_genetic.Mating
    pymoo_genetic.Mating = ArrayMating
    try:
        yield
    finally:
        pymoo_genetic.Mating = original
