"""Hyperparameter fronts (thesis Figures 5-6): y1 vs y2 of every grid configuration, one panel per budget and grid."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import matplotlib
import pandas as pd
from matplotlib.lines import Line2D

from analysis.figures import style
from analysis.figures.contracts import GRID_COLUMNS, as_bool, require
from analysis.figures.labels import place_labels

X_LABEL = r"$y_1$: mean of median IGD$^+$"
Y_LABEL = r"$y_2$: mean IQR of IGD$^+$"
PANEL_WIDTH_IN = 1.7
ROW_HEIGHT_IN = 1.75


def point_label(popsize: float, mutation_prob: float) -> str:
    """The label of a grid configuration: population size, mutation probability."""
    return f"{int(popsize)}, {mutation_prob:g}"


def check_grid(grid: pd.DataFrame, source: str | None = None) -> pd.DataFrame:
    """The grid with boolean flags, checked: every column present, exactly one picked per (grid, budget).

    Without a `grid` column each algorithm is one grid (one row of panels).
    """
    require(grid, GRID_COLUMNS, source)
    grid = grid.copy()
    for c in ("on_front", "picked"):
        grid[c] = as_bool(grid[c], source, c)
    if "grid" not in grid.columns:  # one grid per algorithm unless the table names its grids
        grid["grid"] = grid["algorithm"]
    if (grid.groupby("grid")["algorithm"].nunique() > 1).any():
        raise ValueError(f"{source or 'grid'}: a grid holds settings of two algorithms")
    for (a, b), g in grid.groupby(["grid", "budget"], sort=True):
        if int(g["picked"].sum()) != 1:
            raise ValueError(f"{source or 'grid'}: {a} at budget {b} has {int(g['picked'].sum())} picked "
                             "configurations, expected 1")
        if not g.loc[g["picked"], "on_front"].all():
            raise ValueError(f"{source or 'grid'}: {a} at budget {b}: the picked configuration is not on the front")
    return grid


def axis_unit(grid: pd.DataFrame, objective_sets: Mapping[str, Sequence[str]] | None) -> str | None:
    """The unit of y1 and y2 where every grid was tuned on a one-objective set of the same unit (ms for time)."""
    if objective_sets is None or "objective_set" not in grid.columns:
        return None
    units = {style.igd_unit(objective_sets.get(o)) for o in grid["objective_set"].unique()}
    return units.pop() if len(units) == 1 else None


def plot(grid: pd.DataFrame, pdf: str | Path, png: str | Path,
         objective_sets: Mapping[str, Sequence[str]] | None = None):
    """Write the hyperparameter-front figure of a checked grid (see `check_grid`); returns the figure.

    `objective_sets` (set -> objectives): where given, y1 and y2 state their unit if every grid was
    tuned on one objective of one unit (see `axis_unit`).
    """
    grid = check_grid(grid)
    unit = axis_unit(grid, objective_sets)
    algorithm_of = dict(zip(grid["grid"], grid["algorithm"]))
    order = list(style.COLOURS)
    grids = sorted(algorithm_of, key=lambda g: (order.index(algorithm_of[g]) if algorithm_of[g] in order
                                                else len(order), g))
    shared = {a for a in algorithm_of.values() if list(algorithm_of.values()).count(a) > 1}
    budgets = sorted(grid["budget"].unique())
    with style.context():
        # never narrower than the style's width: the legend above the panels must fit
        width = max(PANEL_WIDTH_IN * len(budgets) + 0.3, matplotlib.rcParams["figure.figsize"][0])
        fig, axes = style.figure(width=width,
                                 height=ROW_HEIGHT_IN * len(grids) + 0.35,
                                 nrows=len(grids), ncols=len(budgets), squeeze=False)
        labels_todo = []
        for i, gname in enumerate(grids):
            a = algorithm_of[gname]
            c = style.colour(a)
            name = style.label(a) + (f" [{gname}]" if a in shared else "")
            for j, b in enumerate(budgets):
                ax = axes[i][j]
                g = grid[(grid["grid"] == gname) & (grid["budget"] == b)]
                if g.empty:
                    ax.set_visible(False)
                    continue
                dom = g[~g["on_front"]]
                front = g[g["on_front"]].sort_values("y1")
                ax.plot(dom["y1"], dom["y2"], "o", color=style.NEUTRAL, mfc="none", mew=0.8, ms=4)
                ax.plot(front["y1"], front["y2"], "x-", color=c, ms=5, mew=1.1, lw=1.0)
                pick = g[g["picked"]]
                ax.plot(pick["y1"], pick["y2"], "o", ms=10, mfc="none", mec="black", mew=1.1)
                ax.set_title(f"{name}, budget {b}")
                ax.margins(0.18)
                ax.tick_params(axis="x", labelrotation=30)
                ordered = pd.concat([front, dom])
                labels_todo.append((ax, ordered, pick))
        handles = [
            Line2D([], [], color="black", marker="x", lw=1.0, label="non-dominated"),
            Line2D([], [], color=style.NEUTRAL, marker="o", mfc="none", ls="none", label="dominated"),
            Line2D([], [], color="black", marker="o", ms=8, mfc="none", ls="none", label="picked"),
        ]
        legend = fig.legend(handles=handles, loc="outside upper center", ncols=3,
                            title="labels: population size, mutation probability", title_fontsize=7)
        fig.supxlabel(X_LABEL + (f" ({unit})" if unit else ""), fontsize=8)
        fig.supylabel(Y_LABEL + (f" ({unit})" if unit else ""), fontsize=8)
        fig.draw_without_rendering()
        if legend.get_window_extent().width > fig.bbox.width:  # too wide for one row: one entry a row
            legend.remove()
            fig.legend(handles=handles, loc="outside upper center", ncols=1,
                       title="labels: population size, mutation probability", title_fontsize=7)
            fig.draw_without_rendering()
        for ax, pts, pick in labels_todo:
            place_labels(ax, pts["y1"].tolist(), pts["y2"].tolist(),
                         [point_label(p, m) for p, m in zip(pts["popsize"], pts["mutation_prob"])],
                         marker_radius_pt=3.0, keep_clear=[(x, y, 5.5) for x, y in zip(pick["y1"], pick["y2"])],
                         fontsize=7)
        style.save(fig, pdf, png)
    return fig
