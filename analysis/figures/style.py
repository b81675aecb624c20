"""The one style of every figure: the shared matplotlibrc, a fixed colour per algorithm (a stable one per user
strategy), atomic PDF + PNG output."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402  (after the backend is chosen)
from matplotlib.figure import Figure  # noqa: E402

from analysis.io import atomic_path  # noqa: E402
from analysis.names import DISPLAY, display_name, is_user_spec  # noqa: E402
from analysis.objectives import OBJECTIVES

RCFILE = Path(__file__).with_name("matplotlibrc")

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour-vision deficiency.
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}

# Registry name -> colour. A constraint-unaware variant shares its algorithm's colour and is drawn dashed.
COLOURS = {
    "rs": OKABE_ITO["black"],
    "nsga2": OKABE_ITO["blue"],
    "nsga3": OKABE_ITO["vermillion"],
    "nsga2_unaware": OKABE_ITO["blue"],
    "nsga3_unaware": OKABE_ITO["vermillion"],
    "genetic_algorithm": OKABE_ITO["bluish_green"],
    "pso": OKABE_ITO["reddish_purple"],
    "diff_evo": OKABE_ITO["orange"],
    "firefly_algorithm": OKABE_ITO["sky_blue"],
}

MARKERS = {
    "rs": "o",
    "nsga2": "s",
    "nsga3": "^",
    "nsga2_unaware": "s",
    "nsga3_unaware": "^",
    "genetic_algorithm": "D",
    "pso": "v",
    "diff_evo": "P",
    "firefly_algorithm": "X",
}

# A user's strategy (a .py path or a dotted path) gets one of these, in a slot chosen from a hash of its name, so
# that it keeps its colour and marker from figure to figure and run to run: Paul Tol's "muted" scheme (colour-blind
# safe, and none of it an Okabe-Ito colour above) and filled markers the registered algorithms do not use
# (its pale sand and cyan left out: too light for lines on white, and the cyan too near sky blue).
EXTRA_COLOURS = ["#CC6677", "#332288", "#117733", "#882255", "#44AA99", "#999933", "#AA4499"]
EXTRA_MARKERS = ["h", "p", "*", "<", ">", "d", "8"]

SOLID = "-"
DASHED = (0, (4.0, 1.8))
DOTTED = (0, (1.0, 1.5))
# Further settings of one algorithm (e.g. two option sets of nsga2) get these patterns in turn.
EXTRA_PATTERNS = [(0, (1.0, 1.2)), (0, (5.0, 1.5, 1.0, 1.5)), (0, (2.5, 1.0, 1.0, 1.0, 1.0, 1.0))]
NEUTRAL = "#7F7F7F"  # configurations that are not highlighted
UNAWARE_SUFFIX = "_unaware"


def igd_unit(objectives: Sequence[str] | None) -> str | None:
    """The unit of IGD+ for an objective set: that of its objective where it has one (ms for time), else None.

    With one objective the true front is one point and its range is set to 1, so IGD+ is the best
    value found minus the optimum, in the objective's own unit. With more, the objectives are
    normalised and IGD+ has no unit; so has a unitless objective (an error).
    """
    if objectives is None or len(objectives) != 1 or objectives[0] not in OBJECTIVES:
        return None
    unit = OBJECTIVES[objectives[0]].unit
    return unit if unit and unit != "1" else None


def _slot(algorithm: str) -> int:
    return int.from_bytes(hashlib.sha256(algorithm.encode("utf-8")).digest()[:8], "big") % len(EXTRA_COLOURS)


def extra_styles(algorithms: Iterable[str]) -> dict[str, tuple[str, str]]:
    """(colour, marker) of each user strategy among `algorithms`: the slot its name hashes to, or, when two of them
    hash to one slot, the next free one (taken in sorted order, so the result depends only on the set)."""
    users = sorted({a for a in algorithms if a not in COLOURS})
    # a registered algorithm without a fixed colour (the leaderboard's strategies: its figures have their own
    # palette) is placed as a user strategy is
    unknown = [a for a in users if not is_user_spec(a) and a not in DISPLAY]
    if unknown:
        raise KeyError(f"no colour for algorithm '{unknown[0]}': neither a registered one ({', '.join(COLOURS)}) "
                       "nor a user strategy (a .py path or a dotted import path)")
    taken: set[int] = set()
    out = {}
    for a in users:
        slot = _slot(a)
        for step in range(len(EXTRA_COLOURS)):
            if (slot + step) % len(EXTRA_COLOURS) not in taken:
                slot = (slot + step) % len(EXTRA_COLOURS)
                break
        taken.add(slot)  # more user strategies than slots: colours repeat, in the same order
        out[a] = (EXTRA_COLOURS[slot], EXTRA_MARKERS[slot])
    return out


def colour(algorithm: str) -> str:
    """The fixed colour of a registered algorithm, or a user strategy's own (`extra_styles`); a name that is
    neither is an error listing the registered ones."""
    if algorithm in COLOURS:
        return COLOURS[algorithm]
    return extra_styles([algorithm])[algorithm][0]


def marker(algorithm: str) -> str:
    """The marker of a registered algorithm, or a user strategy's own."""
    if algorithm in MARKERS:
        return MARKERS[algorithm]
    return extra_styles([algorithm])[algorithm][1]


