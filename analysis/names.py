"""The one source of the names algorithms are shown by in tables, README text and figure legends.

Registered algorithms have a fixed name here (the registry checks that every one has one); a user's
strategy module is shown by its `display_name` attribute, else its file stem or last dotted component
(`user_display`, which the registry's `user_algorithm` uses too). This module imports no stage and nothing
heavy (a user's strategy is loaded by `analysis.strategy_files`), so that figure and table jobs do not import
Kernel Tuner to name an algorithm.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from analysis.strategy_files import import_strategy

DISPLAY = {
    "rs": "RS",
    "nsga2": "NSGA-II",
    "nsga3": "NSGA-III",
    "nsga2_unaware": "NSGA-II (unaware)",
    "nsga3_unaware": "NSGA-III (unaware)",
    "genetic_algorithm": "GA",
    "pso": "PSO",
    "diff_evo": "DE",
    "firefly_algorithm": "Firefly",
    "minimize": "Minimize",
    "basinhopping": "Basin hopping",
    "dual_annealing": "Dual annealing",
    "greedy_mls": "Greedy MLS",
    "ordered_greedy_mls": "Ordered greedy MLS",
    "greedy_ils": "Greedy ILS",
    "mls": "MLS",
    "simulated_annealing": "Simulated annealing",
    "skopt": "skopt",
    "bayes_opt": "Bayesian optimisation",
    "hybrid_vndx": "Hybrid VNDX",
    "adaptive_tabu_greywolf": "Adaptive tabu grey wolf",
    "pyatf_strategies": "pyATF",
}


def is_user_spec(name: str) -> bool:
    """Whether `name` names a user's strategy module: a path to a `.py` file or a dotted import path."""
    return isinstance(name, str) and (name.endswith(".py") or "/" in name or "\\" in name or "." in name)


def display_name(algorithm: str) -> str:
    """How `algorithm` (a registered name or a user strategy's path) is shown; an unknown registered-style name
    is shown as it is."""
    if algorithm in DISPLAY:
        return DISPLAY[algorithm]
    if is_user_spec(algorithm):
        return user_display(algorithm, import_strategy(algorithm))
    return algorithm


def user_display(name: str, module: ModuleType) -> str:
    """How a user's strategy module `module`, named `name`, is shown: its `display_name`, else the file's stem (a
    `.py` path) or the last dotted component; ValueError naming it where `display_name` is not a non-empty string."""
    display = getattr(module, "display_name", None)
    if display is None:
        display = Path(name).stem if name.endswith(".py") else name.rsplit(".", 1)[-1]
    if not isinstance(display, str) or not display.strip():
        raise ValueError(f"strategy {name!r}: display_name must be a non-empty string, found {display!r}")
    return display
