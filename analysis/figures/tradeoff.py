"""Trade-off cloud of one mixed-precision space (Heldens & van Werkhoven Figs 2-3 and 11): speedup and memory
vs error."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import moocore
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.text import Text
from matplotlib.transforms import Bbox, offset_copy

from analysis.figures import style
from analysis.figures.contracts import require
from analysis.objectives import OBJECTIVES

PRECISIONS = ("double", "float", "half", "bfloat16")
PRECISION_NAMES = {"double": "FP64", "float": "FP32", "half": "FP16", "bfloat16": "BF16"}
ERRORS = ("mre", "nrmse", "nmae")
ERROR_NAMES = {"mre": "MRE", "nrmse": "NRMSE", "nmae": "NMAE"}
TIME = OBJECTIVES["time"].column
MEMORY = OBJECTIVES["memory"].column
HIGHLIGHT = style.OKABE_ITO["vermillion"]
# the dashed lines of the one-type configurations
TYPE_LINE: dict[str, Any] = {"color": "0.35", "ls": (0, (3, 2)), "lw": 0.7}
TYPE_LEGEND = "median error with every precision\nparameter of one type (as labelled)"
LABEL_CLEARANCE_PT = 3.0  # a one-type label keeps this far from the panel's left and right edges ...
LINE_GAP_PT = 2.0  # ... and, where set beside its line to do so, this far from the line
_MEMORY_UNITS = ((1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "bytes"))


def precision_parameters(parameters: Mapping[str, Sequence]) -> list[str]:
    """Parameters whose values are all floating-point type names (double, float, half, bfloat16)."""
    return [p for p, values in parameters.items() if len(values) and all(str(v) in PRECISIONS for v in values)]


def uniform_mask(table: pd.DataFrame, precision: Sequence[str], type_name: str) -> pd.Series:
    """Rows whose precision parameters are all `type_name`."""
    return table[list(precision)].astype(str).eq(type_name).all(axis=1)


def pareto_mask(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rows not dominated in (a, b), both minimised (ties kept)."""
    return moocore.is_nondominated(np.column_stack([a, b]), keep_weakly=True)


def tradeoff_frame(table: pd.DataFrame, parameters: Mapping[str, Sequence], error: str) -> pd.DataFrame:
    """Usable configurations with speedup over the fastest all-FP64 one, log10 error and both Pareto flags.

    Usable: status 'ok' (where the table has a status) and finite, non-negative time, memory and error.
    An error of exactly 0 has no logarithm: it is drawn one decade below the smallest positive error
    (column `error_zero` marks those rows).
    """
    if error not in ERRORS:
        raise ValueError(f"'{error}' is not an error objective; choose one of {', '.join(ERRORS)}")
    column = OBJECTIVES[error].column
    require(table, [*parameters, TIME, MEMORY, column], "space table")
    precision = precision_parameters(parameters)
    if not precision:
        raise ValueError(f"no precision parameter (values among {', '.join(PRECISIONS)}); parameters: "
                         f"{', '.join(parameters)}")
    ok = table["status"].eq("ok") if "status" in table.columns else pd.Series(True, index=table.index)
    values = table[[TIME, MEMORY, column]].to_numpy(dtype=float)
    ok &= np.isfinite(values).all(axis=1) & (values >= 0).all(axis=1)
    df = table.loc[ok].reset_index(drop=True)
    if df.empty:
        raise ValueError(f"no configuration with finite time, memory and {error}")
    fp64 = uniform_mask(df, precision, "double")
    if not fp64.any():
        raise ValueError(f"no measured configuration has all of {precision} = double")
    baseline = float(df.loc[fp64, TIME].min())
    positive = df[column] > 0
    if not positive.any():
        raise ValueError(f"every configuration has {error} = 0; nothing to draw on a log scale")
    floor = np.log10(df.loc[positive, column].min()) - 1.0
    out = df.copy()
    out["speedup"] = baseline / df[TIME]
    out["error_zero"] = ~positive
    out["log10_error"] = np.where(positive, np.log10(df[column].where(positive, 1.0)), floor)
    out["pareto_time"] = pareto_mask(df[TIME].to_numpy(), df[column].to_numpy())
    out["pareto_memory"] = pareto_mask(df[MEMORY].to_numpy(), df[column].to_numpy())
    return out


def uniform_errors(frame: pd.DataFrame, precision: Sequence[str]) -> dict[str, float]:
    """Median log10 error of the configurations whose precision parameters are all one type, per type present."""
    return {t: float(frame.loc[m, "log10_error"].median())
            for t in PRECISIONS if (m := uniform_mask(frame, precision, t)).any()}


def _memory_scale(max_bytes: float) -> tuple[float, str]:
    return next((f, u) for f, u in _MEMORY_UNITS if max_bytes >= f or u == "bytes")


def _overlaps(a, b, pad: float) -> bool:
    return a.x0 - pad < b.x1 and b.x0 - pad < a.x1 and a.y0 - pad < b.y1 and b.y0 - pad < a.y1


