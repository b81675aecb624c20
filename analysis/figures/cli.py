"""Figure sub-commands of `python -m analysis.cli`, one per figure family (`add_commands`).

This is the only figures module that reads files: each `*_figure` function reads its inputs, checks
their columns (errors name the file and the column) and hands DataFrames to the figure functions; a
ValueError of those is an InputError naming the input file. The argument handlers (`_<figure>`) parse
the command line and make one call to a `*_figure` function.

Each handler imports the library it needs when it runs, not at the top: every job of the workflow starts here,
and importing what all handlers need would add seconds to each (measured by benchmarks/bench_startup.py, report in
benchmarks/reports/bench_startup.md). These command modules are the only ones whose imports wait for a call
without a comment of their own (tests/test_layout.py).
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.errors import InputError, json_argument
from analysis.figures.contracts import CURVES_COLUMNS, GRID_COLUMNS, SCORES_COLUMNS, SPACE_SCORES_COLUMNS, require

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("analysis.figures")


def read_table(path: str | Path, columns: tuple[str, ...]) -> pd.DataFrame:
    """A CSV or Parquet input with its required columns checked."""
    import pandas as pd

    p = Path(path)
    try:
        df = pd.read_parquet(p) if p.suffix == ".parquet" else pd.read_csv(p)
    except FileNotFoundError:
        raise InputError(p, "no such file") from None
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise InputError(p, f"unreadable: {exc}") from None
    return require(df, columns, str(p))


def _as_input_error(path: str | Path, exc: ValueError) -> InputError:
    return exc if isinstance(exc, InputError) else InputError(path, str(exc))


# ---- the figures, from their input files ----------------------------------------------------------------------

def hyperparameters_figure(grid: str | Path, objective_sets: Mapping[str, Sequence[str]] | None,
                           pdf: str | Path, png: str | Path) -> None:
    """Hyperparameter fronts of the grid table `grid` (hyperparameters' grid CSV)."""
    from analysis.figures import hyperparameters

    table = read_table(grid, GRID_COLUMNS)
    try:
        hyperparameters.plot(hyperparameters.check_grid(table, str(grid)), pdf, png, objective_sets)
    except ValueError as exc:
        raise _as_input_error(grid, exc) from None
    log.info("hyperparameter fronts: %d configurations -> %s, %s", len(table), pdf, png)


def anytime_figure(curves: str | Path, device: str, kernel: str, objective_set: str,
                   objectives: Sequence[str] | None, pdf: str | Path, png: str | Path) -> None:
    """Median IGD+ against evaluations, and the improvement over RS, of one space (curves: summary's Parquet)."""
    from analysis.figures import anytime

    table = read_table(curves, CURVES_COLUMNS)
    try:
        anytime.plot(table, device, kernel, objective_set, pdf, png, objectives)
    except ValueError as exc:
        raise _as_input_error(curves, exc) from None
    log.info("anytime IGD+ %s/%s/%s -> %s, %s", device, kernel, objective_set, pdf, png)


def anytime_grid_figure(curves: str | Path, objective_set: str, objectives: Sequence[str] | None,
                        pdf: str | Path, png: str | Path) -> None:
    """Median IGD+ against evaluations of every space of one objective set."""
    from analysis.figures import anytime

    table = read_table(curves, CURVES_COLUMNS)
    try:
        anytime.plot_grid(table, objective_set, pdf, png, objectives)
    except ValueError as exc:
        raise _as_input_error(curves, exc) from None
    log.info("anytime IGD+ grid %s -> %s, %s", objective_set, pdf, png)


def tradeoff_figure(space_parquet: str | Path, space_meta: str | Path, error: str, pdf: str | Path,
                    png: str | Path) -> None:
    """Speedup and memory against log10 `error` of a stored space; it needs `error`, time and memory objectives."""
    from analysis.figures import tradeoff
    from analysis.spaces.space import Space

    space = Space.load(space_parquet, space_meta)
    have = [o.name for o in space.objectives]
    errors = [e for e in tradeoff.ERRORS if e in have]
    if not errors:
        raise InputError(space_meta, f"space {space.device}/{space.kernel} has no error objective "
                         f"({', '.join(tradeoff.ERRORS)}; it has {', '.join(have)}): the trade-off figure "
                         "needs one", field="objectives")
    if error not in errors:
        raise InputError(space_meta, f"space {space.device}/{space.kernel} has no objective '{error}' "
                         f"(its error objectives: {', '.join(errors)})", field="objectives")
    for needed in ("time", "memory"):
        if needed not in have:
            raise InputError(space_meta, f"space {space.device}/{space.kernel} has no objective '{needed}'",
                             field="objectives")
    try:
        tradeoff.plot(space.table, space.parameters, error, f"{space.device} / {space.kernel}", pdf, png)
    except ValueError as exc:
        raise _as_input_error(space_parquet, exc) from None
    log.info("trade-off %s/%s (%s) -> %s, %s", space.device, space.kernel, error, pdf, png)


def _scores_figure(scores: str | Path, columns: tuple[str, ...], check: str, draw: str, what: str,
                   pdf: str | Path, png: str | Path) -> None:
    """Read a constraint-aware table, check it and draw it; a bad table is an error naming the file."""
    from analysis.figures import constraint_aware

    frame = read_table(scores, columns)
    try:
        getattr(constraint_aware, draw)(getattr(constraint_aware, check)(frame, scores), pdf, png)
    except ValueError as exc:
        raise _as_input_error(scores, exc) from None
    log.info("%s -> %s, %s", what, pdf, png)


def constraint_aware_figure(scores: str | Path, pdf: str | Path, png: str | Path) -> None:
    """Performance score over time, with and without constraint awareness (ca-tables' curves)."""
    _scores_figure(scores, SCORES_COLUMNS, "check_scores", "plot", "constraint-aware scores over time", pdf, png)


def constraint_aware_spaces_figure(scores: str | Path, pdf: str | Path, png: str | Path) -> None:
    """Score per space with and without constraint awareness, and the gain against density."""
    _scores_figure(scores, SPACE_SCORES_COLUMNS, "check_space_scores", "plot_spaces",
                   "constraint-aware per-space scores", pdf, png)


def summary_figure(table: str | Path, settings: Mapping[str, str], setting: str,
                   objective_sets: Mapping[str, Sequence[str]] | None, pdf: str | Path, png: str | Path) -> None:
    """One strategy's improvement over RS next to the baselines' (its summary table, summary-table's CSV)."""
    from analysis.figures import summary

    frame = read_table(table, summary.COLUMNS)
    try:
        summary.plot(frame, settings, setting, pdf, png, objective_sets)
    except ValueError as exc:
        raise InputError(table, str(exc)) from None
    log.info("summary figure of %s -> %s, %s", setting, pdf, png)


# ---- the command line ---------------------------------------------------------------------------------------

def _objectives(a: argparse.Namespace) -> list[str] | None:
    """The objective set's objectives (--objectives, a JSON list), or None where not given."""
    return json_argument("--objectives", a.objectives,
                         lambda v: isinstance(v, list) and bool(v) and all(isinstance(o, str) for o in v),
                         "a JSON list of objective names")


def _objective_sets(a: argparse.Namespace) -> dict[str, list[str]] | None:
    """--objective-sets (JSON: set -> objectives), or None where not given."""
    return json_argument("--objective-sets", a.objective_sets,
                         lambda v: isinstance(v, dict) and all(isinstance(x, list) for x in v.values()),
                         "a JSON object of objective lists")


def _settings(a: argparse.Namespace) -> dict[str, str]:
    """--settings (JSON: comparison setting label -> algorithm)."""
    return json_argument("--settings", a.settings, lambda v: isinstance(v, dict), "a JSON object")


def _hyperparameters(a: argparse.Namespace) -> None:
    hyperparameters_figure(a.grid, _objective_sets(a), a.pdf, a.png)


def _anytime(a: argparse.Namespace) -> None:
    anytime_figure(a.curves, a.device, a.kernel, a.objective_set, _objectives(a), a.pdf, a.png)


def _anytime_grid(a: argparse.Namespace) -> None:
    anytime_grid_figure(a.curves, a.objective_set, _objectives(a), a.pdf, a.png)


def _tradeoff(a: argparse.Namespace) -> None:
    tradeoff_figure(a.space_parquet, a.space_meta, a.error, a.pdf, a.png)


def _constraint_aware(a: argparse.Namespace) -> None:
    constraint_aware_figure(a.scores, a.pdf, a.png)


def _constraint_aware_spaces(a: argparse.Namespace) -> None:
    constraint_aware_spaces_figure(a.scores, a.pdf, a.png)


def _summary(a: argparse.Namespace) -> None:
    summary_figure(a.table, _settings(a), a.setting, _objective_sets(a), a.pdf, a.png)


def _outputs(s: argparse.ArgumentParser) -> None:
    s.add_argument("--pdf", required=True, help="output PDF")
    s.add_argument("--png", required=True, help="output PNG (200 dpi)")


def _objectives_argument(s: argparse.ArgumentParser) -> None:
    s.add_argument("--objectives", default="",
                   help="JSON list: the objective set's objectives; with one, the IGD+ axis shows its unit")


def _leaderboard(a: argparse.Namespace) -> None:
    import pandas as pd

    from analysis.figures.leaderboard import figures

    figures(pd.read_parquet(a.curves), pd.read_csv(a.board), pd.read_csv(a.spaces), pd.read_csv(a.pairs), a.out)


def _hyperparameters_so(a: argparse.Namespace) -> None:
    import pandas as pd

    from analysis.figures.hyperparameters_so import figures

    figures(pd.read_csv(a.grid), pd.read_csv(a.summary), pd.read_parquet(a.spaces), pd.read_parquet(a.curves),
            a.out)


def add_commands(sub) -> None:
    """Register the figure sub-commands on the CLI's sub-parser set (`description`: the one-line summary)."""
    s = sub.add_parser("figure-hyperparameters",
                       description="hyperparameter fronts (y1 vs y2) per algorithm and budget")
    s.add_argument("--grid", required=True, help=f"CSV with columns {', '.join(GRID_COLUMNS)}")
    s.add_argument("--objective-sets", default="",
                   help="JSON: objective set -> objectives; a grid on one objective gets its unit on the axes")
    _outputs(s)
    s.set_defaults(func=_hyperparameters)

    s = sub.add_parser("figure-anytime", description="median IGD+ vs evaluations and improvement over RS, one space")
    s.add_argument("--curves", required=True, help=f"Parquet with columns {', '.join(CURVES_COLUMNS)}")
    s.add_argument("--device", required=True)
    s.add_argument("--kernel", required=True)
    s.add_argument("--objective-set", required=True)
    _objectives_argument(s)
    _outputs(s)
    s.set_defaults(func=_anytime)

    s = sub.add_parser("figure-anytime-grid",
                       description="median IGD+ vs evaluations, every space of an objective set")
    s.add_argument("--curves", required=True, help=f"Parquet with columns {', '.join(CURVES_COLUMNS)}")
    s.add_argument("--objective-set", required=True)
    _objectives_argument(s)
    _outputs(s)
    s.set_defaults(func=_anytime_grid)

    s = sub.add_parser("figure-tradeoff", description="speedup and memory vs log10 error of a mixed-precision space")
    s.add_argument("--space-parquet", required=True)
    s.add_argument("--space-meta", required=True)
    s.add_argument("--error", default="mre", help="error objective: mre, nrmse or nmae (default mre)")
    _outputs(s)
    s.set_defaults(func=_tradeoff)

    s = sub.add_parser("figure-constraint-aware",
                       description="performance score over time, with and without awareness")
    s.add_argument("--scores", required=True, help=f"Parquet/CSV with columns {', '.join(SCORES_COLUMNS)}")
    _outputs(s)
    s.set_defaults(func=_constraint_aware)

    s = sub.add_parser("figure-constraint-aware-spaces",
                       description="score per space with and without awareness; gain vs density")
    s.add_argument("--scores", required=True, help=f"CSV with columns {', '.join(SPACE_SCORES_COLUMNS)}")
    _outputs(s)
    s.set_defaults(func=_constraint_aware_spaces)

    s = sub.add_parser("figure-leaderboard", description="leaderboard: score over time, heatmap, critical difference")
    s.add_argument("--curves", required=True, help="results/leaderboard/curves.parquet (lb-tables)")
    s.add_argument("--board", required=True, help="tables/leaderboard.csv")
    s.add_argument("--spaces", required=True, help="tables/leaderboard_spaces.csv")
    s.add_argument("--pairs", required=True, help="tables/leaderboard_pairs.csv")
    s.add_argument("--out", nargs=6, required=True,
                   help="PDF and PNG of the score over time, the heatmap and the critical-difference diagram")
    s.set_defaults(func=_leaderboard)

    s = sub.add_parser("figure-hyperparameters-so",
                       description="seed 003 tuning: its four figures (seed 003 Figs. 2-5)")
    s.add_argument("--grid", required=True, help="tables/hyperparameters_so.csv")
    s.add_argument("--summary", required=True, help="tables/hyperparameters_so_summary.csv")
    s.add_argument("--spaces", required=True, help="results/hyperparameters_so/spaces.parquet (so-tables)")
    s.add_argument("--curves", required=True, help="results/hyperparameters_so/curves.parquet (so-tables)")
    s.add_argument("--out", nargs=8, required=True,
                   help="PDF and PNG of the grid scores, best and worst, impact per space and score over time")
    s.set_defaults(func=_hyperparameters_so)

    s = sub.add_parser("figure-summary", description="one strategy's improvement over RS next to the baselines'",
                       epilog="Per space and budget, on one page.")
    s.add_argument("--table", required=True, help="the strategy's summary table (summary-table's CSV)")
    s.add_argument("--settings", required=True, help="JSON: comparison setting label -> algorithm")
    s.add_argument("--setting", required=True, help="the strategy summarised (not a baseline)")
    s.add_argument("--objective-sets", default="", help="JSON: objective set -> objectives (the groups' order)")
    _outputs(s)
    s.set_defaults(func=_summary)
