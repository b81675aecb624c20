"""The one style of every figure: the shared matplotlibrc, a fixed colour per algorithm, atomic PDF + PNG output."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402  (after the backend is chosen)
from matplotlib.figure import Figure  # noqa: E402

from analysis.io import atomic_path  # noqa: E402

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

# Registry name -> name shown in legends.
LABELS = {
    "rs": "RS",
    "nsga2": "NSGA-II",
    "nsga3": "NSGA-III",
    "nsga2_unaware": "NSGA-II (unaware)",
    "nsga3_unaware": "NSGA-III (unaware)",
    "genetic_algorithm": "GA",
    "pso": "PSO",
    "diff_evo": "DE",
    "firefly_algorithm": "Firefly",
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
    from analysis.objectives import OBJECTIVES

    if objectives is None or len(objectives) != 1 or objectives[0] not in OBJECTIVES:
        return None
    unit = OBJECTIVES[objectives[0]].unit
    return unit if unit and unit != "1" else None


def colour(algorithm: str) -> str:
    """The fixed colour of a registered algorithm; an unknown name is an error listing the known ones."""
    try:
        return COLOURS[algorithm]
    except KeyError:
        raise KeyError(f"no colour for algorithm '{algorithm}'; known: {', '.join(COLOURS)}") from None


def label(algorithm: str) -> str:
    """The legend name of a registered algorithm."""
    colour(algorithm)
    return LABELS[algorithm]


def is_unaware(algorithm: str) -> bool:
    """Whether the algorithm is a constraint-unaware variant (drawn dashed)."""
    return algorithm.endswith(UNAWARE_SUFFIX)


def linestyle(algorithm: str, constraint_aware: bool = True) -> str | tuple:
    """Solid for constraint-aware algorithms, dashed for unaware ones (by name or by flag)."""
    return DASHED if is_unaware(algorithm) or not constraint_aware else SOLID


def setting_styles(settings: dict[str, str]) -> dict[str, dict]:
    """Line style per setting label (setting -> algorithm): its algorithm's colour, marker and dash.

    Settings are styled in registry order of their algorithm, then by label; a second setting of the same
    algorithm keeps the colour and gets the next pattern of EXTRA_PATTERNS, and its legend shows the setting
    label.
    """
    seen: dict[str, int] = {}
    shared = {a for a in settings.values() if list(settings.values()).count(a) > 1}
    styles = {}
    order = list(COLOURS)
    for s in sorted(settings, key=lambda s: (order.index(settings[s]) if settings[s] in order else len(order), s)):
        a = settings[s]
        n = seen.get(a, 0)
        seen[a] = n + 1
        ls = linestyle(a) if n == 0 else EXTRA_PATTERNS[(n - 1) % len(EXTRA_PATTERNS)]
        name = label(a) if a not in shared else f"{label(a)} [{s}]"
        styles[s] = {"color": colour(a), "linestyle": ls, "marker": MARKERS[a], "label": name}
    return styles


@contextmanager
def context() -> Iterator[None]:
    """Apply the shared matplotlibrc for the duration of the block."""
    with matplotlib.rc_context(fname=str(RCFILE)):
        yield


def figure(width: float | None = None, height: float | None = None, **subplots) -> tuple[Figure, object]:
    """A new Figure on an Agg canvas (no pyplot, no global state) of the style's size, with
    `subplots(**subplots)` axes."""
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
