"""Constraint-aware study (seed 001 Figs 4-5): score over time and per space, with and without awareness."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FormatStrFormatter, MaxNLocator, NullLocator

from analysis.figures import style
from analysis.figures.contracts import SCORES_COLUMNS, SPACE_SCORES_COLUMNS, as_bool, require


def check_scores(scores: pd.DataFrame, source: str | None = None) -> pd.DataFrame:
    """The curves with a boolean `constraint_aware`, checked: one row per (space, algorithm, awareness, time)."""
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


REFERENCE = "rs"  # random search: drawn in every panel, not compared with an unaware twin


def _algorithms(frame: pd.DataFrame) -> list[str]:
    return [a for a in style.COLOURS if a in set(frame["algorithm"]) and a != REFERENCE]


def excluded(frame: pd.DataFrame) -> pd.Series:
    """Per row, whether its space is kept out of the aggregates (a non-empty `excluded`, as ca-tables writes
    it for a budget under constraint_aware.min_budget_evaluations); all False without the column."""
    if "excluded" not in frame.columns:
        return pd.Series(False, index=frame.index)
    return frame["excluded"].notna() & (frame["excluded"].astype(str) != "")


def plot(scores: pd.DataFrame, pdf: str | Path, png: str | Path):
    """One panel per algorithm: score vs fraction of the time budget, solid aware, dashed unaware,
    and random search (the reference, where run) thin in every panel.

    One space: the band is the package's 95 % prediction interval. Several: the lines are the
    mean over spaces (each weighted equally, the package's aggregate) and no band is drawn. Spaces
    kept out of the aggregates (column `excluded`) are left out of the mean, unless every space is.
    Returns the figure.
    """
    scores = check_scores(scores)
    out = excluded(scores)
    left_out = scores.loc[out, "space"].nunique() if not out.all() else 0
    scores = scores[~out] if not out.all() else scores
    spaces = sorted(scores["space"].unique())
    algorithms = _algorithms(scores)
    mean = (scores.groupby(["algorithm", "constraint_aware", "time_fraction"], as_index=False)
            [["score", "score_lower", "score_upper"]].mean())
    ncols = min(2, len(algorithms))
    nrows = math.ceil(len(algorithms) / ncols)
    with style.context():
        # each panel its own y range: one strategy far below the baseline would flatten the others
        fig, axes = style.figure(height=1.45 * nrows + 0.6, nrows=nrows, ncols=ncols, squeeze=False,
                                 sharex=True, sharey=False)
        for ax, a in zip(axes.flat, algorithms):
            for aware in (True, False):
                g = mean[(mean["algorithm"] == a) & (mean["constraint_aware"] == aware)].sort_values("time_fraction")
                if g.empty:
                    continue
                c = style.colour(a)
                if len(spaces) == 1:
                    ax.fill_between(g["time_fraction"], g["score_lower"], g["score_upper"], color=c, alpha=0.12, lw=0)
                ax.plot(g["time_fraction"], g["score"], color=c, ls=style.linestyle(a, aware))
            ref = mean[mean["algorithm"] == REFERENCE].sort_values("time_fraction")
            if not ref.empty:
                ax.plot(ref["time_fraction"], ref["score"], color=style.colour(REFERENCE), lw=0.7, ls=style.DOTTED)
            ax.axhline(0.0, color="black", lw=0.6)
            ax.set_title(style.label(a))
        for ax in axes.flat[len(algorithms):]:
            ax.set_visible(False)
        fig.supxlabel("fraction of the time budget", fontsize=8)
        fig.supylabel("performance score", fontsize=8)
        handles = [Line2D([], [], color="black", ls=style.SOLID, label="constraint-aware"),
                   Line2D([], [], color="black", ls=style.DASHED, label="constraint-unaware")]
        if (scores["algorithm"] == REFERENCE).any():
            handles.append(Line2D([], [], color=style.colour(REFERENCE), lw=0.7, ls=style.DOTTED,
                                  label=style.label(REFERENCE)))
        where = spaces[0] if len(spaces) == 1 else f"mean over {len(spaces)} spaces"
        if left_out:
            where += f" ({left_out} with too small a budget left out)"
        fig.legend(handles=handles, loc="outside upper center", ncols=len(handles), title=where, title_fontsize=7)
        style.save(fig, pdf, png)
    return fig


def check_space_scores(frame: pd.DataFrame, source: str | None = None) -> pd.DataFrame:
    """Per-space scores, checked: one row per (space, algorithm), density in (0, 1]."""
    require(frame, SPACE_SCORES_COLUMNS, source)
    if frame.duplicated(["space", "algorithm"]).any():
        raise ValueError(f"{source or 'scores'}: repeated rows for (space, algorithm)")
    density = frame["density"].to_numpy(dtype=float)
    if not np.all((density > 0) & (density <= 1)):
        raise ValueError(f"{source or 'scores'}: density outside (0, 1]")
    for a in frame["algorithm"].unique():
        style.colour(a)
    return frame


FAINT = 0.3  # opacity of a space kept out of the aggregates
DENSITY_LOG_SPAN = 10.0  # densities spanning more than this factor get a logarithmic axis


def density_axis(ax, percent: np.ndarray) -> None:
    """The density (%) x axis: a label at every tick, and no unlabelled ticks between them.

    Linear up to 100 % where the densities span at most DENSITY_LOG_SPAN; logarithmic with ticks
    at 1, 2 and 5 of each decade where they span more (on a log axis the default minor ticks
    would carry no label, and labelling them all would overlap near 100 %).
    """
    lo, hi = float(np.min(percent)), float(np.max(percent))
    if hi / lo <= DENSITY_LOG_SPAN:
        ax.set_xlim(0, 105)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
    else:
        ax.set_xscale("log")
        ax.set_xlim(lo / 1.25, 100 * 1.25)
        decades = range(math.floor(math.log10(lo / 1.25)), 3)
        ticks = [m * 10.0 ** d for d in decades for m in (1, 2, 5) if lo / 1.25 <= m * 10.0 ** d <= 125]
        ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_locator(NullLocator())


def plot_spaces(frame: pd.DataFrame, pdf: str | Path, png: str | Path):
    """Seed 001 Fig. 5: per space (sparsest at the bottom) the score with (filled) and without (open)
    awareness, one panel per algorithm; right, the gain against the space's density. Random
    search (no unaware twin) is left out. A space kept out of the aggregates (column `excluded`) is
    drawn faint, its label marked with a dagger. Returns the figure."""
    frame = check_space_scores(frame)
    frame = frame[frame["algorithm"] != REFERENCE]
    faint = set(frame.loc[excluded(frame), "space"])
    algorithms = _algorithms(frame)
    order = (frame.drop_duplicates("space").sort_values(["density", "space"], ascending=[False, True])["space"]
             .tolist())
    y = {s: i for i, s in enumerate(order)}
    density = frame.drop_duplicates("space").set_index("space")["density"]
    with style.context():
        fig, axes = style.figure(width=7.0, height=0.17 * len(order) + 1.3, ncols=len(algorithms) + 1,
                                 squeeze=False, gridspec_kw={"width_ratios": [1] * len(algorithms) + [1.3]})
        axes = axes[0]
        for ax, a in zip(axes, algorithms):
            g = frame[frame["algorithm"] == a]
            c = style.colour(a)
            for part, alpha in ((g[~g["space"].isin(faint)], 1.0), (g[g["space"].isin(faint)], FAINT)):
                ys = part["space"].map(y).to_numpy()
                ax.hlines(ys, part["score_unaware"], part["score_aware"], color=c, lw=0.8, alpha=alpha)
                ax.plot(part["score_aware"], ys, "o", color=c, ms=3.5, alpha=alpha)
                ax.plot(part["score_unaware"], ys, "o", mfc="white", mec=c, ms=3.5, alpha=alpha)
            ax.axvline(0.0, color="black", lw=0.6)
            ax.set_title(style.label(a))
            ax.set_ylim(len(order) - 0.5, -0.5)
            ax.set_yticks(range(len(order)))
            ax.set_yticklabels([f"{s} ({100 * density[s]:.0f} %){' †' if s in faint else ''}" for s in order]
                               if ax is axes[0] else [])
            ax.set_xlabel("score")
        ax = axes[-1]
        for a in algorithms:
            g = frame[frame["algorithm"] == a]
            kept = ~g["space"].isin(faint)
            ax.plot(100 * g.loc[kept, "density"], g.loc[kept, "gain"], style.MARKERS.get(a, "o"),
                    color=style.colour(a), ms=3.5, label=style.label(a), ls="none")
            ax.plot(100 * g.loc[~kept, "density"], g.loc[~kept, "gain"], style.MARKERS.get(a, "o"),
                    color=style.colour(a), ms=3.5, ls="none", alpha=FAINT)
        density_axis(ax, 100 * frame["density"].to_numpy(dtype=float))
        ax.axhline(0.0, color="black", lw=0.6)
        ax.set_xlabel("density (%)")
        ax.set_ylabel("gain (aware - unaware)")
        ax.legend(loc="best", fontsize=6)
        handles = [Line2D([], [], color="black", marker="o", ls="none", label="constraint-aware"),
                   Line2D([], [], color="black", marker="o", mfc="white", ls="none", label="constraint-unaware")]
        if faint:
            handles.append(Line2D([], [], color="black", marker="o", ls="none", alpha=FAINT,
                                  label="† budget too small: in no mean"))
        fig.legend(handles=handles, loc="outside upper center", ncols=len(handles))
        style.save(fig, pdf, png)
    return fig
