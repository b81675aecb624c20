"""Constraint-unaware NSGA-II/III: pymoo's integer operators on parameter indices, no repair.

Kernel Tuner 1.5.0 cannot switch its pymoo strategy to this through options (sampling, mutation and
repair are hard-wired to the constraint-aware search-space operators), so this module composes the
same pieces Kernel Tuner's `pymoo_minimize.tune` uses (CostFunc, TuningProblem, the pymoo algorithm
classes, termination and seeding) and only swaps the operators. Infeasible proposals are sent to
the runner, where `ChargingSimulationRunner` charges them one evaluation on their first visit.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from kernel_tuner import util as kt_util
from kernel_tuner.runners.simulation import SimulationRunner
from kernel_tuner.strategies import pymoo_minimize as kt_pymoo
from kernel_tuner.strategies.common import CostFunc, get_options
from pymoo.core.termination import NoTermination
from pymoo.operators.mutation.pm import PM
from pymoo.operators.repair.rounding import RoundingRepair
from pymoo.operators.sampling.rnd import IntegerRandomSampling

from analysis import fastpath
from analysis.fastpath.duplicates import ExactDuplicateElimination
from analysis.fastpath.pins import check_once
from analysis.simulate.refdirs import reference_directions

logger = logging.getLogger(__name__)

_OPTIONS: dict[str, tuple[str, Any]] = {
    **{k: v for k, v in kt_pymoo._options.items() if k != "ref_dirs_list"},
    "mutation_eta": ("Distribution index of pymoo's polynomial mutation on parameter indices", 20),
    "ref_dirs_list": kt_pymoo._options["ref_dirs_list"],
}


def options() -> dict[str, tuple[str, Any]]:
    """This strategy's options table {option: (description, default)}."""
    return dict(_OPTIONS)


class IndexTuningProblem(kt_pymoo.TuningProblem):
    """Kernel Tuner's TuningProblem over integer parameter indices instead of parameter values."""

    def __init__(self, cost_func: CostFunc, n_obj: int) -> None:
        values = list(cost_func.searchspace.tune_params.values())
        super().__init__(
            cost_func=cost_func,
            n_var=len(values),
            n_obj=n_obj,
            xl=np.zeros(len(values), dtype=int),
            xu=np.array([len(v) - 1 for v in values], dtype=int),
            vtype=int,
        )
        self.param_values = values

    def _evaluate(self, x, out, *args, **kwargs):
        """Map indices to parameter values and evaluate without filtering infeasible ones."""
        config = tuple(vals[int(i)] for vals, i in zip(self.param_values, x))
        out["F"] = self.cost_func(config, check_restrictions=False)


class ChargingSimulationRunner(SimulationRunner):
    """SimulationRunner that charges a constraint-violating configuration one evaluation on first visit."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.searchspace: Any = None  # set to the run's Searchspace before tuning starts

    def run(self, parameter_space, tuning_options):
        """Serve feasible configurations as SimulationRunner does; charge and reject infeasible ones."""
        results = []
        for element in parameter_space:
            if self.searchspace.is_param_config_valid(tuple(element)):
                results.extend(super().run([element], tuning_options))
                continue
            if tuning_options.budget.is_done():
                results.append(None)
                continue
            key = ",".join(str(i) for i in element)
            if key not in self.visited_results:
                self.visited_results.add(key)
                tuning_options.budget.add_evaluations(1)
            result = kt_util.copy_without_benchmark_timings(dict(zip(tuning_options.tune_params.keys(), element)))
            result["__error__"] = kt_util.InvalidConfig()
            results.append(result)
        return results


def _duplicate_elimination() -> Any:
    """pymoo's default duplicate elimination (`eliminate_duplicates=True`), or with the fast path on its exact
    equivalent for integer index vectors."""
    if fastpath.enabled("duplicates"):
        return ExactDuplicateElimination()
    return True


def build_algorithm(algo_name: str, pop_size: int, crossover_name: str, crossover_prob: float,
                    mutation_prob: float, mutation_eta: float, ref_dirs: Any) -> Any:
    """The pymoo NSGA-II/III of the unaware strategies: integer sampling, crossover and polynomial
    mutation rounded to indices, exact duplicate elimination. Built during a simulated run, its
    mating is mating.ArrayMating (simulate_run swaps it into pymoo's GeneticAlgorithm)."""
    if crossover_name not in kt_pymoo.crossover_oper_dict:
        raise ValueError(f"Unsupported crossover method {crossover_name}")
    return kt_pymoo._SUPPORTED_ALGOS[algo_name](
        pop_size=pop_size,
        ref_dirs=ref_dirs if algo_name == "nsga3" else None,
        sampling=IntegerRandomSampling(),
        crossover=kt_pymoo.crossover_oper_dict[crossover_name](prob=crossover_prob),
        mutation=PM(prob=mutation_prob, eta=mutation_eta, vtype=float, repair=RoundingRepair()),
        eliminate_duplicates=_duplicate_elimination(),
    )


def tune(searchspace, runner, tuning_options):
    """Kernel Tuner strategy interface: run constraint-unaware NSGA-II or NSGA-III."""
    check_once("unaware")  # the pieces of pymoo_minimize.tune composed here are the pinned ones
    algo_name = tuning_options.strategy.lower()
    pop_size, crossover_name, crossover_prob, mutation_prob, mutation_eta, ref_dirs = get_options(
        tuning_options.strategy_options, _OPTIONS, unsupported=["x0"]
    )
    n_obj = len(tuning_options.objective)
    if algo_name == "nsga3" and len(ref_dirs) == 0:
        ref_dirs = reference_directions(n_obj, pop_size)
    algo = build_algorithm(algo_name, pop_size, crossover_name, crossover_prob, mutation_prob, mutation_eta,
                           ref_dirs)
    cost_func = CostFunc(searchspace, tuning_options, runner, scaling=False)
    problem = IndexTuningProblem(cost_func, n_obj)
    try:
        algo.setup(problem, termination=NoTermination(), verbose=False, progress=False, seed=tuning_options.seed)
        while algo.has_next():
            algo.next()
    except kt_util.StopCriterionReached as e:
        logger.debug("stopped: %s", e)
    return cost_func.results
