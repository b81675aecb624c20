"""Tables of the single-objective hyperparameter tuning (seed 003; docs/hyperparameters-so.md).

`tables/hyperparameters_so.csv`: one row per algorithm and configuration (every grid configuration and
Kernel Tuner's default), its training score (mean methodology score over the counted training spaces) with
a 95 % interval from resamples of its runs, its rank in its grid, and for the best, the worst and the
default configuration their scores from the final runs on the training, test and wider test spaces.
`tables/hyperparameters_so_summary.csv`: per algorithm and scope (training, test, all = training and test
as seed 003 counts them, wider), the tuned (best), untuned (worst, seed 003's sense) and default mean scores
over the scope's counted spaces, the differences tuned - untuned and tuned - default with 95 % intervals by
bootstrap over spaces (the per-space differences), and seed 003's reported improvement beside ours.
`results/hyperparameters_so/spaces.parquet` (per algorithm, role and space: the final score and interval)
and `curves.parquet` (per algorithm, role and scope: the mean score curve over the scope's counted spaces)
feed the figures. `tables/hyperparameters_so_leaderboard.csv` (where the study has a leaderboard): the
leaderboard's own table (`analysis.tables.leaderboard`) over its entries and spaces with each grid's best and
worst configuration added as entries of family `FAMILY`, scored by the leaderboard's scoring on the first
`leaderboard.repetitions` of their final runs (rule so_lb_score).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.hyperparams.single_objective import (
    DEFAULT,
    LEADERBOARD_ROLES,
    ROLES,
    configurations,
    counted_spaces,
    leaderboard_entry_name,
    mean_scores,
)
from analysis.indicators.leaderboard import read_scores
from analysis.io import write_csv, write_parquet, write_text
from analysis.markdown import to_markdown
from analysis.names import display_name
from analysis.simulate.leaderboard import entry as lb_entry
from analysis.statistics import Bootstrap
from analysis.tables import leaderboard as lb_tables

# The summary's scopes: seed 003's test and all (training + test), and ours
SUMMARY_SCOPES = {"training": ("training",), "test": ("test",), "all": ("training", "test"), "wider": ("wider",)}

GRID_DOCS = {
    "algorithm": "the tuned algorithm (Kernel Tuner's strategy)",
    "display": "its display name",
    "configuration": "the configuration's name: its options, `option-value` joined by `_`; `default` for Kernel "
                     "Tuner's default options",
    "options": "the configuration's options as JSON (options not named keep Kernel Tuner 1.5.0's defaults)",
    "in_grid": "whether it is a configuration of the grid (the default is not, and is never picked)",
    "n_spaces": "counted training spaces (methodology budget at least min_budget_evaluations)",
    "training_score": "mean methodology score over the counted training spaces (the aggregate score; "
                      "hyperparameters_so.repetitions runs per space): 0 is the calculated random-search "
                      "baseline, 1 finds the optimum at once",
    "training_ci_low": "95 % percentile interval of the training score, from bootstrap resamples of the runs of "
                       "each space (resample b of every space averaged), low end",
    "training_ci_high": "high end of that interval",
    "rank": "rank of the training score among the grid's configurations (1 = best); for the default, the rank it "
            "would have",
    "role": "best / worst: the grid's best and worst configuration (seed 003's tuned and untuned); default",
    "final_training": "mean score of the final runs (hyperparameters_so.final_repetitions per space) over the "
                      "counted training spaces (role rows)",
    "final_test": "the same over the counted test spaces",
    "final_wider": "the same over the counted wider test spaces (every other space tuned on time)",
    "missing_reason": "why a score is missing",
}

SUMMARY_DOCS = {
    "algorithm": "the tuned algorithm",
    "display": "its display name",
    "scope": "the spaces: training, test, all (training and test: seed 003's 'all'), wider (every other space "
             "tuned on time)",
    "n_spaces": "counted spaces of the scope (methodology budget at least min_budget_evaluations; the others are "
                "flagged in the spaces data)",
    "tuned_configuration": "the grid's best configuration by training score",
    "untuned_configuration": "the grid's worst configuration (seed 003's 'untuned')",
    "tuned": "mean score of the tuned configuration's final runs over the scope's counted spaces",
    "untuned": "the same for the untuned configuration",
    "default": "the same for Kernel Tuner's default configuration",
    "tuned_minus_untuned": "tuned - untuned, the mean of the per-space differences",
    "tuned_minus_untuned_ci_low": "95 % interval by bootstrap over the scope's spaces, low end (NaN under 2 "
                                  "spaces)",
    "tuned_minus_untuned_ci_high": "high end",
    "tuned_vs_untuned": "what the interval says: better (above 0), worse (below 0) or not apart",
    "tuned_minus_default": "tuned - default, the mean of the per-space differences",
    "tuned_minus_default_ci_low": "95 % interval by bootstrap over spaces, low end",
    "tuned_minus_default_ci_high": "high end",
    "tuned_vs_default": "better, worse or not apart, from that interval",
    "seed_003_tuned_minus_untuned": "seed 003's reported improvement of tuned over untuned on its own spaces "
                                    "(test: its W6600 and A6000 spaces; all: its 20 spaces), from config",
}


def verdict(low: float, high: float) -> str:
    """An interval's reading: better (wholly above 0), worse (wholly below 0), not apart, or '' without one."""
    if not np.isfinite(low) or not np.isfinite(high):
        return ""
    return "better" if low > 0 else "worse" if high < 0 else "not apart"


