"""The leaderboard's entries and runs (docs/leaderboard.md; STUDY.md §7; seed 001 §VI-D).

Every single-objective strategy of Kernel Tuner's strategy map (but brute force and the multi-objective
NSGA-II/III) with Kernel Tuner's default options, pyATF's search techniques through Kernel Tuner's
`pyatf_strategies`, the constraint-aware study's strategies with their tuned settings (rows of their
own, on their first runs) and any user strategy of the config run on every space of the
constraint-aware study that is tuned on time, each run limited by that study's budget (rule
ca_budget) and accepted by its rule. A run that raises (in Kernel Tuner, pyATF or the strategy), or
that the runner's rule rejects 20 times, is recorded as failed with the exception's last line; the
study goes on.

`entries` turns the config into the entries (one call from the Snakefile), `run` makes one entry's
runs on all its spaces (rule lb_run); `analysis.indicators.leaderboard` scores them and
`analysis.tables.leaderboard` tabulates them.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.io import write_parquet
from analysis.names import display_name
from analysis.simulate import resolve_options
from analysis.simulate.constraint_aware import (
    accepted_run,
    read_budget,
    run_identity,
    tuned_space,
)
from analysis.simulate.jobs import max_proposals, space_data
from analysis.spaces.methodology import ScoreSettings
from analysis.spaces.space import Space

log = logging.getLogger(__name__)

# Families of entries (the legend groups of the figures and a column of the tables)
KERNEL_TUNER, PYATF, CONSTRAINT_AWARE, USER = "Kernel Tuner", "pyATF", "constraint-aware", "user"
# Strategies of Kernel Tuner's map the leaderboard leaves out: exhaustive search, and the multi-objective
# strategies the main study compares (they tune several objectives; here a space is tuned on time).
LEFT_OUT = ("brute_force", "nsga2", "nsga3")
# Kernel Tuner's random_sample is the registered algorithm `rs`.
SUITE_NAME = {"random_sample": "rs"}
PYATF_STRATEGY = "pyatf_strategies"
MIN_RUNS = 10  # the fewest runs per space of an entry too costly for leaderboard.repetitions (issue 45)


def kernel_tuner_strategies() -> list[str]:
    """The strategies of Kernel Tuner's strategy map the leaderboard runs, in the map's order."""
    from kernel_tuner.interface import strategy_map

    return [name for name in strategy_map if name not in LEFT_OUT and name != PYATF_STRATEGY]


def pyatf_techniques() -> list[str]:
    """pyATF's search techniques, as Kernel Tuner's pyatf_strategies lists them."""
    from kernel_tuner.strategies.pyatf_strategies import supported_searchtechniques

    return list(supported_searchtechniques)


def spaces(ca_spaces: Sequence[tuple[str, str]], ca: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The leaderboard's spaces, (device, kernel): the constraint-aware study's spaces tuned on time (its kernels
    without an accuracy threshold)."""
    return [key for key in ca_spaces if key[1] not in ca["thresholds"]]


def entry(family: str, display: str, algorithm: str, options: Mapping[str, Any], kt_name: str, repetitions: int,
          source: str = "runs", fewer_runs: bool = False, max_budget_evaluations: int | None = None) -> dict:
    """One leaderboard entry's fields (`entries` makes the config's; seed 003's tuning adds its own)."""
    return {"family": family, "display": display, "algorithm": algorithm, "options": dict(options),
            "kt_name": kt_name, "repetitions": int(repetitions), "source": source, "fewer_runs": bool(fewer_runs),
            "max_budget_evaluations": max_budget_evaluations}


