"""Simulated tuning runs: Kernel Tuner's search strategies replayed on exhaustive brute-force caches."""

from analysis.simulate.registry import algorithm_names, get_algorithm, options_markdown, resolve_options
from analysis.simulate.run import prepare_space, simulate_run
from analysis.simulate.seeding import derive_seed
from analysis.simulate.space import SpaceData
from analysis.simulate.trace import Trace

__all__ = [
    "SpaceData",
    "Trace",
    "algorithm_names",
    "derive_seed",
    "get_algorithm",
    "options_markdown",
    "prepare_space",
    "resolve_options",
    "simulate_run",
]
