"""The constraint-aware single-objective study, its runs (docs/constraint-aware.md; seed 001 §V).

Kernel Tuner's GA, PSO, DE and Firefly run with and without constraint awareness on each space,
time-limited by the auto-tuning methodology's budget. A benchmark_hub space is tuned on `time`; a
mixed-precision space with an accuracy threshold tau on `time_decay`, the kernel time with seed
002's decay penalty (§V-C): a configuration whose log10 error is at least tau has its time multiplied
by exp(beta * (log10 error - tau)). This is seed 002's penalised speedup turned into a time to
minimise, so every strategy compares configurations exactly as it would there.

The study's three stages, one call each from the rules: `run` here (all repetitions of one strategy
with or without awareness on one space, rule ca_run), `analysis.indicators.constraint_aware` (the
space's budget, rule ca_budget, and the methodology score of every strategy on it, rule ca_score) and
`analysis.tables.constraint_aware` (the tables over all spaces, rule ca_tables). The objective of a
space (`objective_values`, `with_objective`) and the identity of a budget file (`budget_identity`)
are here, the lowest of the three, for the later two to share.

The budget and the runner's acceptance rule are the methodology's (`analysis.spaces.methodology`,
which needs nothing of the later stages).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from analysis.errors import InputError
from analysis.io import write_json, write_parquet
from analysis.objectives import custom_objective
from analysis.simulate import derive_seed, get_algorithm, resolve_options, seed_name, simulate_run
from analysis.simulate.jobs import max_proposals, space_data
from analysis.spaces.methodology import budget_for_space, run_accepted
from analysis.spaces.space import Space

if TYPE_CHECKING:
    from analysis.spaces.methodology import ScoreSettings

log = logging.getLogger(__name__)

PENALISED = "time_decay"
ATTEMPTS = 20  # as the package's runner


def run_identity(label: str, objective: str, threshold: Mapping[str, Any] | None, algorithm: str,
                 options: Mapping[str, Any], time_limit_ms: float, repetition: int) -> dict[str, Any]:
    """What a time-limited run (this study's, the leaderboard's) is: its seeds are derived from exactly this, with
    the attempt (`accepted_run`). A strategy file enters by its name (`seed_name`), not its path."""
    return dict(space=label, objective=objective, threshold=threshold, algorithm=seed_name(algorithm),
                options=options, time_limit_ms=time_limit_ms, repetition=repetition)


def accepted_run(data: Any, algorithm: str, options: Mapping[str, Any], size: int, limits: Mapping[str, Any],
                 max_proposals: int | None, identity: Mapping[str, Any]) -> tuple[Any, int, int]:
    """One repetition as the package's runner makes it: tuned again (new seed) while it would be rejected.

    Returns (trace, seed, attempts). After 20 rejected attempts the run is an error, as there.
    """
    for attempt in range(ATTEMPTS):
        seed = derive_seed(**identity, attempt=attempt)
        trace = simulate_run(data, algorithm, dict(options), size, seed, time_limit_ms=limits["time_limit_ms"],
                             max_proposals=max_proposals)
        if run_accepted(trace, limits):
            return trace, seed, attempt + 1
    log.info("%s: every attempt rejected", identity)
    raise RejectedRun(f"no run in {ATTEMPTS} attempts had {limits['min_evaluations']} evaluations (two valid) "
                      "within the scored time range (the methodology's runner rejects it)")


class RejectedRun(RuntimeError):
    """Every attempt of a repetition was rejected by the runner's rule (`run_accepted`)."""


