"""Run an optimizer with an ask/tell interface as a Kernel Tuner strategy.

Most optimizers (pymoo, Optuna, Nevergrad, a hand-written one) ask for points and are told their
costs. `tune_with` turns such an optimizer into the `tune(searchspace, runner, tuning_options)` of a
Kernel Tuner strategy module, so the same file runs under `kernel_tuner.tune_kernel(strategy=module)`
and in the suite's simulation engine::

    from analysis.simulate.asktell import ADAPTER_OPTIONS, Problem, tune_with

    _options = {"popsize": ("Population size", 20), **ADAPTER_OPTIONS}
    multi_objective = True

    class MyOptimizer:
        def __init__(self, problem: Problem):
            self.problem = problem
            self.rng = numpy.random.default_rng(problem.seed)
            ...
        def ask(self):                      # a batch of index vectors; [] when finished
            return [[int(self.rng.integers(n)) for n in self.problem.sizes]]
        def tell(self, candidates, costs):  # costs[i]: tuple of floats to minimise, or None
            ...

    def tune(searchspace, runner, tuning_options):
        return tune_with(MyOptimizer, _options, searchspace, runner, tuning_options)

The encoding is discrete: a candidate is one integer index per tunable parameter, in the
searchspace's `tune_params` order, into that parameter's list of values (`Problem.decode` maps it
to the configuration). Evaluation goes through Kernel Tuner's own `CostFunc(snap=False).eval_all`
with restrictions checked, so the budget is Kernel Tuner's: a configuration's first evaluation
counts, a revisit is free (and still recorded as a result, as in Kernel Tuner), a configuration
that fails to compile or run is charged as Kernel Tuner charges it, and one that violates the
restrictions never reaches the runner and costs nothing.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from types import MappingProxyType
from typing import Any, Protocol

import numpy as np
from kernel_tuner import util as kt_util
from kernel_tuner.strategies.common import CostFunc, get_options

logger = logging.getLogger(__name__)

__all__ = ["ADAPTER_OPTIONS", "ADAPTER_RULES", "AskTellOptimizer", "CandidateError", "Cost", "Problem", "make_problem",
           "tune_with"]

STALE_LIMIT = 2000

#: The adapter's own options, {name: (description, default)} as in a Kernel Tuner `_options` table.
#: A strategy module merges them into its `_options` (`{**mine, **ADAPTER_OPTIONS}`) so that they are
#: documented, checked and settable like its own; `tune_with` falls back to these defaults otherwise.
ADAPTER_OPTIONS: dict[str, tuple[str, Any]] = {
    "stale_limit": (
        "End the run after this many proposals in a row that brought no new evaluation (restriction-violating "
        "or already evaluated configurations); guards against an optimizer that proposes nothing new",
        STALE_LIMIT,
    ),
    "invalid_cost": (
        "What an invalid configuration (restriction-violating, or failed to compile or run) is told as: none "
        "(None, for an optimizer that handles missing values) or worst (per objective, the worst valid cost told "
        "before it in the run, 0 before any: for an optimizer that needs numbers)",
        "none",
    ),
}
INVALID_COSTS = ("none", "worst")

#: Their rules, in the suite's terms (analysis.simulate.registry: a module's optional `_option_rules`), so that a
#: config is checked against them when it is read; merge them as the options are.
ADAPTER_RULES: dict[str, dict[str, Any]] = {"stale_limit": {"kind": "int", "low": 1},
                                            "invalid_cost": {"kind": "choice", "choices": INVALID_COSTS}}

Cost = tuple[float, ...] | None
"""What an optimizer is told per candidate: one float per objective, all to be minimised (Kernel Tuner's
cost: an objective where higher is better is negated), or, for an invalid configuration (it violates the
restrictions, or failed to compile or run), None by default; with the option `invalid_cost: worst`, the
worst valid cost told before it instead (see ADAPTER_OPTIONS)."""

# Kernel Tuner's cost of an invalid configuration (kernel_tuner.util.get_result_cost), per objective
_INVALID_COST = sys.float_info.max


class CandidateError(ValueError):
    """An optimizer asked for a candidate that is not an index vector of the space."""


@dataclass(frozen=True)
class Problem:
    """What an optimizer is told about the space it searches.

    parameters: parameter name -> tuple of its values, in the searchspace's tune_params order.
    sizes: the number of values of each parameter; a candidate's i-th index lies in range(sizes[i]).
    objectives: the objective names, in the order of each cost tuple.
    seed: the run's seed (`tuning_options.seed`, which tune_kernel(seed=...) and the suite set; when it
        is None, one drawn from NumPy's global generator, so a globally seeded run still reproduces).
        An optimizer draws all its randomness from it.
    options: the strategy's options, every key of its `_options` table (and of ADAPTER_OPTIONS) with
        the user's value or the default, as kernel_tuner.strategies.common.get_options resolves them.
    max_evaluations: the run's budget of distinct evaluated configurations (Kernel Tuner's `max_fevals`,
        at most the space's size; revisits and restriction-violating proposals are free), or None if the
        run has no such limit. For an optimizer that needs its budget up front (Nevergrad's `budget`,
        CMA-ES's `maxfevals`).
    time_limit_s: the run's time limit in seconds, or None: in the suite's simulation the simulated
        evaluation time (compile + verification + benchmark of first visits), under plain `tune_kernel`
        Kernel Tuner's own limit (wall time plus simulated time). The run may end at either limit first;
        an optimizer is never told a partial batch, so it needs no check of its own.
    """

    parameters: Mapping[str, tuple[Any, ...]]
    sizes: tuple[int, ...]
    objectives: tuple[str, ...]
    seed: int
    options: Mapping[str, Any]
    max_evaluations: int | None = None
    time_limit_s: float | None = None

    @property
    def n_objectives(self) -> int:
        """The number of objectives, i.e. the length of every cost tuple."""
        return len(self.objectives)

    @property
    def names(self) -> tuple[str, ...]:
        """The parameter names, in candidate order."""
        return tuple(self.parameters)

    def check(self, candidate: Sequence[Any]) -> tuple[int, ...]:
        """`candidate` as a tuple of ints; CandidateError naming the parameter and its range otherwise.

        An index may be any integer or a float with an integral value (a NumPy array row is fine).
        """
        try:
            length = len(candidate)
        except TypeError:
            raise CandidateError(f"a candidate must be a sequence of {len(self.sizes)} parameter indices, "
                                 f"got {type(candidate).__name__} {candidate!r}") from None
        if length != len(self.sizes):
            raise CandidateError(f"candidate {list(candidate)!r} has {length} indices; the space has "
                                 f"{len(self.sizes)} parameters ({', '.join(self.names)})")
        indices = []
        for name, size, index in zip(self.names, self.sizes, candidate):
            try:
                whole = int(index)
                integral = whole == index
            except (TypeError, ValueError, OverflowError):
                integral = False
            if not integral:
                raise CandidateError(f"index {index!r} for parameter {name!r} in candidate {list(candidate)!r} is "
                                     f"not an integer; expected 0..{size - 1}")
            if not 0 <= whole < size:
                raise CandidateError(f"index {whole} for parameter {name!r} in candidate {list(candidate)!r} is out "
                                     f"of range 0..{size - 1} (values {list(self.parameters[name])})")
            indices.append(whole)
        return tuple(indices)

    def decode(self, indices: Sequence[Any]) -> tuple[Any, ...]:
        """The configuration (parameter values, in order) of an index vector; CandidateError if it is not one."""
        return self._values(self.check(indices))

    def _values(self, checked: tuple[int, ...]) -> tuple[Any, ...]:
        """The configuration of an index vector that `check` returned."""
        return tuple(values[i] for values, i in zip(self.parameters.values(), checked))

    def encode(self, config: Sequence[Any]) -> tuple[int, ...]:
        """The index vector of a configuration (parameter values in order); ValueError on an unknown value."""
        if len(config) != len(self.sizes):
            raise ValueError(f"configuration {list(config)!r} has {len(config)} values; the space has "
                             f"{len(self.sizes)} parameters ({', '.join(self.names)})")
        indices = []
        for (name, values), value in zip(self.parameters.items(), config):
            if value not in values:
                raise ValueError(f"value {value!r} is not a value of parameter {name!r} {list(values)}")
            indices.append(values.index(value))
        return tuple(indices)


class AskTellOptimizer(Protocol):
    """The optimizer `tune_with` drives; it is built by `make_optimizer(problem)`.

    ask() returns a batch (a list) of candidates, each one index per parameter (see Problem); an
    empty batch (or None) means the optimizer has finished, and the run ends there. tell(candidates, costs)
    is called once per asked batch, with that batch's candidates (as tuples of ints) and their
    costs (see `Cost`), unless the run stopped while evaluating it (budget spent, stale limit): an
    optimizer is never told a partial batch.
    """

    def ask(self) -> Sequence[Sequence[int]]: ...

    def tell(self, candidates: list[tuple[int, ...]], costs: list[Cost]) -> None: ...


def make_problem(searchspace: Any, tuning_options: Any, options_table: Mapping[str, tuple[str, Any]]) -> Problem:
    """The Problem of one run: the searchspace's parameters, the objectives, the seed and the options.

    Options are resolved like Kernel Tuner's strategies do (`get_options`): an option outside
    `options_table`, ADAPTER_OPTIONS and Kernel Tuner's generic ones (max_fevals, time_limit,
    searchspace_construction_options) is a ValueError; `x0` is not supported.
    """
    table = {**ADAPTER_OPTIONS, **options_table}
    values = get_options(tuning_options.strategy_options, table, unsupported=["x0"])
    options = dict(zip(table, values))
    stale_limit = options["stale_limit"]
    if isinstance(stale_limit, bool) or not isinstance(stale_limit, int) or stale_limit < 1:
        raise ValueError(f"option 'stale_limit' must be an int >= 1, found {stale_limit!r}")
    if options["invalid_cost"] not in INVALID_COSTS:
        raise ValueError(f"option 'invalid_cost' must be one of {', '.join(INVALID_COSTS)}, found "
                         f"{options['invalid_cost']!r}")
    budget = tuning_options.get("budget")
    max_fevals = getattr(budget, "max_fevals", None) if budget is not None else tuning_options.get("max_fevals")
    time_limit = getattr(budget, "time_limit", None) if budget is not None else tuning_options.get("time_limit")
    if isinstance(time_limit, timedelta):
        time_limit = time_limit.total_seconds()
    seed = tuning_options.get("seed")
    if seed is None:
        seed = int(np.random.randint(0, 2**31 - 1))
    parameters = {name: tuple(values) for name, values in searchspace.tune_params.items()}
    return Problem(
        parameters=MappingProxyType(parameters),
        sizes=tuple(len(values) for values in parameters.values()),
        objectives=tuple(tuning_options.objective),
        seed=int(seed),
        options=MappingProxyType(options),
        max_evaluations=None if max_fevals is None else int(min(max_fevals, getattr(searchspace, "size", max_fevals))),
        time_limit_s=None if time_limit is None else float(time_limit),
    )


def _cost(value: Any, n_objectives: int) -> Cost:
    """An eval_all return value (a float for one objective, a list for several) as a Cost."""
    costs = tuple(float(c) for c in (value if isinstance(value, (list, tuple)) else [value]))
    if len(costs) != n_objectives:
        raise RuntimeError(f"Kernel Tuner returned {len(costs)} costs for {n_objectives} objectives")
    if all(c == _INVALID_COST for c in costs):  # get_result_cost's marker of an InvalidConfig or a failure
        return None
    return costs


def _told(costs: list[Cost], worst: list[float] | None, invalid_cost: str,
          n_objectives: int) -> tuple[list[Cost], list[float] | None]:
    """A batch's costs as the optimizer is told them, and the worst valid cost per objective after it: with
    `invalid_cost` "worst", an invalid configuration's None becomes the worst valid cost told before it in the run
    (0 per objective before any)."""
    told = []
    for cost in costs:
        if cost is not None:
            worst = list(cost) if worst is None else [max(w, c) for w, c in zip(worst, cost)]
        elif invalid_cost == "worst":
            cost = tuple(worst) if worst is not None else (0.0,) * n_objectives
        told.append(cost)
    return told, worst


def tune_with(
    make_optimizer: Callable[[Problem], AskTellOptimizer],
    options_table: Mapping[str, tuple[str, Any]],
    searchspace: Any,
    runner: Any,
    tuning_options: Any,
) -> list[dict]:
    """Run the optimizer `make_optimizer(problem)` as a Kernel Tuner strategy; return Kernel Tuner's results.

    Each asked batch is validated (CandidateError on a candidate of the wrong length or an index out
    of range), decoded and evaluated in one `CostFunc.eval_all` call with restrictions checked; the
    costs are told back. The run ends when Kernel Tuner's budget is spent (StopCriterionReached, also
    raised part-way through a batch), when the optimizer asks for an empty batch, or when
    `stale_limit` proposals in a row brought no new evaluation (a restriction-violating configuration
    or a revisit; counted across batches, checked after each batch). The last guards against an
    optimizer that only proposes those: they never count against the budget, and restriction-violating
    ones never reach the runner (where the suite counts proposals and applies its proposal cap).

    Results are Kernel Tuner's `cost_func.results`: every configuration the runner returned, revisits
    and failed configurations included, restriction-violating ones not.
    """
    problem = make_problem(searchspace, tuning_options, options_table)
    stale_limit = problem.options["stale_limit"]
    worst: list[float] | None = None
    optimizer = make_optimizer(problem)
    cost_func = CostFunc(searchspace, tuning_options, runner, snap=False)
    evaluated = cost_func.unique_results  # key -> result of every configuration evaluated so far
    stale = 0
    try:
        while True:
            batch = optimizer.ask()
            if batch is None or len(batch) == 0:
                logger.debug("the optimizer finished")
                break
            candidates = [problem.check(candidate) for candidate in batch]
            configs = [problem._values(candidate) for candidate in candidates]  # checked just above
            keys = [",".join(str(value) for value in config) for config in configs]  # CostFunc's keys
            known = {key for key in keys if key in evaluated}
            values = cost_func.eval_all(configs, check_restrictions=True)
            for key in keys:
                if key not in known and key in evaluated:  # its first evaluation
                    known.add(key)
                    stale = 0
                else:
                    stale += 1
            if stale >= stale_limit:
                logger.info("stopped: %d proposals in a row brought no new evaluation (stale_limit)", stale)
                break
            told, worst = _told([_cost(value, problem.n_objectives) for value in values], worst,
                                problem.options["invalid_cost"], problem.n_objectives)
            optimizer.tell(candidates, told)
    except kt_util.StopCriterionReached as e:
        logger.debug("stopped: %s", e)
    return cost_func.results

