"""Hyperparameter tuning of single-objective strategies, as seed 003 tunes them (docs/hyperparameters-so.md;
STUDY.md §8).

Each configuration of a grid (config `hyperparameters_so.grids`: algorithm -> option -> values, every
combination) and Kernel Tuner's default configuration of each algorithm run on the training spaces
(`repetitions` runs each, the leaderboard's runner: each space tuned on time, with the constraint-aware
study's budget, acceptance rule and proposal cap) and are scored there with the methodology's score per
space (the leaderboard's scoring: the package's score, an interval from bootstrap resamples of the runs).
A configuration's training score is the mean of its scores over the training spaces, the methodology's
aggregate score; its interval comes from the same resamples (resample b of every space averaged; the
spaces are the fixed training set, the runs are what is resampled). The best and the worst
configuration of each grid, and the default, then run `final_repetitions` times on the training, test and
wider test spaces (seed 003 Fig. 3; its "untuned" is the worst configuration).

Configurations are named by their options (`method-best1bin_popsize-10_maxiter-50`, `default`); the
grid cells are Snakemake jobs of `configs_per_job` configurations each (rules so_run and so_score).
`analysis.tables.hyperparameters_so` tabulates the result.
"""

from __future__ import annotations

import itertools
import logging
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.indicators.leaderboard import curve_frame, score_frame, score_on_space, scored_spaces
from analysis.indicators.methodology import space_scoring
from analysis.io import write_parquet
from analysis.simulate.leaderboard import run_spaces, space_runs
from analysis.simulate.registry import OptionError, get_algorithm, resolve_options
from analysis.spaces.methodology import ScoreSettings

log = logging.getLogger(__name__)

DEFAULT = "default"  # the configuration of Kernel Tuner's default options
ROLES = ("best", "worst", DEFAULT)  # the configurations run again on every space (rule so_final_run)
SCOPES = ("training", "test", "wider")  # the space sets, in the order of the final runs' spaces
# Its published tables (rules so_tables: the first two; so_meta: the third; so_lb_table, where the study has a
# leaderboard: the last). Its runs are not in the baseline archive (docs/baselines.md), so verify-tables and compare
# leave these tables out.
LEADERBOARD_TABLE = "hyperparameters_so_leaderboard"
TABLES = ("hyperparameters_so", "hyperparameters_so_summary", "hyperparameters_so_meta", LEADERBOARD_TABLE)
# The final configurations that join the leaderboard as entries of their own (the default is its own entry there)
LEADERBOARD_ROLES = ("best", "worst")


def leaderboard_entry_name(algorithm: str, role: str) -> str:
    """The leaderboard entry of an algorithm's configuration of `role` (rules so_lb_score, so_lb_table)."""
    return f"so_{algorithm}_{role}"


class SectionError(ValueError):
    """A problem in config section hyperparameters_so; `field` is the dotted field below it."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def enabled(section: Mapping[str, Any]) -> bool:
    """Whether the config tunes any grid (grids and training spaces given)."""
    return bool(section.get("grids")) and bool(section.get("training"))


def slug(options: Mapping[str, Any]) -> str:
    """A configuration's name: its options in the grid's order, `option-value` joined by `_` (`default` for none)."""
    return "_".join(f"{k}-{v}" for k, v in options.items()) or DEFAULT


def configurations(grid: Mapping[str, Sequence[Any]]) -> dict[str, dict[str, Any]]:
    """Every combination of one algorithm's grid (options in the grid's order, values in theirs; the last option
    varies fastest), named by `slug`, then Kernel Tuner's default configuration (`default`)."""
    keys = list(grid)
    out = {}
    for values in itertools.product(*(grid[k] for k in keys)):
        options = dict(zip(keys, values, strict=True))
        out[slug(options)] = options
    out[DEFAULT] = {}
    return out


def chunks(section: Mapping[str, Any]) -> dict[str, list[list[str]]]:
    """Algorithm -> its configurations' names in jobs of `configs_per_job` (rule so_run's {chunk} is the index)."""
    size = int(section["configs_per_job"])
    out = {}
    for algorithm, grid in section["grids"].items():
        names = list(configurations(grid))
        out[algorithm] = [names[i:i + size] for i in range(0, len(names), size)]
    return out


def spaces(section: Mapping[str, Any], time_spaces: Sequence[tuple[str, str]]) -> dict[str, list[tuple[str, str]]]:
    """Scope -> its spaces (device, kernel): the configured training and test spaces and, with `wider_test`,
    every other space of `time_spaces` (the studied spaces tuned on time, `analysis.config.time_space_keys`)."""
    def keys(names: Sequence[str]) -> list[tuple[str, str]]:
        return [tuple(name.split("/", 1)) for name in names]  # type: ignore[misc]

    training, test = keys(section["training"]), keys(section["test"])
    wider = [k for k in time_spaces if k not in training and k not in test] if section["wider_test"] else []
    return {"training": training, "test": test, "wider": wider}


