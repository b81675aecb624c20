"""The `simulate` stage: all repetitions of one (space, objective set, algorithm setting) at each budget."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.errors import InputError
from analysis.io import write_parquet
from analysis.kt.space import gc_paused
from analysis.simulate import KernelTunerSpace, derive_seed, resolve_options, seed_name, simulate_run
from analysis.simulate.setup import fresh_searchspace
from analysis.spaces.export import to_kt_cache
from analysis.spaces.space import Space

log = logging.getLogger(__name__)


def space_data(space: Space, objectives: Sequence[str]) -> KernelTunerSpace:
    """The simulation engine's view of a stored space for the given objectives."""
    directions = [space.objective(o).direction for o in objectives]
    with gc_paused():
        cache = to_kt_cache(space)
    return KernelTunerSpace(dict(space.parameters), list(space.constraints), cache, list(objectives), directions,
                     source=space.origin)


PURPOSES = ("comparison", "selection")


def run_identity(space: Space, objective_set: str, algorithm: str, options: dict[str, Any], budget: int,
                 repetition: int, purpose: str = "comparison") -> dict[str, Any]:
    """What a run is: the seed is derived from exactly this.

    `purpose` keeps the hyperparameter grid's runs ("selection") apart from the comparison's: a
    comparison run of the setting the grid picked would otherwise repeat, seed for seed, the grid
    runs that picked it, and the comparison on the training kernels would score the selection's own
    runs. A comparison run's identity has no purpose key (its seeds are those of earlier releases);
    a selection run's has one, so no seed of the one is a seed of the other (but by a hash collision).
    """
    if purpose not in PURPOSES:
        raise ValueError(f"unknown run purpose '{purpose}' (known: {', '.join(PURPOSES)})")
    identity = {"space": f"{space.device}/{space.kernel}", "objective_set": objective_set,
                "algorithm": seed_name(algorithm), "options": options, "budget": budget, "repetition": repetition}
    if purpose != "comparison":
        identity["purpose"] = purpose
    return identity


def max_proposals(space: Space, proposal_cap: float | None) -> int | None:
    """The proposal limit of a run: `proposal_cap` x the space's measured configurations (None: no cap)."""
    if proposal_cap is None:
        return None
    if not proposal_cap > 0:
        raise ValueError(f"proposal_cap must be positive, got {proposal_cap}")
    return max(1, int(proposal_cap * len(space.table)))


def run_batch(space: Space, objective_set: str, objectives: Sequence[str], algorithm: str,
              options: dict[str, Any], budget: int, repetitions: int,
              proposal_cap: float | None = None, data: KernelTunerSpace | None = None,
              purpose: str = "comparison") -> pd.DataFrame:
    """Every repetition's trace, one row per evaluation, with repetition, seed and early-stop columns.

    A run stops at its budget, when its strategy ends, or after `proposal_cap` x the space size
    proposals (an early stop; the cap does not enter the seed, so a run that never reaches it is
    the same with or without it). `data`, the engine's view of `space` for `objectives`, can be
    passed in to share its parsed entries and neighbour index between batches. `purpose`
    (run_identity) tells the comparison's runs from the hyperparameter selection's.
    """
    options = resolve_options(algorithm, options)
    if data is None:
        data = space_data(space, objectives)
    cap = max_proposals(space, proposal_cap)
    frames = []
    started = time.perf_counter()
    for rep in range(repetitions):
        seed = derive_seed(**run_identity(space, objective_set, algorithm, options, budget, rep, purpose))
        trace = simulate_run(data, algorithm, options, budget, seed, max_proposals=cap)
        frame = trace.to_frame()
        frame.insert(0, "repetition", rep)
        frame.insert(1, "seed", seed)
        frame["stopped_early"] = trace.stopped_early
        frames.append(frame)
        log.info("b%d run %d/%d: seed %d, %d evaluations (%d distinct)%s, %.2f s elapsed", budget, rep + 1,
                 repetitions, seed, len(trace), trace.evaluations_spent,
                 f", stopped early ({trace.meta['stop_reason']})" if trace.stopped_early else "",
                 time.perf_counter() - started)
    return pd.concat(frames, ignore_index=True)


def check_budgets(data: KernelTunerSpace, space: Space, budgets: Sequence[int],
                  source: tuple[str | None, str] = (None, "simulation.budgets")) -> None:
    """InputError (naming the config file and field of `source`) if a budget exceeds the space's valid
    configurations: Kernel Tuner would cap it at the space size without a word."""
    size = fresh_searchspace(data).size
    over = [b for b in budgets if b > size]
    if over:
        raise InputError(source[0], f"budget(s) {over} exceed the {size} valid configurations of space "
                                    f"{space.device}/{space.kernel}: a run cannot evaluate more distinct "
                                    "configurations than the space has, and Kernel Tuner would cap it silently; "
                                    f"use budgets of at most {size}, or leave this space out",
                         field=source[1])


def run(space_parquet: str | Path, space_meta: str | Path, objective_set: str, objectives: Sequence[str],
        algorithm: str, options: Sequence[dict[str, Any]], budgets: Sequence[int], repetitions: int,
        outs: Sequence[str | Path], proposal_cap: float | None = None,
        budget_source: tuple[str | None, str] = (None, "simulation.budgets"), purpose: str = "comparison") -> None:
    """Load a stored space once, then run the batch of each budget (with its options) into its Parquet.

    One process serves every budget of a setting: the space is parsed, its constraints solved and
    its neighbours indexed once instead of once per budget. Each file is written atomically as soon
    as its budget is done. A budget above the space's valid configurations is an InputError naming
    `budget_source` (config file, field), before any run.
    """
    if not len(budgets) == len(options) == len(outs):
        raise ValueError(f"need one options dict and one output per budget; got {len(budgets)} budgets, "
                         f"{len(options)} options, {len(outs)} outputs")
    space = Space.load(space_parquet, space_meta)
    missing = [o for o in objectives if o not in space.objective_columns]
    if missing:
        raise ValueError(f"space {space.device}/{space.kernel} lacks objectives {missing} of set '{objective_set}' "
                         f"(it has {list(space.objective_columns)})")
    data = space_data(space, objectives)
    check_budgets(data, space, budgets, budget_source)
    for budget, budget_options, out in zip(budgets, options, outs):
        log.info("budget %d: %d repetitions of %s %s", budget, repetitions, algorithm, budget_options)
        write_parquet(run_batch(space, objective_set, objectives, algorithm, budget_options, budget, repetitions,
                                proposal_cap, data=data, purpose=purpose), out)
