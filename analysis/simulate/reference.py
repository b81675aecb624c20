"""Reference runs through plain `tune_kernel(simulation_mode=True)`, to check and time the engine against."""

from __future__ import annotations

import contextlib
import json
import logging
from pathlib import Path
from typing import Any

from kernel_tuner import tune_kernel
from kernel_tuner import util as kt_util

from analysis.kt.space import KernelTunerSpace, check_restrictions
from analysis.simulate.engine import strategy_contexts
from analysis.simulate.registry import get_algorithm, resolve_options
from analysis.simulate.seeding import seed_globals, seeded_latin_hypercube
from analysis.simulate.trace import Trace, trace_from_results

logger = logging.getLogger(__name__)


def write_cache_json(space: KernelTunerSpace, path: str | Path) -> Path:
    """Write the space's cache as a plain .json file that tune_kernel can open."""
    path = Path(path)
    if path.suffix != ".json":
        raise ValueError(f"tune_kernel needs a .json cache file, got {path}")
    with open(path, "w") as fh:
        json.dump(space.cache, fh, cls=kt_util.NpEncoder)
    return path


def tune_kernel_trace(
    space: KernelTunerSpace,
    cache_json: str | Path,
    algorithm: str,
    options: dict[str, Any] | None,
    budget: int,
    seed: int,
) -> Trace:
    """One run of a Kernel Tuner algorithm (registered, or a user's strategy module) via tune_kernel, seeded like
    simulate_run."""
    entry = get_algorithm(algorithm)
    if entry.unaware:
        raise ValueError(f"{algorithm!r} is not a Kernel Tuner strategy; tune_kernel cannot run it")
    strategy_options = {**resolve_options(algorithm, options), "max_fevals": budget}
    check_restrictions(space.restrictions, list(space.tune_params), space.source)  # parsed before KT sees them
    seed_globals(seed)
    with seeded_latin_hypercube(seed), contextlib.ExitStack() as contexts:
        for context in strategy_contexts(entry, seed):
            contexts.enter_context(context)
        results, _ = tune_kernel(
            space.cache["kernel_name"],
            "",
            space.cache.get("problem_size"),
            [],
            space.tune_params,
            restrictions=list(space.restrictions),
            cache=str(cache_json),
            simulation_mode=True,
            strategy=entry.kt_strategy,
            strategy_options=strategy_options,
            objective=list(space.objectives),
            objective_higher_is_better=space.higher_is_better,
            quiet=True,
            seed=seed,
        )
    return trace_from_results(results, list(space.tune_params), list(space.objectives), budget)
