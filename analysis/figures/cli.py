"""Figure sub-commands of `python -m analysis.cli`, one per figure family (`add_commands`).

This is the only figures module that reads files: it checks each input's columns (errors name the
file and the column) and hands DataFrames to the figure functions.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.errors import InputError
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


def _hyperparameters(a: argparse.Namespace) -> None:
    from analysis.figures import hyperparameters

    grid = read_table(a.grid, GRID_COLUMNS)
    try:
        hyperparameters.plot(hyperparameters.check_grid(grid, a.grid), a.pdf, a.png, _objective_sets(a))
    except ValueError as exc:
        raise _as_input_error(a.grid, exc) from None
    log.info("hyperparameter fronts: %d configurations -> %s, %s", len(grid), a.pdf, a.png)


def _json_arg(option: str, text: str | None, valid, what: str):
    """A JSON command-line value checked by `valid`, or None where not given."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(option, f"not JSON: {exc}") from None
    if not valid(value):
        raise InputError(option, f"not {what}: {text}")
    return value


def _objectives(a: argparse.Namespace) -> list[str] | None:
    """The objective set's objectives (--objectives, a JSON list), or None where not given."""
    return _json_arg("--objectives", a.objectives,
                     lambda v: isinstance(v, list) and bool(v) and all(isinstance(o, str) for o in v),
                     "a JSON list of objective names")


def _objective_sets(a: argparse.Namespace) -> dict[str, list[str]] | None:
    """--objective-sets (JSON: set -> objectives), or None where not given."""
    return _json_arg("--objective-sets", a.objective_sets,
                     lambda v: isinstance(v, dict) and all(isinstance(x, list) for x in v.values()),
                     "a JSON object of objective lists")


def _anytime(a: argparse.Namespace) -> None:
    from analysis.figures import anytime

    curves = read_table(a.curves, CURVES_COLUMNS)
    try:
        anytime.plot(curves, a.device, a.kernel, a.objective_set, a.pdf, a.png, _objectives(a))
    except ValueError as exc:
        raise _as_input_error(a.curves, exc) from None
    log.info("anytime IGD+ %s/%s/%s -> %s, %s", a.device, a.kernel, a.objective_set, a.pdf, a.png)


def _anytime_grid(a: argparse.Namespace) -> None:
    from analysis.figures import anytime

    curves = read_table(a.curves, CURVES_COLUMNS)
    try:
        anytime.plot_grid(curves, a.objective_set, a.pdf, a.png, _objectives(a))
    except ValueError as exc:
        raise _as_input_error(a.curves, exc) from None
    log.info("anytime IGD+ grid %s -> %s, %s", a.objective_set, a.pdf, a.png)


def _tradeoff(a: argparse.Namespace) -> None:
    from analysis.figures import tradeoff
    from analysis.spaces.space import Space

    space = Space.load(a.space_parquet, a.space_meta)
    have = [o.name for o in space.objectives]
    errors = [e for e in tradeoff.ERRORS if e in have]
    if not errors:
        raise InputError(a.space_meta, f"space {space.device}/{space.kernel} has no error objective "
                         f"({', '.join(tradeoff.ERRORS)}; it has {', '.join(have)}): the trade-off figure "
                         "needs one", field="objectives")
    if a.error not in errors:
        raise InputError(a.space_meta, f"space {space.device}/{space.kernel} has no objective '{a.error}' "
                         f"(its error objectives: {', '.join(errors)})", field="objectives")
    for needed in ("time", "memory"):
        if needed not in have:
            raise InputError(a.space_meta, f"space {space.device}/{space.kernel} has no objective '{needed}'",
                             field="objectives")
    try:
        tradeoff.plot(space.table, space.parameters, a.error, f"{space.device} / {space.kernel}", a.pdf, a.png)
    except ValueError as exc:
        raise _as_input_error(a.space_parquet, exc) from None
    log.info("trade-off %s/%s (%s) -> %s, %s", space.device, space.kernel, a.error, a.pdf, a.png)


