"""A new Searchspace per run, copied from the space's first one instead of built by Kernel Tuner again.

Kernel Tuner's Searchspace constructor solves the constraints and lists every configuration, and
a strategy's first neighbour or Latin-hypercube question builds the parameter-index arrays; both
depend only on the space. `copied_searchspace` does that once per space and process and hands
every run a copy of the resulting state.
"""

from __future__ import annotations

import copy
import logging
from copy import deepcopy
from typing import Any

from kernel_tuner.searchspace import Searchspace

from analysis.kt.space import KernelTunerSpace, check_restrictions, gc_paused

logger = logging.getLogger(__name__)


# Large read-only-in-practice attributes: shallow-copied per run, everything else deep-copied.
_SHALLOW_ATTRS = frozenset({"list", "_Searchspace__dict", "indices", "tune_params", "original_tune_params"})


def _copy_state(state: dict[str, Any]) -> dict[str, Any]:
    """Copy a Searchspace attribute dict: big containers shallowly, everything else deeply, in one deepcopy, so
    attributes that are one object (params_values_indices is the parameter-index array) stay one object."""
    deep = deepcopy({key: value for key, value in state.items() if key not in _SHALLOW_ATTRS})
    return {key: (copy.copy(value) if key in _SHALLOW_ATTRS else deep[key]) for key, value in state.items()}


def build_index_arrays(searchspace: Searchspace) -> None:
    """Build the parameter-index arrays and neighbour buffers a Searchspace makes on first use.

    Kernel Tuner builds them lazily from the configuration list, which in a fresh Searchspace per run
    happens in every run of a strategy that looks at neighbours or Latin-hypercube samples; built once
    here and copied with the state, they are the same arrays.
    A space on which building them fails is left to build (and fail) lazily, as in Kernel Tuner.
    """
    try:
        searchspace.get_list_param_indices_numpy()
        if searchspace.params_values_indices is None:
            searchspace._Searchspace__prepare_neighbors_index()
    except Exception:  # noqa: BLE001 - Kernel Tuner raises it later, where a strategy needs the arrays
        logger.debug("parameter-index arrays left to Kernel Tuner", exc_info=True)


def copied_searchspace(space: KernelTunerSpace, max_threads: int) -> Searchspace:
    """A Searchspace in the state Searchspace(tune_params, restrictions, max_threads) leaves it, with its
    parameter-index arrays already built (`build_index_arrays`).

    The constraint solver runs once per KernelTunerSpace and process and its state is kept as a private
    copy; every call returns a new object from a copy of that state (the big configuration list,
    lookup dict and index array shallowly, all else deeply), so neighbour caches start empty in
    every run, as with a rebuilt Searchspace.
    """
    state = space._memo.get("searchspace_state")
    if state is None:
        check_restrictions(space.restrictions, list(space.tune_params), space.source)  # parsed before KT sees them
        with gc_paused():
            built = Searchspace(space.tune_params, space.restrictions, max_threads)
            build_index_arrays(built)
            state = space._memo["searchspace_state"] = _copy_state(built.__dict__)
    clone = Searchspace.__new__(Searchspace)
    clone.__dict__.update(_copy_state(state))
    return clone