def check(section: Mapping[str, Any], time_spaces: Sequence[tuple[str, str]]) -> None:
    """SectionError naming the field unless every grid tunes a registered single-objective algorithm with
    values its options accept, and the training and test spaces are distinct spaces tuned on time."""
    for algorithm, grid in (section.get("grids") or {}).items():
        _check_grid(algorithm, grid)
    for name, spec in ((section.get("meta") or {}).get("strategies") or {}).items():
        _check_meta_strategy(name, spec)
    _check_scopes(section, time_spaces)
    if section.get("grids") and not section.get("training"):
        raise SectionError("training", "grids are given but no training space")


def _check_grid(algorithm: str, grid: Mapping[str, Any]) -> None:
    """Grid `grids.<algorithm>`: a registered single-objective algorithm, each option of it given a
    non-empty list of distinct values that the option accepts."""
    where = f"grids.{algorithm}"
    try:
        spec = get_algorithm(algorithm)
    except ValueError as exc:
        raise SectionError(where, str(exc)) from None
    if spec.multi_objective:
        raise SectionError(where, f"'{algorithm}' is multi-objective; this tuning scores single-objective "
                                  "strategies (the NSGA-II/III grid is config `hyperparameters`)")
    if not grid:
        raise SectionError(where, "an empty grid; give each option a list of values")
    for option, values in grid.items():
        if option not in spec.options:
            raise SectionError(f"{where}.{option}", f"'{option}' is no option of '{algorithm}' (its options: "
                                                    f"{', '.join(spec.options)})")
        if not isinstance(values, list) or not values:
            raise SectionError(f"{where}.{option}", f"expected a non-empty list of values, found {values!r}")
        if len(set(map(repr, values))) < len(values):
            raise SectionError(f"{where}.{option}", f"a value is listed twice: {values}")
        for i, value in enumerate(values):
            try:
                resolve_options(algorithm, {option: value})
            except OptionError as exc:
                raise SectionError(f"{where}.{option}[{i}]" if exc.option else where, str(exc)) from None


def _check_meta_strategy(name: str, spec: Mapping[str, Any]) -> None:
    """Strategy `meta.strategies.<name>`: a registered algorithm and options it accepts."""
    where = f"meta.strategies.{name}"
    try:
        get_algorithm(spec["algorithm"])
    except ValueError as exc:
        raise SectionError(f"{where}.algorithm", str(exc)) from None
    try:
        resolve_options(spec["algorithm"], dict(spec.get("options") or {}))
    except OptionError as exc:
        raise SectionError(f"{where}.options.{exc.option}" if exc.option else f"{where}.options",
                           str(exc)) from None


def _check_scopes(section: Mapping[str, Any], time_spaces: Sequence[tuple[str, str]]) -> None:
    """The training and test spaces: studied spaces tuned on time, none listed twice."""
    known = {f"{d}/{k}" for d, k in time_spaces}
    listed: dict[str, str] = {}
    for scope in ("training", "test"):
        for i, name in enumerate(section.get(scope) or []):
            if name not in known:
                raise SectionError(f"{scope}[{i}]", f"'{name}' is no studied space tuned on time (those are: "
                                                    f"{', '.join(sorted(known))})")
            if name in listed:
                raise SectionError(f"{scope}[{i}]", f"'{name}' is also listed in {listed[name]}")
            listed[name] = scope


def run_chunk(spaces: Sequence[tuple[str | Path, str | Path, str | Path]], algorithm: str,
              configs: Mapping[str, Mapping[str, Any]], repetitions: int, settings: ScoreSettings,
              proposal_cap: float, out: str | Path) -> None:
    """Every run of `configs` (name -> options) on each space ((parquet, meta, budget), loaded once): the
    leaderboard's runs file with a `configuration` column first."""
    targets = run_spaces(spaces, settings, proposal_cap)
    frames = []
    started = time.perf_counter()
    for name, options in configs.items():
        resolved = resolve_options(algorithm, dict(options))
        for target in targets:
            frames += [f.assign(configuration=name) for f in space_runs(target, name, algorithm, resolved,
                                                                        repetitions)]
        log.info("%s %s: %d runs on %d spaces, %.1f s elapsed", algorithm, name, repetitions, len(targets),
                 time.perf_counter() - started)
    runs = pd.concat(frames, ignore_index=True)
    runs = runs[["configuration", *[c for c in runs.columns if c != "configuration"]]]
    runs.attrs.update(algorithm=algorithm, configurations={k: dict(v) for k, v in configs.items()})
    write_parquet(runs, out)


