"""Hyperparameter grid (seed 000 §5.2, Table 1 -> Table 6): expansion and selection (docs/study.md,
"Hyperparameter selection").

Each grid (e.g. NSGA-II on O3) expands to one algorithm setting per combination of its
option values, run on the training spaces. Selection, per grid and budget:
IGD+ at the budget per repetition -> median and IQR per (setting, kernel, device) ->
mean over devices -> mean over kernels, giving y1 (mean of medians) and y2 (mean of
IQRs). The settings non-dominated on (y1, y2) are ordered by y1 and the middle one is
picked; with an even count one of the two middle ones is picked by a coin seeded from
(grid, budget, seed), and the toss is recorded.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.errors import InputError
from analysis.io import write_csv, write_text
from analysis.markdown import to_markdown
from analysis.simulate import derive_seed

log = logging.getLogger(__name__)

GRID_PREFIX = "hp"


def setting_label(grid: str, options: Mapping[str, Any]) -> str:
    """Label of one grid point, e.g. hp_nsga2__popsize_20__mutation_prob_0.05."""
    parts = "__".join(f"{k}_{v}" for k, v in options.items())
    return f"{GRID_PREFIX}_{grid}__{parts}"


def expand(grids: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Setting label -> {algorithm, options, grid, objective_set} for every grid point."""
    settings = {}
    for grid, spec in grids.items():
        names = list(spec["options"])
        for values in itertools.product(*(spec["options"][n] for n in names)):
            options = dict(zip(names, values))
            settings[setting_label(grid, options)] = {
                "algorithm": spec["algorithm"], "options": {**spec.get("fixed", {}), **options}, "grid": grid,
                "grid_options": options, "objective_set": spec["objective_set"],
            }
    return settings


