"""The leaderboard's figures (docs/leaderboard.md): the aggregate score over time (as seed 001 Fig. 6), the score of
every strategy on every space, and a critical-difference diagram of the pairwise tests.

Each draws from the tables the rule lb_tables writes: `results/leaderboard/curves.parquet` (entry, time_fraction,
score), `tables/leaderboard.csv`, `tables/leaderboard_spaces.csv` and `tables/leaderboard_pairs.csv`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap, TwoSlopeNorm
from matplotlib.patches import Rectangle

from analysis.figures import style
from analysis.statistics import p_text
from analysis.tables.leaderboard import left_out_entries, mean_ranks

LINESTYLES = ("-", "--", "-.", ":")
SCORE_FLOOR = -2.0  # the heatmap's colour scale and the time plot's axis stop here (lower scores: the tables)


def family_styles(board: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per entry, a line style: within its family, one of twenty distinct colours and a dash pattern, in the table's
    order (the families are told apart by their panels)."""
    tab20 = matplotlib.colormaps["tab20"]
    assert isinstance(tab20, ListedColormap)  # a qualitative map: a list of colours
    palette = tab20.colors
    styles = {}
    for family, group in board.groupby("family", sort=False):
        for i, entry in enumerate(group["entry"]):
            # the stubs type ListedColormap.colors as any array-like; tab20's is a list of RGB tuples
            styles[entry] = {"color": palette[(2 * i) % 20 + (i // 10) % 2],  # type: ignore[index]
                             "linestyle": LINESTYLES[(i // 5) % 4],
                             "label": group["display"].iloc[i], "family": family}
    return styles


def score_over_time(curves: pd.DataFrame, board: pd.DataFrame, pdf: str | Path, png: str | Path) -> None:
    """One panel per family: its entries' mean score over the time fraction, every other entry in light grey. An
    entry is averaged over the spaces where it has a score; one with fewer than the most says how many."""
    styles = family_styles(board)
    most = int(board["n_spaces"].max()) if len(board) else 0
    for entry, n in zip(board["entry"], board["n_spaces"], strict=True):
        if entry in styles and 0 < n < most:
            styles[entry]["label"] += f" ({int(n)} of {most} spaces)"
    families = list(dict.fromkeys(board["family"]))
    with style.context():
        fig, axes = style.figure(width=10, height=2.9 * len(families), nrows=len(families), ncols=1, sharex=True,
                                 sharey=True, squeeze=False)
        low = max(SCORE_FLOOR, float(curves["score"].min()) - 0.05) if len(curves) else SCORE_FLOOR
        high = min(1.0, float(curves["score"].max()) + 0.05) if len(curves) else 1.0
        for ax, family in zip(axes[:, 0], families, strict=True):
            for entry, line in curves.groupby("entry", sort=False):
                if entry not in styles:
                    continue
                s = styles[entry]
                mine = s["family"] == family
                ax.plot(line["time_fraction"], line["score"], color=s["color"] if mine else "0.87",
                        linestyle=s["linestyle"] if mine else "-", lw=1.6 if mine else 0.7,
                        label=s["label"] if mine else None, zorder=3 if mine else 1)
            ax.axhline(0, color="0.4", lw=0.8, zorder=2)
            ax.set_title(f"{family} (others in grey)", fontsize="small", loc="left")
            ax.set_ylim(low, high)
            ax.set_ylabel("mean score\n(0: RS, 1: optimum)")
            ax.legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        axes[-1, 0].set_xlabel("fraction of the methodology's time budget")
        fig.suptitle(f"Leaderboard: mean score over the {most} counted spaces through the time budget (an entry with "
                     f"fewer: over its own; axis cut at {SCORE_FLOOR:g})")
        style.save(fig, pdf, png)


def heatmap(spaces: pd.DataFrame, board: pd.DataFrame, pdf: str | Path, png: str | Path) -> None:
    """Entry x space scores, entries in the leaderboard's order, counted spaces only; a missing score hatched."""
    counted = spaces[spaces["excluded"].fillna("") == ""]
    wide = counted.pivot(index="entry", columns="space", values="score")
    order = [e for e in board["entry"] if e in wide.index]
    wide = wide.loc[order]
    wide = wide[sorted(wide.columns, key=lambda s: (s.split("/")[1], s.split("/")[0]))]
    names = dict(zip(board["entry"], board["display"], strict=True))
    values = wide.to_numpy(dtype=float)
    with style.context():
        fig, ax = style.figure(width=max(7.0, 0.32 * wide.shape[1] + 3.5), height=max(5.0, 0.24 * wide.shape[0] + 2.2))
        norm = TwoSlopeNorm(vmin=SCORE_FLOOR, vcenter=0.0, vmax=1.0)
        image = ax.imshow(np.clip(values, SCORE_FLOOR, 1.0), cmap="RdBu", norm=norm, aspect="auto",
                          interpolation="nearest")
        missing = np.argwhere(np.isnan(values))
        for row, col in missing:
            ax.add_patch(Rectangle((col - 0.5, row - 0.5), 1, 1, facecolor="0.9", hatch="xxx",
                                                      edgecolor="0.6", lw=0))
        ax.set_xticks(range(wide.shape[1]), wide.columns, rotation=90, fontsize="x-small")
        ax.set_yticks(range(wide.shape[0]), [names[e] for e in wide.index], fontsize="x-small")
        colourbar = fig.colorbar(image, ax=ax, shrink=0.8)
        colourbar.set_label(f"score (0: RS baseline, 1: optimum; below {SCORE_FLOOR:g} shown as {SCORE_FLOOR:g})")
        ax.set_title("Leaderboard: score per strategy and space (hatched: no score, see tables/leaderboard_spaces.csv)",
                     fontsize="small")
        style.save(fig, pdf, png)


def indistinct_groups(ranks: Mapping[str, float], pairs: pd.DataFrame) -> list[tuple[str, ...]]:
    """The maximal runs of entries, consecutive by mean rank, in which no pair differs significantly (Holm): the bars
    of a critical-difference diagram. A run of one entry is no bar."""
    order = sorted(ranks, key=lambda e: (ranks[e], e))
    apart = {frozenset((a, b)) for a, b, s in zip(pairs["entry_a"], pairs["entry_b"], pairs["significant"],
                                                  strict=True) if bool(s)}
    groups: list[tuple[str, ...]] = []
    for i in range(len(order)):
        j = i
        while j + 1 < len(order) and all(frozenset((order[k], order[j + 1])) not in apart for k in range(i, j + 1)):
            j += 1
        group = tuple(order[i:j + 1])
        if len(group) > 1 and not any(set(group) <= set(g) for g in groups):
            groups.append(group)
    return groups


def critical_difference(pairs: pd.DataFrame, board: pd.DataFrame, pdf: str | Path, png: str | Path) -> None:
    """Mean ranks on one axis (best on the left), names on two sides, bars joining entries not told apart."""
    ranks = mean_ranks(pairs)
    names = dict(zip(board["entry"], board["display"], strict=True))
    order = sorted(ranks, key=lambda e: (ranks[e], e))
    groups = indistinct_groups(ranks, pairs)
    n = len(order)
    half = (n + 1) // 2
    spaces = int(pairs["complete_spaces"].iloc[0]) if len(pairs) else 0
    friedman = float(pairs["friedman_p"].iloc[0]) if len(pairs) else float("nan")
    left_out = left_out_entries(pairs)
    with style.context():
        fig, ax = style.figure(width=11, height=1.6 + 0.22 * half + 0.12 * len(groups))
        low, high = 1, max(n, 2)
        ax.set_xlim(low - 0.22 * max(n, 10), high + 0.22 * max(n, 10))  # room for the names inside the axes
        ax.set_ylim(-(half + 1.5), 1.5 + 0.35 * len(groups))
        ax.hlines(0, low, high, color="black", lw=1)
        for r in range(low, high + 1):
            ax.vlines(r, 0, 0.15, color="black", lw=0.8)
            ax.text(r, 0.25, str(r), ha="center", va="bottom", fontsize="x-small")
        for i, entry in enumerate(order):
            left = i < half
            row = -(i + 1) if left else -(n - i)
            x_text = low - 0.4 if left else high + 0.4
            ax.plot([ranks[entry], ranks[entry], x_text], [0, row, row], color="0.3", lw=0.7)
            ax.text(x_text, row, f"{names.get(entry, entry)} ({ranks[entry]:.1f})", ha="right" if left else "left",
                    va="center", fontsize="x-small")
        for k, group in enumerate(groups):
            y = 0.6 + 0.35 * k
            ax.hlines(y, ranks[group[0]] - 0.1, ranks[group[-1]] + 0.1, color="tab:red", lw=2.5)
        ax.axis("off")
        omitted = (f" Not tested (no score on some spaces): {', '.join(names.get(e, e) for e in left_out)}."
                   if left_out else "")
        ax.set_title(f"Mean rank of the {n} strategies with a score on all {spaces} counted spaces (1: best); Friedman "
                     f"{p_text(friedman)}. Red bars join strategies that no pairwise Wilcoxon signed-rank test tells "
                     f"apart after Holm's correction (α = 0.05).{omitted}", fontsize="small", wrap=True)
        style.save(fig, pdf, png)


def figures(curves: pd.DataFrame, board: pd.DataFrame, spaces: pd.DataFrame, pairs: pd.DataFrame,
            outputs: Sequence[str | Path]) -> None:
    """The three figures from the aggregate curves and tables/leaderboard.csv, leaderboard_spaces.csv and
    leaderboard_pairs.csv; `outputs`: their PDF and PNG, in the order score over time, heatmap, critical difference."""
    over_time, grid, cd = (outputs[i:i + 2] for i in range(0, 6, 2))
    score_over_time(curves, board, *over_time)
    heatmap(spaces, board, *grid)
    critical_difference(pairs, board, *cd)