def score_chunk(algorithm: str, run_files: Sequence[str | Path],
                spaces: Sequence[tuple[str | Path, str | Path, str | Path]], repetitions: int,
                settings: ScoreSettings, resamples: int, out_scores: str | Path, out_resamples: str | Path,
                out_curves: str | Path | None = None) -> None:
    """Score every configuration of the runs files on each space (the leaderboard's per-space score and
    interval; the space's statistics made once for all configurations). Writes the score rows (the
    leaderboard's columns, `entry` the configuration, `algorithm` first), the resampled scores
    (algorithm, configuration, space, resample, score: resample b of one configuration on every space is averaged into
    resample b of its aggregate) and, if asked, the score curves."""
    runs = pd.concat([pd.read_parquet(path) for path in run_files], ignore_index=True)
    names = list(dict.fromkeys(runs["configuration"]))
    rows, curves, boots = [], [], []
    for label, space, objective, limits in scored_spaces(spaces):
        mine = runs[runs["space"] == label]
        with tempfile.TemporaryDirectory(prefix="tsb-so-score-") as tmp:
            prepared = space_scoring(space, objective, tmp)
            for name in names:
                row, curve, boot = score_on_space(name, space, objective, limits,
                                                  mine[mine["configuration"] == name].drop(columns="configuration"),
                                                  repetitions, settings, resamples, prepared=prepared)
                rows.append(row)
                if curve is not None:
                    curves.append(curve)
                boots.append(pd.DataFrame({"algorithm": algorithm, "configuration": name, "space": label,
                                           "resample": np.arange(len(boot)), "score": boot}))
    scores = score_frame(rows)
    scores.insert(0, "algorithm", algorithm)
    write_parquet(scores, out_scores)
    write_parquet(pd.concat(boots, ignore_index=True), out_resamples)
    if out_curves is not None:
        write_parquet(curve_frame(curves), out_curves)


def counted_spaces(scores: pd.DataFrame, min_budget_evaluations: int) -> list[str]:
    """The spaces of score rows whose methodology budget is at least `min_budget_evaluations` evaluations (the
    others are flagged and count in no aggregate, as in the constraint-aware study), in the rows' order."""
    budgets = scores.drop_duplicates("space").set_index("space")["budget_evaluations"]
    return [space for space, budget in budgets.items() if budget >= min_budget_evaluations]


def mean_scores(scores: pd.DataFrame, resampled: pd.DataFrame, counted: Sequence[str]) -> pd.DataFrame:
    """Per configuration (`entry` of the score rows): the mean score over the `counted` spaces (the methodology's
    aggregate score) and its 95 % percentile interval over the resamples (resample b of every space averaged),
    `n_spaces`, and why a score is missing (a counted space without a score). In the order of `scores`."""
    rows = []
    for name, mine in scores.groupby("entry", sort=False):
        mine = mine[mine["space"].isin(counted)]
        row: dict[str, Any] = {"configuration": name, "n_spaces": len(mine), "score": np.nan, "ci_low": np.nan,
                               "ci_high": np.nan, "missing_reason": ""}
        gaps = mine[mine["score"].isna()]
        if len(gaps):
            first = gaps.iloc[0]
            row["missing_reason"] = f"no score on {len(gaps)} space(s), {first['space']}: {first['missing_reason']}"
        elif len(mine):
            row["score"] = float(mine["score"].mean())
            boot = resampled[(resampled["configuration"] == name) & resampled["space"].isin(counted)]
            table = boot.pivot(index="resample", columns="space", values="score")
            if len(table) and table.shape[1] == len(mine):
                low, high = np.percentile(table.mean(axis=1).to_numpy(), [2.5, 97.5])
                row.update(ci_low=float(low), ci_high=float(high))
        rows.append(row)
    return pd.DataFrame(rows, columns=["configuration", "n_spaces", "score", "ci_low", "ci_high", "missing_reason"])


def pick(scores: pd.DataFrame, resampled: pd.DataFrame, min_budget_evaluations: int, role: str) -> str:
    """The configuration of `role`: the grid's best or worst by training score (`mean_scores` over the counted
    training spaces; the first in grid order on a tie; Kernel Tuner's default is not a grid configuration and
    is never picked), or `default`."""
    if role == DEFAULT:
        return DEFAULT
    table = mean_scores(scores, resampled, counted_spaces(scores, min_budget_evaluations))
    grid = table[(table["configuration"] != DEFAULT) & table["score"].notna()]
    if grid.empty:
        raise ValueError("no grid configuration has a training score, so none can be picked; their reasons: "
                         + "; ".join(table["missing_reason"].head(3)))
    values = grid["score"].to_numpy()
    return str(grid["configuration"].iloc[int(np.argmax(values) if role == "best" else np.argmin(values))])


def run_final(score_files: Sequence[str | Path], resample_files: Sequence[str | Path], min_budget_evaluations: int,
              role: str, grid: Mapping[str, Sequence[Any]],
              spaces: Sequence[tuple[str | Path, str | Path, str | Path]], algorithm: str, repetitions: int,
              settings: ScoreSettings, proposal_cap: float, out: str | Path) -> None:
    """The runs of an algorithm's configuration of `role` (`pick`ed from its grid's scores on the training spaces)
    on every final space."""
    scores = pd.concat([pd.read_parquet(p) for p in score_files], ignore_index=True)
    resampled = pd.concat([pd.read_parquet(p) for p in resample_files], ignore_index=True)
    name = pick(scores, resampled, min_budget_evaluations, role)
    log.info("%s, %s configuration: %s", algorithm, role, name)
    run_chunk(spaces, algorithm, {name: configurations(grid)[name]}, repetitions, settings, proposal_cap, out)