def _scores_figure(a: argparse.Namespace, columns: tuple[str, ...], check: str, draw: str, what: str) -> None:
    """Read a constraint-aware table, check it and draw it; a bad table is an error naming the file."""
    from analysis.figures import constraint_aware

    frame = read_table(a.scores, columns)
    try:
        getattr(constraint_aware, draw)(getattr(constraint_aware, check)(frame, a.scores), a.pdf, a.png)
    except ValueError as exc:
        raise _as_input_error(a.scores, exc) from None
    log.info("%s -> %s, %s", what, a.pdf, a.png)


def _constraint_aware(a: argparse.Namespace) -> None:
    _scores_figure(a, SCORES_COLUMNS, "check_scores", "plot", "constraint-aware scores over time")


def _constraint_aware_spaces(a: argparse.Namespace) -> None:
    _scores_figure(a, SPACE_SCORES_COLUMNS, "check_space_scores", "plot_spaces", "constraint-aware per-space scores")


def _outputs(s: argparse.ArgumentParser) -> None:
    s.add_argument("--pdf", required=True, help="output PDF")
    s.add_argument("--png", required=True, help="output PNG (200 dpi)")


def _objectives_argument(s: argparse.ArgumentParser) -> None:
    s.add_argument("--objectives", default="",
                   help="JSON list: the objective set's objectives; with one, the IGD+ axis shows its unit")


def add_commands(sub) -> None:
    """Register the figure sub-commands on the CLI's sub-parser set."""
    s = sub.add_parser("figure-hyperparameters", help="hyperparameter fronts (y1 vs y2) per algorithm and budget")
    s.add_argument("--grid", required=True, help=f"CSV with columns {', '.join(GRID_COLUMNS)}")
    s.add_argument("--objective-sets", default="",
                   help="JSON: objective set -> objectives; a grid on one objective gets its unit on the axes")
    _outputs(s)
    s.set_defaults(func=_hyperparameters)

    s = sub.add_parser("figure-anytime", help="median IGD+ vs evaluations and improvement over RS, one space")
    s.add_argument("--curves", required=True, help=f"Parquet with columns {', '.join(CURVES_COLUMNS)}")
    s.add_argument("--device", required=True)
    s.add_argument("--kernel", required=True)
    s.add_argument("--objective-set", required=True)
    _objectives_argument(s)
    _outputs(s)
    s.set_defaults(func=_anytime)

    s = sub.add_parser("figure-anytime-grid", help="median IGD+ vs evaluations, every space of an objective set")
    s.add_argument("--curves", required=True, help=f"Parquet with columns {', '.join(CURVES_COLUMNS)}")
    s.add_argument("--objective-set", required=True)
    _objectives_argument(s)
    _outputs(s)
    s.set_defaults(func=_anytime_grid)

    s = sub.add_parser("figure-tradeoff", help="speedup and memory vs log10 error of a mixed-precision space")
    s.add_argument("--space-parquet", required=True)
    s.add_argument("--space-meta", required=True)
    s.add_argument("--error", default="mre", help="error objective: mre, nrmse or nmae (default mre)")
    _outputs(s)
    s.set_defaults(func=_tradeoff)

    s = sub.add_parser("figure-constraint-aware",
                       help="performance score over time, with and without constraint awareness")
    s.add_argument("--scores", required=True, help=f"Parquet/CSV with columns {', '.join(SCORES_COLUMNS)}")
    _outputs(s)
    s.set_defaults(func=_constraint_aware)

    s = sub.add_parser("figure-constraint-aware-spaces",
                       help="score per space with and without constraint awareness, and the gain vs density")
    s.add_argument("--scores", required=True, help=f"CSV with columns {', '.join(SPACE_SCORES_COLUMNS)}")
    _outputs(s)
    s.set_defaults(func=_constraint_aware_spaces)
