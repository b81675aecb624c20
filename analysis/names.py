"""The one source of the names algorithms are shown by in tables, README text and figure legends.

Registered algorithms have a fixed name here (the registry checks that every one has one); a user's
strategy module is shown by its `display_name` attribute, else its file stem or last dotted component
(`analysis.simulate.registry.user_algorithm`). This module imports nothing heavy, so that figure and
table jobs of the registered algorithms do not import Kernel Tuner to name them.
"""

from __future__ import annotations

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
        # lazy: the registry imports Kernel Tuner (about 0.5 s), which table and figure jobs of registered
        # algorithms do not need; it imports DISPLAY from here, so this is also the one import circle left
        from analysis.simulate.registry import get_algorithm

        return get_algorithm(algorithm).display
    return algorithm