def _read(paths: Sequence[str | Path]) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)


def grid_table(grid_scores: pd.DataFrame, grid_resampled: pd.DataFrame, final_spaces: pd.DataFrame,
               grids: Mapping[str, Mapping[str, Sequence[Any]]], scopes: Mapping[str, Sequence[str]],
               min_budget_evaluations: int) -> pd.DataFrame:
    """tables/hyperparameters_so.csv (GRID_DOCS) from the grid's score rows and resamples and the final runs'
    per-space scores (`final_spaces`: algorithm, role, configuration, space, score, counted)."""
    frames = []
    for algorithm, grid in grids.items():
        configs = configurations(grid)
        scores = grid_scores[grid_scores["algorithm"] == algorithm]
        table = mean_scores(scores, grid_resampled[grid_resampled["algorithm"] == algorithm],
                            counted_spaces(scores, min_budget_evaluations))
        table = table.rename(columns={"score": "training_score", "ci_low": "training_ci_low",
                                      "ci_high": "training_ci_high"})
        in_grid = table["configuration"] != DEFAULT
        grid_values = table.loc[in_grid, "training_score"].to_numpy()
        table["rank"] = [int(1 + np.sum(grid_values > v)) if np.isfinite(v) else np.nan
                         for v in table["training_score"]]
        table.insert(0, "algorithm", algorithm)
        table.insert(1, "display", display_name(algorithm))
        table.insert(3, "options", [json.dumps(configs[c], sort_keys=False) if c != DEFAULT
                                    else "Kernel Tuner's defaults" for c in table["configuration"]])
        table.insert(4, "in_grid", in_grid)
        mine = final_spaces[final_spaces["algorithm"] == algorithm]
        role_of: dict[str, list[str]] = {}  # configuration -> the roles it was picked for
        for role in ROLES:
            picked = mine.loc[mine["role"] == role, "configuration"]
            if len(picked):
                role_of.setdefault(picked.iloc[0], []).append(role)
        table["role"] = ["/".join(role_of.get(c, [])) for c in table["configuration"]]
        for scope in ("training", "test", "wider"):
            column = []
            for config, roles in zip(table["configuration"], table["role"], strict=True):
                rows = mine[(mine["configuration"] == config) & (mine["role"] == (roles.split("/")[0] or None))
                            & mine["space"].isin(scopes[scope]) & mine["counted"]]
                column.append(float(rows["score"].mean()) if roles and len(rows) and rows["score"].notna().all()
                              else np.nan)
            table[f"final_{scope}"] = column
        missing = table.pop("missing_reason")
        table["missing_reason"] = missing
        frames.append(table)
    return pd.concat(frames, ignore_index=True)


def final_space_scores(final_scores: pd.DataFrame, roles: pd.DataFrame, scopes: Mapping[str, Sequence[str]],
                       min_budget_evaluations: int) -> pd.DataFrame:
    """Per algorithm, role and space: the final runs' score and interval, the space's scope and whether it counts
    (`roles`: algorithm, role, configuration, file index)."""
    scope_of = {space: scope for scope, names in scopes.items() for space in names}
    frame = final_scores.rename(columns={"entry": "configuration"}).merge(roles, on=["algorithm", "configuration",
                                                                                      "file"])
    frame["scope"] = frame["space"].map(scope_of)
    frame["counted"] = frame["budget_evaluations"] >= min_budget_evaluations
    return frame[["algorithm", "role", "configuration", "scope", "space", "counted", "runs", "failed_runs", "score",
                  "score_ci_low", "score_ci_high", "budget_evaluations", "missing_reason"]]


