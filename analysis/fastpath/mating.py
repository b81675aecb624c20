"""pymoo's mating loop on plain arrays, for NSGA-II/III: Kernel Tuner's and the constraint-unaware variants.

A converged population keeps producing offspring that duplicate it; pymoo's `InfillCriterion.do`
then retries the whole mating (selection, crossover, mutation, duplicate elimination) up to 100
times per generation. Each retry builds Population and Individual objects and runs the
tournaments one Python call at a time, so that in a long constraint-unaware run nearly all the time
goes to matings whose offspring are thrown away (benchmarks/reports/ has the measurements).

`ArrayMating` does the same mating on arrays. It makes the same random draws, in the same order,
from the same generator, and calls the operators' own `_do` (pymoo's point crossover and
polynomial mutation are replayed with the same operations), so the offspring and the generator's
state afterwards are those of pymoo's `Mating`; only the object bookkeeping and the
per-tournament Python calls are gone. It handles binary tournaments of NSGA-II or NSGA-III on
feasible populations, a crossover with as many offspring as parents, a mutation and repairs that
only override `_do`, and the hashed duplicate eliminations of `duplicates`; anything else, e.g. a
population with a constraint violation, goes to pymoo's own `Mating.do`. `simulate_run` makes
pymoo's GeneticAlgorithm build it for the duration of a run. Tests compare both generation by
generation and on whole runs.

Once converged, each retry mates only the few pairs still missing (a handful of rows of a few
variables), hundreds of thousands of times in a long run, where NumPy's per-call overhead on such
tiny arrays is most of the time. So the tournaments are decided on Python lists, and the unaware strategies'
mating (point or uniform crossover, polynomial mutation rounded to integers: `_RowMating`) runs on
lists of Python numbers: the same draws from the generator (its array results read with
`tolist`), the same comparisons and IEEE-754 arithmetic (+, -, *, / on Python floats round as
NumPy's float64 ufuncs do), and `np.power` kept for the powers (NumPy's SIMD `power` differs from
the C library's `pow` in the last bit on some machines). Kernel Tuner's own NSGA-II/III mate on
lists too (`_KernelTunerRowMating`): the same crossover on lists, then Kernel Tuner's neighbourhood
mutation and repair as replayed by `kt_operators`, on the configurations' own values.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
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
from pymoo.operators.crossover.ux import UX, UniformCrossover
from pymoo.operators.mutation.pm import PM, PolynomialMutation
from pymoo.operators.repair.rounding import RoundingRepair
from pymoo.operators.selection.tournament import TournamentSelection

from analysis.fastpath import kt_operators
from analysis.fastpath.duplicates import ExactDuplicateElimination, HashedDuplicateElimination, flag_duplicates
from analysis.fastpath.patching import swapped

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
        pop_rows = X_pop.tolist()
        pop_keys = {tuple(row) for row in pop_rows}
        tournament = _Tournament(kind, pop, random_state)
        rows = next((plan for path in LIST_PATHS
                     if (plan := path.plan(self, problem, X_pop, pop_rows, random_state)) is not None), None)
        off_rows: list = []
        off_keys: set[tuple] = set()
        n_infills = 0
        X: list[list] | np.ndarray  # a list path's offspring rows, or the array path's X
        while len(off_rows) < n_offsprings:
            n_remaining = n_offsprings - len(off_rows)
            if rows is not None:
                X = rows.offspring(tournament, n_remaining)
                keys = [tuple(row) for row in X]
            else:
                X = self._offspring(problem, X_pop, tournament, n_remaining, random_state, kwargs)
                keys = [tuple(row) for row in X.tolist()]
            # DuplicateElimination.do: drop repeats within the mating (as the elimination in use does),
            # then those in the population, then those already kept; truncate to what is missing
            repeated = flag_duplicates(keys, None, [False] * len(keys), keep)
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
        # a list path's rows get its dtype (RoundingRepair's `astype(int)`, or object); the array path's keep theirs
        return Population.new("X", np.array(off_rows, dtype=None if rows is None else rows.dtype))

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
        parents = np.array(tournament.select(n_matings, cx.n_parents), dtype=np.intp)

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
        def keep_draw() -> np.ndarray:
            return random_state.random(size=len(X)) <= self._sized_value("mut.prob", len(X),
                                                                         lambda n: get(mut.prob, size=n))

        if type(mut) in _POLYNOMIAL_MUTATIONS and not mut.at_least_once:
            eta = self._sized_value("mut.eta", len(X), lambda n: get(mut.eta, size=n))
            prob_var = self._sized_value("mut.prob_var", len(X), lambda n: mut.get_prob_var(problem, size=n))
            Xm = _polynomial_mutation(X, problem.xl, problem.xu, eta, prob_var, random_state)
            mutated = keep_draw()
        elif kt_operators.replays(mut) == "mutation":
            # Kernel Tuner's draws come from NumPy's global generator, the keep-draw from pymoo's
            mutated = keep_draw()
            Xm = kt_operators.neighbourhood_mutation(mut, X, mutated)
        else:
            Xm = mut._do(problem, X.copy(), random_state=random_state, **kwargs)  # some mutate in place
            mutated = keep_draw()
        if np.any(mutated):
            X = X.astype(np.result_type(X, Xm))  # a copy: pymoo sets the mutated rows on new individuals
            X[mutated] = Xm[mutated]
        if mut.vtype is not None:
            X = X.astype(mut.vtype)
        if mut.repair is not None:
            X = mut.repair._do(problem, X)  # Operator.__call__ runs it as repair.do(problem, out), no kwargs
        # the mating's own repair (the algorithm's; NoRepair for the unaware strategies)
        if kt_operators.replays(self.repair) == "repair":
            return kt_operators.neighbour_repair(problem, X)
        return self.repair._do(problem, X, random_state=random_state, **kwargs)


class _Tournament:
    """Binary tournaments of NSGA-II (domination, then crowding) or NSGA-III (random) on a feasible population.

    A retry's tournaments are a handful of pairs, so they are decided on Python lists (the relation
    and crowding read once per generation) rather than with NumPy operations on 2-element arrays."""

    def __init__(self, kind: str, pop: Population, random_state: np.random.Generator) -> None:
        self.kind = kind
        self.n = len(pop)
        self.random_state = random_state
        if kind == "nsga2":
            # Dominator.get_relation of every ordered pair, once per generation: 1 a dominates b, -1 b dominates a
            F = pop.get("F")
            a_better = (F[:, None, :] < F[None, :, :]).any(axis=2)
            b_better = (F[None, :, :] < F[:, None, :]).any(axis=2)
            self.relation = np.where(a_better & ~b_better, 1, np.where(b_better & ~a_better, -1, 0)).tolist()
            self.crowding = pop.get("crowding").astype(float).tolist()

    def select(self, n_select: int, n_parents: int) -> list[list[int]]:
        """TournamentSelection._do: permutations drawn as pymoo draws them, one winner per pair;
        the (n_select, n_parents) index matrix as a list of rows."""
        rs = self.random_state
        n_random = n_select * n_parents * 2
        drawn: list[int] = []
        for _ in range(math.ceil(n_random / self.n)):  # random_permutations, concatenated
            drawn.extend(rs.permutation(self.n).tolist())
        a, b = drawn[0:n_random:2], drawn[1:n_random:2]  # P.reshape(-1, 2)[:, 0] and [:, 1]
        if self.kind == "nsga3":
            # comp_by_cv_then_random on a feasible population: rs.choice([a, b]) per tournament, in order
            winners = _random_picks(rs, a, b)
        else:
            winners = self._dominance_then_crowding(a, b)
        return [winners[i:i + n_parents] for i in range(0, len(winners), n_parents)]

    def _dominance_then_crowding(self, a: list[int], b: list[int]) -> list[int]:
        """nsga2.binary_tournament ("comp_by_dom_and_crowding") with all CV zero: the dominating one,
        else the larger crowding distance, else (equal, both infinite, or NaN) a random pick, drawn for
        all such tournaments at once after the others, in tournament order."""
        relation, crowding = self.relation, self.crowding
        winners: list[int] = []
        ties: list[int] = []
        for t, (x, y) in enumerate(zip(a, b)):
            rel = relation[x][y]
            if rel == 1:
                winners.append(x)
            elif rel == -1:
                winners.append(y)
            elif crowding[x] > crowding[y]:
                winners.append(x)
            elif crowding[x] < crowding[y]:
                winners.append(y)
            else:
                winners.append(-1)
                ties.append(t)
        if ties:
            for t, pick in zip(ties, _random_picks(self.random_state, [a[t] for t in ties], [b[t] for t in ties])):
                winners[t] = pick
        return winners


def _random_picks(random_state: np.random.Generator, a: Sequence[int], b: Sequence[int]) -> list[int]:
    """What `[random_state.choice([x, y]) for x, y in zip(a, b)]` picks, in one draw.

    Generator.choice of a two-element list draws one integer in [0, 2) each call, and NumPy's
    bounded-integer stream is the same whether drawn one at a time or as an array (the tests
    compare the picks and the generator state after them with pymoo's per-tournament calls)."""
    draws = random_state.integers(0, 2, size=len(a)).tolist()
    return [x if d == 0 else y for x, y, d in zip(a, b, draws)]


_POINT_CROSSOVERS = (PointCrossover, SinglePointCrossover, TwoPointCrossover)
_UNIFORM_CROSSOVERS = (UniformCrossover, UX)
_POLYNOMIAL_MUTATIONS = (PM, PolynomialMutation)


def _point_crossover_cuts(n_matings: int, n_var: int, n_points: int,
                          random_state: np.random.Generator) -> list[list[int]]:
    """PointCrossover._do's `r` as one list per mating: the same draws (a permutation of 0..n_var-2
    per mating, in mating order), its first `n_points` plus one, sorted, and n_var appended. The
    mating's mask M is set on the segments [r0, r1), [r2, r3), ... (pymoo's per-mating loop)."""
    cuts = []
    for _ in range(n_matings):
        cuts.append([c + 1 for c in sorted(random_state.permutation(n_var - 1).tolist()[:n_points])] + [n_var])
    return cuts


def _uniform_crossover_masks(n_matings: int, n_var: int, random_state: np.random.Generator) -> list[list[bool]]:
    """UniformCrossover._do's mask M as one list per mating: `random((n_matings, n_var)) < 0.5`."""
    return [[r < 0.5 for r in row] for row in random_state.random((n_matings, n_var)).tolist()]


def _point_crossover(X: np.ndarray, n_points: int, random_state: np.random.Generator) -> np.ndarray:
    """PointCrossover._do: the same cut-point draws and mask; crossover_mask's swap as two np.where."""
    _, n_matings, n_var = X.shape
    M = np.zeros((n_matings, n_var), dtype=bool)
    for m, r in enumerate(_point_crossover_cuts(n_matings, n_var, n_points, random_state)):
        for start, end in zip(r[0::2], r[1::2]):  # the segments [r0, r1), [r2, r3), ...
            M[m, start:end] = True
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


class _Bounds:
    """A problem's bounds for the list path: mut_pm's xl, xu and xu - xl per variable as Python floats
    (xu - xl taken in the bounds' own dtype, then converted, as mut_pm's `(X - _xl) / (_xu - _xl)`
    divides by it), and the variables it may mutate (those with xl != xu)."""

    def __init__(self, xl: np.ndarray, xu: np.ndarray) -> None:
        self.xl = xl.astype(float).tolist()
        self.xu = xu.astype(float).tolist()
        self.span = (xu - xl).astype(float).tolist()
        self.free = np.flatnonzero(~(xl == xu)).tolist()

    @staticmethod
    def exact(xl: Any, xu: Any) -> bool:
        """Bounds whose values, differences and the integers between them are exact as Python floats
        and whose arithmetic in NumPy is float64 or exact integer arithmetic."""
        for bound in (xl, xu):
            if not (isinstance(bound, np.ndarray) and bound.ndim == 1 and len(bound) == len(xl)):
                return False
            if not (bound.dtype.kind in "iu" or bound.dtype == np.float64):
                return False
            if not np.all(np.abs(bound) <= 2.0 ** 52):
                return False  # NaN and infinite bounds fail too
        return bool(np.all(xl <= xu))


def _polynomial_mutation_draws(n_rows: int, bounds: _Bounds, prob_var: list,
                               random_state: np.random.Generator) -> tuple[list[tuple[int, int]], list[float]]:
    """mut_pm's draws (at_least_once off) for `n_rows` rows: the entries it mutates, as (row, variable)
    in row-major order (the order of its boolean indexing), and the random number of each.

    The same calls as mut_binomial's and mut_pm's: `random((n_rows, n_var))` compared with each
    row's probability (variables with xl == xu left out), then `random(k)` for the k entries."""
    draws = random_state.random((n_rows, len(bounds.xl))).tolist()
    entries = [(i, j) for i, row in enumerate(draws) for j in bounds.free if row[j] < prob_var[i]]
    return entries, random_state.random(len(entries)).tolist()


def _polynomial_mutation_values(rows: list[list], entries: list[tuple[int, int]], rand: list[float],
                                bounds: _Bounds, eta: list) -> list[float]:
    """mut_pm's new value of each of `entries` of `rows` (Python numbers within the bounds), given
    their random numbers: the values `_polynomial_mutation` gives there.

    Why it is the same: the comparisons and the +, -, *, / on Python floats are IEEE-754 double
    operations rounded as NumPy's float64 ufuncs round them, done in mut_pm's order (no fused
    operations in either), on `float(x)` as in `X.astype(float)`. The powers stay NumPy's
    (`np.power` on float64 arrays, as in mut_pm): only each entry's own branch is computed (mut_pm
    computes both and keeps one; a ufunc's result for an element does not depend on the other
    elements). Within the bounds, delta1 and delta2 lie in [0, 1], so with eta > -1 nothing is NaN
    or infinite, and the clipping to the bounds is all that set_to_bounds_if_outside changes."""
    if not entries:
        return []
    xl, xu, span = bounds.xl, bounds.xu, bounds.span
    base, exponent = [], []
    for (i, j), r in zip(entries, rand):
        x = float(rows[i][j])
        base.append(1.0 - (x - xl[j]) / span[j] if r <= 0.5 else 1.0 - (xu[j] - x) / span[j])  # 1 - delta1|2
        exponent.append(eta[i] + 1.0)
    power = np.power(np.array(base), np.array(exponent)).tolist()
    val = [2.0 * r + (1.0 - 2.0 * r) * p if r <= 0.5 else 2.0 * (1.0 - r) + 2.0 * (r - 0.5) * p
           for r, p in zip(rand, power)]
    root = np.power(np.array(val), np.array([1.0 / e for e in exponent])).tolist()  # mut_pow = 1 / (eta + 1)
    values = []
    for (i, j), r, q in zip(entries, rand, root):
        deltaq = q - 1.0 if r <= 0.5 else 1.0 - q
        y = float(rows[i][j]) + deltaq * span[j]
        if y < xl[j]:
            y = xl[j]
        if y > xu[j]:
            y = xu[j]
        values.append(y)
    return values


def _cross_rows(cx: Crossover, pop_rows: list[list], parents: list[list[int]], prob: list,
                random_state: np.random.Generator) -> list[list]:
    """Crossover.do of a point or uniform crossover with two offspring per pair, on lists: `random(n_matings)`
    for which pairs cross, then the crossover's mask draws if any does. Offspring 0 of every mating, then
    offspring 1 (Xp.reshape(-1, n_var)); non-crossing pairs copy their parents (the same list objects, so
    callers replace rows rather than change them)."""
    n_matings = len(parents)
    first = [pop_rows[a] for a, _ in parents]
    second = [pop_rows[b] for _, b in parents]
    cross = [r < p for r, p in zip(random_state.random(n_matings).tolist(), prob)]
    if any(cross):  # crossover_mask: the two swap the entries where the mating's mask is set
        n_var = len(pop_rows[0])
        if type(cx) in _POINT_CROSSOVERS:
            for m, r in enumerate(_point_crossover_cuts(n_matings, n_var, cx.n_points, random_state)):
                if cross[m]:
                    a, b = first[m], second[m]
                    x, y = a[:], b[:]
                    for start, end in zip(r[0::2], r[1::2]):  # the segments [r0, r1), [r2, r3), ...
                        x[start:end], y[start:end] = b[start:end], a[start:end]
                    first[m], second[m] = x, y
        else:
            for m, mask in enumerate(_uniform_crossover_masks(n_matings, n_var, random_state)):
                if cross[m]:
                    a, b = first[m], second[m]
                    first[m] = [y if s else x for x, y, s in zip(a, b, mask)]
                    second[m] = [x if s else y for x, y, s in zip(a, b, mask)]
    return first + second


class _ListPath:
    """What both list paths share: the operator parameters per size and the dtype of the offspring array."""

    dtype: Any  # of the offspring array the mating returns, as the array path's would be
    _variables: dict[str, Any]  # name -> an operator's parameter, which pymoo reads as get(parameter, size=n)
    _computed: dict[str, Any]  # name -> function of the size, for a parameter pymoo computes otherwise
    _sized: dict[tuple[str, int], list]

    def _per_row(self, name: str, size: int) -> list:
        """An operator parameter for `size` rows as pymoo computes it, as a list, once per size and call."""
        key = (name, size)
        if key not in self._sized:
            self._sized[key] = self._compute(name, size)
        return self._sized[key]

    def _compute(self, name: str, size: int) -> list:
        if name in self._variables:
            value = get(self._variables[name])
            if _plain_number(value):  # get(parameter, size=n) is np.full(n, value), whose tolist() is [value] * n
                return [value] * size
            values = get(self._variables[name], size=size)
        else:
            values = self._computed[name](size)
        return np.broadcast_to(np.asarray(values), (size,)).tolist()


def _plain_number(value: Any) -> bool:
    """A Python float or bool, or an int that NumPy holds as int64: np.full(n, value).tolist() gives it back n times."""
    return type(value) in (float, bool) or (type(value) is int and -(2**63) <= value < 2**63)


class _RowMating(_ListPath):
    """The unaware strategies' mating on lists of Python numbers, for an integer population within
    the bounds: a point or uniform crossover with two offspring per pair, polynomial mutation (no
    at_least_once) with vtype float and RoundingRepair as its repair, and an identity mating repair.

    `offspring` is `ArrayMating._offspring` for that pipeline: the tournaments, `random(n_matings)`
    for which pairs cross, the crossover's mask draws if any does, mut_pm's draws, then
    `random(n)` for which rows take the mutation; the rows then rounded as RoundingRepair rounds
    (Python's `round` of a float is round-half-even, as `np.around`, and exact), the others left
    as the integers they are (`round(float(x)) == x` for the integers the bounds allow)."""

    dtype = int  # RoundingRepair's astype(int)

    def __init__(self, mating: ArrayMating, problem: Any, pop_rows: list[list[int]],
                 random_state: np.random.Generator) -> None:
        self.crossover = mating.crossover
        self.pop_rows = pop_rows
        self.random_state = random_state
        self.bounds = _Bounds(problem.xl, problem.xu)
        cx, mut = mating.crossover, mating.mutation
        # per size, as Crossover.do, PolynomialMutation._do and Mutation.do get them, and mut_binomial computes one
        self._variables = {"cx.prob": cx.prob, "mut.eta": mut.eta, "mut.prob": mut.prob}
        self._computed = {"mut.prob_var": lambda n: np.ones(n) * mut.get_prob_var(problem, size=n)}
        self._sized = {}

    @classmethod
    def plan(cls, mating: ArrayMating, problem: Any, X_pop: np.ndarray, pop_rows: list[list[int]],
             random_state: np.random.Generator) -> _RowMating | None:
        """The list path for this mating and population, or None where it does not apply (the array path)."""
        cx, mut = mating.crossover, mating.mutation
        if type(cx) not in _POINT_CROSSOVERS + _UNIFORM_CROSSOVERS or cx.n_offsprings != 2:
            return None
        if not (type(mut) in _POLYNOMIAL_MUTATIONS and not mut.at_least_once and mut.vtype is float
                and type(mut.repair) is RoundingRepair and type(mating.repair)._do is Repair._do):
            return None
        xl, xu = problem.xl, problem.xu
        if not (X_pop.ndim == 2 and X_pop.dtype.kind in "iu" and _Bounds.exact(xl, xu)
                and X_pop.shape[1] == len(xl) == problem.n_var):
            return None
        if not (np.all(X_pop >= xl) and np.all(X_pop <= xu)):
            return None
        eta = np.asarray(get(mut.eta), dtype=float)
        if not np.all(eta > -1.0) or not np.all(np.isfinite(eta)):
            return None
        return cls(mating, problem, pop_rows, random_state)

    def offspring(self, tournament: _Tournament, n_offsprings: int) -> list[list[int]]:
        """One mating (Mating._do plus the mutation's rounding): the offspring as lists of integers."""
        cx, rs = self.crossover, self.random_state
        n_matings = math.ceil(n_offsprings / 2)
        parents = tournament.select(n_matings, 2)

        rows = _cross_rows(cx, self.pop_rows, parents, self._per_row("cx.prob", n_matings), rs)

        # Mutation.do with PolynomialMutation._do (all its draws), then `random(n) <= prob` for the rows
        # that take the mutation: only theirs are computed, then rounded (vtype float, RoundingRepair)
        n = len(rows)
        prob_var = self._per_row("mut.prob_var", n)
        entries, rand = _polynomial_mutation_draws(n, self.bounds, prob_var, rs)
        prob = self._per_row("mut.prob", n)
        taken = [c <= p for c, p in zip(rs.random(size=n).tolist(), prob)]
        if not any(taken):
            return rows
        offspring = [row[:] if take else row for row, take in zip(rows, taken)]
        kept = [k for k, (i, _) in enumerate(entries) if taken[i]]
        if kept:
            entries, rand = [entries[k] for k in kept], [rand[k] for k in kept]
            eta = self._per_row("mut.eta", n)
            for (i, j), y in zip(entries, _polynomial_mutation_values(rows, entries, rand, self.bounds, eta)):
                offspring[i][j] = round(y)
        return offspring


class _KernelTunerRowMating(_ListPath):
    """Kernel Tuner's NSGA-II/III mating on lists of the configurations' values: a point or uniform
    crossover with two offspring per pair, Kernel Tuner's neighbourhood mutation (no vtype, no repair
    of its own) and Kernel Tuner's repair as the mating's repair, on a population of scalar values.

    `offspring` is `ArrayMating._offspring` for that pipeline: the tournaments, the crossover's draws
    (`_cross_rows`), `random(n) <= prob` for the rows that take the mutation, Kernel Tuner's
    draws from NumPy's global generator for every row (`kt_operators.mutations`; the two generators
    are independent), then the repair's (`kt_operators.repairs`). The values stay the population's
    own objects, as `np.where` and row assignment on the object arrays keep them, and a changed row
    takes the configuration's values, as `np.array(config, dtype=object)` does for scalars."""

    dtype = object

    def __init__(self, mating: ArrayMating, problem: Any, pop_rows: list[list], random_state: np.random.Generator):
        self.crossover = mating.crossover
        self.mutation_space = mating.mutation.searchspace  # Kernel Tuner's mutation asks its own searchspace,
        self.repair_space = problem.searchspace  # its repair the problem's (the same object in Kernel Tuner)
        self.pop_rows = pop_rows
        self.random_state = random_state
        self._variables = {"cx.prob": mating.crossover.prob, "mut.prob": mating.mutation.prob}
        self._computed = {}
        self._sized = {}

    @classmethod
    def plan(cls, mating: ArrayMating, problem: Any, X_pop: np.ndarray, pop_rows: list[list],
             random_state: np.random.Generator) -> _KernelTunerRowMating | None:
        """The list path for this mating and population, or None where it does not apply."""
        cx, mut = mating.crossover, mating.mutation
        if type(cx) not in _POINT_CROSSOVERS + _UNIFORM_CROSSOVERS or cx.n_offsprings != 2:
            return None
        if kt_operators.replays(mut) != "mutation" or mut.vtype is not None or mut.repair is not None:
            return None
        if kt_operators.replays(mating.repair) != "repair":
            return None
        if not (X_pop.ndim == 2 and X_pop.dtype == object and X_pop.shape[1] > 0):
            return None
        if not all(type(value) in _SCALARS for row in pop_rows for value in row):
            return None  # np.array(..., dtype=object) would nest a sequence value
        return cls(mating, problem, pop_rows, random_state)

    def offspring(self, tournament: _Tournament, n_offsprings: int) -> list[list]:
        """One mating (Mating._do plus the mating's repair): the offspring as lists of values."""
        rs = self.random_state
        n_matings = math.ceil(n_offsprings / 2)
        parents = tournament.select(n_matings, 2)
        rows = _cross_rows(self.crossover, self.pop_rows, parents, self._per_row("cx.prob", n_matings), rs)
        n = len(rows)
        taken = [c <= p for c, p in zip(rs.random(size=n).tolist(), self._per_row("mut.prob", n))]
        for i, config in kt_operators.mutations(self.mutation_space, rows, taken):
            rows[i] = list(config)
        for i, config in kt_operators.repairs(self.repair_space, rows):
            rows[i] = list(config)
        return rows


_SCALARS = frozenset({int, float, str, bool, type(None)})
LIST_PATHS = (_RowMating, _KernelTunerRowMating)


def array_mating_in_genetic_algorithms() -> contextlib.AbstractContextManager:
    """Let pymoo's genetic algorithms (Kernel Tuner's NSGA-II/III among them) build ArrayMating while active.

    GeneticAlgorithm.__init__ constructs `Mating(selection, crossover, mutation, repair=...,
    eliminate_duplicates=..., n_max_iterations=100)`; ArrayMating takes the same arguments and
    hands anything it cannot replay exactly to pymoo's own Mating.do.
    """
    return swapped(pymoo_genetic, Mating=ArrayMating)
