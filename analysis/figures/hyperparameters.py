"""Hyperparameter fronts (thesis Figures 5-6): y1 vs y2 of every grid configuration, one panel per budget and grid."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from analysis.figures import style
from analysis.figures.contracts import GRID_COLUMNS, as_bool, require
from analysis.figures.labels import place_labels

X_LABEL = r"$y_1$: mean of median IGD$^+$"
Y_LABEL = r"$y_2$: mean IQR of IGD$^+$"
PANEL_WIDTH_IN = 1.35
KEY_WIDTH_IN = 1.25
MERGE_WITHIN_PT = 2.0  # points closer than this (markers on top of each other) share one label, e.g. "1,2"
KEY_TITLE = "point numbers\nrows: population size\ncolumns: mutation prob."
ROW_HEIGHT_IN = 1.75


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


def setting_numbers(g: pd.DataFrame) -> dict[tuple[float, float], int]:
    """Number (from 1) per (population size, mutation probability) of one grid, by size, then probability."""
    pairs = sorted(set(zip(g["popsize"].astype(float), g["mutation_prob"].astype(float))))
    return {pm: i + 1 for i, pm in enumerate(pairs)}


def _draw_key(ax, numbers: Mapping[tuple[float, float], int]) -> None:
    """The key of a grid's point numbers: population size (rows) by mutation probability (columns)."""
    ax.set_axis_off()
    pops = sorted({p for p, _ in numbers})
    muts = sorted({m for _, m in numbers})
    text = {"fontsize": 7, "ha": "center", "va": "center", "transform": ax.transAxes}
    ax.text(0.5, 1.0, KEY_TITLE, va="top", linespacing=1.25,
            **{k: v for k, v in text.items() if k != "va"})
    left, right, top, bottom = 0.26, 1.0, 0.62, 0.1
    xs = [left + (right - left) * (j + 0.5) / len(muts) for j in range(len(muts))]
    rows = len(pops) + 1
    ys = [top - (top - bottom) * i / max(rows - 1, 1) for i in range(rows)] if rows > 1 else [top]
    ys = [min(y, top) for y in ys[:1]] + [top - min(top - bottom, 0.12 * rows) * i / (rows - 1)
                                          for i in range(1, rows)]
    muted = {"color": "0.35", **text}
    for j, m in enumerate(muts):
        ax.text(xs[j], ys[0], f"{m:g}", **muted)
    for i, p in enumerate(pops):
        ax.text(0.12, ys[i + 1], f"{int(p)}", **muted)
        for j, m in enumerate(muts):
            ax.text(xs[j], ys[i + 1], str(numbers.get((p, m), "–")), gid="key", **text)


def plot(grid: pd.DataFrame, pdf: str | Path, png: str | Path,
         objective_sets: Mapping[str, Sequence[str]] | None = None):
    """Write the hyperparameter-front figure of a checked grid (see `check_grid`); returns the figure.

    Every point is numbered; the key right of each row of panels gives the population size and
    mutation probability of each number. `objective_sets` (set -> objectives): where given, y1 and
    y2 state their unit if every grid was tuned on one objective of one unit (see `axis_unit`).
    """
    grid = check_grid(grid)
    unit = axis_unit(grid, objective_sets)
    algorithm_of = dict(zip(grid["grid"], grid["algorithm"]))
    order = style.ordered(algorithm_of.values())
    grids = sorted(algorithm_of, key=lambda g: (order.index(algorithm_of[g]), g))
    shared = {a for a in algorithm_of.values() if list(algorithm_of.values()).count(a) > 1}
    budgets = sorted(grid["budget"].unique())
    with style.context():
        # never narrower than the style's width: the legend above the panels must fit
        width = max(PANEL_WIDTH_IN * len(budgets) + KEY_WIDTH_IN + 0.3, matplotlib.rcParams["figure.figsize"][0])
        fig, axes = style.figure(width=width,
                                 height=ROW_HEIGHT_IN * len(grids) + 0.45,
                                 nrows=len(grids), ncols=len(budgets) + 1, squeeze=False,
                                 gridspec_kw={"width_ratios": [PANEL_WIDTH_IN] * len(budgets) + [KEY_WIDTH_IN]})
        labels_todo = []
        for i, gname in enumerate(grids):
            a = algorithm_of[gname]
            c = style.colour(a)
            name = style.label(a) + (f" [{gname}]" if a in shared else "")
            numbers = setting_numbers(grid[grid["grid"] == gname])
            _draw_key(axes[i][-1], numbers)
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
                ax.margins(0.15)
                for axis in (ax.xaxis, ax.yaxis):
                    axis.set_major_locator(MaxNLocator(nbins=3, steps=[1, 2, 2.5, 5, 10]))
                ordered = pd.concat([front, dom])
                labels_todo.append((ax, ordered, pick, front, numbers))
        handles = [
            Line2D([], [], color="black", marker="x", lw=1.0, label="non-dominated"),
            Line2D([], [], color=style.NEUTRAL, marker="o", mfc="none", ls="none", label="dominated"),
            Line2D([], [], color="black", marker="o", ms=8, mfc="none", ls="none", label="picked"),
        ]
        style.fitted_legend(fig, handles, [str(h.get_label()) for h in handles], ncols=3)
        fig.supxlabel(X_LABEL + (f" ({unit})" if unit else ""), fontsize=8)
        fig.supylabel(Y_LABEL + (f" ({unit})" if unit else ""), fontsize=8)
        fig.draw_without_rendering()
        for ax, pts, pick, front, numbers in labels_todo:
            place_labels(ax, pts["y1"].tolist(), pts["y2"].tolist(),
                         [str(numbers[(float(p), float(m))]) for p, m in zip(pts["popsize"], pts["mutation_prob"])],
                         marker_radius_pt=3.0,
                         keep_clear=[(x, y, 5.5) for x, y in zip(pick["y1"], pick["y2"])],
                         keep_clear_lines=[list(zip(front["y1"], front["y2"]))],
                         merge_within_pt=MERGE_WITHIN_PT, fontsize=7)
        style.save(fig, pdf, png)
    return fig