def summary_table(spaces: pd.DataFrame, grids: Mapping[str, Any], scopes: Mapping[str, Sequence[str]],
                  seed_003: Mapping[str, Mapping[str, float]], boot: Bootstrap) -> pd.DataFrame:
    """tables/hyperparameters_so_summary.csv (SUMMARY_DOCS) from `final_space_scores`."""
    rows = []
    for algorithm in grids:
        mine = spaces[(spaces["algorithm"] == algorithm) & spaces["counted"]]
        wide = mine.pivot_table(index="space", columns="role", values="score", aggfunc="first")
        picked = mine.drop_duplicates("role").set_index("role")["configuration"]
        for scope, parts in SUMMARY_SCOPES.items():
            names = [s for part in parts for s in scopes[part]]
            part = wide.reindex([s for s in names if s in wide.index])
            row: dict[str, Any] = {"algorithm": algorithm, "display": display_name(algorithm), "scope": scope,
                                   "n_spaces": len(part), "tuned_configuration": picked.get("best", ""),
                                   "untuned_configuration": picked.get("worst", "")}
            for role, column in (("best", "tuned"), ("worst", "untuned"), (DEFAULT, "default")):
                values = part[role] if role in part else pd.Series(dtype=float)
                row[column] = float(values.mean()) if len(values) and values.notna().all() else np.nan
            for other, name in (("worst", "untuned"), (DEFAULT, "default")):
                key = f"tuned_minus_{name}"
                if {"best", other} <= set(part.columns) and len(part) and part[["best", other]].notna().all().all():
                    diff = (part["best"] - part[other]).to_numpy(dtype=float)
                    low, high = boot.ci(diff)
                    row.update({key: float(diff.mean()), f"{key}_ci_low": low, f"{key}_ci_high": high,
                                f"tuned_vs_{name}": verdict(low, high)})
                else:
                    row.update({key: np.nan, f"{key}_ci_low": np.nan, f"{key}_ci_high": np.nan,
                                f"tuned_vs_{name}": ""})
            row["seed_003_tuned_minus_untuned"] = (seed_003.get(scope) or {}).get(algorithm, np.nan)
            rows.append(row)
    return pd.DataFrame(rows, columns=list(SUMMARY_DOCS))


