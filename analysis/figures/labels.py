"""Point labels placed greedily so that they overlap neither each other, nor the points, nor the axes' edge."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.transforms import Bbox

# Candidate offsets (points) from the labelled point, in order of preference, and the matching alignment.
_DIRECTIONS = [
    ((1, 1), "left", "bottom"), ((1, -1), "left", "top"), ((-1, 1), "right", "bottom"),
    ((-1, -1), "right", "top"), ((0, 1.4), "center", "bottom"), ((0, -1.4), "center", "top"),
    ((1.4, 0), "left", "center"), ((-1.4, 0), "right", "center"),
]
_DISTANCES = (2.5, 5.0, 8.0, 12.0, 17.0, 23.0)
_LINE_STEP_PX = 2.0  # a line to keep clear of is sampled this often


def _overlap(a: Bbox, b: Bbox) -> float:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w * h if w > 0 and h > 0 else 0.0


def _box(px: float, py: float, w: float, h: float, ha: str, va: str) -> Bbox:
    x0 = px - {"left": 0.0, "center": w / 2, "right": w}[ha]
    y0 = py - {"bottom": 0.0, "center": h / 2, "top": h}[va]
    return Bbox.from_extents(x0, y0, x0 + w, y0 + h)


def _line_boxes(ax: Axes, lines: Sequence[Sequence[tuple[float, float]]], half_px: float) -> list[Bbox]:
    """Small boxes along every polyline (data coordinates), `_LINE_STEP_PX` apart."""
    boxes = []
    for line in lines:
        if len(line) < 2:
            continue
        pts = ax.transData.transform(np.asarray(line, dtype=float))
        for (x0, y0), (x1, y1) in zip(pts[:-1], pts[1:]):
            n = max(int(np.hypot(x1 - x0, y1 - y0) / _LINE_STEP_PX), 1)
            for t in np.linspace(0.0, 1.0, n + 1):
                x, y = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
                boxes.append(Bbox.from_extents(x - half_px, y - half_px, x + half_px, y + half_px))
    return boxes


def place_labels(ax: Axes, xs: Sequence[float], ys: Sequence[float], texts: Sequence[str],
                 marker_radius_pt: float = 3.0, keep_clear: Sequence[tuple[float, float, float]] = (),
                 keep_clear_lines: Sequence[Sequence[tuple[float, float]]] = (), merge_within_pt: float = 0.0,
                 **text_kw) -> list:
    """Annotate every (x, y) with its text at the candidate offset of least overlap; return the annotations.

    The first offset (nearest first) that overlaps nothing wins; where every one overlaps, the least
    overlap. `keep_clear` holds further (x, y, radius in points) discs to avoid, e.g. a highlight
    ring; `keep_clear_lines` polylines (lists of (x, y)) to avoid, e.g. a drawn front. Points closer
    than `merge_within_pt` to an earlier one (markers drawn on top of each other) share one label,
    their texts joined by commas. The most crowded points are labelled first. Call once the axes
    limits are final and the figure has been laid out (`fig.draw_without_rendering()`).
    """
    fig = ax.figure
    renderer = cast(FigureCanvasAgg, fig.canvas).get_renderer()  # style.figure draws on an Agg canvas
    to_px = fig.dpi / 72.0
    pts = ax.transData.transform(np.column_stack([xs, ys])) if len(xs) else np.empty((0, 2))
    r = marker_radius_pt * to_px
    obstacles = [Bbox.from_extents(px - r, py - r, px + r, py + r) for px, py in pts]
    for x, y, rad in keep_clear:
        (px, py), rr = ax.transData.transform((x, y)), rad * to_px
        obstacles.append(Bbox.from_extents(px - rr, py - rr, px + rr, py + rr))
    obstacles += _line_boxes(ax, keep_clear_lines, 0.8 * to_px)
    frame = ax.get_window_extent(renderer)
    pad = 1.0 * to_px  # clearance kept around every label
    placed: list[Bbox] = []
    annotations = []
    groups: list[list[int]] = []  # indices of points drawn (nearly) on top of each other
    for i, p in enumerate(pts):
        near = next((g for g in groups if np.hypot(*(pts[g[0]] - p)) < merge_within_pt * to_px), None)
        if near is None:
            groups.append([i])
        else:
            near.append(i)
    crowd = [int((np.hypot(*(pts - pts[g[0]]).T) < 20.0 * to_px).sum()) for g in groups]
    order = sorted(range(len(groups)), key=lambda j: (-crowd[j], j))
    for j in order:
        first = groups[j][0]
        x, y, (px, py) = xs[first], ys[first], pts[first]
        parts = [texts[i] for i in groups[j]]
        text = ",".join(sorted(parts, key=lambda t: (not t.isdigit(), int(t) if t.isdigit() else 0, t)))
        probe = ax.annotate(text, (x, y), xytext=(0, 0), textcoords="offset points", **text_kw)
        size = probe.get_window_extent(renderer)
        probe.remove()
        w, h = size.width, size.height
        best: tuple[float, tuple[float, float], str, str, Bbox] | None = None
        for dist in _DISTANCES:
            for (dx, dy), ha, va in _DIRECTIONS:
                box = _box(px + dx * dist * to_px, py + dy * dist * to_px, w, h, ha, va).padded(pad)
                outside = max(box.width * box.height - _overlap(box, frame), 0.0)
                cost = sum(_overlap(box, b) for b in placed) + sum(_overlap(box, b) for b in obstacles)
                cost += 20.0 * outside
                if best is None or cost < best[0] - 1e-9:
                    best = (cost, (dx * dist, dy * dist), ha, va, box)
            if best is not None and best[0] == 0:
                break
        assert best is not None  # _DISTANCES and _DIRECTIONS are not empty
        _, xy, ha, va, box = best
        leader = None  # a thin line joins a label placed beyond the nearest ring to its point
        if max(abs(xy[0]), abs(xy[1])) > _DISTANCES[0] * 1.5:
            leader = {"arrowstyle": "-", "lw": 0.4, "color": "0.45", "shrinkA": 0.5, "shrinkB": marker_radius_pt}
        ann = ax.annotate(text, (x, y), xytext=xy, textcoords="offset points", ha=ha, va=va,
                          arrowprops=leader, **text_kw)
        ann.set_in_layout(False)
        placed.append(box)
        annotations.append(ann)
    return annotations