def study_strategies(ca: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The study's strategies from the config's `constraint_aware` section (defaults filled in): each of
    `strategies` with and without awareness (`<name>_aware`, `<name>_unaware`), then random search (`rs`) when
    `random_search` is on; name -> {algorithm, options, constraint_aware}."""
    out = {f"{name}_{'aware' if aware else 'unaware'}": {"algorithm": spec["algorithm"], "options": spec["options"],
                                                         "constraint_aware": aware}
           for name, spec in ca["strategies"].items() for aware in (True, False)}
    if ca["random_search"]:
        out["rs"] = {"algorithm": "rs", "options": {}, "constraint_aware": True}
    return out


def study_spaces(studied: Sequence[tuple[str, str]], ca: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The study's spaces, (device, kernel): those of `ca["spaces"]` among the studied ones, or all of them."""
    return [key for key in studied if ca["spaces"] is None or f"{key[0]}/{key[1]}" in ca["spaces"]]


def objective_values(space: Space, threshold: Mapping[str, Any] | None) -> tuple[str, np.ndarray]:
    """The objective tuned on `space` and its value per configuration (ms).

    Without a threshold it is the stored `time`; with one ({error, tau, beta}) it is `time_decay`.
    """
    time_ms = space.table[space.objective("time").column].to_numpy(dtype=float)
    if not threshold:
        return "time", time_ms
    error = space.table[space.objective(threshold["error"]).column].to_numpy(dtype=float)
    with np.errstate(divide="ignore"):
        log_error = np.log10(error)
    excess = np.maximum(log_error - float(threshold["tau"]), 0.0)
    # at tau itself the configuration is infeasible (seed 002: feasible iff error < tau) with factor 1
    return PENALISED, time_ms * np.exp(float(threshold["beta"]) * excess)


def with_objective(space: Space, name: str, values: np.ndarray) -> Space:
    """`space` with `name` as a stored objective (a copy when it is derived)."""
    if name in space.objective_columns:
        return space
    table = space.table.copy()
    table[name + "_ms"] = values
    objectives = [*space.objectives, custom_objective(name, "ms", "min")]
    return Space(space.kernel, space.device, dict(space.parameters), list(space.constraints), objectives, table,
                 dict(space.meta), origin=space.origin)


def tuned_space(space_parquet: str | Path, space_meta: str | Path,
                threshold: Mapping[str, Any] | None) -> tuple[Space, str]:
    """A stored space loaded with the objective tuned on it (`objective_values`) as a stored objective, and
    that objective's name."""
    space = Space.load(space_parquet, space_meta)
    objective, values = objective_values(space, threshold)
    return with_objective(space, objective, values), objective


def budget_identity(objective: str, threshold: Mapping[str, Any] | None, settings: ScoreSettings) -> dict[str, Any]:
    """What a space's budget file (rule ca_budget) records besides the limits, in this order: the objective,
    the threshold and the score settings it was computed for; a run checks them against its own (`read_budget`)."""
    return {"objective": objective, "threshold": dict(threshold or {}), "settings": asdict(settings)}


def read_budget(path: str | Path, objective: str, threshold: Mapping[str, Any] | None,
                settings: ScoreSettings) -> dict[str, Any]:
    """The limits `analysis.indicators.constraint_aware.space_budget` wrote to `path`, checked against the
    objective, threshold and settings of the run."""
    try:
        stored = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot read the space's budget: {exc}") from None
    expected = budget_identity(objective, threshold, settings)
    for field, value in expected.items():
        if stored.get(field) != value:
            raise InputError(path, f"is {stored.get(field)!r}, the run has {value!r}; the budget belongs to "
                                   "another study setting (rerun rule ca_budget)", field)
    return {key: value for key, value in stored.items() if key not in expected}


def run(space_parquet: str | Path, space_meta: str | Path, threshold: Mapping[str, Any] | None, name: str,
        algorithm: str, options: Mapping[str, Any], constraint_aware: bool, repetitions: int,
        settings: ScoreSettings, proposal_cap: float, out: str | Path, budget_out: str | Path,
        budget: str | Path | None = None) -> None:
    """All repetitions of one strategy (with or without constraint awareness) on one space.

    Each run is limited by the methodology's time budget on the simulated clock and by
    `proposal_cap` x the space size proposals; its seed comes from its identity. A run the
    package's runner would reject (too few evaluations in the scored time range) is made again
    with the next seed, as there; `attempts` records how many it took. The budget is read from
    `budget` (written by `analysis.indicators.constraint_aware.space_budget`) or, without it,
    computed here.
    """
    space, objective = tuned_space(space_parquet, space_meta, threshold)
    if budget is not None:
        limits = read_budget(budget, objective, threshold, settings)
    else:
        limits = budget_for_space(space, objective, settings)
    # random search draws valid configurations only and has no constraint_aware option
    if "constraint_aware" in get_algorithm(algorithm).options:
        options = {**options, "constraint_aware": bool(constraint_aware)}
    elif not constraint_aware:
        raise ValueError(f"{algorithm} only proposes valid configurations: it cannot run constraint-unaware")
    options = resolve_options(algorithm, options)
    data = space_data(space, [objective])
    size = len(space.table)
    cap = max_proposals(space, proposal_cap)
    columns: dict[str, list] = {}
    started = time.perf_counter()
    for rep in range(repetitions):
        identity = run_identity(f"{space.device}/{space.kernel}", objective, threshold, algorithm, options,
                                limits["time_limit_ms"], rep)
        trace, seed, attempts = accepted_run(data, algorithm, options, size, limits, cap, identity)
        # an accepted run has two valid evaluations or more (run_accepted), so no block is empty and the
        # column types are those that concatenating a frame per run gives
        n = len(trace)
        block = {"repetition": [rep] * n, "seed": [seed] * n, **trace.columns(), "attempts": [attempts] * n,
                 "stop_reason": [trace.meta["stop_reason"]] * n, "stopped_early": [trace.stopped_early] * n}
        for key, values in block.items():
            columns.setdefault(key, []).extend(values)
        log.info("%s run %d/%d: %d evaluations (%d distinct), %.0f of %.0f s simulated, stop: %s; %.1f s elapsed",
                 name, rep + 1, repetitions, len(trace), trace.evaluations_spent, trace.sim_time_ms[-1] / 1e3
                 if len(trace) else 0.0, limits["time_limit_ms"] / 1e3, trace.meta["stop_reason"],
                 time.perf_counter() - started)
    runs = pd.DataFrame(columns)
    runs.attrs.update(strategy=name, algorithm=algorithm, constraint_aware=bool(constraint_aware))
    write_parquet(runs, out)
    write_json({**limits, "objective": objective, "threshold": dict(threshold or {}),
                "max_proposals": cap}, budget_out)
