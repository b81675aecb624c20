"""Constraint-aware study (Willemsen et al. Figs 3-4): performance score over time, with and without constraint awareness."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from matplotlib.lines import Line2D

from analysis.figures import style
from analysis.figures.contracts import SCORES_COLUMNS, as_bool, require


def check_scores(scores: pd.DataFrame, source: str | None = None) -> pd.DataFrame:
    """The scores with a boolean `constraint_aware`, checked: one row per (space, algorithm, awareness, time)."""
    require(scores, SCORES_COLUMNS, source)
    scores = scores.copy()
    scores["constraint_aware"] = as_bool(scores["constraint_aware"], source, "constraint_aware")
    key = ["space", "algorithm", "constraint_aware", "time_fraction"]
    if scores.duplicated(key).any():
        raise ValueError(f"{source or 'scores'}: repeated rows for {key}")
    for a in scores["algorithm"].unique():
        style.colour(a)
    grids = scores.groupby(["space", "algorithm", "constraint_aware"])["time_fraction"].apply(lambda t: tuple(sorted(t)))
    if grids.nunique() != 1:
        raise ValueError(f"{source or 'scores'}: the time fractions differ between spaces or algorithms")
    return scores


def plot(scores: pd.DataFrame, pdf: str | Path, png: str | Path) -> None:
    """One panel per algorithm: score vs fraction of the time budget, solid aware, dashed unaware.

    One space: the band is ± one standard deviation over runs. Several: the lines are the mean over
    spaces (each weighted equally) and no band is drawn.
    """
    scores = check_scores(scores)
    spaces = sorted(scores["space"].unique())
    algorithms = [a for a in style.COLOURS if a in set(scores["algorithm"])]
    mean = (scores.groupby(["algorithm", "constraint_aware", "time_fraction"], as_index=False)
            [["score_mean", "score_std"]].mean())
    ncols = min(2, len(algorithms))
    nrows = math.ceil(len(algorithms) / ncols)
    with style.context():
        fig, axes = style.figure(height=1.45 * nrows + 0.6, nrows=nrows, ncols=ncols, squeeze=False,
                                 sharex=True, sharey=True)
        for ax, a in zip(axes.flat, algorithms):
            for aware in (True, False):
                g = mean[(mean["algorithm"] == a) & (mean["constraint_aware"] == aware)].sort_values("time_fraction")
                if g.empty:
                    continue
                c = style.colour(a)
                if len(spaces) == 1:
                    ax.fill_between(g["time_fraction"], g["score_mean"] - g["score_std"],
                                    g["score_mean"] + g["score_std"], color=c, alpha=0.12, lw=0)
                ax.plot(g["time_fraction"], g["score_mean"], color=c, ls=style.linestyle(a, aware))
            ax.axhline(0.0, color="black", lw=0.6)
            ax.set_title(style.label(a))
        for ax in axes.flat[len(algorithms):]:
            ax.set_visible(False)
        fig.supxlabel("fraction of the time budget", fontsize=8)
        fig.supylabel("performance score", fontsize=8)
        handles = [Line2D([], [], color="black", ls=style.SOLID, label="constraint-aware"),
                   Line2D([], [], color="black", ls=style.DASHED, label="constraint-unaware")]
        where = spaces[0] if len(spaces) == 1 else f"mean over {len(spaces)} spaces"
        fig.legend(handles=handles, loc="outside upper center", ncols=2, title=where, title_fontsize=7)
        style.save(fig, pdf, png)
