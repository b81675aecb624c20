"""One strategy against the baselines on one page (issue #34): improvement over RS per space and budget.

Drawn from the table of `analysis.tables.summary` (one row per space, objective set and budget): one panel
per budget, one row per (space, objective set), the rows grouped by objective set. In each row the
strategy S's relative improvement over RS in % and those of NSGA-II and NSGA-III, S filled where it
is significantly better or worse than RS and hollow where not, and S's rank in a narrow column
right of each panel.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.markers import MarkerStyle
from matplotlib.ticker import FixedFormatter, FixedLocator

from analysis.figures import style
from analysis.figures.anytime import CLIP_MARK, objective_set_text
from analysis.figures.contracts import require
from analysis.tables import summary

# The columns the figure reads from the summary table (analysis.tables.summary.build); a baseline's
# improvement_<role>_pct and median_<role> only where the table has that baseline.
COLUMNS = ("device", "kernel", "objective_set", "budget", "n_runs", "median", "median_rs", "improvement_pct", "rank",
           "n_ranked", "vs_rs")
FLOOR = -100.0  # improvements below this (and an undefined one: behind an RS whose median is 0) are drawn on it
ROW_IN = 0.16  # height of one row (inches)
PANELS_IN = 0.8  # panel titles, x tick labels and the x label (inches); the legend's height is added to it
LANE = 0.29  # NSGA-II's and NSGA-III's markers sit this far (rows) above and below S's
S_SIZE = 5.0  # marker size (points) of S; the baselines' are smaller
BASELINE_SIZE = 3.2
BAND = "0.93"  # every other row is shaded, to follow a row across the panels
HOLLOW = "white"
UNFILLABLE_FALLBACK = "o"  # S's marker where its style's has no face (RS, drawn as the line at 0, has no marker here)
MARGIN = 12.0  # x-axis room (%) beyond the floor and 100, for the half of a marker drawn there
X_LABEL = r"relative improvement of the median final IGD$^+$ over RS (%)"
SIGNIFICANT = ("filled: two-sided Mann–Whitney U of S against RS, Holm-adjusted p\u00a0<\u00a0{alpha}; "
               "hollow: p\u00a0≥\u00a0{alpha}")


def _rows(table: pd.DataFrame, objective_sets: Mapping[str, Sequence[str]] | None
          ) -> tuple[list[tuple[str, str, str] | tuple[str]], list[str]]:
    """Rows top to bottom: a (objective set,) header before each group where there are several sets, then that
    set's (objective set, device, kernel) rows by kernel, then device; and the sets in order."""
    order = list(objective_sets or ())
    sets = sorted(table["objective_set"].unique(), key=lambda s: (order.index(s) if s in order else len(order), s))
    rows: list = []
    for o in sets:
        if len(sets) > 1:
            rows.append((o,))
        pairs = table.loc[table["objective_set"] == o, ["device", "kernel"]].drop_duplicates()
        rows += [(o, d, k) for d, k in sorted(pairs.itertuples(index=False, name=None), key=lambda dk: (dk[1], dk[0]))]
    return rows, sets


def _improvements(table: pd.DataFrame, role: str | None) -> np.ndarray:
    """The improvement column of S (role None) or a baseline, with -inf where it is undefined (RS's median is 0 and
    the other's is not) and NaN where the baseline has no runs."""
    imp = table["improvement_pct" if role is None else f"improvement_{role}_pct"].to_numpy(dtype=float)
    med = table["median" if role is None else f"median_{role}"].to_numpy(dtype=float)
    rs = table["median_rs"].to_numpy(dtype=float)
    return np.where(np.isnan(imp) & np.isfinite(med) & (rs == 0), -np.inf, imp)


def _x_axis(ax, floor: float, clipped: bool) -> None:
    """Labelled ticks at the floor, 0 and 100 (the floor's label '≤−100' where values are drawn on it), unlabelled
    ones every 50 % (25 % for a floor above −50) between them: a narrow panel has no room for more labels."""
    step = 50.0 if floor < -50 else 25.0
    major = [floor, 0.0, 100.0]
    ax.xaxis.set_major_locator(FixedLocator(major))
    ax.xaxis.set_major_formatter(FixedFormatter(
        [(CLIP_MARK if clipped and t == floor else "") + f"{t:g}".replace("-", "−") for t in major]))
    ax.xaxis.set_minor_locator(FixedLocator([t for t in np.arange(floor, 100.0 + 1e-9, step) if t not in major]))
    ax.grid(axis="x", which="minor", visible=True)