def mean_curves(curves: pd.DataFrame, spaces: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm, role and summary scope: the mean score curve over the scope's counted spaces (each space's
    curve over its own time range, on the common fraction of it), seed 003 Fig. 5."""
    frames = []
    counted = spaces[spaces["counted"] & spaces["score"].notna()]
    for scope, parts in SUMMARY_SCOPES.items():
        chosen = counted[counted["scope"].isin(parts)][["algorithm", "role", "configuration", "space"]]
        merged = curves.merge(chosen, on=["algorithm", "role", "configuration", "space"])
        if merged.empty:
            continue
        mean = (merged.groupby(["algorithm", "role", "time_fraction"], sort=False)
                .agg(score=("score", "mean"), n_spaces=("space", "nunique")).reset_index())
        frames.append(mean.assign(scope=scope))
    columns = ["algorithm", "role", "scope", "time_fraction", "score", "n_spaces"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def final_configuration(path: str | Path) -> str:
    """The configuration a final runs file (rule so_final_run) ran: the one its role picked from the grid."""
    return pd.read_parquet(path, columns=["configuration"])["configuration"].iloc[0]


def tables(grid_scores: Sequence[str | Path], grid_resamples: Sequence[str | Path], final_runs: Sequence[str | Path],
           final_scores: Sequence[str | Path], final_curves: Sequence[str | Path], keys: Sequence[str],
           section: Mapping[str, Any], scopes: Mapping[str, Sequence[str]], min_budget_evaluations: int,
           outputs: Sequence[str | Path], bootstrap_resamples: int = 10000, bootstrap_seed: int = 0) -> None:
    """Write both tables and the figures' data; `outputs`: hyperparameters_so.csv and .md,
    hyperparameters_so_summary.csv and .md, spaces.parquet, curves.parquet. `keys` are the final files'
    "algorithm/role", in the order of `final_runs`, `final_scores` and `final_curves`."""
    grid_csv, grid_md, summary_csv, summary_md, spaces_out, curves_out = outputs
    roles = []
    for i, (key, path) in enumerate(zip(keys, final_runs, strict=True)):
        algorithm, role = key.split("/")
        configuration = final_configuration(path)
        roles.append({"algorithm": algorithm, "role": role, "configuration": configuration, "file": i})
    role_table = pd.DataFrame(roles)
    finals = pd.concat([pd.read_parquet(p).assign(file=i) for i, p in enumerate(final_scores)], ignore_index=True)
    spaces = final_space_scores(finals, role_table, scopes, min_budget_evaluations)
    curves = pd.concat([pd.read_parquet(p).assign(file=i) for i, p in enumerate(final_curves)], ignore_index=True)
    curves = curves.rename(columns={"entry": "configuration"}).merge(role_table, on=["configuration", "file"])
    grid = grid_table(_read(grid_scores), _read(grid_resamples), spaces, section["grids"], scopes,
                      min_budget_evaluations)
    summary = summary_table(spaces, section["grids"], scopes, section.get("seed_003") or {},
                            Bootstrap(bootstrap_resamples, bootstrap_seed))
    write_csv(grid, grid_csv)
    write_text(to_markdown(grid, "Seed 003: every configuration of the single-objective grids", GRID_DOCS), grid_md)
    write_csv(summary, summary_csv)
    write_text(to_markdown(summary, "Seed 003: tuned, untuned and default configurations", SUMMARY_DOCS),
               summary_md)
    write_parquet(spaces, spaces_out)
    write_parquet(mean_curves(curves, spaces), curves_out)


FAMILY = "seed 003 tuning"  # the family of the tuned and untuned configurations on the leaderboard
ROLE_WORDS = {"best": "tuned", "worst": "untuned"}


def leaderboard_entries(final_runs: Sequence[str | Path], keys: Sequence[str], grids: Mapping[str, Any],
                        repetitions: int) -> dict[str, dict[str, Any]]:
    """The leaderboard entries (the fields of `analysis.simulate.leaderboard.entries`) of each grid's best and
    worst configuration, from the final runs files (`keys`: their "algorithm/role", in the same order): which
    configuration each role picked is known only once the grid is scored, so the entries are made here, not in
    the Snakefile."""
    out: dict[str, dict[str, Any]] = {}
    for key, path in zip(keys, final_runs, strict=True):
        algorithm, role = key.split("/")
        if role not in LEADERBOARD_ROLES:
            continue
        configuration = final_configuration(path)
        out[leaderboard_entry_name(algorithm, role)] = lb_entry(
            FAMILY, f"{display_name(algorithm)} {ROLE_WORDS[role]} (seed 003 grid's {role})", algorithm,
            configurations(grids[algorithm])[configuration], algorithm, repetitions, source="hyperparameters_so")
    return out


def leaderboard_table(lb_scores: Sequence[str | Path], so_scores: Sequence[str | Path],
                      entries: Mapping[str, Mapping[str, Any]], final_runs: Sequence[str | Path],
                      keys: Sequence[str], grids: Mapping[str, Any], repetitions: int, outputs: Sequence[str | Path],
                      bootstrap_resamples: int, bootstrap_seed: int, min_budget: int,
                      cost_file: str | Path | None = None) -> pd.DataFrame:
    """The leaderboard (`analysis.tables.leaderboard.leaderboard`, as rule lb_tables computes it) of its entries
    (`entries`, scored in `lb_scores`, in that order) and the tuning's best and worst configurations (scored in
    `so_scores`, in the order of `leaderboard_entries`); `outputs`: its CSV and Markdown. Every entry is scored alone,
    so the leaderboard's own rows keep their scores and intervals; ranks and spaces-best count the new entries."""
    added = leaderboard_entries(final_runs, keys, grids, repetitions)
    if len(added) != len(so_scores):
        raise ValueError(f"{len(so_scores)} score files for the tuning's {len(added)} leaderboard entries")
    every = {**entries, **added}
    costs = lb_tables.read_costs(cost_file) if cost_file else {}
    spaces = lb_tables.space_table(read_scores([*lb_scores, *so_scores], every), every, min_budget)
    board = lb_tables.leaderboard(spaces, every, Bootstrap(bootstrap_resamples, bootstrap_seed), costs)
    csv, md = outputs
    write_csv(board, csv)
    counted = spaces.loc[spaces["excluded"].fillna("") == "", "space"].nunique()
    write_text(to_markdown(board, f"Leaderboard with seed 003's tuned and untuned configurations: methodology score "
                                  f"over {counted} spaces tuned on time", lb_tables.LEADERBOARD_DOCS), md)
    return board
