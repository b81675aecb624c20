"""Kernel Tuner's cost function and simulation runner with the same effects and less work per proposal.

`_run_configs` is `CostFunc._run_configs` formatting its debug line only when debug logging is on;
`simulation_runner_run` is `SimulationRunner.run` reading the tuning options once per call;
`quiet_config_output` skips formatting the console line a quiet run drops. Each does what Kernel
Tuner does in Kernel Tuner's order (budget checks, results, times) and draws no random number.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator
from typing import Any

from kernel_tuner import util as kt_util
from kernel_tuner.runners.simulation import SimulationRunner
from kernel_tuner.strategies import common as kt_common

from analysis.fastpath.patching import swapped
from analysis.kt.budget import SimulatedTimeBudget

logger = logging.getLogger(__name__)

def quiet_config_output() -> contextlib.AbstractContextManager:
    """Skip SimulationRunner's per-configuration console line when quiet (it is formatted, then dropped)."""
    original = kt_util.print_config_output

    def print_config_output(tune_params, params, quiet, metrics, units):
        if not quiet:
            original(tune_params, params, quiet, metrics, units)

    return swapped(kt_util, print_config_output=print_config_output)



def _run_configs(self: kt_common.CostFunc, xs: Any, check_restrictions: bool = True) -> list:
    """kernel_tuner.strategies.common.CostFunc._run_configs (Kernel Tuner 1.5.0), building its per-proposal debug
    line only when the root logger would emit it.

    Kernel Tuner formats `str(x)` and `str(config)` for a `logging.debug` call on every proposal, whether or not
    debug logging is on; for a NumPy position (PSO, DE, Firefly) that is numpy's array printer, a large share of
    a simulated run's time. Everything else is done in Kernel Tuner's order with Kernel Tuner's objects: the
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
    results: list[dict | None] = []
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
        for valid in results:  # amortise the time over all the results, in ms
            if valid:
                valid["strategy_time"] = 1000 * strategy_time / num_valid_results
                valid["framework_time"] = 1000 * framework_time / num_valid_results
    return results


@contextlib.contextmanager
def lean_cost_function() -> Iterator[None]:
    """Let Kernel Tuner's CostFunc evaluate proposals with `_run_configs` above, and its SimulationRunner run them
    with `simulation_runner_run`, while active."""
    with swapped(kt_common.CostFunc, _run_configs=_run_configs), swapped(SimulationRunner, run=simulation_runner_run):
        yield
