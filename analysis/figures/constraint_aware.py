"""Constraint-aware study (seed 001 Figs 4-5): score over time and per space, with and without awareness."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
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
    grids = (scores.groupby(["space", "algorithm", "constraint_aware"])["time_fraction"]
             .apply(lambda t: tuple(sorted(t))))
    if grids.nunique() != 1:
        raise ValueError(f"{source or 'scores'}: the time fractions differ between spaces or algorithms")
    return scores


REFERENCE = "rs"  # random search: drawn in every panel, not compared with an unaware twin


def _algorithms(frame: pd.DataFrame) -> list[str]:
    return [a for a in style.ordered(frame["algorithm"]) if a != REFERENCE]


def excluded(frame: pd.DataFrame) -> pd.Series:
    """Per row, whether its space is kept out of the aggregates (a non-empty `excluded`, as ca-tables writes
    it for a budget under constraint_aware.min_budget_evaluations); all False without the column."""
    if "excluded" not in frame.columns:
        return pd.Series(False, index=frame.index)
    return frame["excluded"].notna() & (frame["excluded"].astype(str) != "")


SCORE_LABEL = "performance score\n(0: RS baseline, 1: optimum)"
BAND_ALPHA = 0.18
UNAWARE_HATCH = "///"
BAND_LIMIT = 1.0  # bands may widen the shared y range by at most this fraction of the lines' range each way


def _band(ax, x, lower, upper, colour: str, aware: bool) -> None:
    """The spread around one line: filled for the constraint-aware variant, hatched for the unaware one."""
    if aware:
        ax.fill_between(x, lower, upper, color=colour, alpha=BAND_ALPHA, lw=0, gid="band-aware")
    else:
        with matplotlib.rc_context({"hatch.linewidth": 0.5}):
            ax.fill_between(x, lower, upper, facecolor="none", edgecolor=colour, alpha=0.6, lw=0,
                            hatch=UNAWARE_HATCH, gid="band-unaware")


def score_limits(lines: np.ndarray, bands: np.ndarray) -> tuple[float, float, bool]:
    """Shared y limits: every line and 0 (the RS baseline); the bands as far as they widen that range by at
    most BAND_LIMIT of it each way. Also whether a band is cut at the axes."""
    lines = lines[np.isfinite(lines)]
    bands = bands[np.isfinite(bands)]
    lo, hi = min(float(lines.min(initial=0.0)), 0.0), max(float(lines.max(initial=0.0)), 0.0)
    span = max(hi - lo, 1e-9)
    b_lo, b_hi = float(bands.min(initial=lo)), float(bands.max(initial=hi))
    cut = b_lo < lo - BAND_LIMIT * span or b_hi > hi + BAND_LIMIT * span
    lo, hi = max(min(lo, b_lo), lo - BAND_LIMIT * span), min(max(hi, b_hi), hi + BAND_LIMIT * span)
    margin = 0.04 * (hi - lo)
    return lo - margin, hi + margin, cut


def plot(scores: pd.DataFrame, pdf: str | Path, png: str | Path):
    """One panel per algorithm on one shared y scale: score vs fraction of the time budget, solid aware,
    dashed unaware, and random search (the reference, where run) thin in every panel.

    One space: the band is the package's 95 % prediction interval. Several: the lines are the
    mean over spaces (each weighted equally, the package's aggregate) and the band is the
    interquartile range of the spaces' scores. Bands are filled for the aware variant and hatched
    for the unaware one. Spaces kept out of the aggregates (column `excluded`) are left out of the
    mean and the band, unless every space is. Returns the figure.
    """
    scores = check_scores(scores)
    out = excluded(scores)
    left_out = scores.loc[out, "space"].nunique() if not out.all() else 0
    scores = scores[~out] if not out.all() else scores
    spaces = sorted(scores["space"].unique())
    algorithms = _algorithms(scores)
    key = ["algorithm", "constraint_aware", "time_fraction"]
    mean = scores.groupby(key, as_index=False)[["score", "score_lower", "score_upper"]].mean()
    if len(spaces) > 1:  # the spread over spaces
        q = scores.groupby(key)["score"].quantile([0.25, 0.75]).unstack()
        mean = mean.merge(q.rename(columns={0.25: "band_lower", 0.75: "band_upper"}).reset_index(), on=key)
        band_text = f"interquartile range over the {len(spaces)} spaces"
    else:
        mean = mean.assign(band_lower=mean["score_lower"], band_upper=mean["score_upper"])
        band_text = "95 % prediction interval"
    drawn = mean[mean["algorithm"].isin(algorithms)]
    ylo, yhi, cut = score_limits(mean["score"].to_numpy(dtype=float),
                                 drawn[["band_lower", "band_upper"]].to_numpy(dtype=float))
    ncols = min(2, len(algorithms))
    nrows = math.ceil(len(algorithms) / ncols)
    with style.context():
        fig, axes = style.figure(height=1.45 * nrows + 0.9, nrows=nrows, ncols=ncols, squeeze=False,
                                 sharex=True, sharey=True)
        for ax, a in zip(axes.flat, algorithms):
            c = style.colour(a)
            for aware in (True, False):
                g = mean[(mean["algorithm"] == a) & (mean["constraint_aware"] == aware)].sort_values("time_fraction")
                if g.empty:
                    continue
                _band(ax, g["time_fraction"], g["band_lower"], g["band_upper"], c, aware)
                ax.plot(g["time_fraction"], g["score"], color=c, ls=style.linestyle(a, aware))
            ref = mean[mean["algorithm"] == REFERENCE].sort_values("time_fraction")
            if not ref.empty:
                ax.plot(ref["time_fraction"], ref["score"], color=style.colour(REFERENCE), lw=0.7, ls=style.DOTTED)
            ax.axhline(0.0, color="black", lw=0.6)
            ax.set_title(style.label(a))
            ax.set_ylim(ylo, yhi)
        for ax in axes.flat[len(algorithms):]:
            ax.set_visible(False)
        fig.supxlabel("fraction of the time budget", fontsize=8)
        fig.supylabel(SCORE_LABEL, fontsize=8)
        # each variant's entry shows its line over its band: filled (aware) or hatched (unaware)
        handles: list[Artist | tuple[Artist, Artist]] = [
            (Patch(facecolor="0.5", alpha=BAND_ALPHA * 2, lw=0), Line2D([], [], color="black", ls=style.SOLID)),
            (Patch(facecolor="none", edgecolor="0.4", hatch=UNAWARE_HATCH, lw=0),
             Line2D([], [], color="black", ls=style.DASHED)),
        ]
        labels = ["constraint-aware", "constraint-unaware"]
        if (scores["algorithm"] == REFERENCE).any():
            handles.append(Line2D([], [], color=style.colour(REFERENCE), lw=0.7, ls=style.DOTTED))
            labels.append(f"{style.label(REFERENCE)} runs")
        where = spaces[0] if len(spaces) == 1 else f"lines: mean over {len(spaces)} spaces"
        if left_out:
            where += f" ({left_out} with too small a budget left out)"
        where += "\nbands: " + band_text + (" (cut at the axes)" if cut else "")
        style.fitted_legend(fig, handles, labels, ncols=3, title=where, title_fontsize=7, handleheight=1.3)
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
ROW_SHADE = "0.94"  # every other space's row in the score panels
SPACE_SCORE_LABEL = "score (RS = 0)"
DODGE_PP = 2.0  # the gain panel's algorithms are this many percentage points apart (linear axis) ...
DODGE_DECADES = 0.012  # ... or this share of a decade (logarithmic axis)
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


def score_range(frame: pd.DataFrame) -> tuple[float, float]:
    """The x range shared by the per-space score panels: every score and 0 (RS), with a margin; the scores
    of spaces kept out of the aggregates count only where every space is."""
    out = excluded(frame)
    values = frame.loc[~out if not out.all() else out, ["score_aware", "score_unaware"]].to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    lo, hi = min(float(values.min(initial=0.0)), 0.0), max(float(values.max(initial=0.0)), 0.0)
    margin = 0.06 * max(hi - lo, 1e-9)
    return lo - margin, hi + margin


def dodge(x: np.ndarray, index: int, count: int, log: bool) -> np.ndarray:
    """Density (%) positions of the `index`-th of `count` algorithms, set apart sideways so that points of
    one density do not hide each other: DODGE_PP percentage points per step on a linear axis, the
    same share of a decade per step on a logarithmic one."""
    step = index - (count - 1) / 2
    return x * 10.0 ** (step * DODGE_DECADES) if log else x + step * DODGE_PP


def plot_spaces(frame: pd.DataFrame, pdf: str | Path, png: str | Path):
    """Seed 001 Fig. 5: per space (sparsest at the bottom) the score with (filled) and without (open)
    awareness, one panel per algorithm on one shared score axis with RS's score 0 marked; right,
    the gain against the space's density, the algorithms set apart sideways. Random search (no
    unaware twin) is left out. A space kept out of the aggregates (column `excluded`) is drawn
    faint, its label marked with a dagger. Returns the figure."""
    frame = check_space_scores(frame)
    frame = frame[frame["algorithm"] != REFERENCE]
    faint = set(frame.loc[excluded(frame), "space"])
    algorithms = _algorithms(frame)
    order = (frame.drop_duplicates("space").sort_values(["density", "space"], ascending=[False, True])["space"]
             .tolist())
    y = {s: i for i, s in enumerate(order)}
    density = frame.drop_duplicates("space").set_index("space")["density"]
    xlo, xhi = score_range(frame)
    with style.context():
        fig, axes = style.figure(width=7.0, height=0.17 * len(order) + 1.5, ncols=len(algorithms) + 1,
                                 squeeze=False, gridspec_kw={"width_ratios": [1] * len(algorithms) + [1.3]})
        axes = axes[0]
        for ax, a in zip(axes, algorithms):
            g = frame[frame["algorithm"] == a]
            c = style.colour(a)
            for i in range(1, len(order), 2):  # every other row shaded, to follow a space across the panels
                ax.axhspan(i - 0.5, i + 0.5, color=ROW_SHADE, lw=0, zorder=0)
            for part, alpha in ((g[~g["space"].isin(faint)], 1.0), (g[g["space"].isin(faint)], FAINT)):
                ys = part["space"].map(y).to_numpy()
                aware, unaware = (np.clip(part[col].to_numpy(dtype=float), xlo, xhi)
                                  for col in ("score_aware", "score_unaware"))
                ax.hlines(ys, unaware, aware, color=c, lw=0.8, alpha=alpha)
                for xs, filled in ((aware, True), (unaware, False)):
                    # a value beyond the shared range (only a space kept out of the means) sits at its
                    # edge as a triangle pointing outwards
                    raw = part["score_aware" if filled else "score_unaware"].to_numpy(dtype=float)
                    for marker, at in (("o", (raw >= xlo) & (raw <= xhi)), ("<", raw < xlo), (">", raw > xhi)):
                        if at.any():
                            ax.plot(xs[at], ys[at], marker, color=c, mfc=c if filled else "white", mec=c,
                                    ms=3.5, alpha=alpha, ls="none")
            ax.axvline(0.0, color="black", lw=0.8, gid="rs")
            ax.annotate("RS", (0.0, 1.0), xycoords=("data", "axes fraction"), xytext=(0, 1.5),
                        textcoords="offset points", ha="center", va="bottom", fontsize=7, gid="rs-label")
            ax.set_title(style.label(a), pad=11)
            ax.set_xlim(xlo, xhi)
            ax.xaxis.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]))
            ax.set_ylim(len(order) - 0.5, -0.5)
            ax.set_yticks(range(len(order)))
            ax.set_yticklabels([f"{s} ({100 * density[s]:.0f} %){' †' if s in faint else ''}" for s in order]
                               if ax is axes[0] else [])
            ax.tick_params(axis="y", length=0)
            ax.grid(False, axis="y")
            ax.set_xlabel(SPACE_SCORE_LABEL)
        ax = axes[-1]
        percent = 100 * frame["density"].to_numpy(dtype=float)
        density_axis(ax, percent)
        log = ax.get_xscale() == "log"
        for i, a in enumerate(algorithms):
            g = frame[frame["algorithm"] == a]
            kept = ~g["space"].isin(faint)
            x = dodge(100 * g["density"].to_numpy(dtype=float), i, len(algorithms), log)
            common = {"color": style.colour(a), "ms": 3.6, "ls": "none", "mec": "white", "mew": 0.3}
            ax.plot(x[kept.to_numpy()], g.loc[kept, "gain"], style.marker(a), alpha=0.8,
                    label=style.label(a), gid=f"gain-{a}", **common)
            ax.plot(x[~kept.to_numpy()], g.loc[~kept, "gain"], style.marker(a), alpha=FAINT, **common)
        ax.axhline(0.0, color="black", lw=0.6)
        ax.set_xlabel("density (%)")
        ax.set_ylabel("gain (aware − unaware)")
        # above the panel, not on it: inside, it covered points
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2, fontsize=7, handletextpad=0.2,
                  columnspacing=0.8, borderaxespad=0.3, markerscale=1.3)
        handles = [Line2D([], [], color="black", marker="o", ls="none", label="constraint-aware"),
                   Line2D([], [], color="black", marker="o", mfc="white", ls="none", label="constraint-unaware")]
        if faint:
            handles.append(Line2D([], [], color="black", marker="o", ls="none", alpha=FAINT,
                                  label="† budget too small: in no mean"))
        style.fitted_legend(fig, handles, [str(h.get_label()) for h in handles], ncols=len(handles))
        style.save(fig, pdf, png)
    return fig
