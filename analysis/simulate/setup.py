"""Kernel Tuner objects for one simulated run, set up the way `tune_kernel(simulation_mode=True)` does."""

from __future__ import annotations

import copy
import logging
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

from kernel_tuner import core
from kernel_tuner import util as kt_util
from kernel_tuner.interface import Options, _device_options, _kernel_options, _tuning_options
from kernel_tuner.runners.simulation import SimulationRunner
from kernel_tuner.searchspace import Searchspace

from analysis.simulate.budget import SimulatedTimeBudget
from analysis.simulate.kt_space import KernelTunerSpace, check_restrictions, gc_paused

logger = logging.getLogger(__name__)

MAX_THREADS = 1_000_000_000  # SimulationDevice.max_threads in Kernel Tuner 1.5.0
KERNEL_NAME = "simulated_kernel"


# Large read-only-in-practice attributes: shallow-copied per run, everything else deep-copied.
_SHALLOW_ATTRS = frozenset({"list", "_Searchspace__dict", "indices", "tune_params", "original_tune_params"})


def _copy_state(state: dict[str, Any]) -> dict[str, Any]:
    """Copy a Searchspace attribute dict: big containers shallowly, everything else deeply, in one deepcopy, so
    attributes that are one object (params_values_indices is the parameter-index array) stay one object."""
    deep = deepcopy({key: value for key, value in state.items() if key not in _SHALLOW_ATTRS})
    return {key: (copy.copy(value) if key in _SHALLOW_ATTRS else deep[key]) for key, value in state.items()}


def _build_index_arrays(searchspace: Searchspace) -> None:
    """Build the parameter-index arrays and neighbour buffers a Searchspace makes on first use.

    Kernel Tuner builds them lazily from the configuration list (about 10 ms on 10^4 configurations),
    which in a fresh Searchspace per run happens in every run of a strategy that looks at neighbours
    or Latin-hypercube samples; built once here and copied with the state, they are the same arrays.
    A space on which building them fails is left to build (and fail) lazily, as in Kernel Tuner.
    """
    try:
        searchspace.get_list_param_indices_numpy()
        if searchspace.params_values_indices is None:
            searchspace._Searchspace__prepare_neighbors_index()
    except Exception:  # noqa: BLE001 - Kernel Tuner raises it later, where a strategy needs the arrays
        logger.debug("parameter-index arrays left to Kernel Tuner", exc_info=True)


def fresh_searchspace(space: KernelTunerSpace) -> Searchspace:
    """A Searchspace in the state Searchspace(tune_params, restrictions, max_threads) leaves it, with its
    parameter-index arrays already built (`_build_index_arrays`).

    The constraint solver runs once per KernelTunerSpace and process and its state is kept as a private
    copy; every call returns a new object from a copy of that state (the big configuration list,
    lookup dict and index array shallowly, all else deeply), so neighbour caches start empty in
    every run, as with a rebuilt Searchspace.
    """
    state = space._memo.get("searchspace_state")
    if state is None:
        check_restrictions(space.restrictions, list(space.tune_params), space.source)  # parsed before KT sees them
        with gc_paused():
            built = Searchspace(space.tune_params, space.restrictions, MAX_THREADS)
            _build_index_arrays(built)
            state = space._memo["searchspace_state"] = _copy_state(built.__dict__)
    clone = Searchspace.__new__(Searchspace)
    clone.__dict__.update(_copy_state(state))
    return clone


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
    time and `max_proposals` the proposals, repeats included (see `analysis.simulate.budget`).
    """
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
