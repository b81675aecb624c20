"""Kernel Tuner objects for one simulated run, set up the way `tune_kernel(simulation_mode=True)` does."""

from __future__ import annotations

from copy import deepcopy
from dataclasses import dataclass
from typing import Any

from kernel_tuner import core
from kernel_tuner import util as kt_util
from kernel_tuner.interface import Options, _device_options, _kernel_options, _tuning_options
from kernel_tuner.runners.simulation import SimulationRunner
from kernel_tuner.searchspace import Searchspace

from analysis import fastpath
from analysis.fastpath.pins import check_once
from analysis.fastpath.searchspace import copied_searchspace
from analysis.kt.budget import SimulatedTimeBudget
from analysis.kt.space import KernelTunerSpace, check_restrictions

MAX_THREADS = 1_000_000_000  # SimulationDevice.max_threads in Kernel Tuner 1.5.0
KERNEL_NAME = "simulated_kernel"


def fresh_searchspace(space: KernelTunerSpace) -> Searchspace:
    """A new Searchspace in the state `Searchspace(tune_params, restrictions, max_threads)` leaves it.

    With the fast path on, a copy of the space's first one (`analysis.fastpath.searchspace`); under
    `TSB_STOCK` one built by Kernel Tuner for this call. Either way neighbour caches start empty in
    every run, as with a rebuilt Searchspace.
    """
    if fastpath.enabled("searchspace"):
        return copied_searchspace(space, MAX_THREADS)
    check_restrictions(space.restrictions, list(space.tune_params), space.source)  # parsed before KT sees them
    return Searchspace(space.tune_params, space.restrictions, MAX_THREADS)


@dataclass
class RunSetup:
    """What a Kernel Tuner strategy's `tune(searchspace, runner, tuning_options)` needs."""

    searchspace: Searchspace
    runner: SimulationRunner
    tuning_options: Options


def _options(table: Options, values: dict[str, Any]) -> Options:
    """An Options object with exactly the keys of a tune_kernel option table, defaults None."""
    return Options([(key, values.get(key)) for key in table.keys()])


def build_setup(
    space: KernelTunerSpace,
    strategy: str | Any,
    strategy_options: dict[str, Any],
    budget: int,
    seed: int,
    runner_class: type[SimulationRunner] = SimulationRunner,
    time_limit_ms: float | None = None,
    max_proposals: int | None = None,
) -> RunSetup:
    """Replicate tune_kernel's simulation-mode setup with an already parsed cache; fresh objects per call.

    `strategy` is what tune_kernel's `strategy` argument would be: a Kernel Tuner strategy name, or a
    user's strategy module.

    `budget` caps distinct evaluations; `time_limit_ms` additionally caps the simulated evaluation
    time and `max_proposals` the proposals, repeats included (see `analysis.kt.budget`).
    """
    check_once("setup")  # the Kernel Tuner internals this set-up follows are the pinned ones
    strategy_options = {**strategy_options, "max_fevals": budget}
    kernel_options = _options(_kernel_options, {"kernel_name": KERNEL_NAME, "kernel_source": ""})
    device_options = _options(_device_options, {"device": 0, "platform": 0, "quiet": True})
    tuning_options = _options(
        _tuning_options,
        {
            "tune_params": space.tune_params,
            "restrictions": space.restrictions,
            "atol": 1e-6,
            "strategy": strategy,
            "strategy_options": Options(strategy_options),
            "iterations": 7,
            "objective": list(space.objectives),
            "objective_higher_is_better": space.higher_is_better,
            "verbose": False,
            "simulation_mode": True,
            "seed": seed,
        },
    )
    tuning_options["max_fevals"] = budget
    tuning_options.simulated_time = 0

    kernel_source = core.KernelSource(KERNEL_NAME, "", None, None)
    runner = runner_class(kernel_source, kernel_options, device_options, 7, None)
    tuning_options.verify = kt_util.normalize_verify_function(None)
    tuning_options.cachefile = None
    tuning_options.cache = space.cache_entries()

    tuning_options.restrictions_unmodified = deepcopy(space.restrictions)
    if runner.get_device_info().max_threads != MAX_THREADS:
        raise RuntimeError("Kernel Tuner's SimulationDevice.max_threads changed; update MAX_THREADS")
    searchspace = fresh_searchspace(space)
    tuning_options.restrictions = searchspace._modified_restrictions
    if hasattr(runner, "searchspace"):
        runner.searchspace = searchspace  # ChargingSimulationRunner checks feasibility against it

    max_fevals = budget if budget <= searchspace.size else searchspace.size
    tuning_options["budget"] = SimulatedTimeBudget(time_limit_ms, max_fevals, max_proposals)
    return RunSetup(searchspace, runner, tuning_options)