def entries(leaderboard: Mapping[str, Any], ca_strategies: Mapping[str, Mapping[str, Any]]) -> dict[str, dict]:
    """Entry name -> {family, display, algorithm, options, kt_name, repetitions, source} from the config's
    `leaderboard` section and the constraint-aware study's strategies (name -> {algorithm, options,
    constraint_aware}).

    `source` is `runs` (made by rule lb_run) or `constraint_aware` (the first `repetitions` runs of the
    constraint-aware study's strategy of that name, which are the runs a job of that many repetitions
    would make: a run's seed depends on its repetition, not on how many there are).
    """
    repetitions = int(leaderboard.get("repetitions", 25))
    fewer = dict(leaderboard.get("fewer_runs") or {})
    largest = dict(leaderboard.get("fewer_spaces") or {})
    out: dict[str, dict] = {}

    def add(name: str, family: str, display: str, algorithm: str, options: Mapping[str, Any], kt_name: str,
            source: str = "runs", runs: int | None = None) -> None:
        out[name] = entry(family, display, algorithm, options, kt_name, runs or fewer.get(name, repetitions), source,
                          name in fewer, largest.get(name))

    if leaderboard.get("kernel_tuner", True):
        for name in kernel_tuner_strategies():
            algorithm = SUITE_NAME.get(name, name)
            add(name, KERNEL_TUNER, display_name(algorithm), algorithm, {}, name)
    if leaderboard.get("pyatf", True):
        for technique in pyatf_techniques():
            add(f"pyatf_{technique}", PYATF, f"pyATF {technique.replace('_', ' ')}", PYATF_STRATEGY,
                {"searchtechnique": technique}, PYATF_STRATEGY)
    if leaderboard.get("constraint_aware", True):
        for name, spec in ca_strategies.items():
            if spec["algorithm"] == "rs" and "random_sample" in out:
                continue  # its runs are random_sample's (the same identity, so the same seeds)
            aware = " (aware)" if spec["constraint_aware"] else " (unaware)"
            add(f"ca_{name}", CONSTRAINT_AWARE, f"{display_name(spec['algorithm'])} tuned{aware}", spec["algorithm"],
                {**spec["options"], "constraint_aware": bool(spec["constraint_aware"])}, spec["algorithm"],
                source="constraint_aware")
    for name, spec in (leaderboard.get("strategies") or {}).items():
        if name in out:
            raise ValueError(f"leaderboard.strategies.{name}: the name is taken by an entry the leaderboard makes "
                             "itself; choose another")
        add(name, USER, display_name(spec["algorithm"]), spec["algorithm"], spec.get("options") or {},
            spec["algorithm"])
    _check_fewer(out, fewer, largest, repetitions, ca_strategies)
    return out


def _check_fewer(out: Mapping[str, dict], fewer: Mapping[str, int], largest: Mapping[str, Any], repetitions: int,
                 ca_strategies: Mapping[str, Mapping[str, Any]]) -> None:
    """ValueError unless the `fewer_runs` and `fewer_spaces` tables name entries (or entries of a family switched
    off) and each entry's fewer runs are in range."""
    for field, table in (("fewer_runs", fewer), ("fewer_spaces", largest)):
        unknown = sorted(set(table) - set(out))
        if unknown:
            # a name of an entry whose family is switched off (kernel_tuner, pyatf, constraint_aware: false) is no
            # typo: an overlay that switches a family off need not also empty the full config's fewer_* tables
            known = {*out, *kernel_tuner_strategies(), *(f"pyatf_{t}" for t in pyatf_techniques()),
                     *(f"ca_{n}" for n in ca_strategies)}
            unknown = sorted(set(unknown) - known)
        if unknown:
            raise ValueError(f"leaderboard.{field}: {unknown} name no entry; entries: {', '.join(sorted(known))}")
    for name, runs in fewer.items():
        if not min(MIN_RUNS, repetitions) <= runs <= repetitions:
            raise ValueError(f"leaderboard.fewer_runs.{name}: {runs} runs; an entry runs at least {MIN_RUNS} (or "
                             f"leaderboard.repetitions, {repetitions}, if fewer) and at most {repetitions}")


def last_line(exc: BaseException) -> str:
    """The exception's last line as a traceback prints it (`ValueError: ...`)."""
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