def label_type_lines(ax, lines: Mapping[str, float], data_top: float) -> list:
    """Name every one-type line (FP64 ...) horizontally at the top of `ax`, on the line.

    Labels that would overlap go to a further row below; the y range then grows so that the
    rows stay above `data_top`, the highest value drawn. Call once the figure has been laid out; returns the labels.
    """
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    pad = 2.0 * fig.dpi / 72.0
    clearance = LABEL_CLEARANCE_PT * fig.dpi / 72.0
    texts: list[Text] = []
    boxes: list[Bbox] = []
    rows: list[int] = []
    for t, x in sorted(lines.items(), key=lambda tx: tx[1]):
        text = ax.text(x, 1.0, PRECISION_NAMES[t], transform=ax.get_xaxis_transform(), ha="center", va="top",
                       fontsize=7, color="0.2", zorder=4, gid=f"type-{t}",
                       bbox={"boxstyle": "square,pad=0.15", "fc": "white", "ec": "none"})
        text.set_in_layout(False)  # placed after the layout: it must not move the panels
        box = text.get_window_extent(renderer)
        if box.x0 < frame.x0 + clearance:
            # near the left spine: the label beside the line, right of it, clear of the spine
            text.set_ha("left")
            text.set_transform(offset_copy(ax.get_xaxis_transform(), fig=fig, x=LINE_GAP_PT, units="points"))
        elif box.x1 > frame.x1 - clearance:
            text.set_ha("right")
            text.set_transform(offset_copy(ax.get_xaxis_transform(), fig=fig, x=-LINE_GAP_PT, units="points"))
        row = 0
        while True:
            text.set_y(1.0 - row * (box.height + pad) / frame.height)
            box = text.get_window_extent(renderer)
            if not any(_overlaps(box, b, pad) for b, r in zip(boxes, rows) if r == row):
                break
            row += 1
        texts.append(text)
        boxes.append(box)
        rows.append(row)
    # headroom: the lowest label row's bottom, as a fraction of the panel, stays above the data
    band = (frame.y1 - min(b.y0 for b in boxes) + pad) / frame.height if boxes else 0.0
    bottom = ax.get_ylim()[0]
    ax.set_ylim(bottom, bottom + (data_top - bottom) * 1.04 / max(1.0 - band, 0.3))
    return texts


def plot(table: pd.DataFrame, parameters: Mapping[str, Sequence], error: str, title: str,
         pdf: str | Path, png: str | Path):
    """Speedup over the fastest all-FP64 configuration (top) and memory (bottom) vs log10 error; returns the figure.

    Dashed vertical lines: the median error of the configurations whose precision parameters are
    all one type, each named at the top of the upper panel.
    """
    frame = tradeoff_frame(table, parameters, error)
    precision = precision_parameters(parameters)
    lines = uniform_errors(frame, precision)
    scale, unit = _memory_scale(float(frame[MEMORY].max()))
    name = ERROR_NAMES[error]
    with style.context():
        fig, (top, bottom) = style.figure(height=3.9, nrows=2, sharex=True)
        for ax, y, flag in ((top, frame["speedup"], "pareto_time"), (bottom, frame[MEMORY] / scale, "pareto_memory")):
            rest = ~frame[flag]
            ax.scatter(frame.loc[rest, "log10_error"], y[rest], s=5, color=style.NEUTRAL, alpha=0.45, lw=0,
                       rasterized=len(frame) > 5000)
            front = frame[frame[flag]].sort_values("log10_error")
            # the attainment staircase: from each optimum on, its value is attainable at any larger error
            ax.step(front["log10_error"], y[front.index], where="post", color=HIGHLIGHT, lw=0.7, alpha=0.8)
            ax.scatter(front["log10_error"], y[front.index], s=14, color=HIGHLIGHT, edgecolor="black", lw=0.4,
                       zorder=3)
            for x in lines.values():
                ax.axvline(x, zorder=1, **TYPE_LINE)
        top.axhline(1.0, color="black", lw=0.6)
        top.set_ylim(bottom=0)
        top.set_ylabel("speedup over FP64 (×)")
        bottom.set_ylabel(f"memory ({unit})")
        bottom.set_ylim(bottom=0)
        bottom.set_xlabel(f"log$_{{10}}$ {name}")
        top.set_title(title)
        if frame["error_zero"].any():
            bottom.annotate(f"{name} = 0 drawn at {frame.loc[frame['error_zero'], 'log10_error'].iloc[0]:.1f}",
                            (0.0, 0.0), xycoords="axes fraction", xytext=(3, 3), textcoords="offset points",
                            fontsize=7, ha="left", va="bottom")
        handles = [
            Line2D([], [], ls="none", marker="o", ms=3, color=style.NEUTRAL, label="configuration"),
            Line2D([], [], ls="-", lw=0.7, marker="o", ms=4, color=HIGHLIGHT, mec="black", mew=0.4,
                   label="Pareto-optimal"),
            Line2D([], [], label=TYPE_LEGEND, **TYPE_LINE),
        ]
        fig.legend(handles=handles, loc="outside upper center", ncols=2, handlelength=1.8, columnspacing=1.0)
        fig.draw_without_rendering()
        label_type_lines(top, lines, float(frame["speedup"].max()))
        style.save(fig, pdf, png)
    return fig
