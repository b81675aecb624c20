"""Simulate one tuning run with Kernel Tuner's own strategy code on an exhaustive cache."""

from __future__ import annotations

import contextlib
import logging
import time
from types import ModuleType
from typing import Any

from kernel_tuner.interface import strategy_map
from kernel_tuner.runners.simulation import SimulationRunner

from analysis import fastpath
from analysis.fastpath.diff_evo import fast_differential_evolution
from analysis.fastpath.neighbours import memoise_neighbours, neighbour_index
from analysis.fastpath.population import individual_values_read_once
from analysis.fastpath.portable import portable_hyperplane
from analysis.fastpath.runner import lean_cost_function, quiet_config_output
from analysis.fastpath.snapping import vectorised_snapping
from analysis.kt.space import KernelTunerSpace
from analysis.simulate.pyatf import pyatf_run
from analysis.simulate.refdirs import reference_directions
from analysis.simulate.registry import Algorithm, get_algorithm, resolve_options
from analysis.simulate.seeding import derive_seed, seed_globals, seeded_bayes_opt, seeded_latin_hypercube
from analysis.simulate.setup import build_setup, fresh_searchspace
from analysis.simulate.trace import Trace, trace_from_results

logger = logging.getLogger(__name__)

__all__ = ["prepare_space", "simulate_run", "derive_seed", "strategy_options_for"]

# Kernel Tuner strategies (and the unaware variants) that run pymoo's genetic algorithms: only their
# runs import pymoo and the fast path's pymoo equivalents (mating, duplicate elimination, hyperplane).
PYMOO_STRATEGIES = frozenset({"nsga2", "nsga3"})


def prepare_space(space: KernelTunerSpace, neighbours: bool = True) -> None:
    """Do a space's one-off work now rather than in its first run: parse entries, solve constraints, index neighbours.

    Each happens once per KernelTunerSpace and process anyway; the Hamming-neighbour index is only
    needed by algorithms that mutate to neighbours (nsga2, nsga3) and only with the fast path on.
    """
    space.cache_entries()
    searchspace = fresh_searchspace(space)
    if neighbours and fastpath.enabled("neighbours"):
        neighbour_index(searchspace, space.neighbour_memo(), "Hamming")


def strategy_options_for(algorithm: str, options: dict[str, Any] | None, n_obj: int) -> dict[str, Any]:
    """Kernel Tuner strategy_options for a registered algorithm: defaults filled in, memoised NSGA-III directions."""
    resolved = resolve_options(algorithm, options)
    entry = get_algorithm(algorithm)
    if entry.strategy == "nsga3":
        # what Kernel Tuner computes itself when ref_dirs_list is empty, served from a per-process memo
        resolved["ref_dirs_list"] = reference_directions(n_obj, resolved["popsize"])
    return resolved


def _strategy_module(entry: Algorithm) -> ModuleType | Any:
    """The module whose `tune(searchspace, runner, tuning_options)` runs this algorithm."""
    if entry.user:
        return entry.module
    if entry.unaware:
        from analysis.simulate import unaware  # lazy: imports pymoo (about 0.5 s), which most runs do not need

        return unaware
    return strategy_map[entry.strategy]


def strategy_contexts(entry: Algorithm, seed: int) -> list[Any]:
    """What a registered strategy needs to run reproducibly and at all, under tune_kernel as here: pyATF 0.0.13
    under Kernel Tuner 1.5.0 (analysis.simulate.pyatf), bayes_opt's Latin hypercube seeded and its clock a tick
    clock (seeded_bayes_opt)."""
    if entry.user:
        return []
    if entry.strategy == "pyatf_strategies":
        return [pyatf_run()]
    if entry.strategy == "bayes_opt":
        return [seeded_bayes_opt(seed)]
    return []