def _legend(fig, handles: list, labels: list[str], lines: list[str], height: float) -> None:
    """The legend above the panels, its title's lines wrapped where they are wider than the figure; then the
    figure's height is set to `height` (the panels') plus the legend's. (The figure is made taller than that
    at first, so that the legend is laid out without squeezing the panels to nothing.)"""
    clauses = [part for line in lines for part in line.split("; ")]  # a narrow figure breaks lines at "; " first
    for chars in [0, None, *range(120, 30, -6)]:
        title = "\n".join(lines if chars == 0 else clauses if chars is None else
                          [textwrap.fill(c, chars) for c in clauses])
        legend = style.fitted_legend(fig, handles, labels, ncols=len(handles), title=title, title_fontsize=7)
        if style.fits(legend.get_window_extent(), fig.bbox, 0.0, fig.dpi):
            break
        legend.remove()
    fig.set_size_inches(fig.get_size_inches()[0], height + legend.get_window_extent().height / fig.dpi)
    fig.draw_without_rendering()


def plot(table: pd.DataFrame, settings: Mapping[str, str], setting: str, pdf: str | Path, png: str | Path,
         objective_sets: Mapping[str, Sequence[str]] | None = None, alpha: float = 0.05):
    """The one-page summary figure of `setting` (S) from its summary table; returns the figure.

    `settings`: the comparison's setting label -> algorithm (their styles, and which are the baselines);
    `objective_sets`: set -> objectives (the groups' order and their objectives in the headers).
    """
    require(table, COLUMNS)
    roles = summary.baselines(settings)
    others = [r for r in roles if r != "rs"]
    require(table, [c for r in others for c in (f"improvement_{r}_pct", f"median_{r}")])
    if setting not in settings or setting in roles.values():
        raise ValueError(f"'{setting}' is not a comparison setting other than the baselines "
                         f"({', '.join(summary.summary_settings(settings))})")
    table = table.assign(budget=table["budget"].astype(int))
    for col in ("device", "kernel", "objective_set"):
        table[col] = table[col].astype(str)
    rows, sets = _rows(table, objective_sets)
    y_of = {r: i for i, r in enumerate(rows)}
    budgets = sorted(table["budget"].unique())
    values = {r: _improvements(table, None if r == "s" else r) for r in ["s", *others]}
    every = np.concatenate(list(values.values()))
    every = every[~np.isnan(every)]
    lowest = float(every.min(initial=0.0))
    floor = max(FLOOR, min(-25.0, math.floor(lowest / 25.0) * 25.0)) if np.isfinite(lowest) else FLOOR
    clipped = lowest < floor
    significant = table["vs_rs"].isin([summary.BETTER, summary.WORSE]).to_numpy()
    ranked = table["n_ranked"].astype(int)
    fixed_n = ranked.nunique() == 1
    devices = sorted(table["device"].unique())
    with style.context():
        styles = style.setting_styles(dict(settings))
        drawn = {"s": styles[setting], **{r: styles[roles[r]] for r in others}}
        if not MarkerStyle(drawn["s"]["marker"]).is_filled():  # a line marker ('1', 'x') cannot show filled / hollow
            drawn["s"] = {**drawn["s"], "marker": UNFILLABLE_FALLBACK}
        nb = len(budgets)
        width = min(7.0, max(4.6, 2.4 + 1.3 * nb))
        height = PANELS_IN + ROW_IN * len(rows)
        fig, axes = style.figure(width=width, height=height + 4.0, nrows=1,
                                 ncols=nb, sharey=True, squeeze=False)
        axes = axes[0]
        for ax, budget in zip(axes, budgets):
            at = (table["budget"] == budget).to_numpy()
            part = table[at]
            ys = np.array([y_of[(o, d, k)] for o, d, k in part[["objective_set", "device", "kernel"]].itertuples(
                index=False, name=None)], dtype=float)
            data_rows = [y for r, y in y_of.items() if len(r) == 3]
            for n, y in enumerate(data_rows):
                if n % 2 == 0:
                    ax.axhspan(y - 0.5, y + 0.5, color=BAND, lw=0, zorder=0)
            ax.axvline(0.0, color=styles[roles["rs"]]["color"], lw=0.9, zorder=1)
            for role, offset in zip(others, (-LANE, LANE)):
                x = np.maximum(values[role][at], floor)
                ax.plot(x, ys + offset, ls="none", marker=drawn[role]["marker"], ms=BASELINE_SIZE,
                        color=drawn[role]["color"], mec=drawn[role]["color"], mew=0.6, zorder=3, gid=f"baseline-{role}")
            x = np.maximum(values["s"][at], floor)
            for fill, mask in ((True, significant[at]), (False, ~significant[at])):
                ax.plot(x[mask], ys[mask], ls="none", marker=drawn["s"]["marker"], ms=S_SIZE, mew=0.9,
                        mec=drawn["s"]["color"], mfc=drawn["s"]["color"] if fill else HOLLOW, zorder=4,
                        gid="s-significant" if fill else "s-not-significant")
            for y, rank, n in zip(ys, part["rank"].astype(int), ranked[at]):
                ax.annotate(str(rank) if fixed_n else f"{rank}/{n}", (1.0, y), xycoords=("axes fraction", "data"),
                            xytext=(4, 0), textcoords="offset points", ha="left", va="center", fontsize=7,
                            fontweight="bold" if rank == 1 else "normal", annotation_clip=False, gid="rank")
            ax.annotate("rank", (1.0, 1.0), xycoords="axes fraction", xytext=(4, 2), textcoords="offset points",
                        ha="left", va="bottom", fontsize=7, annotation_clip=False)
            ax.set_title(f"budget {budget}", pad=9)
            ax.set_xlim(floor - MARGIN, 100.0 + MARGIN)
            _x_axis(ax, floor, clipped)
            ax.grid(axis="y", visible=False)
            ax.tick_params(axis="y", length=0)
        axes[0].set_ylim(len(rows) - 0.5, -0.5)
        axes[0].yaxis.set_major_locator(FixedLocator(range(len(rows))))
        names = [(f"objective set {r[0]}" if len(r) == 1 else
                  r[2] if len(devices) == 1 else f"{r[1]} / {r[2]}") for r in rows]
        axes[0].yaxis.set_major_formatter(FixedFormatter(names))
        for tick, r in zip(axes[0].yaxis.get_major_ticks(numticks=len(rows)), rows):
            if len(r) == 1:
                tick.label1.set_fontweight("bold")
        fig.supxlabel(X_LABEL, fontsize=8)
        label = styles[setting]["label"]
        s_marker = {"ls": "none", "marker": drawn["s"]["marker"], "ms": S_SIZE, "mew": 0.9, "mec": drawn["s"]["color"]}
        handles = [Line2D([], [], mfc=drawn["s"]["color"], **s_marker), Line2D([], [], mfc=HOLLOW, **s_marker),
                   *[Line2D([], [], ls="none", marker=drawn[r]["marker"], ms=BASELINE_SIZE, color=drawn[r]["color"])
                     for r in others],
                   Line2D([], [], color=styles[roles["rs"]]["color"], lw=0.9)]
        labels = [f"S = {label}: significantly better or worse than RS", "S: no significant difference from RS",
                  *[f"{drawn[r]['label']} ({side} S)" for r, side in zip(others, ("above", "below"))],
                  f"{styles[roles['rs']]['label']} (0)"]
        lo, hi = int(table["n_runs"].min()), int(table["n_runs"].max())
        runs = f"{lo} runs" if lo == hi else f"{lo}-{hi} runs"
        spelled = [objective_set_text(o, (objective_sets or {}).get(o)) for o in sets]
        context = [devices[0]] if len(devices) == 1 else []
        if len(sets) == 1:
            context.append(f"objective set {spelled[0]}")
        else:  # the groups' headers name the sets; their objectives are spelled out here
            context += [t for t in spelled if t not in sets]
        rank_note = ("rank: S's among " + ", ".join(["S", *(summary.BASELINES[r] for r in roles)])
                     + " by median (1 = best, ties share the best)" + ("" if fixed_n else "; rank/settings ranked"))
        lines = [f"S = {label} against the baselines ({runs} of S per cell)" + "".join(f"; {c}" for c in context),
                 SIGNIFICANT.format(alpha=alpha), rank_note]
        _legend(fig, handles, labels, lines, height)
        style.save(fig, pdf, png)
    return fig