def pick_middle(front: pd.DataFrame, coin_seed: int) -> tuple[int, str]:
    """Index (in `front`, already ordered by y1) of the middle setting, and the coin used."""
    n = len(front)
    if n % 2 == 1:
        return n // 2, "none (odd front)"
    heads = bool(np.random.default_rng(coin_seed).integers(2))
    return (n // 2 - 1, "heads: lower-y1 middle") if heads else (n // 2, "tails: higher-y1 middle")


def select(final: pd.DataFrame, settings: Mapping[str, Mapping[str, Any]], seed: int
           ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(grid table with y1, y2, on_front, picked per setting and budget; Table 6: the picks)."""
    import moocore  # here, not at the top: the simulate jobs that only read picked options skip its import

    final = final[final["setting"].isin(list(settings))]
    if final.empty:
        raise ValueError("no grid runs among the final indicators")
    per_space = (final.groupby(["setting", "budget", "kernel", "device"], observed=True)["igd_plus"]
                 .agg(median="median", iqr=lambda s: s.quantile(0.75) - s.quantile(0.25)).reset_index())
    per_kernel = per_space.groupby(["setting", "budget", "kernel"], observed=True)[["median", "iqr"]].mean()
    y = per_kernel.groupby(["setting", "budget"], observed=True).mean().reset_index()
    y = y.rename(columns={"median": "y1", "iqr": "y2"})
    y["grid"] = y["setting"].map(lambda s: settings[s]["grid"])
    y["algorithm"] = y["setting"].map(lambda s: settings[s]["algorithm"])
    y["objective_set"] = y["setting"].map(lambda s: settings[s]["objective_set"])
    option_names = sorted({k for s in settings.values() for k in s["grid_options"]})
    for name in option_names:
        y[name] = y["setting"].map(lambda s, n=name: settings[s]["grid_options"].get(n))
    kernels = per_space.groupby(["setting", "budget"], observed=True).agg(
        kernels=("kernel", "nunique"), spaces=("device", "size")).reset_index()
    y = y.merge(kernels, on=["setting", "budget"])
    grid_rows, picks = [], []
    for (grid, budget), part in y.groupby(["grid", "budget"], sort=True):
        part = part.copy()
        # equal (y1, y2) points are all kept, as in the spaces' true fronts
        part["on_front"] = moocore.is_nondominated(part[["y1", "y2"]].to_numpy(dtype=float), keep_weakly=True)
        front = part[part["on_front"]].sort_values(["y1", "y2", "setting"]).reset_index(drop=True)
        coin_seed = derive_seed(purpose="hyperparameter coin", grid=grid, budget=int(budget), seed=seed)
        idx, coin = pick_middle(front, coin_seed)
        chosen = front.loc[idx, "setting"]
        part["picked"] = part["setting"] == chosen
        grid_rows.append(part)
        row = front.loc[idx]
        picks.append({"grid": grid, "algorithm": row["algorithm"], "objective_set": row["objective_set"],
                      "budget": int(budget), **{n: row[n] for n in option_names if pd.notna(row[n])},
                      "y1": row["y1"], "y2": row["y2"], "front_size": len(front), "grid_size": len(part),
                      "coin": coin, "coin_seed": coin_seed, "setting": chosen})
    cols = ["grid", "algorithm", "objective_set", "budget", "setting", *option_names, "y1", "y2", "on_front",
            "picked", "kernels", "spaces"]
    grid_table = pd.concat(grid_rows, ignore_index=True)[cols].sort_values(["grid", "budget", "y1"])
    return grid_table.reset_index(drop=True), pd.DataFrame(picks)


def picked_options(table_csv: str | Path, grid: str, budget: int) -> dict[str, Any]:
    """The options picked for `grid` at `budget`, read from tables/hyperparameters.csv."""
    table = pd.read_csv(table_csv)
    rows = table[(table["grid"] == grid) & (table["budget"] == budget)]
    if len(rows) != 1:
        raise InputError(table_csv, f"expected one pick for grid '{grid}' at budget {budget}, found {len(rows)}",
                         field="grid")
    row = rows.iloc[0]
    skip = {"grid", "algorithm", "objective_set", "budget", "y1", "y2", "front_size", "grid_size", "coin",
            "coin_seed", "setting"}
    out: dict[str, Any] = {}
    for name, value in row.items():
        if name in skip or pd.isna(value):
            continue
        value = value.item() if hasattr(value, "item") else value
        out[name] = int(value) if isinstance(value, float) and value.is_integer() else value
    return out


TABLE6_DOCS = {
    "grid": "grid name (config hyperparameters.grids)",
    "algorithm": "registry algorithm",
    "objective_set": "objective set the grid was tuned on",
    "budget": "evaluations",
    "y1": "mean over kernels of the mean over devices of the median final IGD+",
    "y2": "mean over kernels of the mean over devices of the IQR of the final IGD+",
    "front_size": "settings non-dominated on (y1, y2)",
    "grid_size": "settings in the grid",
    "coin": "how the middle of an even front was chosen",
    "coin_seed": "seed of that coin",
    "setting": "the picked setting's label",
}


def run(final: pd.DataFrame, grids: Mapping[str, Mapping[str, Any]], seed: int, out_grid: str | Path,
        out_csv: str | Path, out_md: str | Path) -> None:
    """Select per grid and budget; write the grid table, Table 6 (CSV) and its Markdown."""
    grid_table, picks = select(final, expand(grids), seed)
    write_csv(grid_table, out_grid, float_digits=None)  # intermediate (results/), the fronts figure's input
    write_csv(picks, out_csv)
    write_text(to_markdown(picks, "Selected hyperparameters (Table 6 of seed 000)", TABLE6_DOCS), out_md)
    for _, row in picks.iterrows():
        log.info("grid %s, budget %d: picked %s of a %d-setting front (%s)", row["grid"], row["budget"],
                 row["setting"], row["front_size"], row["coin"])


def options_per_budget(options: dict[str, Any], budgets: Sequence[int], table_csv: str | Path,
                       grid: str | None) -> list[dict[str, Any]]:
    """The options of a setting at each budget: as given, or (with `grid`) updated by the options the grid's
    selection picked at that budget (`picked_options`)."""
    if not grid:
        return [options for _ in budgets]
    per_budget = []
    for budget in budgets:
        picked = {**options, **picked_options(table_csv, grid, budget)}
        log.info("options of grid %s picked for budget %d: %s", grid, budget, picked)
        per_budget.append(picked)
    return per_budget