def label(algorithm: str) -> str:
    """The legend name of an algorithm (analysis.names)."""
    colour(algorithm)
    return display_name(algorithm)


def ordered(algorithms: Iterable[str]) -> list[str]:
    """Algorithms in the order figures show them: the registered ones in registry order, then user strategies
    by name."""
    present = set(algorithms)
    return [a for a in COLOURS if a in present] + sorted(present - set(COLOURS))


def is_unaware(algorithm: str) -> bool:
    """Whether the algorithm is a constraint-unaware variant (drawn dashed)."""
    return algorithm.endswith(UNAWARE_SUFFIX)


def linestyle(algorithm: str, constraint_aware: bool = True) -> str | tuple:
    """Solid for constraint-aware algorithms, dashed for unaware ones (by name or by flag)."""
    return DASHED if is_unaware(algorithm) or not constraint_aware else SOLID


def setting_styles(settings: dict[str, str]) -> dict[str, dict]:
    """Line style per setting label (setting -> algorithm): its algorithm's colour, marker and dash.

    Settings are styled in registry order of their algorithm (user strategies after the registered ones, by
    name), then by label; a second setting of the same algorithm keeps the colour and gets the next pattern
    of EXTRA_PATTERNS, and its legend shows the setting label.
    """
    seen: dict[str, int] = {}
    shared = {a for a in settings.values() if list(settings.values()).count(a) > 1}
    styles = {}
    order = ordered(settings.values())
    extra = extra_styles(settings.values())
    for s in sorted(settings, key=lambda s: (order.index(settings[s]), s)):
        a = settings[s]
        n = seen.get(a, 0)
        seen[a] = n + 1
        ls = linestyle(a) if n == 0 else EXTRA_PATTERNS[(n - 1) % len(EXTRA_PATTERNS)]
        name = label(a) if a not in shared else f"{label(a)} [{s}]"
        c, m = (COLOURS[a], MARKERS[a]) if a in COLOURS else extra[a]
        styles[s] = {"color": c, "linestyle": ls, "marker": m, "label": name}
    return styles


@contextmanager
def context() -> Iterator[None]:
    """Apply the shared matplotlibrc for the duration of the block."""
    with matplotlib.rc_context(fname=str(RCFILE)):
        yield


def figure(width: float | None = None, height: float | None = None, **subplots: Any) -> tuple[Figure, Any]:
    """A new Figure on an Agg canvas (no pyplot, no global state) of the style's size, with
    `subplots(**subplots)` axes: one Axes, or a NumPy array of them for several rows or columns (typed Any, as
    matplotlib types `Figure.subplots`)."""
    w, h = matplotlib.rcParams["figure.figsize"]
    fig = Figure(figsize=(width or w, height or h), layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots(**subplots)


def fits(box, frame, pad_pt: float = 1.0, dpi: float = 100.0) -> bool:
    """Whether `box` lies inside `frame` (display boxes) with `pad_pt` points to spare on every side."""
    pad = pad_pt * dpi / 72.0
    return (box.x0 >= frame.x0 + pad and box.x1 <= frame.x1 - pad
            and box.y0 >= frame.y0 + pad and box.y1 <= frame.y1 - pad)


def fitted_legend(fig: Figure, handles: Sequence, labels: Sequence[str], ncols: int, **kwargs):
    """A figure legend above the panels in at most `ncols` columns, fewer where it would be wider than the figure.

    Returns the legend. Other keyword arguments go to `Figure.legend`.
    """
    legend = None
    for n in range(max(1, ncols), 0, -1):
        if legend is not None:
            legend.remove()
        legend = fig.legend(handles, labels, loc="outside upper center", ncols=n, **{"alignment": "center", **kwargs})
        legend.get_title().set_multialignment("center")
        fig.draw_without_rendering()
        if fits(legend.get_window_extent(), fig.bbox, 0.0, fig.dpi):
            break
    return legend


def save(fig: Figure, pdf: str | Path, png: str | Path) -> None:
    """Write the figure as PDF and as PNG (dpi from the style), each atomically, without timestamps."""
    with atomic_path(pdf) as tmp:
        fig.savefig(tmp, format="pdf", metadata={"CreationDate": None, "ModDate": None})
    with atomic_path(png) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})