def _equivalents(entry: Algorithm, seed: int, memo: dict) -> list[Any]:
    """The context managers a run is made under: the seeded Latin hypercube (always: the study's
    reproducibility), then the fast path's equivalents of library code that `TSB_STOCK` leaves on.

    Those of Kernel Tuner's cost function, runner and snapping apply to every strategy; those of a
    strategy's own code (differential evolution's loop; pymoo's mating, duplicate elimination,
    population reads and NSGA-III hyperplane for the pymoo-based runs) only to registered ones:
    nothing may change a user strategy's own code.
    """
    contexts = [seeded_latin_hypercube(seed, memo if fastpath.enabled("lhs") else None)]
    runner = fastpath.enabled("runner")
    if runner:
        contexts.append(quiet_config_output())
    if fastpath.enabled("snapping"):
        contexts.append(vectorised_snapping(memo))
    if runner:
        contexts.append(lean_cost_function())
    if entry.user:
        return contexts
    if entry.strategy == "diff_evo" and fastpath.enabled("diff_evo"):
        contexts.append(fast_differential_evolution())
    if entry.strategy in PYMOO_STRATEGIES:
        if fastpath.enabled("duplicates"):
            # lazy, as below: these replicas import pymoo (about 0.6 s), which only these strategies need
            from analysis.fastpath.duplicates import hashed_duplicate_elimination

            contexts.append(hashed_duplicate_elimination())
        if fastpath.enabled("mating"):
            from analysis.fastpath.mating import array_mating_in_genetic_algorithms  # lazy: as above

            contexts.append(array_mating_in_genetic_algorithms())
        if fastpath.enabled("portable"):
            contexts.append(portable_hyperplane())
        if fastpath.enabled("population"):
            contexts.append(individual_values_read_once())
    return contexts


def simulate_run(space: KernelTunerSpace, algorithm: str, options: dict, budget: int, seed: int,
                 time_limit_ms: float | None = None, max_proposals: int | None = None) -> Trace:
    """Run `algorithm` on `space` in simulation, reproducibly from `seed`.

    The run stops at `budget` distinct evaluations, or once the simulated evaluation time exceeds
    `time_limit_ms` (the evaluation that crosses it is kept, as in Kernel Tuner), or after
    `max_proposals` proposals, or when the strategy ends by itself. `meta["stop_reason"]` says
    which; `stopped_early` is true unless a budget limit (evaluations or time) ended the run.
    """
    entry = get_algorithm(algorithm)
    if len(space.objectives) > 1 and not entry.multi_objective:
        hint = " (a strategy module that handles several declares multi_objective = True)" if entry.user else ""
        raise ValueError(f"algorithm {algorithm!r} is single-objective; got objectives {space.objectives}{hint}")
    if budget <= 0:
        raise ValueError(f"budget must be positive, got {budget}")
    strategy_options = strategy_options_for(algorithm, options, len(space.objectives))
    runner_class = SimulationRunner
    if entry.unaware:
        # lazy: as in _strategy_module
        from analysis.simulate.unaware import ChargingSimulationRunner as runner_class
    started = time.perf_counter()
    seed_globals(seed)
    setup = build_setup(space, entry.kt_strategy, strategy_options, budget, seed, runner_class,
                        time_limit_ms=time_limit_ms, max_proposals=max_proposals)
    memo = space.neighbour_memo()
    if fastpath.enabled("neighbours"):
        memoise_neighbours(setup.searchspace, memo)
    with contextlib.ExitStack() as equivalents:
        for context in _equivalents(entry, seed, memo):
            equivalents.enter_context(context)
        for context in strategy_contexts(entry, seed):
            equivalents.enter_context(context)
        results = _strategy_module(entry).tune(setup.searchspace, setup.runner, setup.tuning_options)

    kt_budget = setup.tuning_options.budget
    trace = trace_from_results(results, list(space.tune_params), list(space.objectives), budget)
    stop_reason = kt_budget.stop_reason()
    trace.stopped_early = stop_reason not in ("max_fevals", "time_limit")
    trace.meta.update(
        algorithm=algorithm,
        stop_reason=stop_reason,
        proposals=kt_budget.proposals,
        seed=seed,
        effective_budget=kt_budget.max_fevals,
        space_size=setup.searchspace.size,
        wall_s=time.perf_counter() - started,
    )
    spent = trace.evaluations_spent
    if spent != kt_budget.num_fevals:
        logger.warning("trace counts %d distinct evaluations, Kernel Tuner's budget %d", spent, kt_budget.num_fevals)
    if trace.stopped_early:
        logger.info(
            "%s stopped early (%s) after %d of %d evaluations", algorithm, stop_reason, kt_budget.num_fevals,
            kt_budget.max_fevals,
        )
    return trace