@dataclass(frozen=True)
class RunSpace:
    """One space made ready for runs tuned on time: the space with its time objective, the objective's name,
    its budget (rule ca_budget's file, read for the runner), the engine's data and the proposal cap."""

    label: str
    space: Space
    objective: str
    limits: dict[str, Any]
    data: Any
    cap: int | None  # max_proposals: None without a cap


def run_spaces(spaces: Sequence[tuple[str | Path, str | Path, str | Path]], settings: ScoreSettings,
               proposal_cap: float) -> list[RunSpace]:
    """Each (space parquet, space meta, budget file) loaded once, for the runs of any number of entries."""
    out = []
    for parquet, meta, budget in spaces:
        space, objective = tuned_space(parquet, meta, None)
        out.append(RunSpace(f"{space.device}/{space.kernel}", space, objective,
                            read_budget(budget, objective, None, settings), space_data(space, [objective]),
                            max_proposals(space, proposal_cap)))
    return out


def space_runs(target: RunSpace, name: str, algorithm: str, options: Mapping[str, Any],
               repetitions: int) -> list[pd.DataFrame]:
    """One entry's runs on one space (options already resolved): a frame per run, a failed run's frame one row
    with `failed` set to the exception's last line."""
    label, limits = target.label, target.limits
    size = len(target.space.table)
    frames = []
    for rep in range(repetitions):
        identity = run_identity(label, target.objective, None, algorithm, options, limits["time_limit_ms"], rep)
        try:
            trace, seed, attempts = accepted_run(target.data, algorithm, options, size, limits, target.cap, identity)
        except Exception as exc:  # recorded, not raised: the leaderboard goes on (docs/leaderboard.md)
            reason = last_line(exc)
            log.warning("%s on %s, run %d failed: %s", name, label, rep, reason)
            frames.append(pd.DataFrame({"space": [label], "repetition": [rep], "failed": [reason],
                                        "skipped": [""]}))
            continue
        n = len(trace)
        frames.append(pd.DataFrame({
            "space": [label] * n, "repetition": [rep] * n, "failed": [""] * n, "skipped": [""] * n,
            "seed": [seed] * n,
            **trace.columns(), "attempts": [attempts] * n, "stop_reason": [trace.meta["stop_reason"]] * n,
            "stopped_early": [trace.stopped_early] * n,
        }))
    return frames


def run(spaces: Sequence[tuple[str | Path, str | Path, str | Path]], name: str, algorithm: str,
        options: Mapping[str, Any], repetitions: int, settings: ScoreSettings, proposal_cap: float,
        out: str | Path, max_budget_evaluations: int | None = None) -> None:
    """All runs of one entry on each space, given as (space parquet, space meta, budget file).

    Each space is tuned on time (no threshold), each run limited and accepted as in the
    constraint-aware study (`accepted_run`), seeded from its identity. The runs file has one row per
    evaluation (a `space` column first) and, for each failed run, one row with `failed` set to the
    exception's last line and no evaluation. A space whose budget is more than `max_budget_evaluations`
    evaluations gets one row with `skipped` set to why (leaderboard.fewer_spaces).
    """
    options = resolve_options(algorithm, options)
    frames = []
    started = time.perf_counter()
    for target in run_spaces(spaces, settings, proposal_cap):
        label, limits = target.label, target.limits
        if max_budget_evaluations is not None and limits["fevals_end"] > max_budget_evaluations:
            reason = (f"not run: budget {limits['fevals_end']} evaluations, over its {max_budget_evaluations} "
                      "(leaderboard.fewer_spaces)")
            frames.append(pd.DataFrame({"space": [label], "repetition": [-1], "failed": [""], "skipped": [reason]}))
            log.info("%s on %s: %s", name, label, reason)
            continue
        frames += space_runs(target, name, algorithm, options, repetitions)
        log.info("%s on %s: %d runs, %.1f s elapsed", name, label, repetitions, time.perf_counter() - started)
    runs = pd.concat(frames, ignore_index=True)
    runs.attrs.update(strategy=name, algorithm=algorithm)
    write_parquet(runs, out)
