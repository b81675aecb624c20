"""Anytime IGD+ (thesis Figure 7, appendix A.3): median IGD+ with IQR bands and relative improvement over RS."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.patches import Patch
from matplotlib.ticker import FixedFormatter, FixedLocator, MaxNLocator, MultipleLocator

from analysis.figures import style
from analysis.figures.contracts import CURVES_COLUMNS, require

RS = "rs"
IMPROVEMENT_FLOOR = -1.0  # the bottom panel shows improvements down to this; lower values are clipped (and said so)
X_LABEL = "evaluations"
IGD_LABEL = r"median IGD$^+$"
IMPROVEMENT_LABEL = "relative improvement over RS (0: RS, 1: IGD$^+$ of 0)"
GRID_COLUMNS_MAX = 5
BAND_NOTE = "lines: median of {runs}; shaded: interquartile range"
BAND_ALPHA = 0.12
GRID_TITLE_SIZE = 7
GRID_BAND_ALPHA = 0.08  # lighter in the small multiples, where up to five bands overlap
RS_ZERO_SHADE = "0.88"  # the lower panel's background where RS's median IGD+ is 0
RS_ZERO_LABEL = "RS median 0 (shaded below):\nthere ≤ −1 means behind RS"
CLIP_LANE = 0.07  # settings clipped at the floor are drawn this far apart below it
LOG_SPAN = 100.0  # IGD+ values spanning more than this factor get a symmetric-log axis
LOG_DECADES = 5  # ... with at most this many decades drawn logarithmically
CLIP_MARK = "≤"  # before the floor's tick label where values below the floor are drawn on it
CLIP_MARK_SIZE = 10  # ... in this size (points): at the tick labels' 7 pt a "≤" reads as a rotated glyph


def igd_label(objectives: Sequence[str] | None = None) -> str:
    """The IGD+ axis label, with the unit where the objective set has one objective (see `style.igd_unit`)."""
    unit = style.igd_unit(objectives)
    return f"{IGD_LABEL} ({unit})" if unit else IGD_LABEL


def evaluation_locator(nbins: int | Literal["auto"] = "auto") -> MaxNLocator:
    """Ticks of an evaluation axis: whole evaluations only."""
    return MaxNLocator(nbins=nbins, integer=True, steps=[1, 2, 5, 10])


def relative_improvement(rs_median: np.ndarray, median: np.ndarray) -> np.ndarray:
    """(rs − a) / rs per element: 0 = as good as RS, 1 = IGD+ of 0.

    Where RS's median is 0: 0 if the algorithm's is 0 too, −inf otherwise (the limit of the ratio:
    RS already holds the true front and the algorithm is behind it); the figure draws that at its
    floor, in a shaded range.
    """
    rs = np.asarray(rs_median, dtype=float)
    a = np.asarray(median, dtype=float)
    out = np.full(np.broadcast(rs, a).shape, np.nan)
    pos = rs > 0
    out[pos] = (rs[pos] - a[pos]) / rs[pos]
    out[(rs == 0) & (a == 0)] = 0.0
    out[(rs == 0) & (a > 0)] = -np.inf
    return out


def _runs(k: np.ndarray, mask: np.ndarray) -> list[tuple[float, float]]:
    """(first, last) k of every run of consecutive True in `mask`."""
    out: list[tuple[float, float]] = []
    previous = False
    for x, m in zip(k, mask):
        if m and previous:
            out[-1] = (out[-1][0], x)
        elif m:
            out.append((x, x))
        previous = bool(m)
    return out


def space_curves(curves: pd.DataFrame, device: str, kernel: str, objective_set: str) -> tuple[pd.DataFrame, int]:
    """The curves of one (device, kernel, objective set) at its largest budget, and that budget."""
    sel = curves[(curves["device"] == device) & (curves["kernel"] == kernel)
                 & (curves["objective_set"] == objective_set)]
    if sel.empty:
        have = sorted({f"{d}/{k}/{o}"
                       for d, k, o in curves[["device", "kernel", "objective_set"]].itertuples(index=False)})
        raise ValueError(f"no curves for {device}/{kernel}/{objective_set}; there are: {', '.join(have)}")
    budget = int(sel["budget"].max())
    sel = sel[sel["budget"] == budget].sort_values(["setting", "k"])
    rs = sel.loc[sel["algorithm"] == RS, "setting"].unique()
    if len(rs) != 1:
        raise ValueError(f"{device}/{kernel}/{objective_set} at budget {budget}: need exactly one setting of "
                         f"algorithm '{RS}', found {list(rs)}")
    if sel.duplicated(["setting", "k"]).any():
        raise ValueError(f"{device}/{kernel}/{objective_set} at budget {budget}: repeated (setting, k) rows")
    return sel, budget


def _settings(sel: pd.DataFrame) -> dict[str, str]:
    pairs = sel[["setting", "algorithm"]].drop_duplicates()
    if pairs["setting"].duplicated().any():
        raise ValueError("a setting appears with two algorithms")
    return dict(zip(pairs["setting"], pairs["algorithm"]))


def band_note(runs: str) -> str:
    """What the lines and the shaded bands of an anytime figure are (a legend title)."""
    return BAND_NOTE.format(runs=runs)


def objective_set_text(objective_set: str, objectives: Sequence[str] | None = None) -> str:
    """The objective set as a reader needs it: 'O5 = {time, memory, mre, nrmse, nmae}'; its name alone
    where its objectives are not given or it is named after its one objective (time)."""
    if not objectives or list(objectives) == [objective_set]:
        return objective_set
    return f"{objective_set} = {{{', '.join(objectives)}}}"


def _draw_igd(ax, sel: pd.DataFrame, styles: dict[str, dict], band: bool = True, alpha: float = BAND_ALPHA,
              log: bool | None = None) -> None:
    """Median IGD+ lines, with the interquartile range shaded where `band`; `log`: see `_igd_scale`."""
    for s, st in styles.items():
        g = sel[sel["setting"] == s]
        if band:
            # a quartile that is still infinite (a run without a valid point yet) leaves a gap
            q1, q3 = (g[c].where(np.isfinite(g[c])) for c in ("igd_q1", "igd_q3"))
            ax.fill_between(g["k"], q1, q3, color=st["color"], alpha=alpha, lw=0, gid=f"iqr-{s}")
        ax.plot(g["k"], g["igd_median"], color=st["color"], ls=st["linestyle"], label=st["label"])
    drawn = sel[sel["setting"].isin(list(styles))]
    _igd_scale(ax, drawn[["igd_median", "igd_q1", "igd_q3"] if band else ["igd_median"]].to_numpy(dtype=float), log)


def spans_decades(values: np.ndarray) -> bool:
    """Whether the positive finite values span more than LOG_SPAN (then a symmetric-log axis is needed)."""
    positive = values[np.isfinite(values) & (values > 0)]
    return bool(len(positive)) and positive.max() / positive.min() > LOG_SPAN


def _igd_scale(ax, values: np.ndarray, log: bool | None = None) -> None:
    """A symmetric-log y axis when the IGD+ values span more than LOG_SPAN (or `log` says so), else linear;
    from 0 either way.

    IGD+ falls by orders of magnitude over a run, so on a linear axis the first evaluations flatten
    the rest. Symlog keeps 0 (the true front reached) on the axis: linear below the largest power of
    ten under the smallest positive value, logarithmic above. `log` True/False overrides the choice
    (a grid of panels takes one kind for all of them).
    """
    positive = values[np.isfinite(values) & (values > 0)]
    if log is None:
        log = spans_decades(values)
    if log:
        # at most LOG_DECADES decades above the linear part: smaller values are as good as 0 here
        low = max(positive.min(), positive.max() / 10.0 ** LOG_DECADES) if len(positive) else 1.0
        ax.set_yscale("symlog", linthresh=10.0 ** math.floor(math.log10(low)), linscale=0.6)
    ax.set_ylim(bottom=0)


def _improvement_ticks(ax, floor: float, clipped: bool) -> None:
    """Ticks of the improvement axis every 0.5 (0.25 for a floor above −0.5), labelled upright.

    Where values below the floor are drawn on it, the floor's label reads "≤−1", larger than the other
    tick labels: at their 7 pt the small "≤" reads as a rotated glyph.
    """
    lo, hi = ax.get_ylim()
    step = 0.5 if floor < -0.5 else 0.25
    ticks = [round(t, 9) + 0.0 for t in MultipleLocator(step).tick_values(lo, hi) if lo - 1e-9 <= t <= hi + 1e-9]
    at_floor = [clipped and abs(t - floor) < 1e-9 for t in ticks]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_major_formatter(FixedFormatter(
        [(CLIP_MARK if f else "") + f"{t:g}".replace("-", "−") for t, f in zip(ticks, at_floor)]))
    for tick, f in zip(ax.yaxis.get_major_ticks(numticks=len(ticks)), at_floor):
        if f:
            tick.label1.set_fontsize(CLIP_MARK_SIZE)


def _rs_setting(settings: dict[str, str]) -> str:
    return next(s for s, a in settings.items() if a == RS)


def plot(curves: pd.DataFrame, device: str, kernel: str, objective_set: str, pdf: str | Path, png: str | Path,
         objectives: Sequence[str] | None = None):
    """Median IGD+ vs evaluations with IQR bands (top) and relative improvement over RS (bottom) for one space.

    `objectives`: those of the set, for the unit of the IGD+ axis (see `igd_label`). Returns the figure.
    """
    require(curves, CURVES_COLUMNS)
    sel, budget = space_curves(curves, device, kernel, objective_set)
    settings = _settings(sel)
    rs_setting = _rs_setting(settings)
    with style.context():
        styles = style.setting_styles(settings)
        fig, (top, bottom) = style.figure(height=3.6, nrows=2, sharex=True, height_ratios=[3, 2])
        _draw_igd(top, sel, styles)
        lo, hi = int(sel["n_runs"].min()), int(sel["n_runs"].max())
        runs = f"{lo} runs" if lo == hi else f"{lo}-{hi} runs"
        described = objective_set_text(objective_set, objectives)
        # a set of several objectives is spelled out on a line of its own (O3, O5 mean nothing alone);
        # a title too wide for the figure breaks after the space's name
        titles = ([f"{device} / {kernel}, {objective_set}, budget {budget}",
                   f"{device} / {kernel}\n{objective_set}, budget {budget}"] if described == objective_set else
                  [f"{device} / {kernel}, budget {budget}\n{described}",
                   f"{device} / {kernel}\nbudget {budget}\n{described}"])
        rs = sel[sel["setting"] == rs_setting].set_index("k")["igd_median"]
        lowest = 0.0
        bottom.axhline(0.0, color=styles[rs_setting]["color"], lw=1.0)
        # where RS's median is 0 a method either matches it (0) or is behind it (−inf, drawn at the floor)
        zero = _runs(rs.index.to_numpy(), rs.to_numpy() == 0)
        for first, last in zero:
            bottom.axvspan(first - 0.5, last + 0.5, color=RS_ZERO_SHADE, lw=0, zorder=0, gid="rs-zero")
        drawn = {}
        for s in styles:
            if s == rs_setting:
                continue
            g = sel[sel["setting"] == s].set_index("k")["igd_median"]
            k = g.index.intersection(rs.index)
            imp = relative_improvement(rs.loc[k].to_numpy(), g.loc[k].to_numpy())
            finite = imp[np.isfinite(imp)]
            lowest = min(lowest, float(finite.min(initial=0.0)))
            if np.isneginf(imp).any():  # behind an RS at 0, or RS has points where this setting has none yet
                lowest = min(lowest, IMPROVEMENT_FLOOR - 1.0)
            drawn[s] = (k, imp)
        clipped = lowest < IMPROVEMENT_FLOOR
        floor = max(IMPROVEMENT_FLOOR, min(-0.25, math.floor(lowest * 4) / 4))
        # values below the floor are drawn on it, each setting in its own lane under the floor so
        # that settings clipped at the same evaluations stay apart
        lanes = [s for s, (_, imp) in drawn.items() if (imp < floor).any()]
        for s, (k, imp) in drawn.items():
            y = np.where(imp < floor, floor - CLIP_LANE * (lanes.index(s) if s in lanes else 0), imp)
            bottom.plot(k, y, color=styles[s]["color"], ls=styles[s]["linestyle"], gid=s)
        bottom.set_ylim(floor - CLIP_LANE * max(len(lanes) - 1, 0) - 0.05, 1.05)
        _improvement_ticks(bottom, floor, clipped)
        top.set_ylabel(igd_label(objectives))
        # named above the panel, upright: a rotated axis label beside the tick labels made the floor's
        # "≤" look like a rotated letter of it
        bottom.set_title(IMPROVEMENT_LABEL, loc="left", fontsize=7, pad=3)
        bottom.set_xlabel(X_LABEL)
        bottom.set_xlim(0, budget)
        bottom.xaxis.set_major_locator(evaluation_locator())
        handles, labels = top.get_legend_handles_labels()
        if zero:
            handles.append(Patch(color=RS_ZERO_SHADE, lw=0))
            labels.append(RS_ZERO_LABEL)
        style.fitted_legend(fig, handles, labels, ncols=2, title=band_note(runs), title_fontsize=7)
        for title in titles:
            top.set_title(title)
            fig.draw_without_rendering()
            if style.fits(top.title.get_window_extent(), fig.bbox, dpi=fig.dpi):
                break
        style.save(fig, pdf, png)
    return fig


def _fit_titles(fig, axes, titles: list[str], two_line: list[str]) -> None:
    """Panel titles on one line where every one fits its column, else each on two lines (`two_line`);
    a title that would still run off the figure's side is aligned with its panel's edge there."""
    pad = 2.0 * fig.dpi / 72.0
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    lefts = sorted({round(ax.get_window_extent(renderer).x0, 3) for ax in axes})
    pitch = min((b - a for a, b in zip(lefts, lefts[1:])), default=fig.bbox.width)
    if any(ax.title.get_window_extent(renderer).width > pitch - pad for ax in axes):
        for ax, t in zip(axes, two_line):
            ax.set_title(t, fontsize=GRID_TITLE_SIZE)
        fig.draw_without_rendering()
    for ax in axes:
        box = ax.title.get_window_extent(renderer)
        if box.x1 > fig.bbox.x1 - pad:
            ax.title.set_horizontalalignment("right")
            ax.title.set_x(1.0)
        elif box.x0 < fig.bbox.x0 + pad:
            ax.title.set_horizontalalignment("left")
            ax.title.set_x(0.0)


def plot_grid(curves: pd.DataFrame, objective_set: str, pdf: str | Path, png: str | Path,
              objectives: Sequence[str] | None = None):
    """Small multiples: median IGD+ vs evaluations with IQR bands, one panel per space of an objective set;
    returns the figure.

    Every panel has the same kind of y axis: symmetric-log (each with its own linear threshold, see
    `_igd_scale`) where any panel's values span more than LOG_SPAN, else linear. `objectives`: those
    of the set, for the unit of the IGD+ axis (see `igd_label`) and the legend's title.
    """
    require(curves, CURVES_COLUMNS)
    sub = curves[curves["objective_set"] == objective_set]
    if sub.empty:
        raise ValueError(f"no curves for objective set '{objective_set}'; there are: "
                         f"{', '.join(sorted(curves['objective_set'].unique()))}")
    spaces = sorted(set(sub[["device", "kernel"]].itertuples(index=False, name=None)), key=lambda dk: (dk[1], dk[0]))
    parts = [space_curves(sub, d, k, objective_set) for d, k in spaces]
    settings: dict[str, str] = {}
    for sel, _ in parts:
        settings.update(_settings(sel))
    log = any(spans_decades(sel[["igd_median", "igd_q1", "igd_q3"]].to_numpy(dtype=float)) for sel, _ in parts)
    ncols = min(GRID_COLUMNS_MAX, len(spaces))
    nrows = math.ceil(len(spaces) / ncols)
    with style.context():
        styles = style.setting_styles(settings)
        fig, axes = style.figure(width=7.0, height=1.55 * nrows + 0.7, nrows=nrows, ncols=ncols,
                                 squeeze=False, sharex=False)
        engine = fig.get_layout_engine()
        assert isinstance(engine, ConstrainedLayoutEngine)  # style.figure lays out with layout="constrained"
        engine.set(wspace=0.08)
        devices = sorted({d for d, _ in spaces})
        one = [k if len(devices) == 1 else f"{d} / {k}" for d, k in spaces]
        two = [k if len(devices) == 1 else f"{d}\n{k}" for d, k in spaces]
        for ax, (_d, _k), (sel, budget), title in zip(axes.flat, spaces, parts, one):
            _draw_igd(ax, sel, {s: st for s, st in styles.items() if s in set(sel["setting"])},
                      alpha=GRID_BAND_ALPHA, log=log)
            ax.set_title(title, fontsize=GRID_TITLE_SIZE)
            ax.set_xlim(0, budget)
            ax.xaxis.set_major_locator(evaluation_locator(4))
        for ax in axes.flat[len(spaces):]:
            ax.set_visible(False)
        for ax in axes[:, 0]:
            ax.set_ylabel(igd_label(objectives))
        for j in range(ncols):
            last = max(i for i in range(nrows) if i * ncols + j < len(spaces))
            axes[last, j].set_xlabel(X_LABEL)
        handles: dict[str, Artist] = {}
        for ax in axes.flat[:len(spaces)]:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lab, h)
        budgets = sorted({b for _, b in parts})
        lo = min(int(sel["n_runs"].min()) for sel, _ in parts)
        hi = max(int(sel["n_runs"].max()) for sel, _ in parts)
        runs = f"{lo} runs" if lo == hi else f"{lo}-{hi} runs"
        style.fitted_legend(fig, list(handles.values()), list(handles.keys()), ncols=min(6, len(handles)),
                            title=(f"{devices[0]}, " if len(devices) == 1 else "")
                            + f"objective set {objective_set_text(objective_set, objectives)}, budget "
                            + f"{', '.join(map(str, budgets))}\n{band_note(runs)}",
                            title_fontsize=7)
        _fit_titles(fig, list(axes.flat[:len(spaces)]), one, two)
        style.save(fig, pdf, png)
    return fig
